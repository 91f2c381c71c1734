/**
 * @module Kernel module metadata as written by depmod (kmod's `depmod(8)`, formats in
 * `modules.dep(5)` and `modprobe.d(5)`): parsing `modules.dep`, `modules.alias`,
 * `modules.softdep` and `modules.builtin`, resolving the transitive load order of a requested
 * set of modules, and rendering the filtered index files that go into the ramdisk.
 *
 * `modules.dep` lines are `kernel/drivers/net/virtio_net.ko: kernel/net/core/failover.ko …`:
 * paths relative to `/lib/modules/<release>`, dependencies already transitive, listed so that
 * modprobe loads them from last to first. Module names normalize `-` to `_` (kmod does the same),
 * so `crc-t10dif` and `crc_t10dif` are one module.
 * @pure
 */

/** A module of the tree: its normalized name and path relative to `/lib/modules/<release>`. */
export interface ModuleRef {
  name: string;
  path: string;
}

/** Soft dependencies of one module (`softdep m pre: a b post: c`); names may be aliases. */
export interface SoftDependencies {
  pre: string[];
  post: string[];
}

/** The parsed module index of one kernel release. */
export interface ModuleTree {
  /** Module path → its dependencies' paths, as listed in modules.dep. */
  deps: Map<string, string[]>;
  /** Normalized name → path. */
  byName: Map<string, string>;
  /** Exact (wildcard-free) alias → normalized module names, from modules.alias. */
  aliases: Map<string, string[]>;
  /** Every alias line as `[alias, module name]`, in file order (wildcards kept). */
  aliasLines: [string, string][];
  /** Normalized name → soft dependencies, from modules.softdep. */
  softdeps: Map<string, SoftDependencies>;
  /** Normalized names of modules built into the kernel image. */
  builtin: Set<string>;
}

/** The raw text of the index files of one release; only `modulesDep` is required. */
export interface ModuleIndexFiles {
  modulesDep: string;
  modulesAlias?: string;
  modulesSoftdep?: string;
  modulesBuiltin?: string;
}

/** Thrown for a malformed index file, naming the file and line. */
export class ModuleIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModuleIndexError';
  }
}

/** Returns the normalized module name of a path or name: basename without `.ko[.xz|.zst|.gz]`, `-` → `_`. */
export function moduleNameOf(pathOrName: string): string {
  const base = pathOrName.slice(pathOrName.lastIndexOf('/') + 1);
  return base.replace(/\.ko(\.(xz|zst|gz))?$/, '').replaceAll('-', '_');
}

function contentLines(text: string): [number, string][] {
  return text
    .split('\n')
    .map((line, i): [number, string] => [i + 1, line.trim()])
    .filter(([, line]) => line !== '' && !line.startsWith('#'));
}

function parseSoftdeps(text: string): Map<string, SoftDependencies> {
  const out = new Map<string, SoftDependencies>();
  for (const [, line] of contentLines(text)) {
    const [keyword, module, ...rest] = line.split(/\s+/);
    if (keyword !== 'softdep' || module === undefined) continue;
    const entry = out.get(moduleNameOf(module)) ?? { pre: [], post: [] };
    let mode: 'none' | 'pre' | 'post' = 'none';
    for (const token of rest) {
      if (token === 'pre:' || token === 'post:') mode = token === 'pre:' ? 'pre' : 'post';
      // kmod rejects names before any "pre:"/"post:" ("softdep cifs gcm"); they are skipped here.
      else if (mode !== 'none') entry[mode].push(token);
    }
    out.set(moduleNameOf(module), entry);
  }
  return out;
}

