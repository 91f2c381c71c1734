/**
 * @module The rackside ISO (`format: 'iso'`, for virtual media): an El Torito image bootable on
 * BIOS (ISOLINUX, no-emulation boot with a boot info table) and UEFI (a FAT image as the
 * alternative El Torito entry holding `/EFI/BOOT/BOOTX64.EFI`), hybrid so it also boots from a
 * USB stick (isohybrid MBR and GPT with the EFI image as a partition). The arm64 ISO is UEFI only
 * (the El Torito EFI entry with `/EFI/BOOT/BOOTAA64.EFI`). Built with `xorriso -as mkisofs` and the
 * FAT image with `mkfs.vfat` + mtools.
 *
 * Reproducible: every staged file and directory gets mtime `SOURCE_DATE_EPOCH`, `mkfs.vfat
 * --invariant` with a fixed volume id makes the FAT image deterministic, mtools and xorriso read
 * `SOURCE_DATE_EPOCH` (xorriso derives the volume dates, the file dates and the GPT GUIDs from
 * it), and `-r` normalizes owners and modes; the same inputs give the same sha256 (tested).
 */
import { constants } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { IsoPath, isoKernelCommandLine, renderGrubConfig, renderIsolinuxConfig } from './boot-menus.js';
import type { BootLoaderFile } from './bootloaders.js';
import { runCommand, sha256File } from './files.js';
import { assertOverlayFits, validateHostOverlaySlot, type HostOverlaySlot } from './iso-host.js';

/** Default size of the per-host overlay slot: room for url, token and a large network_data.json. */
export const DEFAULT_HOST_OVERLAY_SLOT_BYTES = 64 * 1024;

/** Options of {@link buildIso}. */
export interface BuildIsoOptions {
  outputPath: string;
  vmlinuzPath: string;
  initrdPath: string;
  bootLoaders: readonly BootLoaderFile[];
  sourceDateEpoch: number;
  /** Shown in the boot menus and written to `/.disk/info`. */
  label: string;
  /** ISO 9660 volume id, `[A-Z0-9_]{1,32}`; default `RACKSIDE`. */
  volumeId?: string;
  /** Kernel arguments after the console ones (same for every host). */
  extraKernelArgs?: readonly string[];
  /** Size of `/boot/host.img`, a multiple of 2048; default {@link DEFAULT_HOST_OVERLAY_SLOT_BYTES}. */
  hostOverlaySlotBytes?: number;
  /**
   * The kernel's architecture (default amd64). arm64 makes a UEFI-only ISO: no ISOLINUX entry and
   * no hybrid MBR, `BOOTAA64.EFI` in the EFI image, the PL011 serial console on the command line.
   */
  arch?: 'amd64' | 'arm64';
}

/** What {@link buildIso} wrote. */
export interface BuildIsoResult {
  sha256: string;
  sizeBytes: number;
  hostOverlaySlot: HostOverlaySlot;
  kernelCommandLine: string;
  efiImageBytes: number;
}

/** Thrown when the ISO cannot be built (missing tool, bad option). */
export class IsoBuildError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IsoBuildError';
  }
}

function loader(files: readonly BootLoaderFile[], role: BootLoaderFile['role']): BootLoaderFile | undefined {
  return files.find((f) => f.role === role);
}

function required(files: readonly BootLoaderFile[], role: BootLoaderFile['role']): BootLoaderFile {
  const f = loader(files, role);
  if (f === undefined) throw new IsoBuildError(`boot loader file ${role} is required for the ISO`);
  return f;
}

