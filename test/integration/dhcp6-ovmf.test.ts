/**
 * UEFI network boot over IPv6 against the DHCPv6 server: OVMF (Debian's OVMF_CODE_4M, its own
 * virtio-net driver, no option ROM, IPv4 switched off with `opt/org.tianocore/IPv4Support=no`
 * so it does not try PXEv4 for a minute first) in a QEMU guest on an IPv6-only bridge with
 * rackside's own Managed-flag router advertisements (`bootsvc/ra/`; no radvd runs). Its PXE client (DUID-UUID, architecture 7, vendor class PXEClient)
 * gets `tftp://[fd00:66::1]/ipxe.efi` in option 59 and no vendor class back, takes it (EDK2
 * prints the station address and the boot file name), and finds no TFTP server; then its HTTP
 * boot client (architecture 16, vendor class HTTPClient) gets the `http://[…]/boot/ipxe.efi`
 * URL with `HTTPClient` echoed and fetches `ipxe.efi` from the recording HTTP server, and iPXE
 * then fetches its per-host script. Every stage is the host's MAC, so they share one lease. A second guest runs the chain: rackside's TFTP
 * server on `[::]:69` serves `ipxe.efi`, and iPXE solicits with user class `iPXE`, gets its
 * per-host script URL and requests it (the time from power-on is printed as a diagnostic).
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { NetnsLab, waitFor, type LabProcess } from '../helpers/netns.js';
import { childEvents, ipv6BootLab } from './dhcp6-peers.js';

const MAC = '52:54:00:66:00:02';
const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';
const TARGET: BootTarget = { host: 'node-7', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://[fd00:66::1]:8081' } };

/**
 * An OVMF guest (q35, TCG, 512 MiB, its own copy of the variables) on tap0 in `ns` with MAC `mac`,
 * IPv4 off in the firmware (`opt/org.tianocore/IPv4Support=no`: it would try PXEv4 for ~60 s
 * first) and its serial console in `serial`.
 */
/** The boot network's router advertisements were rackside's: sent, without send errors. */
function assertOwnAdvertisements(stats: unknown): void {
  const ra = stats as { unsolicitedSent?: number; sendErrors?: number } | undefined;
  assert.ok(ra !== undefined && (ra.unsolicitedSent ?? 0) > 0 && ra.sendErrors === 0, `rackside's advertisements: ${JSON.stringify(ra)}`);
}

async function startOvmf6(lab: NetnsLab, ns: string, dir: string, mac: string, serial: string): Promise<LabProcess> {
  const vars = join(dir, 'OVMF_VARS_4M.fd');
  await copyFile(OVMF_VARS, vars);
  return lab.spawn(ns, 'qemu-system-x86_64', [
    '-nodefaults', '-no-user-config', '-machine', 'q35,graphics=off', '-accel', 'tcg', '-m', '512', '-display', 'none', '-serial', `file:${serial}`,
    '-drive', `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,file=${vars}`,
    '-fw_cfg', 'name=opt/org.tianocore/IPv4Support,string=no',
    '-netdev', 'tap,id=n0,ifname=tap0,script=no,downscript=no', '-device', `virtio-net-pci,netdev=n0,mac=${mac},romfile=,bootindex=1`, '-boot', 'strict=on',
  ]);
}

