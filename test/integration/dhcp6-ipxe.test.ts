/**
 * iPXE over IPv6 against the DHCPv6 server: a QEMU guest (SeaBIOS and the iPXE ROM for
 * virtio-net of Debian's ipxe-qemu, iPXE 1.0.0+git-20190125, under TCG) on an IPv6-only bridge
 * where rackside itself advertises the prefix with the Managed flag and no default route
 * (`bootsvc/ra/`; no radvd runs): iPXE starts DHCPv6 only after such an advertisement. iPXE's Solicit carries user class
 * `iPXE` beside vendor class `PXEClient`: the server must match the user class first and hand
 * it the per-host script URL (option 59, a bracketed literal), which iPXE then fetches from a
 * recording HTTP server on `[::]:8081`. Asserted from the server's events and the HTTP request
 * log; the guest and the servers are stopped by PID in the lab's teardown. iPXE first
 * waits about 15 s for DHCPv4 on the IPv6-only link before it reports the link configured.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';
import { childEvents, ipv6BootLab } from './dhcp6-peers.js';

const MAC = '52:54:00:66:00:01';
const TARGET: BootTarget = { host: 'node-6', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://[fd00:66::1]:8081' } };

test('iPXE over IPv6 (RA with the Managed flag from rackside) gets the per-host script URL by its user class and fetches it', { timeout: 180_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['qemu-system-x86_64'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-ipxe-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const boot = await ipv6BootLab(lab, 'ipxe6', dir, MAC, TARGET);
  const serial = join(dir, 'serial.log');
  const qemu = lab.spawn(boot.ns, 'qemu-system-x86_64', [
    '-nodefaults', '-no-user-config', '-machine', 'pc,graphics=off', '-accel', 'tcg', '-m', '256', '-display', 'none', '-serial', `file:${serial}`,
    '-netdev', 'tap,id=n0,ifname=tap0,script=no,downscript=no', '-device', `virtio-net-pci,netdev=n0,mac=${MAC},bootindex=1`, '-boot', 'strict=on',
  ]);
  const script = `/boot/${hyphenMac(MAC)}.ipxe`;
  try {
    await waitFor(() => {
      if (qemu.child.exitCode !== null) throw new Error(`QEMU exited: ${qemu.stderr()}`);
      return boot.requests().some((r) => r.path === script);
    }, 'iPXE to fetch its script over IPv6', 90_000);
  } catch (err) {
    const console = await readFile(serial, 'utf8').catch(() => '');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nserver events:\n${JSON.stringify(childEvents(boot.server))}\nserver log:\n${JSON.stringify(boot.server.lines.filter((l) => l.type === 'log'))}\nguest console (last 3000 characters):\n${console.slice(-3000)}`);
  }
  assert.match(boot.requests().find((r) => r.path === script)?.from ?? '', /^fd00:66::1[0-9a-f]{2}$/, 'iPXE fetched from its DHCPv6 address');
  const reply = childEvents(boot.server).find((e) => e.detail === 'dhcpv6 reply' && e.bootFile !== undefined);
  assert.equal(reply?.bootFile, `http://[fd00:66::1]:8081${script}`, 'the script URL, bracketed');
  assert.equal(reply.userClass, 'iPXE');
  assert.match(reply.vendorClass ?? '', /^PXEClient/, 'iPXE also sends PXEClient: the user class decided');
  const ra = (await boot.server.stats()).routerAdvertisements as { unsolicitedSent: number; sendErrors: number } | undefined;
  assert.ok(ra !== undefined && ra.unsolicitedSent > 0 && ra.sendErrors === 0, `rackside's advertisements: ${JSON.stringify(ra)}`);
  await qemu.stop('SIGKILL');
});
