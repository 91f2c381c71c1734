/**
 * @module The virtual rack's OS images and the checks on a written guest disk.
 *
 * {@link buildRackOsImage} writes a 3 MiB raw disk image: an MBR whose boot code prints a
 * marker line on COM1 (boot-sector.ts) — so the serial log proves a BIOS guest booted the
 * written disk — and one bootable FAT12 partition (MBR type 0x01) at 1 MiB (mkfs.vfat, dosfstools) holding
 * `MARKER.TXT` (mcopy, mtools); optionally converted to qcow2 (qemu-img, qemu-utils). For a UEFI
 * guest (`uefiLoader`: a GRUB EFI image, e.g. Debian's signed monolithic `grubx64.efi`) the
 * partition is a 6 MiB EFI system partition (MBR type 0xEF) that also holds
 * `/EFI/BOOT/BOOTX64.EFI` (the removable-media path OVMF boots; `BOOTAA64.EFI` for AAVMF, with
 * Debian's signed monolithic `grubaa64.efi`) and next to it a `grub.cfg` that
 * echoes the marker line (OVMF copies the console to COM1) and waits: OVMF has no CSM, so it never
 * runs the MBR boot code. Debian's signed GRUB sources `$cmdpath/grub.cfg` when neither
 * `/.disk/info` nor `/boot/grub` exists (it prints two "no such device" lines first).
 * {@link readGuestDisk} reads a guest's disk file back: the partition table, the marker file
 * (mtools reads a FAT at a byte offset: `-i FILE@@OFFSET`), and the files of a `config-2` ISO
 * 9660 config drive partition (copied out, then `xorriso -osirrox` extracts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeMbrPartitions, encodeBootSector, type MbrPartition } from './boot-sector.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const SECTOR = 512;

/** The Debian tools this module runs, by package. */
export const OS_IMAGE_TOOLS = { 'mkfs.vfat': 'dosfstools', mcopy: 'mtools', mmd: 'mtools', mtype: 'mtools', xorriso: 'xorriso', 'qemu-img': 'qemu-utils' } as const;

/** A built OS image. */
export interface RackOsImage {
  path: string;
  format: 'raw' | 'qcow2';
  sha256: string;
  sizeBytes: number;
  /** The line the MBR prints on COM1. */
  bootMessage: string;
  /** The content of `MARKER.TXT` on partition 1. */
  marker: string;
  /** Partition 1 as the MBR describes it. */
  partition: MbrPartition;
}

/** Options of {@link buildRackOsImage}. */
export interface RackOsImageOptions {
  /** A GRUB EFI image: makes partition 1 a bootable EFI system partition (see the module comment). */
  uefiLoader?: string;
  /** The removable-media file name the loader goes to under `/EFI/BOOT/` (default `BOOTX64.EFI`; AAVMF: `BOOTAA64.EFI`). */
  uefiBootFile?: 'BOOTX64.EFI' | 'BOOTAA64.EFI';
}

