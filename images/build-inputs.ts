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

/** Options of {@link expectedBuildInputs}: the same sources a build would be given. */
export interface ExpectedInputsOptions {
  format: 'initrd' | 'iso';
  agentVersion: string;
  kernel?: KernelSource;
  busybox?: BusyboxSource;
  agentScriptDir?: string;
  isoKernelArgs?: readonly string[];
}

async function debianOrigin(name: string, metaPrefix?: string): Promise<ExpectedOrigin> {
  try {
    const resolved = metaPrefix === undefined ? name : await resolveMetaPackage(name, metaPrefix);
    return { kind: 'debian', package: resolved, version: await candidateVersion(resolved) };
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
  const kernelSource = options.kernel ?? { kind: 'debian' };
  const busyboxSource = options.busybox ?? { kind: 'debian' };
  const kernel = kernelSource.kind === 'tree' ? await fileOrigin(kernelSource.vmlinuzPath) : await debianOrigin(kernelSource.packageName ?? 'linux-image-amd64', 'linux-image-');
  const busybox = busyboxSource.kind === 'file' ? await fileOrigin(busyboxSource.path) : await debianOrigin(busyboxSource.packageName ?? 'busybox-static');
  return {
    format: options.format,
    agentVersion: options.agentVersion,
    kernel,
    busybox,
    agentFiles: await agentFiles(options.agentScriptDir ?? defaultAgentScriptDir()),
    ...(options.format === 'iso' ? { isoKernelCommandLine: isoKernelCommandLine(options.isoKernelArgs) } : {}),
  };
}
