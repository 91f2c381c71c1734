/**
 * @module The bytes a TFTP read request is served from: the per-request hook's generated or
 * named file, then the prefix mounts (`ramdisk/…` → a directory), then the roots — each file
 * held open in the server's open-file cache (http/open-file-cache.ts) and read through
 * `file-source.ts` with its chunks shared between transfers. A netascii request gets the file
 * converted in memory (`netascii.ts`, small files only).
 */
import { realpath } from 'node:fs/promises';
import { TftpWireError } from './errors.js';
import { encodeNetascii, MAX_NETASCII_SOURCE_BYTES } from './netascii.js';
import { OpenFileCache, type PathResolution } from '../http/open-file-cache.js';
import type { SharedChunks } from './shared-chunks.js';
import { bufferSource, fileBlockSource, resolveInMounts, resolveInRoots, type BlockSource } from './file-source.js';
import type { TftpClient } from './server-types.js';

/** Why a request has no bytes: the ERROR to send. */
export interface SourceRefusal {
  readonly errorCode: number;
  readonly message: string;
}

/** Where {@link openRequestSource} looks. */
export interface SourceLookup {
  readonly files: OpenFileCache;
  readonly shared: SharedChunks;
  /** Existing roots, real paths, in search order. */
  readonly roots: readonly string[];
  readonly mounts: ReadonlyMap<string, string>;
  /** The per-request hook (`TftpServerOptions.resolve`). */
  readonly resolve?: (path: string, client: TftpClient) => Promise<Buffer | { file: string } | undefined>;
}

/**
 * The source for root-relative `path` asked by `client`, or the refusal (not found, not a
 * regular file, outside its root). Rejects when the hook rejects or a file cannot be opened.
 */
export async function openRequestSource(lookup: SourceLookup, path: string, client: TftpClient): Promise<BlockSource | SourceRefusal> {
  if (lookup.resolve !== undefined) {
    const generated = await lookup.resolve(path, client);
    if (Buffer.isBuffer(generated)) return bufferSource(generated);
    // A named file is trusted (the agent's asset catalog), but may be a symlink (Debian's
    // /usr/lib/ipxe/ipxe.efi is one): its real path is opened, still O_NOFOLLOW and regular only.
    if (generated !== undefined) {
      const file = generated.file;
      return cachedSource(lookup, `file:${file}`, path, () => realpath(file).then((real): PathResolution => ({ kind: 'path', real }), (): PathResolution => ({ kind: 'not-found' })));
    }
  }
  return cachedSource(lookup, `path:${path}`, path, async (): Promise<PathResolution> => {
    const found = (await resolveInMounts(lookup.mounts, path)) ?? (await resolveInRoots(lookup.roots, path));
    if (found.kind === 'found') return { kind: 'path', real: found.path };
    // A refusal (a symlink out of the root, a path that cannot be resolved) travels as the
    // cache's `escape`, its reason as the target: the client gets it as an access violation.
    return found.kind === 'refused' ? { kind: 'escape', target: found.reason } : found;
  });
}

/** The file `key` names, held from the open-file cache (`resolve` runs on a miss or a revalidation). */
async function cachedSource(lookup: SourceLookup, key: string, path: string, resolve: () => Promise<PathResolution>): Promise<BlockSource | SourceRefusal> {
  const found = await lookup.files.acquire(key, resolve);
  switch (found.kind) {
    case 'file': {
      const file = found.file;
      const release = (): Promise<void> => {
        lookup.files.release(file);
        return Promise.resolve();
      };
      return fileBlockSource({ fd: file.fd, dev: file.dev, ino: file.ino, size: file.size, mtimeMs: file.mtimeMs, release }, { shared: lookup.shared });
    }
    case 'not-found':
      return { errorCode: TftpWireError.fileNotFound, message: `file not found: ${path}` };
    case 'not-a-file':
      return { errorCode: TftpWireError.fileNotFound, message: `not a regular file: ${path}` };
    case 'escape':
      return { errorCode: TftpWireError.accessViolation, message: found.target };
  }
}

/** `original` converted to netascii in memory (closing `original`); rejects for a file too large or changed while read. */
export async function netasciiSource(original: BlockSource): Promise<BlockSource> {
  try {
    if (original.sizeBytes > MAX_NETASCII_SOURCE_BYTES) throw new Error(`netascii mode serves files up to ${MAX_NETASCII_SOURCE_BYTES} bytes; use octet`);
    await original.load(0, original.sizeBytes);
    const bytes = Buffer.alloc(original.sizeBytes);
    if (!original.copy(0, original.sizeBytes, bytes, 0)) throw new Error('file changed while being read');
    return bufferSource(encodeNetascii(bytes));
  } finally {
    await original.close();
  }
}
