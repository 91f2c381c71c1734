/**
 * @module Where the bytes of a TFTP transfer come from: the realpath jail over the served roots
 * and the prefix mounts, and a block source that streams a file from disk in chunks with
 * read-ahead (never the whole file in memory), or serves a buffer produced by the per-request hook.
 *
 * The jail: the root-relative path (already normalized by `path.ts`, so no `..`) is joined to
 * each root's realpath in turn; the candidate's realpath must stay inside that root, so a
 * symlink that points out of the root is refused (node-tftp followed it — docs/dependency-audit.md, "Package behaviour the code works around"). The
 * resolved path is then opened with O_NOFOLLOW and must be a regular file.
 *
 * A mount (`ramdisk` → a directory, as boot HTTP's `mounts`) owns the first path segment: a
 * name under it is looked up in that directory alone, through the same jail, and never falls
 * through to the roots. The mount directory's realpath is taken per request, so a directory
 * created (or re-pointed) after start is served without a restart.
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { readAt } from '../file-read.js';
import { fileKeyOf, type FileIdentity, type SharedChunks } from './shared-chunks.js';

/** The bytes of one transfer, read by absolute offset. */
export interface BlockSource {
  readonly sizeBytes: number;
  /**
   * Copies `length` bytes at `offset` into `target` at `targetOffset` and returns true when
   * they are in memory now; otherwise starts loading them and returns false.
   */
  copy(offset: number, length: number, target: Buffer, targetOffset: number): boolean;
  /**
   * The bytes at `offset` as a view, without copying, when they lie in memory in one piece;
   * otherwise `undefined` (use {@link BlockSource.copy}). Large blocks go out as header + view.
   */
  view(offset: number, length: number): Buffer | undefined;
  /** Resolves when `copy(offset, length, …)` will succeed; rejects on a read error. */
  load(offset: number, length: number): Promise<void>;
  /** Forgets everything below `offset` (acknowledged by the client). */
  release(offset: number): void;
  /** Bytes held in memory now (chunks read from disk and not yet released). */
  bufferedBytes(): number;
  /**
   * Where another thread may read the same bytes without this object: the open file's
   * descriptor (valid until {@link BlockSource.close}) or the buffer itself.
   */
  direct(): DirectBytes;
  close(): Promise<void>;
}

/** Bytes readable off the event loop: a file descriptor (pread) or a buffer. */
export type DirectBytes = { readonly fd: number } | { readonly bytes: Buffer };

/** A source over bytes already in memory (hook output, netascii conversions). */
export function bufferSource(bytes: Buffer): BlockSource {
  return {
    sizeBytes: bytes.length,
    copy: (offset, length, target, targetOffset) => {
      bytes.copy(target, targetOffset, offset, offset + length);
      return true;
    },
    view: (offset, length) => bytes.subarray(offset, offset + length),
    load: () => Promise.resolve(),
    release: () => undefined,
    bufferedBytes: () => bytes.length,
    direct: () => ({ bytes }),
    close: () => Promise.resolve(),
  };
}

/** Tuning of {@link openFileSource}. */
export interface FileSourceOptions {
  /** Bytes per disk read (default 256 KiB). */
  readonly chunkBytes?: number;
  /** Chunks read ahead of the one being sent (default 4). */
  readAheadChunks?: number;
  /** Chunks shared with the server's other transfers (shared-chunks.ts); without it each transfer reads its own. */
  readonly shared?: SharedChunks;
}

/** An open regular file a block source reads: its descriptor, identity, and how to let go of it. */
export interface HeldFile extends FileIdentity {
  readonly fd: number;
  /** Called once, by {@link BlockSource.close}, after the last read: closes or releases `fd`. */
  release(): Promise<void>;
}

class FileBlockSource implements BlockSource {
  private readonly chunks = new Map<number, Buffer>();
  private readonly loading = new Map<number, Promise<Buffer>>();
  private failure: Error | undefined;
  private closed = false;
  /** The chunk the last copy ended in. */
  private current: { start: number; bytes: Buffer } | undefined;
  readonly sizeBytes: number;

  constructor(
    private readonly file: HeldFile,
    private readonly chunkBytes: number,
    private readonly readAhead: number,
    private readonly shared?: { cache: SharedChunks; fileKey: string },
  ) {
    this.sizeBytes = file.size;
  }

