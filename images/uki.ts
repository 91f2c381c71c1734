/**
 * @module Unified kernel images (UKI, the UAPI Group's "Unified Kernel Image" specification):
 * one EFI binary that carries the kernel, its initrd and its command line, so UEFI HTTPS boot
 * needs no second-stage loader that speaks TLS (docs/https-boot.md). The binary is Debian's
 * systemd-boot stub (`systemd-boot-efi`: `/usr/lib/systemd/boot/efi/linuxx64.efi.stub`) with
 * `.osrel`, `.cmdline`, `.linux` and `.initrd` sections added by `objcopy` (binutils) at the fixed
 * addresses systemd 252's stub documents (bookworm ships no `ukify`); several initrds are
 * concatenated (the kernel unpacks concatenated cpio archives in order, later files winning): a
 * host's image adds the CA its ramdisk verifies rackside with (host-overlay.ts `buildCaOverlay`).
 *
 * Images are kept by content: the file name is a hash of the stub, kernel, initrds and command
 * line, so a host whose inputs did not change gets the same file, and a build is reproducible
 * (objcopy's time stamp and checksum are pinned, pe-header.ts): the same inputs give the same
 * bytes.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from './files.js';
import { concatInitrds } from './host-overlay.js';
import { pinPeHeader } from './pe-header.js';

/** Debian's x86-64 systemd-boot stub (package `systemd-boot-efi`). */
export const UKI_STUB_X64 = '/usr/lib/systemd/boot/efi/linuxx64.efi.stub';

/** Section addresses for systemd 252's stub (its man page's objcopy recipe): `.linux` may be at most 16 MiB. */
const SECTION_VMA = { osrel: 0x20000, cmdline: 0x30000, linux: 0x2000000, initrd: 0x3000000 } as const;

/** What a unified kernel image is made of. */
export interface UkiInputs {
  /** The EFI stub; default {@link UKI_STUB_X64}. */
  stub?: string;
  kernel: string;
  /** One or more initrds, concatenated in order (each padded to 4 bytes, host-overlay.ts `concatInitrds`). */
  initrds: readonly string[];
  /** The kernel command line (a single line). */
  cmdline: string;
  /** The `.osrel` section (os-release format); default names rackside. */
  osRelease?: string;
}

/** A built (or reused) image. */
export interface BuiltUki {
  path: string;
  /** SHA-256 of the inputs, the file's name. */
  key: string;
  bytes: number;
  built: boolean;
}

const DEFAULT_OS_RELEASE = 'ID=rackside\nNAME="rackside ramdisk"\nPRETTY_NAME="rackside ramdisk"\n';

/** The TimeDateStamp every image gets (2023-11-14T22:13:20Z), see pe-header.ts. */
const PINNED_TIME = 1_700_000_000;

function inputsKey(stubBytes: Buffer, kernel: Buffer, initrd: Buffer, cmdline: string, osRelease: string): string {
  const h = createHash('sha256').update('rackside.uki/v1\0');
  for (const part of [stubBytes, kernel, initrd, Buffer.from(cmdline), Buffer.from(osRelease)]) h.update(`${part.length}\0`).update(part);
  return h.digest('hex');
}

/**
 * Builds the image of `inputs` into `dir` as `<key>.efi`, or reuses it when it is there.
 * Rejects when the command line has a newline, the kernel is over 16 MiB, or objcopy fails.
 */
export async function buildUnifiedKernelImage(inputs: UkiInputs, dir: string): Promise<BuiltUki> {
  if (/[\r\n\0]/.test(inputs.cmdline)) throw new TypeError('a UKI command line is a single line');
  const stub = inputs.stub ?? UKI_STUB_X64;
  const osRelease = inputs.osRelease ?? DEFAULT_OS_RELEASE;
  const [stubBytes, kernel, initrds] = await Promise.all([readFile(stub), readFile(inputs.kernel), Promise.all(inputs.initrds.map((p) => readFile(p)))]);
  if (kernel.length > SECTION_VMA.initrd - SECTION_VMA.linux) throw new RangeError(`kernel ${inputs.kernel} is over 16 MiB, the room systemd 252's stub layout leaves before .initrd`);
  // An uncompressed archive after a compressed one must start on a 4-byte boundary (host-overlay.ts).
  const initrd = concatInitrds(initrds);
  const key = inputsKey(stubBytes, kernel, initrd, inputs.cmdline, osRelease);
  const path = join(dir, `${key}.efi`);
  const existing = await stat(path).catch(() => undefined);
  if (existing !== undefined) return { path, key, bytes: existing.size, built: false };

  await mkdir(dir, { recursive: true });
  const scratch = await mkdtemp(join(dir, '.uki-'));
  try {
    const files = { osrel: join(scratch, 'osrel'), cmdline: join(scratch, 'cmdline'), linux: inputs.kernel, initrd: join(scratch, 'initrd') };
    await writeFile(files.osrel, osRelease);
    await writeFile(files.cmdline, `${inputs.cmdline}\0`);
    await writeFile(files.initrd, initrd);
    const args: string[] = [];
    for (const name of ['osrel', 'cmdline', 'linux', 'initrd'] as const) {
      args.push('--add-section', `.${name}=${files[name]}`, '--change-section-vma', `.${name}=0x${SECTION_VMA[name].toString(16)}`);
    }
    const out = join(scratch, 'image.efi');
    await runCommand('objcopy', [...args, stub, out]);
    const image = pinPeHeader(await readFile(out), PINNED_TIME);
    await writeFile(out, image);
    await rename(out, path);
    return { path, key, bytes: image.length, built: true };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
