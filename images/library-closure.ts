/**
 * @module The shared libraries an executable needs, transitively: from its DT_NEEDED sonames,
 * each library found by a lookup (foreign-tools.ts searches unpacked package trees) adds its own
 * DT_NEEDED, as the dynamic loader does at start (ld.so(8); ELF gABI, "Shared Object
 * Dependencies"). The search order of the loader's default directories for a Debian
 * architecture is {@link libraryDirs}. Apart from the injected lookup, pure.
 */

/** A library found for a soname: where it goes in the ramdisk, what it needs, its ELF machine. */
export interface FoundLibrary {
  soname: string;
  /** Tree-relative path the loader opens (`lib/aarch64-linux-gnu/libc.so.6`). */
  path: string;
  needed: readonly string[];
  machine: number;
}

/** The outcome of {@link libraryClosure}: libraries sorted by path, sonames nothing provides sorted. */
export interface LibraryClosure {
  libraries: FoundLibrary[];
  missing: string[];
}

/**
 * The loader's default search directories for multiarch `triplet`, tree-relative, in its order
 * (Debian policy §9.1.1 multiarch paths first, then `/lib`, `/usr/lib`), after the binary's own
 * DT_RUNPATH directories.
 */
export function libraryDirs(triplet: string, runpath: readonly string[] = []): string[] {
  const own = runpath.filter((p) => p.startsWith('/') && !p.includes('$')).map((p) => p.replace(/^\/+|\/+$/g, ''));
  return [...new Set([...own, `lib/${triplet}`, `usr/lib/${triplet}`, 'lib', 'usr/lib'])];
}

/**
 * Walks the DT_NEEDED graph from `needed` breadth first, asking `lookup` once per soname; a
 * soname `lookup` cannot find is listed in `missing` (its own needs are then unknown).
 */
export async function libraryClosure(needed: readonly string[], lookup: (soname: string) => Promise<FoundLibrary | undefined>): Promise<LibraryClosure> {
  const seen = new Set<string>();
  const found: FoundLibrary[] = [];
  const missing: string[] = [];
  let frontier = [...needed];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const soname of frontier) {
      if (seen.has(soname)) continue;
      seen.add(soname);
      const lib = await lookup(soname);
      if (lib === undefined) missing.push(soname);
      else {
        found.push(lib);
        next.push(...lib.needed);
      }
    }
    frontier = next;
  }
  return { libraries: found.sort((a, b) => a.path.localeCompare(b.path)), missing: missing.sort() };
}