  /** Chunk `index` if this transfer holds it, or adopts it from the shared cache. */
  private chunkAt(index: number): Buffer | undefined {
    const own = this.chunks.get(index);
    if (own !== undefined || this.shared === undefined || this.closed) return own;
    const chunk = this.shared.cache.get(this.shared.fileKey, index);
    if (chunk !== undefined) this.chunks.set(index, chunk);
    return chunk;
  }

  view(offset: number, length: number): Buffer | undefined {
    const current = this.current;
    if (current !== undefined && offset >= current.start && offset + length <= current.start + current.bytes.length) {
      return current.bytes.subarray(offset - current.start, offset - current.start + length);
    }
    const index = Math.floor(offset / this.chunkBytes);
    const chunk = this.chunkAt(index);
    const start = index * this.chunkBytes;
    if (chunk === undefined || offset + length > start + chunk.length) return undefined;
    this.current = { start, bytes: chunk };
    this.prefetch(index + 1, index + this.readAhead);
    return chunk.subarray(offset - start, offset - start + length);
  }

  copy(offset: number, length: number, target: Buffer, targetOffset: number): boolean {
    // Fast path: the block lies inside the chunk the previous block came from.
    const current = this.current;
    if (current !== undefined && offset >= current.start && offset + length <= current.start + current.bytes.length) {
      current.bytes.copy(target, targetOffset, offset - current.start, offset - current.start + length);
      return true;
    }
    const first = Math.floor(offset / this.chunkBytes);
    const last = length === 0 ? first : Math.floor((offset + length - 1) / this.chunkBytes);
    this.prefetch(first + 1, last + this.readAhead);
    let copied = 0;
    for (let index = first; index <= last; index++) {
      const chunk = this.chunkAt(index);
      if (chunk === undefined) {
        this.prefetch(index, last);
        return false;
      }
      const start = index * this.chunkBytes;
      const from = Math.max(offset, start) - start;
      const to = Math.min(offset + length, start + chunk.length) - start;
      chunk.copy(target, targetOffset + copied, from, to);
      copied += to - from;
      this.current = { start, bytes: chunk };
    }
    return true;
  }

  async load(offset: number, length: number): Promise<void> {
    const first = Math.floor(offset / this.chunkBytes);
    const last = length === 0 ? first : Math.floor((offset + length - 1) / this.chunkBytes);
    for (let i = first; i <= last; i++) await this.fetch(i);
  }

  release(offset: number): void {
    const below = Math.floor(offset / this.chunkBytes);
    for (const index of this.chunks.keys()) if (index < below) this.chunks.delete(index);
    if (this.current !== undefined && this.current.start + this.current.bytes.length <= below * this.chunkBytes) this.current = undefined;
  }

  bufferedBytes(): number {
    let total = 0;
    for (const chunk of this.chunks.values()) total += chunk.length;
    return total;
  }

  direct(): DirectBytes {
    return { fd: this.file.fd };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.chunks.clear();
    this.current = undefined;
    await Promise.allSettled(this.loading.values());
    await this.file.release();
  }

  private prefetch(from: number, to: number): void {
    const lastChunk = Math.floor(Math.max(0, this.sizeBytes - 1) / this.chunkBytes);
    for (let i = from; i <= Math.min(to, lastChunk); i++) {
      if (this.chunkAt(i) === undefined && !this.loading.has(i)) this.fetch(i).catch(() => undefined);
    }
  }

  private fetch(index: number): Promise<Buffer> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const have = this.chunkAt(index);
    if (have !== undefined) return Promise.resolve(have);
    const pending = this.loading.get(index);
    if (pending !== undefined) return pending;
    const read = (): Promise<Buffer> => this.readChunk(index);
    const promise = (this.shared === undefined ? read() : this.shared.cache.load(this.shared.fileKey, index, read)).then(
      (chunk) => {
        this.loading.delete(index);
        if (!this.closed) this.chunks.set(index, chunk);
        return chunk;
      },
      (err: unknown) => {
        this.loading.delete(index);
        this.failure = err instanceof Error ? err : new Error(String(err));
        throw this.failure;
      },
    );
    this.loading.set(index, promise);
    return promise;
  }

  private async readChunk(index: number): Promise<Buffer> {
    if (this.closed) throw new Error('block source is closed');
    const position = index * this.chunkBytes;
    const size = Math.max(0, Math.min(this.chunkBytes, this.sizeBytes - position));
    const chunk = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const bytesRead = await readAt(this.file.fd, chunk, filled, size - filled, position + filled);
      if (bytesRead === 0) throw new Error(`file shrank while being served: ended at byte ${position + filled} of ${this.sizeBytes}`);
      filled += bytesRead;
    }
    return chunk;
  }
}