/** Runs a tool, turning "not found" into an error naming the Debian package to install. */
async function tool(cmd: string, pkg: string, args: readonly string[], env: Record<string, string>): Promise<Buffer> {
  return runCommand(cmd, args, { env }).catch((err: unknown) => {
    const missing = err instanceof Error && /ENOENT/.test(err.message);
    throw new IsoBuildError(missing ? `${cmd} not found: apt-get install ${pkg}` : `${cmd} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  });
}

/**
 * Writes the El Torito EFI image: a FAT filesystem sized to its content with `EFI/BOOT/BOOTX64.EFI`
 * (shim when given, then GRUB as `grubx64.efi` beside it, which is where shim looks). mcopy stamps
 * the files with `SOURCE_DATE_EPOCH` (not the source mtimes).
 */
async function buildEfiImage(path: string, files: readonly BootLoaderFile[], env: Record<string, string>, arch: 'amd64' | 'arm64'): Promise<number> {
  const grub = required(files, 'grub-efi');
  const shim = loader(files, 'shim-efi');
  // UEFI §3.5.1.1: the removable-media boot path is \EFI\BOOT\BOOT{X64,AA64}.EFI; shim looks for grub{x64,aa64}.efi beside itself.
  const suffix = arch === 'arm64' ? 'AA64' : 'X64';
  const members: [string, string][] = shim === undefined ? [[grub.path, `BOOT${suffix}.EFI`]] : [[shim.path, `BOOT${suffix}.EFI`], [grub.path, `GRUB${suffix}.EFI`]];
  let contentBytes = 0;
  for (const [src] of members) contentBytes += (await stat(src)).size;
  // FAT overhead (two FATs, root directory, cluster slack) stays well under 10 % + 256 KiB here.
  const kib = Math.ceil((contentBytes * 1.1 + 256 * 1024) / 1024 / 64) * 64;
  await rm(path, { force: true });
  await tool('mkfs.vfat', 'dosfstools', ['-C', '--invariant', '-i', '5241434b', '-n', 'RACKSIDEEFI', path, String(kib)], env);
  await tool('mmd', 'mtools', ['-i', path, '::/EFI', '::/EFI/BOOT'], env);
  for (const [src, name] of members) await tool('mcopy', 'mtools', ['-i', path, src, `::/EFI/BOOT/${name}`], env);
  return kib * 1024;
}

async function setTreeTimes(dir: string, seconds: number): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) await setTreeTimes(p, seconds);
    await utimes(p, seconds, seconds);
  }
  await utimes(dir, seconds, seconds);
}

/** Parses `xorriso -find PATH -exec report_lba` output: `File data lba: xt , startlba , blocks , filesize , 'path'`. */
export function parseReportLba(output: string, path: string): HostOverlaySlot | undefined {
  for (const line of output.split('\n')) {
    const m = /^File data lba:\s*\d+\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*'(.*)'\s*$/.exec(line.trim());
    if (m?.[1] !== undefined && m[3] !== undefined && m[4] === path) return { offsetBytes: Number(m[1]) * 2048, sizeBytes: Number(m[3]) };
  }
  return undefined;
}

async function assertZeros(path: string, slot: HostOverlaySlot): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(slot.sizeBytes);
    const { bytesRead } = await fh.read(buf, 0, slot.sizeBytes, slot.offsetBytes);
    if (bytesRead !== slot.sizeBytes || buf.some((b) => b !== 0)) throw new IsoBuildError(`the host overlay slot at ${slot.offsetBytes} in ${path} is not the zero-filled ${IsoPath.hostOverlay}`);
  } finally {
    await fh.close();
  }
}

/**
 * Builds the hybrid BIOS/UEFI ISO at `outputPath` (through a temporary file and a rename) and
 * resolves with its sha256 and the byte range of the host overlay slot. Throws
 * {@link IsoBuildError} naming the missing tool's package (xorriso, dosfstools, mtools).
 */
export async function buildIso(options: BuildIsoOptions): Promise<BuildIsoResult> {
  const slotBytes = options.hostOverlaySlotBytes ?? DEFAULT_HOST_OVERLAY_SLOT_BYTES;
  if (!Number.isSafeInteger(slotBytes) || slotBytes < 2048 || slotBytes % 2048 !== 0) throw new IsoBuildError('hostOverlaySlotBytes must be a positive multiple of 2048');
  const volumeId = options.volumeId ?? 'RACKSIDE';
  if (!/^[A-Z0-9_]{1,32}$/.test(volumeId)) throw new IsoBuildError('volumeId must be 1-32 characters of [A-Z0-9_]');
  const env = { SOURCE_DATE_EPOCH: String(options.sourceDateEpoch), MTOOLS_SKIP_CHECK: '1', TZ: 'UTC' };
  await mkdir(dirname(options.outputPath), { recursive: true });
  const work = await mkdtemp(join(dirname(options.outputPath), '.iso-build-'));
  try {
    const stage = join(work, 'stage');
    const at = (p: string): string => join(stage, p);
    const arch = options.arch ?? 'amd64';
    const bios = arch === 'amd64';
    for (const d of ['.disk', 'boot/grub', ...(bios ? ['isolinux'] : [])]) await mkdir(at(d), { recursive: true });
    await writeFile(at(IsoPath.diskInfo), `${options.label}\n`);
    await copyFile(options.vmlinuzPath, at(IsoPath.kernel));
    await copyFile(options.initrdPath, at(IsoPath.initrd));
    await writeFile(at(IsoPath.hostOverlay), Buffer.alloc(slotBytes));
    const menu = { label: options.label, extraKernelArgs: options.extraKernelArgs ?? [], arch };
    await writeFile(at(IsoPath.grubConfig), renderGrubConfig(menu));
    if (bios) {
      await writeFile(at(IsoPath.isolinuxConfig), renderIsolinuxConfig(menu));
      await copyFile(required(options.bootLoaders, 'isolinux-bin').path, at(IsoPath.isolinuxBin));
      await copyFile(required(options.bootLoaders, 'ldlinux-c32').path, at(IsoPath.ldlinux));
    }
    const efiImageBytes = await buildEfiImage(at(IsoPath.efiImage), options.bootLoaders, env, arch);
    await setTreeTimes(stage, options.sourceDateEpoch);

    const mbr = bios ? loader(options.bootLoaders, 'isohybrid-mbr') : undefined;
    const tmp = join(work, 'out.iso');
    // BIOS: ISOLINUX first, the EFI image as the alternative El Torito entry; arm64: the EFI image alone.
    const elTorito = bios
      ? ['-b', IsoPath.isolinuxBin.slice(1), '-c', IsoPath.bootCatalog.slice(1), '-no-emul-boot', '-boot-load-size', '4', '-boot-info-table', '-eltorito-alt-boot', '-e', IsoPath.efiImage.slice(1), '-no-emul-boot']
      : ['-c', IsoPath.efiBootCatalog.slice(1), '-e', IsoPath.efiImage.slice(1), '-no-emul-boot'];
    await tool('xorriso', 'xorriso', [
      '-as', 'mkisofs', '-quiet', '-o', tmp, '-V', volumeId, '-r', '-J', '-joliet-long', '-iso-level', '3',
      ...(mbr === undefined ? [] : ['-isohybrid-mbr', mbr.path]),
      ...elTorito,
      ...(mbr === undefined ? [] : ['-isohybrid-gpt-basdat']),
      stage,
    ], env);
    const report = await tool('xorriso', 'xorriso', ['-indev', tmp, '-find', IsoPath.hostOverlay, '-exec', 'report_lba', '--'], env);
    const slot = parseReportLba(report.toString('utf8'), IsoPath.hostOverlay);
    if (slot === undefined) throw new IsoBuildError(`xorriso did not report where ${IsoPath.hostOverlay} lies in the ISO`);
    validateHostOverlaySlot(slot);
    await assertZeros(tmp, slot);
    await rename(tmp, options.outputPath);
    return {
      sha256: await sha256File(options.outputPath),
      sizeBytes: (await stat(options.outputPath)).size,
      hostOverlaySlot: slot,
      kernelCommandLine: isoKernelCommandLine(menu.extraKernelArgs, arch),
      efiImageBytes,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Writes a host's ISO: a copy of the base ISO (a reflink where the filesystem supports it) with the
 * host overlay written into the slot, zero-padded. Throws HostIsoError when it does not fit.
 */
export async function writeHostIso(options: { baseIsoPath: string; slot: HostOverlaySlot; overlay: Uint8Array; outputPath: string }): Promise<void> {
  assertOverlayFits(options.slot, options.overlay);
  const tmp = `${options.outputPath}.${process.pid}.tmp`;
  try {
    await copyFile(options.baseIsoPath, tmp, constants.COPYFILE_FICLONE);
    const fh = await open(tmp, 'r+');
    try {
      const slotData = Buffer.alloc(options.slot.sizeBytes);
      slotData.set(options.overlay);
      await fh.write(slotData, 0, slotData.length, options.slot.offsetBytes);
    } finally {
      await fh.close();
    }
    await rename(tmp, options.outputPath);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
