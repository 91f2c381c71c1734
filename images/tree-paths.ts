/**
 * @module Paths inside an unpacked Debian package tree (`dpkg-deb -x` output): symlinks are
 * followed the way they would resolve once the package is installed at `/` — an absolute target
 * is taken from the tree's root, never from the build host's — so a foreign package's
 * `/lib/ld-linux-aarch64.so.1 -> /lib/aarch64-linux-gnu/ld-linux-aarch64.so.1` stays inside it.
 */
import { lstat, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';

/** Symlinks followed at most (the kernel's limit on nested links, path_resolution(7)). */
const MAX_LINKS = 40;

/**
 * Resolves `relPath` (relative to `root`, no leading slash) to the tree-relative path of the
 * regular file it names, following symlinks inside the tree; undefined when the path, or a link
 * target, is missing, is not a regular file, or loops.
 */
export async function resolveInTree(root: string, relPath: string): Promise<string | undefined> {
  let current = posix.normalize(relPath).replace(/^\/+/, '');
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    if (current.startsWith('..')) return undefined;
    const parent = await resolveParent(root, current);
    if (parent === undefined) return undefined;
    current = parent;
    const st = await lstat(join(root, current)).catch(() => undefined);
    if (st === undefined) return undefined;
    if (st.isFile()) return current;
    if (!st.isSymbolicLink()) return undefined;
    const target = await readlink(join(root, current));
    current = posix.normalize(target.startsWith('/') ? target.slice(1) : posix.join(posix.dirname(current), target)).replace(/^\/+/, '');
  }
  return undefined;
}

/** `relPath` with its directory part's symlinks (such as a merged-/usr `lib -> usr/lib`) resolved inside the tree. */
async function resolveParent(root: string, relPath: string): Promise<string | undefined> {
  const parts = relPath.split('/');
  const name = parts.pop() ?? '';
  let dir = '';
  for (const part of parts) {
    const candidate = dir === '' ? part : `${dir}/${part}`;
    const st = await lstat(join(root, candidate)).catch(() => undefined);
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) {
      const target = await readlink(join(root, candidate));
      dir = posix.normalize(target.startsWith('/') ? target.slice(1) : posix.join(posix.dirname(candidate), target)).replace(/^\/+/, '');
      if (dir.startsWith('..')) return undefined;
    } else {
      dir = candidate;
    }
  }
  return dir === '' || dir === '.' ? name : `${dir}/${name}`;
}
