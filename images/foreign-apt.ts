/**
 * @module Debian packages of another architecture than the head node's, fetched through a
 * private apt configuration and unpacked, never installed: apt runs with `APT::Architecture` set
 * to that architecture and its own lists, cache, status and state under `<cacheDir>/apt-<arch>/`,
 * reading the machine's own sources (the same mirror and keyrings), which leaves the machine's
 * apt state untouched (apt.conf(5): `Dir::State`, `Dir::Cache`, `Dir::Etc::Preferences`).
 * `apt-get update` runs only when the private lists are missing, or once when a download fails
 * (the mirror moved on). `apt-cache` answers are remembered per state of the private lists
 * (apt-memo.ts). Packages are unpacked with `dpkg-deb -x` into
 * `<cacheDir>/debian-<arch>/<name>_<version>/root`, beside their .deb, built in a scratch
 * directory renamed into place, so an interrupted fetch never leaves half a package.
 */
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aptAnswer, type AptMemoScope } from './apt-memo.js';
import type { DebianArch } from './debian-arch.js';
import { DebianPackageError, parseAptCacheDependencies, parseAptCacheDepends, parseAptCacheVersion, type DebianPackage } from './debian-package.js';
import { pathExists, runCommand, sha256File } from './files.js';

const packageNamePattern = /^[a-z0-9][a-z0-9+.-]+$/;

/** The `-o` options that point apt at the private state in `aptDir` for `arch`. */
export function foreignAptOptions(arch: DebianArch, aptDir: string): string[] {
  const o = (key: string, value: string): string[] => ['-o', `${key}=${value}`];
  return [
    ...o('APT::Architecture', arch),
    ...o('APT::Architectures', arch),
    ...o('Dir::State', join(aptDir, 'state')),
    ...o('Dir::State::Lists', join(aptDir, 'lists')),
    ...o('Dir::State::Status', join(aptDir, 'status')),
    ...o('Dir::Cache', join(aptDir, 'cache')),
    ...o('Dir::Etc::Preferences', join(aptDir, 'preferences')),
    ...o('Dir::Etc::PreferencesParts', join(aptDir, 'preferences.d')),
  ];
}

interface CompleteMarker {
  debFile: string;
  debSha256: string;
}

/** apt for one foreign architecture, with its state under a cache directory (see the module comment). */
export class ForeignApt {
  /** The private apt state. */
  readonly aptDir: string;
  /** Where packages are unpacked. */
  readonly packageDir: string;
  readonly #memo: AptMemoScope;
  #updating: Promise<void> | undefined;

  constructor(readonly arch: DebianArch, cacheDir: string) {
    this.aptDir = join(cacheDir, `apt-${arch}`);
    this.packageDir = join(cacheDir, `debian-${arch}`);
    this.#memo = { listsDir: join(this.aptDir, 'lists'), memoFile: join(this.aptDir, 'resolved.json') };
  }

  /** apt's candidate version of `name` for this architecture. */
  async candidate(name: string): Promise<string> {
    await this.#ensureLists();
    return aptAnswer(this.#memo, `candidate ${name}`, async () => {
      const version = parseAptCacheVersion(await this.#apt('apt-cache', ['show', '--no-all-versions', name]));
      if (version === undefined) throw new DebianPackageError(`apt-cache show ${name} (${this.arch}) printed no Version`);
      return version;
    });
  }

