/**
 * @module A short-lived cache of open files for the boot HTTP and TFTP servers, in the manner of
 * nginx's `open_file_cache`: a served path (the route's key) maps to an open descriptor plus its
 * stat facts, so a hot file — an image answered in 64 KiB ranges, a kernel fetched by a rack,
 * the first stage 500 firmware clients fetch by TFTP at once — costs one `pread` per read
 * instead of realpath + open + fstat + read + close per request.
 *
 * Freshness: every entry watches its file (inotify through `fs.watch`): a write in place, a
 * rename over it (the old inode's link count drops: IN_ATTRIB), a delete or a move retires the
 * entry at once, so a replaced file (a new inode) is opened afresh for the next request. A
 * full check (realpath through the jail again, then `stat` of the real path: same path, device,
 * inode, size and mtime) runs when an entry is older than `revalidateMs` — it catches what the
 * watch cannot see (a symlink retargeted, a parent directory renamed, a file on NFS changed by
 * another host) — and on every use of an entry whose watch could not be set up (inotify limit).
 *
 * Lifetime: entries are reference-counted while a response uses them; an entry that is
 * retired (changed, evicted, idle for `idleMs`, cache closed) closes its descriptor when its
 * last user releases it. At most `maxEntries` entries are kept (least recently used and unused
 * ones are evicted first); when every entry is in use, a new file is served uncached (opened
 * for the request and closed after it). Concurrent misses on one key share one open.
 */
import { close, constants, fstat, open, stat, watch, type FSWatcher, type Stats } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileEtag, httpDate } from './range.js';

/** Where a served path leads: a real path to open, nothing, or a symlink out of its root. */
export type PathResolution = { kind: 'path'; real: string } | { kind: 'not-found' } | { kind: 'escape'; target: string };

/** An open file held by the cache; valid until it is passed to {@link OpenFileCache.release}. */
export interface CachedFile {
  readonly fd: number;
  /** The real path (symlinks resolved). */
  readonly real: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** Device and inode: with size and mtime, the file's identity (tftp/shared-chunks.ts keys chunks by it). */
  readonly dev: number;
  readonly ino: number;
  /** ETag and Last-Modified, computed once per open (range.ts). */
  readonly validators: { etag: string; lastModified: string };
}

/** Result of {@link OpenFileCache.acquire}: a held file (release it once), or why there is none. */
export type CachedLookup = { kind: 'file'; file: CachedFile } | { kind: 'not-found' } | { kind: 'not-a-file' } | { kind: 'escape'; target: string };

/** Options of {@link OpenFileCache}. */
export interface OpenFileCacheOptions {
  /** Most entries kept open; default 64. 0 disables caching (every request opens and closes). */
  maxEntries?: number;
  /** Age after which an entry is checked against the file system before use; default 1000 ms. */
  revalidateMs?: number;
  /** Entries unused this long are closed; default 10 000 ms. */
  idleMs?: number;
}

interface Entry extends CachedFile {
  key: string;
  refs: number;
  lastUsedMs: number;
  checkedAtMs: number;
  /** No longer in the map; the descriptor closes when `refs` reaches 0. */
  retired: boolean;
  closed: boolean;
  watcher: FSWatcher | undefined;
}

type LoadResult = { kind: 'file'; entry: Entry } | { kind: 'not-found' } | { kind: 'not-a-file' } | { kind: 'escape'; target: string };

/** Cache statistics (for tests and the benchmark). */
export interface OpenFileCacheStats {
  /** Entries in the cache now. */
  entries: number;
  /** Descriptors open now (cached, retired but still in use, uncached in use). */
  openFiles: number;
  hits: number;
  /** Opens (misses and entries found changed). */
  opens: number;
  /** Full checks against the file system. */
  revalidations: number;
}

function openReadOnly(path: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    // O_NONBLOCK keeps a FIFO planted in a root from blocking the open forever (no effect on
    // regular files). `path` is a realpath: O_NOFOLLOW refuses a symlink swapped in since (ELOOP).
    open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW, (err, fd) => {
      resolve(err === null ? fd : undefined);
    });
  });
}

function statOf(target: number | string): Promise<Stats | undefined> {
  return new Promise((resolve) => {
    const done = (err: NodeJS.ErrnoException | null, s: Stats): void => {
      resolve(err === null ? s : undefined);
    };
    if (typeof target === 'number') fstat(target, done);
    else stat(target, done);
  });
}

function closeQuietly(fd: number): void {
  close(fd, () => undefined);
}

