/**
 * @module Which requested file names are acceptable, as a pure decision taken before the file
 * system is touched (the realpath jail in `file-source.ts` is the second line):
 * - absolute names are relative to the root, as `in.tftpd -s` treats them (GRUB's `/grub`
 *   prefix asks for `/grub/grub.cfg`; shim asks for `//grubx64.efi` over HTTP and sometimes
 *   TFTP), so leading and repeated slashes collapse;
 * - backslashes are path separators (Windows-style boot configurations send `boot\x64\...`) —
 *   normalized to `/` *before* any other check, so `..\..\etc` is refused like `../../etc`;
 * - any `..` segment is refused, even one that would stay inside the root;
 * - `.` segments are dropped;
 * - only printable ASCII is accepted (no control characters, no bytes ≥ 0x7f; NUL cannot
 *   occur because it ends the name on the wire, and is refused here for callers of the hook);
 * - at most {@link MAX_PATH_LENGTH} characters and {@link MAX_PATH_SEGMENTS} segments.
 * @pure
 */

/** Longest accepted file name. */
export const MAX_PATH_LENGTH = 1024;
/** Deepest accepted path. */
export const MAX_PATH_SEGMENTS = 32;

/** A name turned into a root-relative path, or the reason it is refused. */
export type RequestPath =
  | { readonly ok: true; /** Root-relative, `/`-separated, no leading slash, never empty. */ readonly path: string; readonly segments: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/**
 * Normalizes a requested file name to a root-relative path or refuses it with a reason (see
 * the module comment for the rules). Never throws.
 */
export function normalizeRequestPath(name: string): RequestPath {
  if (name.length === 0) return { ok: false, reason: 'empty file name' };
  if (name.length > MAX_PATH_LENGTH) return { ok: false, reason: `file name longer than ${MAX_PATH_LENGTH} characters` };
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0) return { ok: false, reason: `NUL byte at index ${i}` };
    if (c < 0x20 || c >= 0x7f) return { ok: false, reason: `character 0x${c.toString(16).padStart(2, '0')} at index ${i} is not printable ASCII` };
  }
  const segments: string[] = [];
  for (const segment of name.replaceAll('\\', '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return { ok: false, reason: 'parent directory (..) in file name' };
    segments.push(segment);
  }
  if (segments.length === 0) return { ok: false, reason: 'file name names the root directory' };
  if (segments.length > MAX_PATH_SEGMENTS) return { ok: false, reason: `more than ${MAX_PATH_SEGMENTS} path segments` };
  return { ok: true, path: segments.join('/'), segments };
}
