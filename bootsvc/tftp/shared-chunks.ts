/**
 * @module File chunks shared by every transfer of one TFTP server: in a PXE storm hundreds of
 * clients fetch the same first stage (iPXE, shim, GRUB) at once, and each transfer reading its
 * own copy held hundreds of MiB. A chunk is keyed by the file's identity (device, inode, size,
 * modification time — a file replaced by rename or rewritten is a new file) and its index; reads
 * of a chunk already loading are joined; the chunks not used for longest are dropped once the
 * cache holds more than its byte budget. Chunks are immutable: a transfer still sending an
 * evicted chunk keeps its own reference, so eviction never changes bytes in flight.
 * @pure
 */

/** What identifies a file's content: `stat` fields. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The cache key prefix of a file (see the module comment). */
export function fileKeyOf(stat: FileIdentity): string {
  return `${String(stat.dev)}:${String(stat.ino)}:${String(stat.size)}:${String(stat.mtimeMs)}`;
}

/** Chunks of files, shared across transfers, within a byte budget (see the module comment). */
export class SharedChunks {
  /** Loaded chunks in least-recently-used order (Map iteration order: oldest first). */
  readonly #chunks = new Map<string, Buffer>();
  readonly #loading = new Map<string, Promise<Buffer>>();
  #bytes = 0;
  #hits = 0;
  #reads = 0;

  /** `budgetBytes` of chunks kept at most (one chunk over it is never kept). */
  constructor(readonly budgetBytes: number) {}

  /** The chunk `index` of file `fileKey` when loaded (it becomes the most recently used). */
  get(fileKey: string, index: number): Buffer | undefined {
    const key = `${fileKey}#${String(index)}`;
    const chunk = this.#chunks.get(key);
    if (chunk === undefined) return undefined;
    this.#chunks.delete(key);
    this.#chunks.set(key, chunk);
    this.#hits += 1;
    return chunk;
  }

  /** The chunk, from the cache, from a read already running, or by `read` (kept within the budget). */
  load(fileKey: string, index: number, read: () => Promise<Buffer>): Promise<Buffer> {
    const have = this.get(fileKey, index);
    if (have !== undefined) return Promise.resolve(have);
    const key = `${fileKey}#${String(index)}`;
    const pending = this.#loading.get(key);
    if (pending !== undefined) {
      this.#hits += 1;
      return pending;
    }
    this.#reads += 1;
    const promise = read().then(
      (chunk) => {
        this.#loading.delete(key);
        this.#keep(key, chunk);
        return chunk;
      },
      (err: unknown) => {
        this.#loading.delete(key);
        throw err;
      },
    );
    this.#loading.set(key, promise);
    return promise;
  }

  #keep(key: string, chunk: Buffer): void {
    if (chunk.length > this.budgetBytes) return;
    this.#chunks.set(key, chunk);
    this.#bytes += chunk.length;
    for (const [oldest, bytes] of this.#chunks) {
      if (this.#bytes <= this.budgetBytes) break;
      this.#chunks.delete(oldest);
      this.#bytes -= bytes.length;
    }
  }

  /** Bytes held, chunks held, chunk requests served without a disk read, disk reads. */
  stats(): { bytes: number; chunks: number; hits: number; reads: number } {
    return { bytes: this.#bytes, chunks: this.#chunks.size, hits: this.#hits, reads: this.#reads };
  }
}