/** Parses the index files into a {@link ModuleTree}; throws {@link ModuleIndexError} on a malformed line. */
export function parseModuleTree(files: ModuleIndexFiles): ModuleTree {
  const deps = new Map<string, string[]>();
  const byName = new Map<string, string>();
  for (const [lineNo, line] of contentLines(files.modulesDep)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new ModuleIndexError(`modules.dep line ${lineNo}: expected "path: deps…", got ${JSON.stringify(line)}`);
    const path = line.slice(0, colon).trim();
    const list = line.slice(colon + 1).trim();
    deps.set(path, list === '' ? [] : list.split(/\s+/));
    byName.set(moduleNameOf(path), path);
  }
  for (const [path, list] of deps) {
    const unknown = list.find((d) => !deps.has(d));
    if (unknown !== undefined) throw new ModuleIndexError(`modules.dep: ${path} depends on ${unknown}, which has no line of its own`);
  }
  const aliases = new Map<string, string[]>();
  const aliasLines: [string, string][] = [];
  for (const [lineNo, line] of contentLines(files.modulesAlias ?? '')) {
    const [keyword, alias, module] = line.split(/\s+/);
    if (keyword !== 'alias' || alias === undefined || module === undefined) {
      throw new ModuleIndexError(`modules.alias line ${lineNo}: expected "alias PATTERN MODULE"`);
    }
    aliasLines.push([alias, moduleNameOf(module)]);
    if (!/[*?[]/.test(alias)) aliases.set(alias, [...(aliases.get(alias) ?? []), moduleNameOf(module)]);
  }
  const builtin = new Set(contentLines(files.modulesBuiltin ?? '').map(([, l]) => moduleNameOf(l)));
  return { deps, byName, aliases, aliasLines, softdeps: parseSoftdeps(files.modulesSoftdep ?? ''), builtin };
}

/** The outcome of {@link resolveModuleLoadOrder}. */
export interface ModuleResolution {
  /** Every module to load, dependencies before dependents. */
  order: ModuleRef[];
  /** Requested names found neither as modules nor built in. */
  missing: string[];
  /** Requested names built into the kernel (nothing to load). */
  builtin: string[];
}

/**
 * Returns the load order of `requested` (names or aliases) and all their dependencies:
 * a depth-first walk that loads each module's `pre:` soft dependencies and hard dependencies
 * (modules.dep order reversed, as modprobe does) before it and its `post:` soft dependencies
 * after it. Soft dependencies that do not resolve are ignored, as modprobe does; unknown
 * requested names go to `missing`. Same tree and request → same order.
 */
export function resolveModuleLoadOrder(tree: ModuleTree, requested: readonly string[]): ModuleResolution {
  const order: ModuleRef[] = [];
  const done = new Set<string>();
  const visiting = new Set<string>();
  const missing: string[] = [];
  const builtin: string[] = [];

  const lookup = (nameOrAlias: string): string[] => {
    const name = moduleNameOf(nameOrAlias);
    const path = tree.byName.get(name);
    if (path !== undefined) return [path];
    const viaAlias = tree.aliases.get(nameOrAlias) ?? tree.aliases.get(name) ?? [];
    return viaAlias.flatMap((m) => {
      const p = tree.byName.get(m);
      return p === undefined ? [] : [p];
    });
  };
  const visit = (path: string): void => {
    if (done.has(path) || visiting.has(path)) return; // a cycle cannot be ordered: the first visit wins
    visiting.add(path);
    const name = moduleNameOf(path);
    const soft = tree.softdeps.get(name);
    for (const s of soft?.pre ?? []) lookup(s).forEach(visit);
    for (const dep of [...(tree.deps.get(path) ?? [])].reverse()) visit(dep);
    visiting.delete(path);
    done.add(path);
    order.push({ name, path });
    for (const s of soft?.post ?? []) lookup(s).forEach(visit);
  };

  for (const request of requested) {
    const paths = lookup(request);
    if (paths.length > 0) paths.forEach(visit);
    else if (tree.builtin.has(moduleNameOf(request))) builtin.push(request);
    else missing.push(request);
  }
  return { order, missing, builtin };
}

/** Renders modules.dep restricted to `included` paths (which must be closed under dependencies), sorted by path. */
export function renderModulesDep(tree: ModuleTree, included: readonly ModuleRef[]): string {
  const set = new Set(included.map((m) => m.path));
  return [...set]
    .sort()
    .map((p) => {
      const deps = tree.deps.get(p) ?? [];
      const outside = deps.find((d) => !set.has(d));
      if (outside !== undefined) throw new ModuleIndexError(`${p} depends on ${outside}, which is not included`);
      return deps.length === 0 ? `${p}:\n` : `${p}: ${deps.join(' ')}\n`;
    })
    .join('');
}

/** Renders modules.alias restricted to aliases of `included` modules, in the original order. */
export function renderModulesAlias(tree: ModuleTree, included: readonly ModuleRef[]): string {
  const names = new Set(included.map((m) => m.name));
  return tree.aliasLines
    .filter(([, m]) => names.has(m))
    .map(([alias, m]) => `alias ${alias} ${m}\n`)
    .join('');
}
