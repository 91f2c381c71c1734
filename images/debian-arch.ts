/**
 * @module Debian architecture names and what hangs off them: the multiarch triplet of the
 * library directories (Debian policy §9.1.1, `/usr/lib/<triplet>`), the ELF machine type of its
 * binaries (ELF gABI `e_machine`: EM_X86_64 62, EM_AARCH64 183), the kernel meta package, and
 * the spellings metal3 and the kernel use (`x86_64`, `aarch64`).
 * @pure
 */

/** The Debian architectures a ramdisk can be built for. */
export const RAMDISK_ARCHES = ['amd64', 'arm64'] as const;

/** A Debian architecture name a ramdisk can be built for. */
export type DebianArch = (typeof RAMDISK_ARCHES)[number];

/** Per-architecture facts (see the module comment). */
export interface ArchFacts {
  triplet: string;
  elfMachine: number;
  kernelPackage: string;
}

/** The facts of each {@link DebianArch}. */
export const ARCH_FACTS: Readonly<Record<DebianArch, ArchFacts>> = {
  amd64: { triplet: 'x86_64-linux-gnu', elfMachine: 62, kernelPackage: 'linux-image-amd64' },
  arm64: { triplet: 'aarch64-linux-gnu', elfMachine: 183, kernelPackage: 'linux-image-arm64' },
};

const ALIASES: Readonly<Record<string, DebianArch>> = { x86_64: 'amd64', amd64: 'amd64', aarch64: 'arm64', arm64: 'arm64' };

/** The Debian name of a CPU architecture as metal3, the kernel or Debian spell it (case-insensitive), or undefined when no ramdisk is built for it. */
export function debianArchOf(name: string): DebianArch | undefined {
  return ALIASES[name.toLowerCase()];
}

/** The Debian architecture of a Node.js `process.arch` value (`x64` → amd64, `arm64` → arm64); other values are taken as amd64. */
export function debianArchOfNode(nodeArch: string): DebianArch {
  return nodeArch === 'arm64' ? 'arm64' : 'amd64';
}

/**
 * The directory of `arch`'s ramdisk under `images.cacheDir`, as boot HTTP serves it below
 * `/ramdisk/`: the head node's architecture at `ramdisk` (its URLs `/ramdisk/vmlinuz` and
 * `/ramdisk/initrd` unchanged), any other beside it at `ramdisk/<arch>` (`/ramdisk/arm64/vmlinuz`).
 */
export function ramdiskSubdir(arch: DebianArch, headNodeArch: DebianArch): string {
  return arch === headNodeArch ? 'ramdisk' : `ramdisk/${arch}`;
}
