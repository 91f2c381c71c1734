/**
 * @module Small programs of the ramdisk built from source (images/helpers/*.c) at ramdisk
 * build time, for what busybox cannot do — `rackside-lldp` listens for LLDP on raw sockets,
 * `rackside-dhcp6` is the DHCPv6 client busybox lacks (no udhcpc6). Each
 * is compiled with the build host's C compiler as a static, stripped binary without a build ID
 * (`cc -static -Os -s -Wl,--build-id=none`: the bytes depend only on the source and the
 * compiler) and packed at `usr/bin/NAME`; for another architecture than the head node's, with
 * Debian's cross compiler (`aarch64-linux-gnu-gcc` from `gcc-aarch64-linux-gnu` with
 * `libc6-dev-arm64-cross`'s static libc). No compiler (Debian `gcc` with `libc6-dev`), or a
 * failed compile, is reported as a missing tool, never fatal: the ramdisk then goes without
 * (for rackside-lldp: reports list no LLDP neighbours).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HEAD_NODE_ARCH } from './arch-inputs.js';
import type { CpioEntry } from './cpio.js';
import type { DebianArch } from './debian-arch.js';
import { findExecutable, runCommand, sha256Of, toolSearchPath } from './files.js';
import type { CopiedTool } from './host-tools.js';

/** The helpers a ramdisk gets by default. */
export const DEFAULT_HELPERS = ['rackside-lldp', 'rackside-dhcp6'] as const;

/** Where the helper sources are: images/helpers (from dist/images/helpers.js too). */
export function defaultHelperSourceDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.split('/').includes('dist') ? join(here, '../../images/helpers') : join(here, 'helpers');
}

/** The outcome of {@link buildHelpers}: tools as the manifest lists them (source path: the .c file). */
export interface HelpersResult {
  tools: CopiedTool[];
  missing: { name: string; reason: string }[];
  entries: CpioEntry[];
}

/** Debian's cross compiler making static binaries for each architecture, and the packages that bring it. */
export const CROSS_COMPILERS: Readonly<Record<DebianArch, { command: string; packages: string }>> = {
  amd64: { command: 'x86_64-linux-gnu-gcc', packages: 'gcc-x86-64-linux-gnu libc6-dev-amd64-cross' },
  arm64: { command: 'aarch64-linux-gnu-gcc', packages: 'gcc-aarch64-linux-gnu libc6-dev-arm64-cross' },
};

/** The compiler for `arch` on this machine and, when there is none, why. */
async function compilerFor(arch: DebianArch, searchPath: readonly string[]): Promise<{ cc: string } | { why: (name: string) => string }> {
  if (arch === HEAD_NODE_ARCH) {
    const cc = await findExecutable('cc', searchPath) ?? await findExecutable('gcc', searchPath);
    return cc !== undefined ? { cc } : { why: (name) => `no C compiler (cc) in ${searchPath.join(':')} to build it from images/helpers/${name}.c` };
  }
  const cross = CROSS_COMPILERS[arch];
  const cc = await findExecutable(cross.command, searchPath);
  return cc !== undefined ? { cc } : { why: (name) => `no ${arch} cross compiler (${cross.command}: apt-get install ${cross.packages}) to build it from images/helpers/${name}.c` };
}

/** Compiles each helper `names` from `sourceDir` for `arch` (default the head node's; see the module comment). */
export async function buildHelpers(names: readonly string[], sourceDir: string, searchPath: readonly string[] = toolSearchPath, arch: DebianArch = HEAD_NODE_ARCH): Promise<HelpersResult> {
  const result: HelpersResult = { tools: [], missing: [], entries: [] };
  if (names.length === 0) return result;
  const compiler = await compilerFor(arch, searchPath);
  if (!('cc' in compiler)) {
    result.missing.push(...names.map((name) => ({ name, reason: compiler.why(name) })));
    return result;
  }
  const { cc } = compiler;
  const work = await mkdtemp(join(tmpdir(), 'rackside-helpers-'));
  try {
    for (const name of [...new Set(names)].sort()) {
      const source = join(sourceDir, `${name}.c`);
      const output = join(work, name);
      try {
        await runCommand(cc, ['-static', '-Os', '-s', '-Wl,--build-id=none', '-o', output, source]);
      } catch (error) {
        result.missing.push({ name, reason: error instanceof Error ? error.message : String(error) });
        continue;
      }
      const data = await readFile(output);
      const archivePath = `usr/bin/${name}`;
      result.tools.push({ name, archivePath, sourcePath: source, sha256: sha256Of(data), libraries: [] });
      result.entries.push({ type: 'file', path: archivePath, mode: 0o755, data });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return result;
}
