/**
 * @module The ramdisk's host tools for another architecture than the head node's, taken from
 * that architecture's Debian packages instead of the head node's files: for each tool the head
 * node's owning package (`dpkg-query -S`), its foreign .deb unpacked (foreign-apt.ts), and the
 * shared libraries it needs found without running it — DT_NEEDED read by elf.ts, searched in the
 * multiarch library directories of the unpacked trees, the trees of the package's `Depends:` and
 * `PreDepends:` unpacked layer by layer until every soname is found or none is left to fetch.
 * The program interpreter (PT_INTERP) goes in at its own path. A tool that is not on the head
 * node, whose package cannot be fetched, whose ELF machine is wrong or whose libraries cannot
 * all be found is reported, never fatal (as host-tools.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CpioEntry } from './cpio.js';
import { ARCH_FACTS, type DebianArch } from './debian-arch.js';
import type { DebianPackage } from './debian-package.js';
import { owningPackage, usrMergeTwin } from './dpkg-owner.js';
import { parseElfDynamic, type ElfDynamicInfo } from './elf.js';
import { findExecutable, sha256Of, toolSearchPath } from './files.js';
import type { CopiedFile, HostToolsResult } from './host-tools.js';
import { libraryClosure, libraryDirs, type FoundLibrary } from './library-closure.js';
import { resolveInTree } from './tree-paths.js';

/** The apt a foreign tool collection uses (foreign-apt.ts's ForeignApt). */
export interface ForeignPackageSource {
  fetch(name: string): Promise<DebianPackage>;
  dependencies(name: string): Promise<string[]>;
}

/** Options of {@link collectForeignTools}. */
export interface ForeignToolsOptions {
  arch: DebianArch;
  apt: ForeignPackageSource;
  /** Where the head node's tools are looked for (to name their packages). */
  searchPath?: readonly string[];
  /** The head node's package of a file (default: `dpkg-query -S`, dpkg-owner.ts). */
  ownerOf?: (path: string) => Promise<{ name: string } | undefined>;
}

/** Where a package puts executables, in the order a tool is looked for. */
const BIN_DIRS = ['usr/sbin', 'usr/bin', 'sbin', 'bin'];

/** The unpacked packages of one collection, fetched once each, searched in name order. */
class Trees {
  readonly #packages = new Map<string, DebianPackage | null>();
  readonly #expanded = new Set<string>();
  constructor(private readonly apt: ForeignPackageSource) {}

