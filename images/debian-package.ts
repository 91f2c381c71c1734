/**
 * @module Fetching Debian packages as build inputs without installing them: `apt-cache` picks
 * the candidate version, `apt-get download` fetches the .deb and `dpkg-deb -x` unpacks it into
 * a cache directory keyed by package and version. Installing a kernel or boot loader package
 * would run maintainer scripts that touch the build host's own boot setup, so this never does.
 */
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathExists, runCommand, sha256File } from './files.js';

/** A Debian package unpacked in the cache. */
export interface DebianPackage {
  name: string;
  version: string;
  /** The downloaded .deb file (kept in the cache for the manifest). */
  debPath: string;
  debSha256: string;
  /** Where the package's files were unpacked (`<rootDir>/boot/…`, `<rootDir>/lib/…`). */
  rootDir: string;
}

/** Thrown when a package cannot be resolved or fetched; the message says what to do. */
export class DebianPackageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DebianPackageError';
  }
}

const packageNamePattern = /^[a-z0-9][a-z0-9+.-]+$/;

/** Returns the `Depends:` package names listed by `apt-cache depends` output, in order (alternatives included). */
export function parseAptCacheDepends(output: string): string[] {
  const names: string[] = [];
  for (const line of output.split('\n')) {
    const m = /^\s*\|?Depends:\s*(\S+)/.exec(line);
    if (m?.[1] !== undefined && !m[1].startsWith('<')) names.push(m[1]);
  }
  return names;
}

/**
 * Returns the package names of `Depends:` and `PreDepends:` lines of `apt-cache depends` output
 * (Debian policy §7.2: both must be unpacked for the package to work), alternatives included,
 * virtual `<names>` left out, each once, in order.
 */
export function parseAptCacheDependencies(output: string): string[] {
  const names: string[] = [];
  for (const line of output.split('\n')) {
    const m = /^\s*\|?(?:Pre)?Depends:\s*(\S+)/.exec(line);
    if (m?.[1] !== undefined && !m[1].startsWith('<') && !names.includes(m[1])) names.push(m[1]);
  }
  return names;
}

/** Returns the `Version:` field of the first stanza of `apt-cache show` output, or undefined. */
export function parseAptCacheVersion(output: string): string | undefined {
  return /^Version:\s*(\S+)\s*$/m.exec(output)?.[1];
}

function assertPackageName(name: string): void {
  if (!packageNamePattern.test(name)) throw new DebianPackageError(`invalid Debian package name ${JSON.stringify(name)}`);
}

/**
 * Resolves a meta package (`linux-image-amd64`) to its first dependency starting with
 * `prefix` (`linux-image-6.1.0-57-amd64`), or returns `name` itself when it has none.
 */
export async function resolveMetaPackage(name: string, prefix: string): Promise<string> {
  assertPackageName(name);
  const out = await runCommand('apt-cache', ['depends', name]).catch((err: unknown) => {
    throw new DebianPackageError(`apt-cache depends ${name} failed; is the package known to apt (run apt-get update)?`, { cause: err });
  });
  return parseAptCacheDepends(out.toString('utf8')).find((d) => d.startsWith(prefix) && d !== name) ?? name;
}

/** Resolves with apt's candidate version of `name`; throws {@link DebianPackageError} when apt does not know it. */
export async function candidateVersion(name: string): Promise<string> {
  assertPackageName(name);
  const out = await runCommand('apt-cache', ['show', '--no-all-versions', name]).catch((err: unknown) => {
    throw new DebianPackageError(`apt-cache show ${name} failed; is the package known to apt (run apt-get update)?`, { cause: err });
  });
  const version = parseAptCacheVersion(out.toString('utf8'));
  if (version === undefined) throw new DebianPackageError(`apt-cache show ${name} printed no Version field`);
  return version;
}

interface CompleteMarker {
  debFile: string;
  debSha256: string;
}

/**
 * Returns the package `name` at apt's candidate version (or `version`), unpacked under
 * `<cacheDir>/debian/<name>_<version>/root`. A cached copy is reused; a fresh one is fetched
 * with `apt-get download` and `dpkg-deb -x` into a temporary directory renamed into place
 * when complete, so an interrupted fetch never leaves a half-unpacked cache entry. `prepare`
 * runs on the unpacked tree before that rename (e.g. depmod), so concurrent builds never run
 * it on a shared tree.
 */
export async function fetchDebianPackage(
  name: string,
  cacheDir: string,
  version?: string,
  prepare?: (rootDir: string) => Promise<void>,
): Promise<DebianPackage> {
  assertPackageName(name);
  const resolvedVersion = version ?? (await candidateVersion(name));
  const key = `${name}_${resolvedVersion.replaceAll(':', '%3a')}`;
  const parent = join(cacheDir, 'debian');
  const dir = join(parent, key);
  const marker = join(dir, 'complete.json');
  if (!(await pathExists(marker))) {
    await mkdir(parent, { recursive: true });
    const tmp = await mkdtemp(join(parent, `.${key}.`));
    try {
      await runCommand('apt-get', ['download', '-q', `${name}=${resolvedVersion}`], { cwd: tmp }).catch((err: unknown) => {
        throw new DebianPackageError(`apt-get download ${name}=${resolvedVersion} failed (apt access needed)`, { cause: err });
      });
      const debFile = (await readdir(tmp)).find((f) => f.endsWith('.deb'));
      if (debFile === undefined) throw new DebianPackageError(`apt-get download ${name} produced no .deb file`);
      await runCommand('dpkg-deb', ['-x', join(tmp, debFile), join(tmp, 'root')]);
      if (prepare !== undefined) await prepare(join(tmp, 'root'));
      const complete: CompleteMarker = { debFile, debSha256: await sha256File(join(tmp, debFile)) };
      await writeFile(join(tmp, 'complete.json'), `${JSON.stringify(complete)}\n`);
      await rename(tmp, dir).catch(async (err: unknown) => {
        if (!(await pathExists(marker))) throw err; // another build finished the same entry first: use it
        await rm(tmp, { recursive: true, force: true });
      });
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
  }
  const complete = JSON.parse(await readFile(marker, 'utf8')) as CompleteMarker;
  return { name, version: resolvedVersion, debPath: join(dir, complete.debFile), debSha256: complete.debSha256, rootDir: join(dir, 'root') };
}
