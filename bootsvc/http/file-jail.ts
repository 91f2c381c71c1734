/**
 * @module A read-only realpath jail over one directory. express.static (and node-tftp) serve
 * symlinks that point outside their root (docs/dependency-audit.md, "Package behaviour the code works around"); here every request path is
 * resolved with `realpath` and must still lie inside the root's own real path, so a symlink
 * inside the root may point elsewhere inside it but never out. Directories are never listed or
 * served. The caller passes paths already normalized by `normalizeBootPath` (no `..`).
 */
import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { PathResolution } from './open-file-cache.js';

/** An open file inside the jail; the caller must close `handle`. */
export interface JailedFile {
  kind: 'file';
  /** The real path (symlinks resolved). */
  path: string;
  handle: FileHandle;
  size: number;
  mtimeMs: number;
}

/** Result of {@link FileJail.open}. */
export type JailLookup = JailedFile | { kind: 'not-found' } | { kind: 'not-a-file' } | { kind: 'escape'; target: string };

/**
 * Opens `path` read-only when it is a regular file. O_NONBLOCK keeps a FIFO planted in a root
 * from blocking the open forever (it has no effect on regular files).
 */
export async function openRegularFile(path: string): Promise<JailedFile | { kind: 'not-found' } | { kind: 'not-a-file' }> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return { kind: 'not-found' };
  }
  try {
    const s = await handle.stat();
    if (!s.isFile()) {
      await handle.close();
      return { kind: 'not-a-file' };
    }
    return { kind: 'file', path, handle, size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    await handle.close();
    return { kind: 'not-found' };
  }
}

/** A read-only view of one directory tree that refuses symlink escapes. */
export class FileJail {
  /** The root's real path. */
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  /** Opens a jail on `dir` (resolving its real path once); rejects when `dir` does not exist. */
  static async create(dir: string): Promise<FileJail> {
    return new FileJail(await realpath(dir));
  }

  /** True when `real` is the root or below it. */
  contains(real: string): boolean {
    return real === this.root || real.startsWith(this.root.endsWith(sep) ? this.root : this.root + sep);
  }

  /**
   * Resolves `relativePath` to its real path when that lies inside the root; otherwise says
   * why not (missing, or a symlink escaping the root). Nothing is opened.
   */
  async resolve(relativePath: string): Promise<PathResolution> {
    let real: string;
    try {
      real = await realpath(join(this.root, relativePath));
    } catch {
      return { kind: 'not-found' };
    }
    return this.contains(real) ? { kind: 'path', real } : { kind: 'escape', target: real };
  }

  /**
   * Opens `relativePath` for reading when it resolves to a regular file inside the root;
   * otherwise says why not (missing, a directory or device, or a symlink escaping the root).
   */
  async open(relativePath: string): Promise<JailLookup> {
    const resolved = await this.resolve(relativePath);
    return resolved.kind === 'path' ? openRegularFile(resolved.real) : resolved;
  }
}