  async fetch(name: string): Promise<DebianPackage | undefined> {
    if (!this.#packages.has(name)) this.#packages.set(name, await this.apt.fetch(name).catch(() => null));
    return this.#packages.get(name) ?? undefined;
  }

  /** The fetched packages, sorted by name (a soname found in two trees resolves the same way each build). */
  list(): DebianPackage[] {
    return [...this.#packages.values()].filter((p): p is DebianPackage => p !== null).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Fetches the dependencies of every fetched package not expanded yet; resolves with whether anything new came. */
  async expand(): Promise<boolean> {
    let added = false;
    for (const pkg of this.list()) {
      if (this.#expanded.has(pkg.name)) continue;
      this.#expanded.add(pkg.name);
      for (const dep of await this.apt.dependencies(pkg.name).catch(() => [] as string[])) {
        if (this.#packages.has(dep)) continue;
        added = (await this.fetch(dep)) !== undefined || added;
      }
    }
    return added;
  }

  /** The first tree holding `relPath` (or its merged-/usr twin): the package, the tree-relative real file. */
  async find(relPath: string): Promise<{ pkg: DebianPackage; real: string } | undefined> {
    for (const pkg of this.list()) {
      for (const candidate of [relPath, usrMergeTwin(`/${relPath}`).slice(1)]) {
        const real = await resolveInTree(pkg.rootDir, candidate);
        if (real !== undefined) return { pkg, real };
      }
    }
    return undefined;
  }
}

interface LoadedFile {
  archivePath: string;
  sourcePath: string;
  data: Buffer;
  elf: ElfDynamicInfo;
}

async function load(trees: Trees, archivePath: string): Promise<LoadedFile | undefined> {
  const hit = await trees.find(archivePath);
  if (hit === undefined) return undefined;
  const sourcePath = join(hit.pkg.rootDir, hit.real);
  const data = await readFile(sourcePath);
  try {
    return { archivePath, sourcePath, data, elf: parseElfDynamic(data) };
  } catch {
    return undefined; // a linker script or other non-ELF file under a library name: not what the loader maps
  }
}

/** What one tool needs beyond itself: its libraries and interpreter, or the reason it cannot have them. */
async function dependenciesOf(tool: LoadedFile, trees: Trees, arch: DebianArch): Promise<LoadedFile[] | string> {
  const { triplet, elfMachine } = ARCH_FACTS[arch];
  const files = new Map<string, LoadedFile>();
  const lookup = async (soname: string): Promise<FoundLibrary | undefined> => {
    for (const dir of libraryDirs(triplet, tool.elf.runpath)) {
      const file = await load(trees, `${dir}/${soname}`);
      if (file === undefined || file.elf.machine !== elfMachine) continue;
      files.set(file.archivePath, file);
      return { soname, path: file.archivePath, needed: file.elf.needed, machine: file.elf.machine };
    }
    return undefined;
  };
  for (;;) {
    files.clear();
    const closure = await libraryClosure(tool.elf.needed, lookup);
    const interp = tool.elf.interpreter === undefined ? undefined : await load(trees, tool.elf.interpreter.replace(/^\/+/, ''));
    const lacking = [...closure.missing, ...(tool.elf.interpreter !== undefined && interp === undefined ? [tool.elf.interpreter] : [])];
    if (lacking.length === 0) {
      if (interp !== undefined) files.set(interp.archivePath, interp);
      return [...files.values()].sort((a, b) => a.archivePath.localeCompare(b.archivePath));
    }
    if (!(await trees.expand())) return `shared libraries not found in the ${arch} packages: ${lacking.join(', ')}`;
  }
}

/** Finds tool `name` in its foreign package: the file, or why not. */
async function foreignTool(name: string, trees: Trees, options: ForeignToolsOptions): Promise<{ tool: LoadedFile; pkg: DebianPackage } | string> {
  const found = await findExecutable(name, options.searchPath ?? toolSearchPath);
  if (found === undefined) return `not found on the head node in ${(options.searchPath ?? toolSearchPath).join(':')} (its package names the ${options.arch} one)`;
  const owner = await (options.ownerOf ?? owningPackage)(found);
  if (owner === undefined) return `${found} belongs to no Debian package on the head node (dpkg-query -S), so no ${options.arch} package can be named`;
  const pkg = await trees.fetch(owner.name);
  if (pkg === undefined) return `the ${options.arch} package ${owner.name} cannot be fetched with apt`;
  for (const dir of BIN_DIRS) {
    const real = await resolveInTree(pkg.rootDir, `${dir}/${name}`);
    if (real === undefined) continue;
    const data = await readFile(join(pkg.rootDir, real));
    let elf: ElfDynamicInfo;
    try {
      elf = parseElfDynamic(data);
    } catch (err) {
      return `${dir}/${name} of ${owner.name} (${options.arch}) is not an ELF binary: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (elf.machine !== ARCH_FACTS[options.arch].elfMachine) return `${dir}/${name} of ${owner.name} has ELF machine ${elf.machine}, not ${options.arch}'s ${ARCH_FACTS[options.arch].elfMachine}`;
    return { tool: { archivePath: `${dir}/${name}`, sourcePath: join(pkg.rootDir, real), data, elf }, pkg };
  }
  return `the ${options.arch} package ${owner.name} ${pkg.version} has no ${name} in ${BIN_DIRS.join(', ')}`;
}

const copied = (f: LoadedFile): CopiedFile => ({ archivePath: f.archivePath, sourcePath: f.sourcePath, sha256: sha256Of(f.data) });

/**
 * Collects tools `names` for `options.arch` from its Debian packages (see the module comment):
 * archive entries (mode 0755) for each tool, its libraries and interpreter, deduplicated; tools
 * sorted by name; what could not be had in `missing` with the reason.
 */
export async function collectForeignTools(names: readonly string[], options: ForeignToolsOptions): Promise<HostToolsResult> {
  const trees = new Trees(options.apt);
  const result: HostToolsResult = { tools: [], missing: [], entries: [] };
  const entries = new Map<string, CpioEntry>();
  for (const name of [...new Set(names)].sort()) {
    const found = await foreignTool(name, trees, options);
    if (typeof found === 'string') {
      result.missing.push({ name, reason: found });
      continue;
    }
    const deps = await dependenciesOf(found.tool, trees, options.arch);
    if (typeof deps === 'string') {
      result.missing.push({ name, reason: deps });
      continue;
    }
    for (const f of [found.tool, ...deps]) entries.set(f.archivePath, { type: 'file', path: f.archivePath, mode: 0o755, data: f.data });
    result.tools.push({ name, ...copied(found.tool), libraries: deps.map(copied), package: { name: found.pkg.name, version: found.pkg.version } });
  }
  result.entries = [...entries.values()];
  return result;
}
