/**
 * iPXE over IPv6 against the DHCPv6 server: a QEMU guest (SeaBIOS and the iPXE ROM for
 * virtio-net of Debian's ipxe-qemu, iPXE 1.0.0+git-20190125, under TCG) on an IPv6-only bridge where radvd advertises the prefix with the
 * Managed flag (and no default route), as a router would. iPXE's Solicit carries user class
 * `iPXE` beside vendor class `PXEClient`: the server must match the user class first and hand
 * it the per-host script URL (option 59, a bracketed literal), which iPXE then fetches from a
 * recording HTTP server on `[::]:8081`. Asserted from the server's events and the HTTP request
 * log; the guest, radvd and the servers are stopped by PID in the lab's teardown. iPXE first
 * waits about 15 s for DHCPv4 on the IPv6-only link before it reports the link configured.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { hyphenMac } from '../../bootsvc/ipxe/render-text.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';
import { enableIpv6, startChild } from './dhcp6-peers.js';

const MAC = '52:54:00:66:00:01';
const TARGET: BootTarget = { host: 'node-6', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://[fd00:66::1]:8081' } };
const RECORDER = `require('node:http').createServer((q,s)=>{console.log(JSON.stringify({path:q.url,from:q.socket.remoteAddress}));s.statusCode=404;s.end();}).listen(8081,'::',()=>console.log('{"ready":1}'));`;

test('iPXE over IPv6 (RA with the Managed flag from radvd) gets the per-host script URL by its user class and fetches it', { timeout: 180_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['qemu-system-x86_64', 'radvd'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-ipxe-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ns = await lab.namespace('ipxe6');
  await enableIpv6(lab, ns, []);
  await lab.exec(ns, 'ip', ['link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0', 'mcast_snooping', '0']);
  await lab.exec(ns, 'ip', ['tuntap', 'add', 'tap0', 'mode', 'tap']);
  await lab.exec(ns, 'ip', ['link', 'set', 'tap0', 'master', 'br0', 'up']);
  await lab.exec(ns, 'ip', ['link', 'set', 'br0', 'up']);
  await enableIpv6(lab, ns, ['br0']);
  await lab.exec(ns, 'ip', ['addr', 'add', 'fd00:66::1/64', 'dev', 'br0', 'nodad']);
  const radvdConf = join(dir, 'radvd.conf');
  await writeFile(radvdConf, 'interface br0 {\n  AdvSendAdvert on;\n  AdvManagedFlag on;\n  AdvOtherConfigFlag on;\n  MinRtrAdvInterval 3;\n  MaxRtrAdvInterval 4;\n  AdvDefaultLifetime 0;\n  prefix fd00:66::/64 { AdvOnLink on; AdvAutonomous off; };\n};\n');
  const radvd = lab.spawn(ns, 'radvd', ['-n', '-C', radvdConf, '-p', join(dir, 'radvd.pid'), '-m', 'stderr']);
  const http = lab.spawn(ns, process.execPath, ['-e', RECORDER]);
  await waitFor(() => http.stdout().includes('ready') || http.child.exitCode !== null, 'the recording HTTP server');
  const server = await startChild(lab, ns, {
    interface: 'br0', serverAddress: 'fd00:66::1', ranges: [{ subnet: 'fd00:66::/64', first: 'fd00:66::100', last: 'fd00:66::1ff' }],
    stateDir: join(dir, 'state'), targets: { [MAC]: TARGET },
  });
  const serial = join(dir, 'serial.log');
  const qemu = lab.spawn(ns, 'qemu-system-x86_64', [
    '-nodefaults', '-no-user-config', '-machine', 'pc,graphics=off', '-accel', 'tcg', '-m', '256', '-display', 'none', '-serial', `file:${serial}`,
    '-netdev', 'tap,id=n0,ifname=tap0,script=no,downscript=no', '-device', `virtio-net-pci,netdev=n0,mac=${MAC},bootindex=1`, '-boot', 'strict=on',
  ]);
  const script = `/boot/${hyphenMac(MAC)}.ipxe`;
  try {
    await waitFor(() => (http.stdout().includes(script) ? true : qemu.child.exitCode === null ? undefined : (() => { throw new Error(`QEMU exited: ${qemu.stderr()}`); })()), 'iPXE to fetch its script over IPv6', 90_000);
  } catch (err) {
    const events = server.lines.filter((l) => l.type === 'event').map((l) => JSON.stringify(l)).join('\n');
    const console = await readFile(serial, 'utf8').catch(() => '');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nserver events:\n${events}\nhttp:\n${http.stdout()}\nradvd:\n${radvd.stderr()}\nguest console (last 3000 characters):\n${console.slice(-3000)}`);
  }
  const fetched = http.stdout().split('\n').filter((l) => l.includes(script)).map((l) => JSON.parse(l) as { from: string });
  assert.match(fetched[0]?.from ?? '', /^fd00:66::1[0-9a-f]{2}$/, 'iPXE fetched from its DHCPv6 address');
  const events = server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: { detail: string; userClass?: string; vendorClass?: string; bootFile?: string } }).event);
  const reply = events.find((e) => e.detail === 'dhcpv6 reply' && e.bootFile !== undefined);
  assert.equal(reply?.bootFile, `http://[fd00:66::1]:8081${script}`, 'the script URL, bracketed');
  assert.equal(reply.userClass, 'iPXE');
  assert.match(reply.vendorClass ?? '', /^PXEClient/, 'iPXE also sends PXEClient: the user class decided');
  await qemu.stop('SIGKILL');
});