  /** The `Depends:` of `name` (alternatives included, virtual packages left out), in apt's order. */
  async depends(name: string): Promise<string[]> {
    assertName(name);
    await this.#ensureLists();
    const text = await aptAnswer(this.#memo, `depends ${name}`, async () => JSON.stringify(parseAptCacheDepends(await this.#apt('apt-cache', ['depends', name]))));
    return JSON.parse(text) as string[];
  }

  /** The packages `name` needs unpacked beside it: its `Depends:` and `PreDepends:` (Debian policy §7.2), each once. */
  async dependencies(name: string): Promise<string[]> {
    assertName(name);
    await this.#ensureLists();
    const text = await aptAnswer(this.#memo, `dependencies ${name}`, async () => JSON.stringify(parseAptCacheDependencies(await this.#apt('apt-cache', ['depends', name]))));
    return JSON.parse(text) as string[];
  }

  /** Resolves meta package `name` (`linux-image-arm64`) to its first dependency starting with `prefix`. */
  async resolveMeta(name: string, prefix: string): Promise<string> {
    const found = (await this.depends(name)).find((d) => d.startsWith(prefix) && d !== name);
    if (found === undefined) throw new DebianPackageError(`${this.arch} ${name} has no dependency starting with ${prefix}`);
    return found;
  }

  /**
   * Resolves with package `name` at apt's candidate version, unpacked in the cache (fetched when
   * missing). `prepare` runs on the unpacked tree before it is renamed into place (depmod).
   */
  async fetch(name: string, prepare?: (rootDir: string) => Promise<void>): Promise<DebianPackage> {
    assertName(name);
    let version = await this.candidate(name);
    const cached = await this.#cached(name, version);
    if (cached !== undefined) return cached;
    await mkdir(this.packageDir, { recursive: true });
    const tmp = await mkdtemp(join(this.packageDir, `.${entryKey(name, version)}.`));
    try {
      try {
        await this.#apt('apt-get', ['download', '-q', `${name}=${version}`], tmp);
      } catch {
        // The private lists are older than the mirror: refresh once and take the new candidate.
        await this.#update();
        version = await this.candidate(name);
        await this.#apt('apt-get', ['download', '-q', `${name}=${version}`], tmp);
      }
      const debFile = (await readdir(tmp)).find((f) => f.endsWith('.deb'));
      if (debFile === undefined) throw new DebianPackageError(`apt-get download ${name} (${this.arch}) produced no .deb`);
      await runCommand('dpkg-deb', ['-x', join(tmp, debFile), join(tmp, 'root')]);
      if (prepare !== undefined) await prepare(join(tmp, 'root'));
      const marker: CompleteMarker = { debFile, debSha256: await sha256File(join(tmp, debFile)) };
      await writeFile(join(tmp, 'complete.json'), `${JSON.stringify(marker)}\n`);
      // The marker of the test lab's earlier layout, so a checkout before this module still reuses the entry.
      await writeFile(join(tmp, 'complete'), `${name} ${version}\n`);
      await this.#install(tmp, join(this.packageDir, entryKey(name, version)));
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    const done = await this.#cached(name, version);
    if (done === undefined) throw new DebianPackageError(`${name} ${version} (${this.arch}) vanished from ${this.packageDir}`);
    return done;
  }

  async #cached(name: string, version: string): Promise<DebianPackage | undefined> {
    const dir = join(this.packageDir, entryKey(name, version));
    const text = await readFile(join(dir, 'complete.json'), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const marker = JSON.parse(text) as CompleteMarker;
    return { name, version, debPath: join(dir, marker.debFile), debSha256: marker.debSha256, rootDir: join(dir, 'root') };
  }

  /** Renames a complete scratch entry into place; an entry without complete.json (interrupted, older layout) is replaced. */
  async #install(tmp: string, dir: string): Promise<void> {
    if ((await pathExists(dir)) && !(await pathExists(join(dir, 'complete.json')))) await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir).catch(async (err: unknown) => {
      if (!(await pathExists(join(dir, 'complete.json')))) throw err;
      await rm(tmp, { recursive: true, force: true }); // another build finished the same entry first
    });
  }

  async #apt(command: 'apt-get' | 'apt-cache', args: readonly string[], cwd?: string): Promise<string> {
    try {
      return (await runCommand(command, [...foreignAptOptions(this.arch, this.aptDir), ...args], cwd === undefined ? {} : { cwd })).toString('utf8');
    } catch (err) {
      const detail = err instanceof Error ? err.message.split('\n').slice(-3).join(' | ') : String(err);
      throw new DebianPackageError(`${command} (private ${this.arch} configuration) ${args.join(' ')} failed: ${detail}`, { cause: err });
    }
  }

  async #ensureLists(): Promise<void> {
    const names = await readdir(join(this.aptDir, 'lists')).catch(() => [] as string[]);
    if (!names.some((n) => n.includes(`_binary-${this.arch}_Packages`))) await this.#update();
  }

  /** Runs `apt-get update` on the private lists (once at a time). */
  #update(): Promise<void> {
    this.#updating ??= (async () => {
      for (const sub of ['state', 'lists/partial', 'cache/archives/partial', 'preferences.d']) await mkdir(join(this.aptDir, sub), { recursive: true });
      await writeFile(join(this.aptDir, 'status'), '', { flag: 'a' });
      await this.#apt('apt-get', ['update', '-q']);
    })().finally(() => { this.#updating = undefined; });
    return this.#updating;
  }
}

function assertName(name: string): void {
  if (!packageNamePattern.test(name)) throw new DebianPackageError(`invalid Debian package name ${JSON.stringify(name)}`);
}

function entryKey(name: string, version: string): string {
  return `${name}_${version.replaceAll(':', '%3a')}`;
}
