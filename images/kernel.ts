/**
 * @module The ramdisk's kernel and busybox: from Debian packages (default `linux-image-amd64`,
 * resolved to its versioned `linux-image-<release>` dependency, and `busybox-static`), fetched
 * with apt and unpacked into the cache, or from a configured kernel + modules tree and
 * busybox binary. Debian's kernel package ships no `modules.dep` (its postinst runs depmod),
 * so `depmod -b` is run on the unpacked copy before it enters the cache.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fetchDebianPackage, resolveMetaPackage } from './debian-package.js';
import { pathExists, runCommand, sha256File } from './files.js';

/** Where the kernel comes from. */
export type KernelSource =
  | { kind: 'debian'; /** Default `linux-image-amd64`. */ packageName?: string }
  | { kind: 'tree'; vmlinuzPath: string; /** `…/lib/modules/<release>`, with modules.dep. */ modulesDir: string };

/** Where busybox comes from: Debian's `busybox-static` package, or a static binary on disk. */
export type BusyboxSource = { kind: 'debian'; /** Default `busybox-static`. */ packageName?: string } | { kind: 'file'; path: string };

/** Provenance of an input, recorded in the manifest. */
export type InputOrigin =
  | { kind: 'debian'; package: string; version: string; debSha256: string }
  | { kind: 'file'; path: string };

/** A kernel ready to pack: image, modules tree and release string. */
export interface ResolvedKernel {
  /** `uname -r` of the kernel, e.g. `6.1.0-57-amd64`. */
  release: string;
  vmlinuzPath: string;
  vmlinuzSha256: string;
  modulesDir: string;
  origin: InputOrigin;
}

/** A static busybox binary ready to pack. */
export interface ResolvedBusybox {
  path: string;
  sha256: string;
  origin: InputOrigin;
}

/** Thrown when the kernel or busybox input is unusable; the message names the path and the fix. */
export class KernelInputError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KernelInputError';
  }
}

async function firstExisting(paths: readonly string[]): Promise<string | undefined> {
  for (const p of paths) if (await pathExists(p)) return p;
  return undefined;
}

/** Resolves a configured kernel + modules tree; throws {@link KernelInputError} when a part or modules.dep is missing. */
async function resolveTreeKernel(source: { vmlinuzPath: string; modulesDir: string }): Promise<ResolvedKernel> {
  if (!(await pathExists(source.vmlinuzPath))) throw new KernelInputError(`kernel image ${source.vmlinuzPath} does not exist`);
  if (!(await pathExists(join(source.modulesDir, 'modules.dep')))) {
    throw new KernelInputError(`${source.modulesDir}/modules.dep is missing; run depmod for that tree first`);
  }
  return {
    release: basename(source.modulesDir),
    vmlinuzPath: source.vmlinuzPath,
    vmlinuzSha256: await sha256File(source.vmlinuzPath),
    modulesDir: source.modulesDir,
    origin: { kind: 'file', path: source.vmlinuzPath },
  };
}

/** Runs `depmod -b` for every release under the unpacked tree that has no modules.dep yet (Debian kernel packages ship none: their postinst runs depmod). */
export async function runDepmod(rootDir: string): Promise<void> {
  for (const base of [rootDir, join(rootDir, 'usr')]) {
    const releases = await readdir(join(base, 'lib/modules')).catch(() => []);
    for (const release of releases) {
      if (await pathExists(join(base, 'lib/modules', release, 'modules.dep'))) continue;
      await runCommand('depmod', ['-b', base, release]).catch((err: unknown) => {
        throw new KernelInputError(`depmod -b ${base} ${release} failed (package kmod provides depmod)`, { cause: err });
      });
    }
  }
}

async function resolveDebianKernel(packageName: string, cacheDir: string): Promise<ResolvedKernel> {
  const imagePackage = await resolveMetaPackage(packageName, 'linux-image-');
  const pkg = await fetchDebianPackage(imagePackage, cacheDir, undefined, runDepmod);
  const bootFiles = (await readdir(join(pkg.rootDir, 'boot')).catch(() => [])).filter((f) => f.startsWith('vmlinuz-')).sort();
  const vmlinuz = bootFiles[0];
  if (vmlinuz === undefined) throw new KernelInputError(`package ${imagePackage} ${pkg.version} has no boot/vmlinuz-*`);
  const release = vmlinuz.slice('vmlinuz-'.length);
  const modulesDir = await firstExisting([join(pkg.rootDir, 'lib/modules', release), join(pkg.rootDir, 'usr/lib/modules', release)]);
  if (modulesDir === undefined) throw new KernelInputError(`package ${imagePackage} ${pkg.version} has no modules for ${release}`);
  if (!(await pathExists(join(modulesDir, 'modules.dep')))) {
    throw new KernelInputError(`${modulesDir}/modules.dep is missing; remove ${dirname(pkg.rootDir)} from the cache to unpack it again`);
  }
  const vmlinuzPath = join(pkg.rootDir, 'boot', vmlinuz);
  return {
    release,
    vmlinuzPath,
    vmlinuzSha256: await sha256File(vmlinuzPath),
    modulesDir,
    origin: { kind: 'debian', package: imagePackage, version: pkg.version, debSha256: pkg.debSha256 },
  };
}

/**
 * Resolves the kernel input: a Debian package fetched into `cacheDir` (cached by package
 * version, never installed) or a configured tree. Throws {@link KernelInputError} or a
 * DebianPackageError with the reason.
 */
export async function resolveKernel(source: KernelSource, cacheDir: string): Promise<ResolvedKernel> {
  return source.kind === 'tree' ? resolveTreeKernel(source) : resolveDebianKernel(source.packageName ?? 'linux-image-amd64', cacheDir);
}

/** Resolves the busybox input: Debian's busybox-static unpacked into `cacheDir`, or a configured binary. */
export async function resolveBusybox(source: BusyboxSource, cacheDir: string): Promise<ResolvedBusybox> {
  if (source.kind === 'file') {
    if (!(await pathExists(source.path))) throw new KernelInputError(`busybox binary ${source.path} does not exist`);
    return { path: source.path, sha256: await sha256File(source.path), origin: { kind: 'file', path: source.path } };
  }
  const name = source.packageName ?? 'busybox-static';
  const pkg = await fetchDebianPackage(name, cacheDir);
  const path = await firstExisting([join(pkg.rootDir, 'bin/busybox'), join(pkg.rootDir, 'usr/bin/busybox')]);
  if (path === undefined) throw new KernelInputError(`package ${name} ${pkg.version} has no bin/busybox`);
  return { path, sha256: await sha256File(path), origin: { kind: 'debian', package: name, version: pkg.version, debSha256: pkg.debSha256 } };
}

/**
 * Resolves with busybox's applet paths (`bin/sh`, `usr/bin/wget`, …) from `busybox --list-full`.
 * The binary must run on the build host (same architecture).
 */
export async function listBusyboxApplets(busyboxPath: string): Promise<string[]> {
  const out = await runCommand(busyboxPath, ['--list-full']).catch((err: unknown) => {
    throw new KernelInputError(`${busyboxPath} --list-full failed; a busybox for another architecture cannot be listed here`, { cause: err });
  });
  return out
    .toString('utf8')
    .split('\n')
    .map((l) => l.trim().replace(/^\/+/, ''))
    .filter((l) => l !== '' && l !== 'bin/busybox')
    .sort();
}