test('OVMF over IPv6: PXE gets tftp://[…]/ipxe.efi without PXEClient echoed; HTTP boot gets the URL with HTTPClient echoed, fetches ipxe.efi, and iPXE its script', { timeout: 420_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['qemu-system-x86_64'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-ovmf-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const httpBootDir = join(dir, 'http');
  await mkdir(httpBootDir);
  await copyFile('/usr/lib/ipxe/ipxe.efi', join(httpBootDir, 'ipxe.efi'));
  const boot = await ipv6BootLab(lab, 'ovmf6', dir, MAC, TARGET, { httpBootDir });
  const serial = join(dir, 'serial.log');
  const qemu = await startOvmf6(lab, boot.ns, dir, MAC, serial);
  const started = Date.now();
  const console = (): Promise<string> => readFile(serial, 'utf8').catch(() => '');
  try {
    await waitFor(() => {
      if (qemu.child.exitCode !== null) throw new Error(`QEMU exited: ${qemu.stderr()}`);
      return boot.requests().some((r) => r.path === `/boot/${MAC.replaceAll(':', '-')}.ipxe`);
    }, 'OVMF HTTP boot to fetch ipxe.efi over IPv6, and iPXE its script', 360_000);
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nserver events:\n${JSON.stringify(childEvents(boot.server))}\nguest console (last 3000 characters):\n${(await console()).slice(-3000)}`);
  }
  t.diagnostic(`OVMF power-on → PXEv6 fails, HTTPv6 boot → iPXE's script request over IPv6: ${((Date.now() - started) / 1000).toFixed(1)} s under TCG`);
  const events = childEvents(boot.server);
  const pxe = events.find((e) => e.bootFile === 'tftp://[fd00:66::1]/ipxe.efi');
  assert.ok(pxe !== undefined, `PXE firmware got the TFTP URL: ${JSON.stringify(events)}`);
  assert.equal(pxe.archType, 7);
  assert.match(pxe.vendorClass ?? '', /^PXEClient/);
  const http = events.find((e) => e.bootFile === 'http://[fd00:66::1]:8081/boot/ipxe.efi');
  assert.ok(http !== undefined, 'HTTP boot got the URL');
  assert.equal(http.archType, 16);
  assert.match(http.vendorClass ?? '', /^HTTPClient/);
  assert.equal(new Set(events.filter((e) => e.address !== undefined).map((e) => e.address)).size, 1, 'PXE, HTTP boot and iPXE: one address');
  assert.deepEqual([...new Set(events.map((e) => e.mac))], [MAC]);
  assert.ok(boot.requests().some((r) => r.path === '/boot/ipxe.efi'), 'HTTP boot fetched ipxe.efi');
  assert.ok(events.some((e) => e.userClass === 'iPXE' && e.bootFile === `http://[fd00:66::1]:8081/boot/${MAC.replaceAll(':', '-')}.ipxe`), 'iPXE got its script URL');
  assertOwnAdvertisements((await boot.server.stats()).routerAdvertisements);
  const text = await console();
  assert.match(text, /Start PXE over IPv6/);
  assert.match(text, /Start HTTP Boot over IPv6/);
  await qemu.stop('SIGKILL');
});

test('OVMF over IPv6, the chain: PXE fetches ipxe.efi from rackside\'s TFTP server, iPXE solicits with user class iPXE and fetches its per-host script', { timeout: 420_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['qemu-system-x86_64'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-ovmf-chain-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const mac = '52:54:00:66:00:03';
  // Debian's /usr/lib/ipxe/ipxe.efi is a symlink leaving that directory, which the TFTP server refuses to follow: serve a copy.
  const tftpRoot = join(dir, 'tftp');
  await mkdir(tftpRoot);
  await copyFile('/usr/lib/ipxe/ipxe.efi', join(tftpRoot, 'ipxe.efi'));
  const boot = await ipv6BootLab(lab, 'ovmf6c', dir, mac, TARGET, { tftpRoot });
  const serial = join(dir, 'serial.log');
  const qemu = await startOvmf6(lab, boot.ns, dir, mac, serial);
  const script = `/boot/${mac.replaceAll(':', '-')}.ipxe`;
  const started = Date.now();
  try {
    await waitFor(() => {
      if (qemu.child.exitCode !== null) throw new Error(`QEMU exited: ${qemu.stderr()}`);
      return boot.requests().some((r) => r.path === script);
    }, 'iPXE (loaded over TFTP) to fetch its script over IPv6', 360_000);
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nserver events:\n${JSON.stringify(childEvents(boot.server))}\nguest console (last 3000 characters):\n${(await readFile(serial, 'utf8').catch(() => '')).slice(-3000)}`);
  }
  t.diagnostic(`OVMF power-on → iPXE's script request over IPv6: ${((Date.now() - started) / 1000).toFixed(1)} s under TCG`);
  const events = childEvents(boot.server);
  assert.ok(events.some((e) => e.bootFile === 'tftp://[fd00:66::1]/ipxe.efi'), 'the firmware stage got the TFTP URL');
  assert.ok(events.some((e) => e.userClass === 'iPXE' && e.bootFile === `http://[fd00:66::1]:8081${script}`), 'iPXE got its script URL');
  assert.equal(new Set(events.filter((e) => e.address !== undefined).map((e) => e.address)).size, 1, 'firmware and iPXE, one address');
  assertOwnAdvertisements((await boot.server.stats()).routerAdvertisements);
  await qemu.stop('SIGKILL');
});
