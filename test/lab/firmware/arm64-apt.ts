/**
 * @module Debian arm64 packages for the firmware lab, fetched through a private apt
 * configuration and unpacked, never installed (docs/test-peers.md, "arm64"): apt runs with
 * `APT::Architecture "arm64"` and its own lists, cache, status and state under
 * `<DEBIAN_PACKAGE_CACHE>/apt-arm64/`, reading the machine's own sources (so the same mirror and
 * keyrings), which leaves the machine's apt state untouched. `apt-get update` runs only when the
 * private lists are missing, or once when a download fails (the mirror moved on: security
 * updates replace kernels). `apt-cache` answers are remembered per state of the private lists
 * (apt-memo.ts), so a reused build asks apt nothing. Packages are unpacked with `dpkg-deb -x` into
 * `<DEBIAN_PACKAGE_CACHE>/debian-arm64/<name>_<version>/root`, built beside and renamed into
 * place, so an interrupted fetch never leaves half a package.
 */
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DebianPackageError } from '../../../images/debian-package.js';
import { parseAptCacheDepends, parseAptCacheVersion } from '../../../images/debian-package.js';
import { runCommand } from '../../../images/files.js';
import { DEBIAN_PACKAGE_CACHE } from '../rack/ramdisk-cache.js';
import { aptAnswer, type AptMemoScope } from './apt-memo.js';

/** Where the private apt state lives. */
export const ARM64_APT_DIR = join(DEBIAN_PACKAGE_CACHE, 'apt-arm64');
/** Where arm64 packages are unpacked. */
export const ARM64_PACKAGE_DIR = join(DEBIAN_PACKAGE_CACHE, 'debian-arm64');

/** An unpacked arm64 package. */
export interface Arm64Package {
  name: string;
  version: string;
  /** The unpacked tree (`<rootDir>/boot/…`, `<rootDir>/usr/lib/…`). */
  rootDir: string;
}

/** The `-o` options that point apt at the private arm64 state. */
export function arm64AptOptions(dir: string = ARM64_APT_DIR): string[] {
  const o = (key: string, value: string): string[] => ['-o', `${key}=${value}`];
  return [
    ...o('APT::Architecture', 'arm64'),
    ...o('APT::Architectures', 'arm64'),
    ...o('Dir::State', join(dir, 'state')),
    ...o('Dir::State::Lists', join(dir, 'lists')),
    ...o('Dir::State::Status', join(dir, 'status')),
    ...o('Dir::Cache', join(dir, 'cache')),
    ...o('Dir::Etc::Preferences', join(dir, 'preferences')),
    ...o('Dir::Etc::PreferencesParts', join(dir, 'preferences.d')),
  ];
}

async function apt(command: 'apt-get' | 'apt-cache', args: readonly string[], cwd?: string): Promise<string> {
  try {
    return (await runCommand(command, [...arm64AptOptions(), ...args], cwd === undefined ? {} : { cwd })).toString('utf8');
  } catch (err) {
    throw new DebianPackageError(`${command} (private arm64 configuration) ${args.join(' ')} failed: ${err instanceof Error ? err.message.split('\n').slice(-3).join(' | ') : String(err)}`, { cause: err });
  }
}

let updating: Promise<void> | undefined;

/** Runs `apt-get update` on the private lists (once at a time). */
async function update(): Promise<void> {
  updating ??= (async () => {
    for (const sub of ['state', 'lists/partial', 'cache/archives/partial', 'preferences.d']) await mkdir(join(ARM64_APT_DIR, sub), { recursive: true });
    await writeFile(join(ARM64_APT_DIR, 'status'), '', { flag: 'a' });
    await apt('apt-get', ['update', '-q']);
  })().finally(() => { updating = undefined; });
  return updating;
}

async function hasLists(): Promise<boolean> {
  const names = await readdir(join(ARM64_APT_DIR, 'lists')).catch(() => [] as string[]);
  return names.some((n) => n.includes('_binary-arm64_Packages'));
}

const MEMO: AptMemoScope = { listsDir: join(ARM64_APT_DIR, 'lists'), memoFile: join(ARM64_APT_DIR, 'resolved.json') };

/** apt's candidate version of arm64 package `name`. */
function candidate(name: string): Promise<string> {
  return aptAnswer(MEMO, `candidate ${name}`, async () => {
    const version = parseAptCacheVersion(await apt('apt-cache', ['show', '--no-all-versions', name]));
    if (version === undefined) throw new DebianPackageError(`apt-cache show ${name} (arm64) printed no Version`);
    return version;
  });
}

/** Resolves meta package `name` (`linux-image-arm64`) to its first dependency starting with `prefix`. */
export async function resolveArm64Meta(name: string, prefix: string): Promise<string> {
  if (!(await hasLists())) await update();
  return aptAnswer(MEMO, `depends ${name} ${prefix}`, async () => {
    const deps = parseAptCacheDepends(await apt('apt-cache', ['depends', name]));
    const found = deps.find((d) => d.startsWith(prefix) && d !== name);
    if (found === undefined) throw new DebianPackageError(`arm64 ${name} has no dependency starting with ${prefix}`);
    return found;
  });
}

/**
 * Returns arm64 package `name` at apt's candidate version, unpacked in the cache (fetched when
 * missing). `prepare` runs on the unpacked tree before it is renamed into place (depmod).
 */
export async function fetchArm64Package(name: string, prepare?: (rootDir: string) => Promise<void>): Promise<Arm64Package> {
  if (!/^[a-z0-9][a-z0-9+.-]+$/.test(name)) throw new DebianPackageError(`invalid package name ${JSON.stringify(name)}`);
  if (!(await hasLists())) await update();
  let version = await candidate(name);
  const key = (v: string): string => `${name}_${v.replaceAll(':', '%3a')}`;
  let dir = join(ARM64_PACKAGE_DIR, key(version));
  const done = await readdir(dir).then((n) => n.includes('complete'), () => false);
  if (done) return { name, version, rootDir: join(dir, 'root') };
  await mkdir(ARM64_PACKAGE_DIR, { recursive: true });
  const tmp = await mkdtemp(join(ARM64_PACKAGE_DIR, `.${key(version)}.`));
  try {
    try {
      await apt('apt-get', ['download', '-q', `${name}=${version}`], tmp);
    } catch {
      // The private lists are older than the mirror: refresh once and take the new candidate.
      await update();
      version = await candidate(name);
      dir = join(ARM64_PACKAGE_DIR, key(version));
      await apt('apt-get', ['download', '-q', `${name}=${version}`], tmp);
    }
    const deb = (await readdir(tmp)).find((f) => f.endsWith('.deb'));
    if (deb === undefined) throw new DebianPackageError(`apt-get download ${name} (arm64) produced no .deb`);
    await runCommand('dpkg-deb', ['-x', join(tmp, deb), join(tmp, 'root')]);
    await rm(join(tmp, deb));
    if (prepare !== undefined) await prepare(join(tmp, 'root'));
    await writeFile(join(tmp, 'complete'), `${name} ${version}\n`);
    await rename(tmp, dir).catch(async (err: unknown) => {
      if (!(await readdir(dir).then((n) => n.includes('complete'), () => false))) throw err;
      await rm(tmp, { recursive: true, force: true });
    });
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return { name, version, rootDir: join(dir, 'root') };
}