/** An open-file cache (see the module comment); {@link close} it when the server stops. */
export class OpenFileCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<LoadResult>>();
  private readonly maxEntries: number;
  private readonly revalidateMs: number;
  private readonly idleMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly counters = { openFiles: 0, hits: 0, opens: 0, revalidations: 0 };

  constructor(options: OpenFileCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 64;
    this.revalidateMs = options.revalidateMs ?? 1000;
    this.idleMs = options.idleMs ?? 10_000;
  }

  /**
   * Holds the file `key` names without touching the file system, when a fresh entry exists
   * (the hot path); otherwise undefined and the caller uses {@link acquire}.
   */
  take(key: string): CachedFile | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.watcher === undefined) return undefined;
    const now = performance.now();
    if (now - entry.checkedAtMs >= this.revalidateMs) return undefined;
    entry.refs += 1;
    entry.lastUsedMs = now;
    this.counters.hits += 1;
    return entry;
  }

  /**
   * Holds the file `key` names: a fresh cached entry, or the result of `resolve` (realpath and
   * jail check) opened — or an existing entry confirmed unchanged. Never rejects for file
   * system errors: a file that cannot be opened is not found.
   */
  async acquire(key: string, resolve: () => Promise<PathResolution>): Promise<CachedLookup> {
    const hit = this.take(key);
    if (hit !== undefined) return { kind: 'file', file: hit };
    let loading = this.pending.get(key);
    if (loading === undefined) {
      loading = this.load(key, resolve).finally(() => this.pending.delete(key));
      this.pending.set(key, loading);
    }
    const result = await loading;
    if (result.kind !== 'file') return result;
    // Closed between the load and this waiter (only when the cache itself closed): open again.
    if (result.entry.closed) return this.closed ? { kind: 'not-found' } : this.acquire(key, resolve);
    result.entry.refs += 1;
    result.entry.lastUsedMs = performance.now();
    return { kind: 'file', file: result.entry };
  }

  /** Gives back a file from {@link take} or {@link acquire} (once per holding). */
  release(file: CachedFile): void {
    const entry = file as Entry;
    entry.refs -= 1;
    entry.lastUsedMs = performance.now();
    if (entry.retired && entry.refs <= 0) this.closeEntry(entry);
  }

  /** Closes every unused descriptor and stops caching; files in use close when released. */
  close(): void {
    this.closed = true;
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const entry of [...this.entries.values()]) this.retire(entry);
  }

  /** Counters since start. */
  stats(): OpenFileCacheStats {
    return { entries: this.entries.size, ...this.counters };
  }

  private async load(key: string, resolve: () => Promise<PathResolution>): Promise<LoadResult> {
    const existing = this.entries.get(key);
    const resolved = await resolve();
    if (existing !== undefined) {
      this.counters.revalidations += 1;
      const s = resolved.kind === 'path' && resolved.real === existing.real && !existing.retired ? await statOf(existing.real) : undefined;
      if (s !== undefined && !existing.retired && s.dev === existing.dev && s.ino === existing.ino && s.size === existing.size && s.mtimeMs === existing.mtimeMs) {
        existing.checkedAtMs = performance.now();
        return { kind: 'file', entry: existing };
      }
      this.retire(existing);
    }
    if (resolved.kind !== 'path') return resolved;
    const fd = await openReadOnly(resolved.real);
    if (fd === undefined) return { kind: 'not-found' };
    this.counters.opens += 1;
    this.counters.openFiles += 1;
    const s = await statOf(fd);
    if (s === undefined || !s.isFile()) {
      this.counters.openFiles -= 1;
      closeQuietly(fd);
      return s === undefined ? { kind: 'not-found' } : { kind: 'not-a-file' };
    }
    const now = performance.now();
    const entry: Entry = {
      key, fd, real: resolved.real, size: s.size, mtimeMs: s.mtimeMs, dev: s.dev, ino: s.ino,
      validators: { etag: fileEtag(s), lastModified: httpDate(s.mtimeMs) },
      refs: 0, lastUsedMs: now, checkedAtMs: now, retired: false, closed: false, watcher: undefined,
    };
    this.insert(entry);
    return { kind: 'file', entry };
  }

  /** Adds `entry`, evicting the least recently used unused entries; uncached when all are busy. */
  private insert(entry: Entry): void {
    if (this.closed || this.maxEntries <= 0) {
      entry.retired = true;
      return;
    }
    while (this.entries.size >= this.maxEntries) {
      let oldest: Entry | undefined;
      for (const e of this.entries.values()) if (e.refs <= 0 && (oldest === undefined || e.lastUsedMs < oldest.lastUsedMs)) oldest = e;
      if (oldest === undefined) {
        entry.retired = true;
        return;
      }
      this.retire(oldest);
    }
    try {
      // Not persistent: a watch never keeps the process alive. Any event means "look again".
      entry.watcher = watch(entry.real, { persistent: false }, () => {
        this.retire(entry);
      });
      entry.watcher.on('error', () => {
        this.retire(entry);
      });
    } catch {
      // No watch (inotify limit, a file system without it): `take` skips the entry and every
      // use goes through `acquire`'s full check instead.
      entry.watcher = undefined;
    }
    this.entries.set(entry.key, entry);
    this.sweeper ??= setInterval(() => {
      this.sweep();
    }, Math.max(100, this.idleMs / 2)).unref();
  }

  private sweep(): void {
    const now = performance.now();
    for (const entry of [...this.entries.values()]) if (entry.refs <= 0 && now - entry.lastUsedMs >= this.idleMs) this.retire(entry);
    if (this.entries.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private retire(entry: Entry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (entry.retired) return;
    entry.retired = true;
    entry.watcher?.close();
    if (entry.refs <= 0) this.closeEntry(entry);
  }

  private closeEntry(entry: Entry): void {
    if (entry.closed) return;
    entry.closed = true;
    this.counters.openFiles -= 1;
    closeQuietly(entry.fd);
  }
}
