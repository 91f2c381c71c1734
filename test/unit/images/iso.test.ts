import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRamdisk, type BuildRamdiskOptions } from '../../../images/builder.js';
import { buildHostOverlay } from '../../../images/host-overlay.js';
import { parseReportLba, writeHostIso } from '../../../images/iso.js';
import { decodeManifest } from '../../../images/manifest.js';
import { defaultAgentScriptDir } from '../../../images/builder.js';
import { writeFixtureModulesTree } from './fixtures.js';
import { requireTools, run, scratchDir } from './helpers.js';

const epoch = 1_700_000_000;
const isoTools = { xorriso: 'xorriso', mcopy: 'mtools', 'mkfs.vfat': 'dosfstools' };

/** Fixture kernel, busybox stand-in and fake boot loader files (xorriso does not look inside them). */
function isoOptions(dir: string, outputDir: string): BuildRamdiskOptions {
  const modulesDir = writeFixtureModulesTree(join(dir, 'kernel'), '6.1.0-99-test');
  writeFileSync(join(dir, 'vmlinuz'), 'fake kernel image\n');
  writeFileSync(join(dir, 'busybox'), '#!/bin/sh\n[ "$1" = --list-full ] && printf "bin/sh\\n"\n');
  chmodSync(join(dir, 'busybox'), 0o755);
  const loaders = join(dir, 'loaders');
  mkdirSync(loaders, { recursive: true });
  writeFileSync(join(loaders, 'isolinux.bin'), Buffer.alloc(2048, 0x90));
  writeFileSync(join(loaders, 'ldlinux.c32'), 'ldlinux\n');
  writeFileSync(join(loaders, 'isohdpfx.bin'), Buffer.alloc(432));
  writeFileSync(join(loaders, 'grub.efi'), Buffer.alloc(300_000, 0x47));
  writeFileSync(join(loaders, 'shim.efi'), Buffer.alloc(100_000, 0x53));
  const tools = join(dir, 'tools');
  mkdirSync(tools, { recursive: true });
  if (!existsSync(join(tools, 'mytool'))) symlinkSync('/bin/ls', join(tools, 'mytool'));
  return {
    outputDir,
    cacheDir: join(dir, 'cache'),
    kernel: { kind: 'tree', vmlinuzPath: join(dir, 'vmlinuz'), modulesDir },
    busybox: { kind: 'file', path: join(dir, 'busybox') },
    agentScriptDir: defaultAgentScriptDir(),
    agentVersion: '0.1.0-test',
    sourceDateEpoch: epoch,
    compression: 'gzip',
    modules: ['virtio_net'],
    hostTools: ['mytool'],
    toolSearchPath: [tools],
    format: 'iso',
    bootLoaders: {
      kind: 'files',
      isolinuxBin: join(loaders, 'isolinux.bin'),
      ldlinuxC32: join(loaders, 'ldlinux.c32'),
      isohybridMbr: join(loaders, 'isohdpfx.bin'),
      grubEfi: join(loaders, 'grub.efi'),
      shimEfi: join(loaders, 'shim.efi'),
    },
    isoKernelArgs: ['rackside.shell=1'],
  };
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

function extract(iso: string, inIso: string, to: string): Buffer {
  run('xorriso', ['-indev', iso, '-osirrox', 'on', '-extract', inIso, to]);
  return readFileSync(to);
}

test('format iso: reproducible hybrid ISO with both boot menus, the EFI image and a zero slot recorded in the manifest', async (t) => {
  if (!requireTools(t, isoTools)) return;
  const { dir, cleanup } = scratchDir('iso');
  try {
    const one = await buildRamdisk(isoOptions(dir, join(dir, 'one')));
    await new Promise((r) => setTimeout(r, 1100)); // a later wall clock must not change anything
    const two = await buildRamdisk(isoOptions(dir, join(dir, 'two')));
    assert.equal(sha256(one.paths.iso!), sha256(two.paths.iso!), 'same inputs, same ISO sha256');
    const manifest = decodeManifest(readFileSync(one.paths.manifest, 'utf8'));
    assert.equal(manifest.format, 'iso');
    assert.deepEqual(manifest.outputs.find((o) => o.name === 'rackside.iso'), { name: 'rackside.iso', sha256: sha256(one.paths.iso!), sizeBytes: readFileSync(one.paths.iso!).length });
    assert.equal(manifest.iso?.kernelCommandLine, 'console=tty0 console=ttyS0,115200 rackside.shell=1');
    const slot = manifest.iso.hostOverlaySlot;
    assert.equal(slot.path, '/boot/host.img');
    assert.equal(slot.sizeBytes, 64 * 1024);
    assert.equal(slot.offsetBytes % 2048, 0);
    assert.ok(readFileSync(one.paths.iso!).subarray(slot.offsetBytes, slot.offsetBytes + slot.sizeBytes).every((b) => b === 0));

    assert.deepEqual(extract(one.paths.iso!, '/boot/initrd', join(dir, 'initrd.x')), readFileSync(one.paths.initrd));
    assert.match(extract(one.paths.iso!, '/boot/grub/grub.cfg', join(dir, 'grub.x')).toString(), /linux \/boot\/vmlinuz console=tty0 console=ttyS0,115200 rackside\.shell=1\n/);
    assert.match(extract(one.paths.iso!, '/isolinux/isolinux.cfg', join(dir, 'iso.x')).toString(), /APPEND initrd=\/boot\/initrd,\/boot\/host\.img console=tty0/);
    const efi = join(dir, 'efi.img');
    extract(one.paths.iso!, '/boot/efi.img', efi);
    const listing = run('mdir', ['-i', efi, '-b', '::/EFI/BOOT']);
    assert.match(listing, /BOOTX64\.EFI/);
    assert.match(listing, /GRUBX64\.EFI/);
    run('mcopy', ['-i', efi, '::/EFI/BOOT/BOOTX64.EFI', join(dir, 'boot.efi')]);
    assert.equal(sha256(join(dir, 'boot.efi')), sha256(join(dir, 'loaders/shim.efi')), 'shim is the removable-media boot path');
    const report = run('xorriso', ['-indev', one.paths.iso!, '-report_el_torito', 'plain']);
    assert.match(report, /BIOS\s+y\s+none/);
    assert.match(report, /UEFI\s+y\s+none/);
  } finally {
    cleanup();
  }
});

test('writeHostIso writes the overlay into the slot and nothing else; an overlay larger than the slot is refused', async (t) => {
  if (!requireTools(t, isoTools)) return;
  const { dir, cleanup } = scratchDir('iso-host');
  try {
    const built = await buildRamdisk({ ...isoOptions(dir, join(dir, 'out')), hostOverlaySlotBytes: 4096 });
    const slot = built.manifest.iso!.hostOverlaySlot;
    const overlay = buildHostOverlay({ agentUrl: 'http://192.0.2.1:8081', token: 'host-token-0123456789' });
    const hostIso = join(dir, 'host.iso');
    await writeHostIso({ baseIsoPath: built.paths.iso!, slot, overlay, outputPath: hostIso });
    const base = readFileSync(built.paths.iso!);
    const host = readFileSync(hostIso);
    assert.equal(host.length, base.length);
    assert.deepEqual(host.subarray(0, slot.offsetBytes), base.subarray(0, slot.offsetBytes));
    assert.deepEqual(host.subarray(slot.offsetBytes + slot.sizeBytes), base.subarray(slot.offsetBytes + slot.sizeBytes));
    const fromIso = extract(hostIso, '/boot/host.img', join(dir, 'host.x'));
    assert.deepEqual(fromIso.subarray(0, overlay.length), overlay);
    assert.ok(fromIso.subarray(overlay.length).every((b) => b === 0));
    await assert.rejects(writeHostIso({ baseIsoPath: built.paths.iso!, slot, overlay: Buffer.alloc(4097, 1), outputPath: join(dir, 'big.iso') }), /slot holds 4096/);
    assert.ok(!existsSync(join(dir, 'big.iso')));
  } finally {
    cleanup();
  }
});

test('parseReportLba reads the xorriso report line of the slot', () => {
  const out = "Report layout: xt , Startlba ,   Blocks , Filesize , ISO image path\nFile data lba:  0 ,       34 ,       32 ,    65536 , '/boot/host.img'\n";
  assert.deepEqual(parseReportLba(out, '/boot/host.img'), { offsetBytes: 34 * 2048, sizeBytes: 65536 });
  assert.equal(parseReportLba(out, '/boot/other'), undefined);
});
