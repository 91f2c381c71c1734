/**
 * @module The boot loaders of the rackside ISO: ISOLINUX for BIOS El Torito boot (`isolinux.bin`
 * and its `isohdpfx.bin` hybrid MBR from Debian's `isolinux`, `ldlinux.c32` from
 * `syslinux-common`) and, for UEFI, Debian's signed CD GRUB (`gcdx64.efi.signed` from
 * `grub-efi-amd64-signed`) started by shim (`shimx64.efi.signed` from `shim-signed`), the chain
 * Debian's own installer ISOs use, so the ISO also boots with Secure Boot on (Debian's kernel is
 * signed with a key shim trusts). Packages are fetched with `apt-get download` and unpacked into
 * the cache, never installed: their maintainer scripts would touch the build host's boot setup.
 */
import { join } from 'node:path';
import { HEAD_NODE_ARCH } from './arch-inputs.js';
import type { DebianArch } from './debian-arch.js';
import { fetchDebianPackage } from './debian-package.js';
import { ForeignApt } from './foreign-apt.js';
import { pathExists, sha256File } from './files.js';
import type { InputOrigin } from './kernel.js';

/** Where the boot loader files come from. */
export type BootLoaderSource =
  | { kind: 'debian' }
  | {
      kind: 'files';
      isolinuxBin: string;
      ldlinuxC32: string;
      /** Hybrid MBR (`isohdpfx.bin`) so the ISO also boots from a USB stick; optional. */
      isohybridMbr?: string;
      /** A GRUB EFI image that searches `/.disk/info` and sources `/boot/grub/grub.cfg` (Debian's gcdx64.efi). */
      grubEfi: string;
      /** shim; when absent GRUB itself is `BOOTX64.EFI` (no Secure Boot). */
      shimEfi?: string;
    };

/** One resolved boot loader file. */
export interface BootLoaderFile {
  role: 'isolinux-bin' | 'ldlinux-c32' | 'isohybrid-mbr' | 'grub-efi' | 'shim-efi';
  path: string;
  sha256: string;
  origin: InputOrigin;
}

/** Thrown when a boot loader file is missing. */
export class BootLoaderError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BootLoaderError';
  }
}

/** Debian package and path inside it of each boot loader file, per architecture (arm64: UEFI only). */
const debianFiles: Readonly<Record<DebianArch, readonly { role: BootLoaderFile['role']; pkg: string; path: string }[]>> = {
  amd64: [
    { role: 'isolinux-bin', pkg: 'isolinux', path: 'usr/lib/ISOLINUX/isolinux.bin' },
    { role: 'isohybrid-mbr', pkg: 'isolinux', path: 'usr/lib/ISOLINUX/isohdpfx.bin' },
    { role: 'ldlinux-c32', pkg: 'syslinux-common', path: 'usr/lib/syslinux/modules/bios/ldlinux.c32' },
    { role: 'grub-efi', pkg: 'grub-efi-amd64-signed', path: 'usr/lib/grub/x86_64-efi-signed/gcdx64.efi.signed' },
    { role: 'shim-efi', pkg: 'shim-signed', path: 'usr/lib/shim/shimx64.efi.signed' },
  ],
  arm64: [
    { role: 'grub-efi', pkg: 'grub-efi-arm64-signed', path: 'usr/lib/grub/arm64-efi-signed/gcdaa64.efi.signed' },
    { role: 'shim-efi', pkg: 'shim-signed', path: 'usr/lib/shim/shimaa64.efi.signed' },
  ],
};

async function fileEntry(role: BootLoaderFile['role'], path: string, origin: InputOrigin): Promise<BootLoaderFile> {
  if (!(await pathExists(path))) throw new BootLoaderError(`boot loader file ${path} (${role}) does not exist`);
  return { role, path, sha256: await sha256File(path), origin };
}

/**
 * Resolves the boot loader files of `arch` (default the head node's), fetching Debian packages
 * into `cacheDir` for the default source — another architecture's through its private apt
 * (foreign-apt.ts). Throws {@link BootLoaderError} for a missing file, DebianPackageError when
 * apt fails.
 */
export async function resolveBootLoaders(source: BootLoaderSource, cacheDir: string, arch: DebianArch = HEAD_NODE_ARCH): Promise<BootLoaderFile[]> {
  if (source.kind === 'files') {
    const out = [
      await fileEntry('isolinux-bin', source.isolinuxBin, { kind: 'file', path: source.isolinuxBin }),
      await fileEntry('ldlinux-c32', source.ldlinuxC32, { kind: 'file', path: source.ldlinuxC32 }),
      await fileEntry('grub-efi', source.grubEfi, { kind: 'file', path: source.grubEfi }),
    ];
    if (source.isohybridMbr !== undefined) out.push(await fileEntry('isohybrid-mbr', source.isohybridMbr, { kind: 'file', path: source.isohybridMbr }));
    if (source.shimEfi !== undefined) out.push(await fileEntry('shim-efi', source.shimEfi, { kind: 'file', path: source.shimEfi }));
    return out;
  }
  const out: BootLoaderFile[] = [];
  const foreign = arch === HEAD_NODE_ARCH ? undefined : new ForeignApt(arch, cacheDir);
  for (const f of debianFiles[arch]) {
    const pkg = foreign === undefined ? await fetchDebianPackage(f.pkg, cacheDir) : await foreign.fetch(f.pkg);
    out.push(await fileEntry(f.role, join(pkg.rootDir, f.path), { kind: 'debian', package: f.pkg, version: pkg.version, debSha256: pkg.debSha256 }));
  }
  return out;
}