/**
 * A streaming block source over `file` (a regular file held open by the caller — the TFTP
 * server's open-file cache), which it releases on {@link BlockSource.close}. With
 * `options.shared`, chunks are shared with every other transfer of the same file identity.
 */
export function fileBlockSource(file: HeldFile, options: FileSourceOptions = {}): BlockSource {
  const chunkBytes = options.chunkBytes ?? 256 * 1024;
  // The chunk size is part of the key: servers with other sizes never share a cache, but a test might.
  const shared = options.shared === undefined ? undefined : { cache: options.shared, fileKey: `${fileKeyOf(file)}/${String(chunkBytes)}` };
  return new FileBlockSource(file, chunkBytes, options.readAheadChunks ?? 4, shared);
}

/** Opens a regular file (already resolved by {@link resolveInRoots}; O_NOFOLLOW) as a streaming block source of its own descriptor. */
export async function openFileSource(path: string, options: FileSourceOptions = {}): Promise<BlockSource> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'ENOTFILE' });
    const release = (): Promise<void> => handle.close();
    return fileBlockSource({ fd: handle.fd, dev: stat.dev, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, release }, options);
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Outcome of looking a root-relative path up in the roots. */
export type RootLookup =
  | { readonly kind: 'found'; /** The real path, inside `root`. */ readonly path: string; readonly root: string }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'refused'; readonly reason: string };

/** Realpaths of the roots, computed once; roots that do not exist are skipped. */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const root of roots) {
    try {
      out.push(await realpath(root));
    } catch {
      // A configured root that does not exist serves nothing; the agent's start checks report it.
    }
  }
  return out;
}

/** Resolves `relativePath` under one root (a realpath); `not-found` when it does not exist there. */
async function resolveUnder(root: string, relativePath: string, shownAs: string, place: 'root' | 'mount'): Promise<RootLookup> {
  let real: string;
  try {
    real = await realpath(join(root, relativePath));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'not-found' };
    return { kind: 'refused', reason: `cannot resolve ${shownAs}: ${code ?? String(err)}` };
  }
  if (real !== root && !real.startsWith(root.endsWith(sep) ? root : root + sep)) {
    return { kind: 'refused', reason: `${shownAs} leads outside the served ${place} (symlink)` };
  }
  return { kind: 'found', path: real, root };
}

/**
 * Finds `relativePath` in the first root that has it, refusing anything whose realpath leaves
 * that root (a symlink pointing outside). `roots` must already be realpaths ({@link realRoots}).
 */
export async function resolveInRoots(roots: readonly string[], relativePath: string): Promise<RootLookup> {
  for (const root of roots) {
    const found = await resolveUnder(root, relativePath, relativePath, 'root');
    if (found.kind !== 'not-found') return found;
  }
  return { kind: 'not-found' };
}

/**
 * Looks a root-relative path up in the mount its first segment names (`ramdisk/initrd` → the
 * `ramdisk` directory, `initrd` inside it), refusing symlinks out of that directory like
 * {@link resolveInRoots}; `undefined` when no mount owns the path (a single segment never
 * names a mount, so the roots answer it). A mount whose directory is missing has no files.
 */
export async function resolveInMounts(mounts: ReadonlyMap<string, string>, relativePath: string): Promise<RootLookup | undefined> {
  const slash = relativePath.indexOf('/');
  if (slash <= 0) return undefined;
  const dir = mounts.get(relativePath.slice(0, slash));
  if (dir === undefined) return undefined;
  let root: string;
  try {
    root = await realpath(dir);
  } catch {
    return { kind: 'not-found' };
  }
  return resolveUnder(root, relativePath.slice(slash + 1), relativePath, 'mount');
}
