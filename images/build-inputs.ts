/**
 * @module What a ramdisk build started now would be made of, found without fetching anything
 * (build-check.ts compares it with a build's manifest): apt's candidate versions of the kernel
 * and busybox packages (`apt-cache`, local and quick), or the sha256 of configured files, and the
 * in-ramdisk agent's scripts. An input apt cannot name (no package lists) is `unknown`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isoKernelCommandLine } from './boot-menus.js';
import { defaultAgentScriptDir } from './builder.js';
import type { ExpectedBuildInputs, ExpectedOrigin } from './build-check.js';
import { candidateVersion, resolveMetaPackage } from './debian-package.js';
import { pathExists, sha256File, sha256Of } from './files.js';
import { agentArchivePath } from './initramfs.js';
import type { BusyboxSource, KernelSource } from './kernel.js';
import { HEAD_NODE_ARCH } from './arch-inputs.js';
import { ARCH_FACTS, type DebianArch } from './debian-arch.js';
import { ForeignApt } from './foreign-apt.js';

/** Options of {@link expectedBuildInputs}: the same sources a build would be given. */
export interface ExpectedInputsOptions {
  format: 'initrd' | 'iso';
  agentVersion: string;
  /** Default the head node's; another one asks the private apt under `cacheDir` (foreign-apt.ts). */
  arch?: DebianArch;
  /** The build's package cache (`--cache-dir`): where a foreign architecture's apt state lives. */
  cacheDir?: string;
  kernel?: KernelSource;
  busybox?: BusyboxSource;
  agentScriptDir?: string;
  isoKernelArgs?: readonly string[];
}

/** The apt to ask: the machine's, or the private one of a foreign architecture. */
interface AptQuestions {
  resolveMeta(name: string, prefix: string): Promise<string>;
  candidate(name: string): Promise<string>;
}

const machineApt: AptQuestions = { resolveMeta: resolveMetaPackage, candidate: candidateVersion };

async function debianOrigin(apt: AptQuestions, name: string, metaPrefix?: string): Promise<ExpectedOrigin> {
  try {
    const resolved = metaPrefix === undefined ? name : await apt.resolveMeta(name, metaPrefix);
    return { kind: 'debian', package: resolved, version: await apt.candidate(resolved) };
  } catch (error) {
    return { kind: 'unknown', why: error instanceof Error ? error.message : String(error) };
  }
}

async function fileOrigin(path: string): Promise<ExpectedOrigin> {
  // A configured file that is missing differs from any build: the rebuild then fails saying so.
  if (!(await pathExists(path))) return { kind: 'file', path, sha256: '' };
  return { kind: 'file', path, sha256: await sha256File(path) };
}

async function agentFiles(dir: string): Promise<{ path: string; sha256: string }[]> {
  const files: { path: string; sha256: string }[] = [];
  for (const name of (await readdir(dir).catch(() => [] as string[])).sort()) {
    const path = join(dir, name);
    if (!(await stat(path)).isFile()) continue;
    files.push({ path: agentArchivePath(name), sha256: sha256Of(await readFile(path)) });
  }
  return files;
}

/** Resolves what a build with `options` would use now (see the module comment); never fetches a package. */
export async function expectedBuildInputs(options: ExpectedInputsOptions): Promise<ExpectedBuildInputs> {
  const arch = options.arch ?? HEAD_NODE_ARCH;
  const apt = arch === HEAD_NODE_ARCH || options.cacheDir === undefined ? machineApt : new ForeignApt(arch, options.cacheDir);
  const kernelSource = options.kernel ?? { kind: 'debian' };
  const busyboxSource = options.busybox ?? { kind: 'debian' };
  const kernel = kernelSource.kind === 'tree' ? await fileOrigin(kernelSource.vmlinuzPath) : await debianOrigin(apt, kernelSource.packageName ?? ARCH_FACTS[arch].kernelPackage, 'linux-image-');
  const busybox = busyboxSource.kind === 'file' ? await fileOrigin(busyboxSource.path) : await debianOrigin(apt, busyboxSource.packageName ?? 'busybox-static');
  return {
    format: options.format,
    arch,
    agentVersion: options.agentVersion,
    kernel,
    busybox,
    agentFiles: await agentFiles(options.agentScriptDir ?? defaultAgentScriptDir()),
    ...(options.format === 'iso' ? { isoKernelCommandLine: isoKernelCommandLine(options.isoKernelArgs, arch) } : {}),
  };
}
