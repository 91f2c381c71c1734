// The rackside ISO (format 'iso') from the real Debian kernel, busybox-static and boot loaders
// (isolinux, syslinux-common, grub-efi-amd64-signed, shim-signed; fetched with apt, never
// installed), booted in QEMU (TCG) from a CD drive with SeaBIOS, OVMF and OVMF with Secure Boot.
// Each boot gets its own per-host ISO (the overlay written into the slot) pointing the agent at a
// loopback server, which answers the first heartbeat with poweroff: the heartbeat proves the
// overlay arrived; the serial log shows the console arguments worked.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildHostOverlay, buildRamdisk } from '../../images/index.js';
import { DebianPackageError } from '../../images/debian-package.js';
import { writeHostIso } from '../../images/iso.js';
import type { BuildRamdiskResult } from '../../images/builder.js';
import { integrationRequired, requireTools, run, scratchDir } from '../unit/images/helpers.js';
import { ovmfArgs, runQemu } from '../unit/images/qemu.js';
import { startRamdiskServer } from '../unit/images/ramdisk-server.js';

const cacheDir = join(tmpdir(), 'rackside-images-cache');
const token = 'iso-test-token-0123456789';
const tools = { 'qemu-system-x86_64': 'qemu-system-x86', xorriso: 'xorriso', mcopy: 'mtools', 'mkfs.vfat': 'dosfstools', 'apt-get': 'apt', depmod: 'kmod' };

const shared = scratchDir('images-iso-build');
after(shared.cleanup);
let built: Promise<BuildRamdiskResult> | undefined;

async function build(t: TestContext): Promise<BuildRamdiskResult | undefined> {
  built ??= buildRamdisk({ outputDir: join(shared.dir, 'out'), cacheDir, sourceDateEpoch: 1_700_000_000, format: 'iso', agentVersion: '0.1.0-iso' });
  try {
    return await built;
  } catch (err) {
    if (err instanceof DebianPackageError && !integrationRequired) {
      t.skip(`Debian packages unavailable: ${err.message}`);
      return undefined;
    }
    throw err;
  }
}

test('the ISO is a hybrid El Torito image with BIOS and UEFI entries, and the manifest records the slot', { timeout: 600_000 }, async (t) => {
  if (!requireTools(t, tools)) return;
  const result = await build(t);
  if (result === undefined) return;
  const iso = result.paths.iso!;
  const report = run('xorriso', ['-indev', iso, '-report_el_torito', 'plain'], {});
  assert.match(report, /El Torito boot img :\s+1\s+BIOS\s+y\s+none/);
  assert.match(report, /El Torito boot img :\s+2\s+UEFI\s+y\s+none/);
  const head = readFileSync(iso).subarray(0, 1024);
  assert.deepEqual([head[510], head[511]], [0x55, 0xaa], 'isohybrid MBR (boots from a USB stick too)');
  assert.equal(head.subarray(512, 520).toString('latin1'), 'EFI PART', 'GPT header with the EFI image as a partition');
  assert.deepEqual(result.manifest.outputs.map((o) => o.name), ['vmlinuz', 'initrd', 'rackside.iso']);
  assert.equal(result.manifest.format, 'iso');
  assert.equal(result.manifest.iso!.kernelCommandLine, 'console=tty0 console=ttyS0,115200');
  assert.deepEqual(result.manifest.iso!.bootLoaders.map((b) => b.role).sort(), ['grub-efi', 'isohybrid-mbr', 'isolinux-bin', 'ldlinux-c32', 'shim-efi']);
  for (const [inIso, file] of [['/boot/grub/grub.cfg', 'grub.cfg'], ['/isolinux/isolinux.cfg', 'isolinux.cfg'], ['/.disk/info', 'info']] as const) {
    run('xorriso', ['-indev', iso, '-osirrox', 'on', '-extract', inIso, join(shared.dir, file)]);
  }
  assert.match(readFileSync(join(shared.dir, 'grub.cfg'), 'utf8'), /linux \/boot\/vmlinuz console=tty0 console=ttyS0,115200\n\s+initrd \/boot\/initrd \/boot\/host\.img/);
  assert.match(readFileSync(join(shared.dir, 'isolinux.cfg'), 'utf8'), /APPEND initrd=\/boot\/initrd,\/boot\/host\.img console=tty0 console=ttyS0,115200/);
  assert.equal(readFileSync(join(shared.dir, 'info'), 'utf8'), 'rackside ramdisk 0.1.0-iso\n');
});

const firmwares: Record<string, (dir: string) => string[]> = {
  'SeaBIOS': () => ['-machine', 'pc,graphics=off'],
  'OVMF': (dir) => ovmfArgs(dir),
  'OVMF with Secure Boot': (dir) => ovmfArgs(dir, { secureBoot: true }),
};

for (const [name, firmware] of Object.entries(firmwares)) {
  test(`the ISO boots from a CD drive with ${name}; the per-host slot carries the agent URL and token`, { timeout: 600_000 }, async (t) => {
    if (!requireTools(t, tools)) return;
    if (name !== 'SeaBIOS' && !existsSync('/usr/share/OVMF/OVMF_CODE_4M.fd')) {
      if (integrationRequired) throw new Error('missing OVMF (apt-get install ovmf)');
      t.skip('missing OVMF (apt-get install ovmf)');
      return;
    }
    const { dir, cleanup } = scratchDir('images-iso-boot');
    const server = await startRamdiskServer(token);
    try {
      const result = await build(t);
      if (result === undefined) return;
      server.commands.push({ command: 'poweroff', commandId: 'off-iso' });
      const hostIso = join(dir, 'host.iso');
      const slot = result.manifest.iso!.hostOverlaySlot;
      await writeHostIso({ baseIsoPath: result.paths.iso!, slot, overlay: buildHostOverlay({ agentUrl: `http://10.0.2.2:${server.port}`, token }), outputPath: hostIso });
      const { exited, serial } = await runQemu(
        [
          ...firmware(dir), '-m', '512',
          '-drive', `file=${hostIso},media=cdrom,if=none,id=cd0,readonly=on`, '-device', 'ide-cd,drive=cd0,bootindex=0',
          '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:57,romfile=',
        ],
        join(dir, 'serial.log'),
        { timeoutMs: 300_000 },
      );
      assert.ok(exited, `the guest powered off on command; serial log:\n${serial.slice(-3000)}`);
      assert.match(serial, /rackside-ramdisk: started 0\.1\.0-iso/);
      if (name === 'OVMF with Secure Boot') assert.match(serial, /EFI stub: UEFI Secure Boot is enabled/);
      const heartbeat = server.seen.find((s) => s.path === '/ramdisk/v1/heartbeat');
      assert.ok(heartbeat !== undefined, 'the agent found rackside through the patched slot');
      assert.equal((heartbeat.body as { version: string }).version, '0.1.0-iso');
      assert.deepEqual({ ...(server.seen.at(-1)?.body as object), log: [] }, { command_id: 'off-iso', command: 'poweroff', status: 'ok', message: null, details: null, log: [] });
    } finally {
      await server.close();
      cleanup();
    }
  });
}
