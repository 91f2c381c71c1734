// Boots rackside's arm64 ramdisk — built on this amd64 head node from Debian's arm64 packages,
// its tools' libraries found from ELF DT_NEEDED without running them (images/foreign-tools.ts) —
// in qemu-system-aarch64 (`virt`, cortex-a57, TCG, 1 vCPU, 512 MiB) with -kernel/-initrd and
// `rackside.selftest=1`: /init loads the arm64 modules and runs every packed tool, which proves
// each found its libraries and interpreter, then powers off. The ramdisk is the lab's cached
// arm64 build (test/lab/rack/ramdisk-cache.ts), shared with test/e2e/inspect-arm64.test.ts.
// Then the arm64 ISO (UEFI only: shimaa64 → Debian's signed arm64 CD GRUB) boots from a CD drive
// with AAVMF, its per-host overlay slot pointing the ramdisk at a loopback ramdisk server (QEMU
// user networking, 10.0.2.2), which answers the first heartbeat with poweroff.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildHostOverlay } from '../../images/index.js';
import { writeHostIso } from '../../images/iso.js';
import { AAVMF_CODE, AAVMF_VARS } from '../lab/rack/qemu-guest.js';
import { RACK_ISO_KERNEL_ARGS, rackRamdiskOrSkip, type RackRamdisk } from '../lab/rack/ramdisk-cache.js';
import { startRamdiskServer } from '../unit/images/ramdisk-server.js';
import { integrationRequired, requireTools, scratchDir } from '../unit/images/helpers.js';
import { runQemuUntilExit, type QemuRun } from '../helpers/qemu-until-exit.js';

const BOOT_TIMEOUT_MS = 300_000;
const TOKEN = 'iso-arm64-test-token-0123456789';

/** Runs the guest until it powers off or the timeout. */
function runGuest(ramdisk: RackRamdisk, serialLog: string): Promise<QemuRun> {
  return runQemuUntilExit('qemu-system-aarch64', [
    '-accel', 'tcg', '-machine', 'virt', '-cpu', 'cortex-a57', '-m', '512', '-smp', '1',
    '-kernel', ramdisk.vmlinuz, '-initrd', ramdisk.initrd, '-append', 'console=ttyAMA0 panic=-1 rackside.selftest=1',
  ], serialLog, BOOT_TIMEOUT_MS);
}