/** Writes the image (see the module comment) to `dir/<name>.<format>`; `tag` goes into both markers. */
export async function buildRackOsImage(dir: string, name: string, tag: string, format: 'raw' | 'qcow2' = 'raw', options: RackOsImageOptions = {}): Promise<RackOsImage> {
  const bootMessage = `RACKSIDE-OS-BOOTED ${tag}`;
  const marker = `rackside e2e OS image ${tag}\n`;
  const fsPath = join(dir, `${name}.fat`);
  const markerPath = join(dir, `${name}.marker.txt`);
  await rm(fsPath, { force: true });
  const uefi = options.uefiLoader !== undefined;
  await run('mkfs.vfat', ['-C', '-F', '12', '-n', 'RACKSIDEOS', '--invariant', fsPath, String((uefi ? 6 : 2) * 1024)]);
  await writeFile(markerPath, marker);
  await run('mcopy', ['-i', fsPath, markerPath, '::MARKER.TXT']);
  if (options.uefiLoader !== undefined) {
    const cfgPath = join(dir, `${name}.grub.cfg`);
    await writeFile(cfgPath, `echo "${bootMessage}"\nsleep 86400\n`);
    await run('mmd', ['-i', fsPath, '::EFI', '::EFI/BOOT']);
    await run('mcopy', ['-i', fsPath, options.uefiLoader, `::EFI/BOOT/${options.uefiBootFile ?? 'BOOTX64.EFI'}`]);
    await run('mcopy', ['-i', fsPath, cfgPath, '::EFI/BOOT/grub.cfg']);
    await rm(cfgPath, { force: true });
  }
  const fat = await readFile(fsPath);
  const partition: MbrPartition = { type: uefi ? 0xef : 0x01, startSector: MiB / SECTOR, sectors: fat.length / SECTOR, bootable: true };
  const raw = Buffer.alloc(MiB + fat.length);
  raw.set(encodeBootSector(`\r\n${bootMessage}\r\n`, [partition]), 0);
  raw.set(fat, MiB);
  const rawPath = join(dir, `${name}.raw`);
  await writeFile(rawPath, raw);
  await rm(fsPath, { force: true });
  await rm(markerPath, { force: true });
  let path = rawPath;
  if (format === 'qcow2') {
    path = join(dir, `${name}.qcow2`);
    await run('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', rawPath, path]);
    await rm(rawPath, { force: true });
  }
  const bytes = await readFile(path);
  return { path, format, sha256: createHash('sha256').update(bytes).digest('hex'), sizeBytes: bytes.length, bootMessage, marker, partition };
}

/** What {@link readGuestDisk} found on a disk file. */
export interface GuestDiskReport {
  /** Undefined when the first sector has no MBR signature (wiped, or never written). */
  partitions: MbrPartition[] | undefined;
  /** True when the first and the last MiB are all zero bytes. */
  endsZeroed: boolean;
  /** `MARKER.TXT` of partition 1, when it is a FAT with that file. */
  marker?: string;
  /** Files of the config-2 partition (the last Linux-type partition), path → text. */
  configDrive?: Record<string, string>;
}

async function readAt(path: string, offset: number, length: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

const isZero = (b: Buffer): boolean => b.every((x) => x === 0);

/** Reads `diskPath` (a raw guest disk) as the module comment says; `scratchDir` holds temporary files. */
export async function readGuestDisk(diskPath: string, scratchDir: string, configDriveFiles: readonly string[]): Promise<GuestDiskReport> {
  const size = (await open(diskPath, 'r').then(async (f) => { try { return (await f.stat()).size; } finally { await f.close(); } }));
  const head = await readAt(diskPath, 0, MiB);
  const tail = await readAt(diskPath, Math.max(0, size - MiB), MiB);
  const partitions = decodeMbrPartitions(head.subarray(0, SECTOR));
  const report: GuestDiskReport = { partitions, endsZeroed: isZero(head) && isZero(tail) };
  const first = partitions?.[0];
  if (first !== undefined && [0x01, 0x04, 0x06, 0x0b, 0x0c, 0x0e, 0xef].includes(first.type)) {
    const out = await run('mtype', ['-i', `${diskPath}@@${first.startSector * SECTOR}`, '::MARKER.TXT']).catch(() => undefined);
    if (out !== undefined) report.marker = out.stdout;
  }
  const drive = partitions?.filter((p) => p.type === 0x83).at(-1);
  if (drive !== undefined) {
    const isoPath = join(scratchDir, 'config-drive.iso');
    await writeFile(isoPath, await readAt(diskPath, drive.startSector * SECTOR, drive.sectors * SECTOR));
    const files: Record<string, string> = {};
    for (const file of configDriveFiles) {
      const out = join(scratchDir, `cd-${file.replaceAll('/', '_')}`);
      await rm(out, { force: true });
      const ok = await run('xorriso', ['-osirrox', 'on', '-indev', isoPath, '-extract', `/${file}`, out]).then(() => true, () => false);
      if (ok) files[file] = await readFile(out, 'utf8');
    }
    report.configDrive = files;
    await rm(isoPath, { force: true });
  }
  return report;
}
