// Boots rackside's arm64 ramdisk — built on this amd64 head node from Debian's arm64 packages,
// its tools' libraries found from ELF DT_NEEDED without running them (images/foreign-tools.ts) —
// in qemu-system-aarch64 (`virt`, cortex-a57, TCG, 1 vCPU, 512 MiB) with -kernel/-initrd and
// `rackside.selftest=1`: /init loads the arm64 modules and runs every packed tool, which proves
// each found its libraries and interpreter, then powers off. The ramdisk is the lab's cached
// arm64 build (test/lab/rack/ramdisk-cache.ts), shared with test/e2e/inspect-arm64.test.ts.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { DebianPackageError } from '../../images/debian-package.js';
import { ensureRackRamdisk, type RackRamdisk } from '../lab/rack/ramdisk-cache.js';
import { integrationRequired, requireTools, scratchDir } from '../unit/images/helpers.js';
import { runQemuUntilExit, type QemuRun } from '../helpers/qemu-until-exit.js';

const BOOT_TIMEOUT_MS = 300_000;

/** Runs the guest until it powers off or the timeout. */
function runGuest(ramdisk: RackRamdisk, serialLog: string): Promise<QemuRun> {
  return runQemuUntilExit('qemu-system-aarch64', [
    '-accel', 'tcg', '-machine', 'virt', '-cpu', 'cortex-a57', '-m', '512', '-smp', '1',
    '-kernel', ramdisk.vmlinuz, '-initrd', ramdisk.initrd, '-append', 'console=ttyAMA0 panic=-1 rackside.selftest=1',
  ], serialLog, BOOT_TIMEOUT_MS);
}

test('qemu-system-aarch64 boots the arm64 ramdisk: /init loads the arm64 modules, every packed arm64 tool runs, selftest powers off', { timeout: 900_000 }, async (t) => {
  if (!requireTools(t, { 'qemu-system-aarch64': 'qemu-system-arm', 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod' })) return;
  let ramdisk: RackRamdisk;
  try {
    ramdisk = await ensureRackRamdisk({ arch: 'arm64', format: 'initrd', log: (line) => { t.diagnostic(line); } });
  } catch (err) {
    if (err instanceof DebianPackageError && !integrationRequired) {
      t.skip(`Debian arm64 packages unavailable: ${err.message}`);
      return;
    }
    throw err;
  }
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