test('qemu-system-aarch64 boots the arm64 ramdisk: /init loads the arm64 modules, every packed arm64 tool runs, selftest powers off', { timeout: 900_000 }, async (t) => {
  if (!requireTools(t, { 'qemu-system-aarch64': 'qemu-system-arm', 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod' })) return;
  const ramdisk = await rackRamdiskOrSkip(t, { arch: 'arm64', format: 'initrd', log: (line) => { t.diagnostic(line); } });
  if (ramdisk === undefined) return;
  const { dir, cleanup } = scratchDir('images-boot-arm64');
  try {
    const { exited, serial, seconds } = await runGuest(ramdisk, join(dir, 'serial.log'));
    t.diagnostic(`arm64 selftest boot under TCG: ${seconds.toFixed(1)} s`);
    assert.ok(exited, `the guest powered off by itself; serial log:\n${serial.slice(-3000)}`);
    assert.match(serial, /rackside-ramdisk: started 0\.1\.0-rack \(kernel \d+\.\d+\.\d+-\d+-arm64/);
    assert.match(serial, /rackside-ramdisk: modules: [1-9]\d* loaded/);
    assert.ok(ramdisk.manifest.inputs.tools.length >= 8, `tools packed: ${ramdisk.manifest.inputs.tools.map((x) => x.name).join(' ')}`);
    for (const tool of ramdisk.manifest.inputs.tools) assert.match(serial, new RegExp(`selftest: tool /\\S+/${tool.name} runs`), `${tool.name} runs on arm64`);
    assert.doesNotMatch(serial, /FAILS/);
    assert.match(serial, /rackside-ramdisk: selftest: done/);
  } finally {
    cleanup();
  }
});

test('the arm64 ISO (UEFI only) boots from a CD drive with AAVMF; the per-host slot carries the agent URL and token', { timeout: 900_000 }, async (t) => {
  if (!requireTools(t, { 'qemu-system-aarch64': 'qemu-system-arm', xorriso: 'xorriso', mcopy: 'mtools', 'mkfs.vfat': 'dosfstools', 'apt-get': 'apt', depmod: 'kmod' })) return;
  if (!existsSync(AAVMF_CODE)) {
    if (integrationRequired) throw new Error('missing AAVMF (apt-get install qemu-efi-aarch64)');
    t.skip('missing AAVMF (apt-get install qemu-efi-aarch64)');
    return;
  }
  const ramdisk = await rackRamdiskOrSkip(t, { arch: 'arm64', format: 'iso', log: (line) => { t.diagnostic(line); } });
  if (ramdisk === undefined) return;
  const iso = ramdisk.iso ?? assert.fail('an ISO build has rackside.iso');
  const isoManifest = ramdisk.manifest.iso ?? assert.fail('the manifest describes the ISO');
  assert.equal(isoManifest.kernelCommandLine, `console=tty0 console=ttyAMA0,115200 ${RACK_ISO_KERNEL_ARGS.join(' ')}`);
  assert.deepEqual(isoManifest.bootLoaders.map((b) => b.role).sort(), ['grub-efi', 'shim-efi'], 'UEFI only: no ISOLINUX, no hybrid MBR');
  const report = execFileSync('xorriso', ['-indev', iso, '-report_el_torito', 'plain'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(report, /El Torito boot img :\s+1\s+UEFI\s+y\s+none/);
  assert.doesNotMatch(report, /BIOS/, 'no BIOS entry');

  const { dir, cleanup } = scratchDir('images-iso-arm64');
  const server = await startRamdiskServer(TOKEN);
  try {
    server.commands.push({ command: 'poweroff', commandId: 'off-iso-arm64' });
    const hostIso = join(dir, 'host.iso');
    await writeHostIso({ baseIsoPath: iso, slot: isoManifest.hostOverlaySlot, overlay: buildHostOverlay({ agentUrl: `http://10.0.2.2:${server.port}`, token: TOKEN }), outputPath: hostIso });
    const vars = join(dir, 'AAVMF_VARS.fd');
    copyFileSync(AAVMF_VARS, vars);
    const { exited, serial, seconds } = await runQemuUntilExit('qemu-system-aarch64', [
      '-accel', 'tcg', '-machine', 'virt', '-cpu', 'cortex-a57', '-m', '1024', '-smp', '1',
      '-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${AAVMF_CODE}`, '-drive', `if=pflash,format=raw,unit=1,file=${vars}`,
      '-device', 'virtio-scsi-pci,id=scsi0', '-drive', `file=${hostIso},media=cdrom,if=none,id=cd0,readonly=on`, '-device', 'scsi-cd,drive=cd0,bootindex=0',
      '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:58,romfile=',
    ], join(dir, 'serial.log'), BOOT_TIMEOUT_MS);
    t.diagnostic(`AAVMF power-on → the ramdisk's heartbeat answered with poweroff: ${seconds.toFixed(1)} s under TCG`);
    assert.ok(exited, `the guest powered off on command; serial log:\n${serial.slice(-3000)}`);
    assert.match(serial, /rackside-ramdisk: started 0\.1\.0-rack \(kernel \d+\.\d+\.\d+-\d+-arm64/, 'the arm64 ramdisk ran, its console on ttyAMA0');
    const heartbeat = server.seen.find((s) => s.path === '/ramdisk/v1/heartbeat');
    assert.ok(heartbeat !== undefined, `the agent found rackside through the patched slot; seen: ${server.seen.map((s) => s.path).join(', ')}`);
    assert.equal(heartbeat.authorization, `Bearer ${TOKEN}`);
  } finally {
    await server.close();
    cleanup();
  }
});
