/**
 * @module The DHCP server's lease table: loaded once from the agent's {@link LeaseStore}, kept
 * in memory (the responder decides against a snapshot of it), and written back through a
 * writer that keeps every key's writes strictly in order — at most one write per key in
 * flight, a newer change for a key replacing a queued older one — with a bounded number of
 * writes in flight across keys, so a burst of DISCOVERs after a rack power-on can neither
 * reorder nor pile up unbounded writes. (LevelDB merges concurrent synced writes into one log
 * write and fsync, which is where the bounded parallelism pays.) Offers are held in memory only:
 * RFC 2131 §4.3.1 asks the server to reserve an offered address, not to persist the offer (ISC
 * dhcpd and Kea commit leases at DHCPREQUEST too); losing a 60-second hold in a restart costs at
 * worst a NAK, while writing every offer would halve the rate at which bindings can be made
 * durable.
 *
 * The table is also the pool's index ({@link PoolLeaseIndex}, over the records it holds: the
 * live table {@link LeaseCache.all}; the server passes it beside them): records by client and by address, a count of records per address, per dynamic
 * range a high-water mark below which every address has a record except those kept in a
 * min-heap of holes (addresses freed since, and excluded or reserved ones seen on the way),
 * and a min-heap of records by expiry. The first never-used address is then the smallest
 * valid hole or the next address above the mark (the mark only moves up: amortised O(1) per
 * allocation), and the longest-expired record is the top of the expiry heap (stale entries,
 * left by replaced records, are dropped when met and the heap is rebuilt when they outnumber
 * the records).
 */
import { leaseKey, type Lease, type LeaseStore } from '../boot-lookup.js';
import { isIpv4, normalizeMacAddress, parseIpv4 } from './address.js';
import type { LeaseIndex } from './indexed-respond.js';
import type { PoolLeaseIndex } from './pool.js';
import type { LeaseChange } from './responder-context.js';

/** Counters of the lease writer. */
export interface LeaseCacheStats {
  /** Records in memory. */
  records: number;
  /** Writes (put or delete) that reached the store. */
  writes: number;
  /** Writes that failed (logged; the in-memory table keeps the change). */
  writeErrors: number;
  /** Queued changes replaced by a newer change for the same key before being written. */
  coalesced: number;
  /** Changes waiting or in flight. */
  pending: number;
  /** Offers kept in memory only (not written). */
  memoryOnly: number;
}

/**
 * A {@link LeaseStore} that can also make several changes durable in one write — group commit,
 * as ISC dhcpd's `delayed-ack` does: one synced write for every binding made while the previous
 * write was on disk, instead of one each. The writer uses it when the store has it.
 */
export interface BatchLeaseStore extends LeaseStore {
  /** Applies `changes` (at most one per key) atomically and durably. */
  applyBatch(changes: readonly LeaseChange[]): Promise<void>;
}

/** True when `store` offers {@link BatchLeaseStore.applyBatch}. */
export function isBatchLeaseStore(store: LeaseStore): store is BatchLeaseStore {
  return typeof (store as Partial<BatchLeaseStore>).applyBatch === 'function';
}

/** Changes in one group-commit write, at most. */
const MAX_BATCH = 512;

/**
 * Waiters released per turn of the event loop when a group-commit write completes. Each waiter
 * is a DHCPACK the server sends at once (a sendmsg, its events and metrics: tens of µs under
 * load), so releasing a 500-binding batch in one go held the loop for tens of milliseconds —
 * the event-loop delay p99 under perfdhcp. Slices of 32 let received requests in between.
 */
const RELEASE_SLICE = 32;

interface Pending {
  change: LeaseChange;
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

/** True when `value` is a well-formed lease record (as a store might return after a crash or by hand-editing). */
export function isLease(value: unknown): value is Lease {
  if (typeof value !== 'object' || value === null) return false;
  const l = value as Record<string, unknown>;
  return (
    typeof l.mac === 'string' &&
    normalizeMacAddress(l.mac) === l.mac &&
    typeof l.address === 'string' &&
    isIpv4(l.address) &&
    (l.state === 'offered' || l.state === 'bound' || l.state === 'declined') &&
    typeof l.expiresAtMs === 'number' &&
    Number.isFinite(l.expiresAtMs) &&
    (l.hostName === undefined || typeof l.hostName === 'string')
  );
}

/** A binary min-heap under `before` (true when `a` must come out before `b`). */
class MinHeap<T> {
  readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    let i = a.push(item) - 1;
    for (let up = (i - 1) >> 1; i > 0 && this.before(item, a[up] as T); i = up, up = (i - 1) >> 1) a[i] = a[up] as T;
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (let l = 1; l < a.length; l = 2 * i + 1) {
      const child = l + 1 < a.length && this.before(a[l + 1] as T, a[l] as T) ? l + 1 : l;
      if (!this.before(a[child] as T, last)) break;
      a[i] = a[child] as T;
      i = child;
    }
    a[i] = last;
    return top;
  }
}

/** One dynamic range's free-address state (see the module comment). */
interface RangeCursor {
  readonly first: number;
  readonly last: number;
  /** Every address in first…mark-1 has a record, or is in `holes`. */
  mark: number;
  readonly holes: MinHeap<number>;
  readonly inHoles: Set<number>;
}

/** A record in the expiry heap; stale once the table holds another record under `key`. */
interface ExpiryEntry {
  readonly lease: Lease;
  readonly key: string;
  readonly value: number;
}

const expiresBefore = (a: ExpiryEntry, b: ExpiryEntry): boolean => a.lease.expiresAtMs < b.lease.expiresAtMs || (a.lease.expiresAtMs === b.lease.expiresAtMs && a.value < b.value);

/** The in-memory lease table (indexed by key, address and expiry) with its ordered, coalescing writer. */
export class LeaseCache implements LeaseIndex, PoolLeaseIndex {
  readonly #store: LeaseStore;
  readonly #records = new Map<string, Lease>();
  /** address → keys of the records for it. */
  readonly #keysByAddress = new Map<string, Set<string>>();
  readonly #pending = new Map<string, Pending>();
  readonly #inFlight = new Set<string>();
  readonly #concurrency: number;
  readonly #onWriteError: (err: unknown, change: LeaseChange) => void;
  #snapshot: readonly Lease[] | undefined;
  /** address (as a number) → how many records name it. */
  readonly #recordsPerAddress = new Map<number, number>();
  readonly #ranges = new Map<string, RangeCursor>();
  readonly #expiry = new MinHeap<ExpiryEntry>(expiresBefore);
  /** The records in no particular order (see {@link all}), their keys, each key's slot and address as a number. */
  readonly #list: Lease[] = [];
  readonly #listKeys: string[] = [];
  readonly #slots = new Map<string, number>();
  readonly #values = new Map<string, number>();
  #idle: (() => void)[] = [];
  /** Completed writes whose waiters are still being released (see RELEASE_SLICE). */
  #releasing = 0;
  #writes = 0;
  #writeErrors = 0;
  #coalesced = 0;
  #memoryOnly = 0;

  private constructor(store: LeaseStore, concurrency: number, onWriteError: (err: unknown, change: LeaseChange) => void) {
    this.#store = store;
    this.#concurrency = concurrency;
    this.#onWriteError = onWriteError;
  }

  /** {@link LeaseIndex.pool}: this table, answering for the records of {@link all}. */
  get pool(): PoolLeaseIndex {
    return this;
  }

  /**
   * Loads every record from `store`. Malformed records, or records stored under a key other
   * than their {@link leaseKey}, are skipped and reported through `onInvalid` (never fatal: a
   * bad record must not keep the DHCP server down).
   */
  static async load(
    store: LeaseStore,
    options: { concurrency?: number; onWriteError?: (err: unknown, change: LeaseChange) => void; onInvalid?: (record: unknown) => void } = {},
  ): Promise<LeaseCache> {
    const concurrency = options.concurrency ?? 8;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`lease write concurrency must be a positive integer, got ${String(concurrency)}`);
    const cache = new LeaseCache(store, concurrency, options.onWriteError ?? (() => undefined));
    for (const record of await store.list()) {
      if (isLease(record)) cache.#set(leaseKey(record), record);
      else options.onInvalid?.(record);
    }
    return cache;
  }

  /**
   * The current records (the same array until the next change). This table (as a
   * {@link PoolLeaseIndex}) answers for it until then: pass both to the pool together.
   */
  snapshot(): readonly Lease[] {
    this.#snapshot ??= [...this.#records.values()];
    return this.#snapshot;
  }

  /**
   * {@link LeaseIndex.all}: every record, as a live array kept up to date in place (O(1) per
   * change, no copy per call: a new client's DISCOVER reads it every time, and copying the
   * table per DISCOVER was the last cost that grew with the number of leases). Valid until the
   * next change; callers that keep records across changes use {@link snapshot}. Passed to the
   * pool with this table as its index (`PoolState.index`), deciding over it scans nothing.
   */
  all(): readonly Lease[] {
    return this.#list;
  }

  /** The record under `key`, if any. */
  get(key: string): Lease | undefined {
    return this.#records.get(key);
  }

  /** {@link LeaseIndex.byClient}: the `offered`/`bound` record of `mac` (stored under the MAC). */
  byClient(mac: string): Lease | undefined {
    return this.#records.get(mac);
  }

  /** {@link LeaseIndex.byAddress}: every record for `address`. */
  byAddress(address: string): readonly Lease[] {
    const keys = this.#keysByAddress.get(address);
    if (keys === undefined) return [];
    const out: Lease[] = [];
    for (const key of keys) {
      const l = this.#records.get(key);
      if (l !== undefined) out.push(l);
    }
    return out;
  }

  /** {@link PoolLeaseIndex.firstUnrecorded}: amortised O(1) (see the module comment). */
  firstUnrecorded(first: number, last: number, skip: (value: number) => boolean): number | undefined {
    const name = `${first}-${last}`;
    let range = this.#ranges.get(name);
    if (range === undefined) {
      range = { first, last, mark: first, holes: new MinHeap<number>((a, b) => a < b), inHoles: new Set() };
      this.#ranges.set(name, range);
    }
    const parked: number[] = [];
    let found: number | undefined;
    for (let hole = range.holes.peek(); hole !== undefined; hole = range.holes.peek()) {
      if (this.#recordsPerAddress.has(hole)) {
        range.holes.pop();
        range.inHoles.delete(hole);
      } else if (skip(hole)) {
        range.holes.pop();
        parked.push(hole);
      } else {
        found = hole;
        break;
      }
    }
    for (const hole of parked) range.holes.push(hole);
    if (found !== undefined) return found;
    let value = range.mark;
    for (; value <= last; value++) {
      if (this.#recordsPerAddress.has(value)) continue;
      if (!skip(value)) break;
      this.#addHole(range, value);
    }
    range.mark = value;
    return value <= last ? value : undefined;
  }

  /** {@link PoolLeaseIndex.findExpired}: from the top of the expiry heap. */
  findExpired(nowMs: number, accept: (lease: Lease) => boolean): Lease | undefined {
    const taken: ExpiryEntry[] = [];
    let found: Lease | undefined;
    for (let entry = this.#expiry.peek(); entry !== undefined; entry = this.#expiry.peek()) {
      if (this.#records.get(entry.key) !== entry.lease) {
        this.#expiry.pop();
        continue;
      }
      if (entry.lease.expiresAtMs > nowMs) break;
      taken.push(entry);
      this.#expiry.pop();
      if (accept(entry.lease)) {
        found = entry.lease;
        break;
      }
    }
    for (const entry of taken) this.#expiry.push(entry);
    return found;
  }

  #addHole(range: RangeCursor, value: number): void {
    if (range.inHoles.has(value)) return;
    range.inHoles.add(value);
    range.holes.push(value);
  }

  #set(key: string, lease: Lease): void {
    this.#unset(key);
    this.#records.set(key, lease);
    this.#slots.set(key, this.#list.length);
    this.#list.push(lease);
    this.#listKeys.push(key);
    let keys = this.#keysByAddress.get(lease.address);
    if (keys === undefined) this.#keysByAddress.set(lease.address, (keys = new Set()));
    keys.add(key);
    const value = parseIpv4(lease.address) ?? -1;
    this.#values.set(key, value);
    this.#recordsPerAddress.set(value, (this.#recordsPerAddress.get(value) ?? 0) + 1);
    this.#expiry.push({ lease, key, value });
    if (this.#expiry.items.length > 2 * this.#records.size + 64) this.#rebuildExpiry();
  }

  #unset(key: string): void {
    const old = this.#records.get(key);
    if (old === undefined) return;
    this.#records.delete(key);
    // Swap-remove from the live list.
    const slot = this.#slots.get(key) ?? -1;
    const lastLease = this.#list.pop();
    const lastKey = this.#listKeys.pop();
    this.#slots.delete(key);
    if (slot >= 0 && slot < this.#list.length && lastLease !== undefined && lastKey !== undefined) {
      this.#list[slot] = lastLease;
      this.#listKeys[slot] = lastKey;
      this.#slots.set(lastKey, slot);
    }
    const keys = this.#keysByAddress.get(old.address);
    keys?.delete(key);
    if (keys?.size === 0) this.#keysByAddress.delete(old.address);
    const value = this.#values.get(key) ?? -1;
    this.#values.delete(key);
    const left = (this.#recordsPerAddress.get(value) ?? 1) - 1;
    if (left > 0) {
      this.#recordsPerAddress.set(value, left);
      return;
    }
    this.#recordsPerAddress.delete(value);
    // The address is unrecorded again: below a range's mark it becomes a hole.
    for (const range of this.#ranges.values()) if (value >= range.first && value < range.mark) this.#addHole(range, value);
  }

  /** Drops stale expiry entries (replaced or deleted records): O(n), at most once per n changes. */
  #rebuildExpiry(): void {
    const live = this.#expiry.items.filter((entry) => this.#records.get(entry.key) === entry.lease);
    this.#expiry.items.length = 0;
    for (const entry of live) this.#expiry.push(entry);
  }

  /**
   * Applies `changes` to the table now (so the next decision sees them) and queues them for
   * the store (offers excepted: see the module comment). Resolves when every queued change (or
   * a newer one for the same key) is durable; rejects with the store's error when a write fails.
   */
  apply(changes: readonly LeaseChange[]): Promise<void> {
    if (changes.length === 0) return Promise.resolve();
    const done: Promise<void>[] = [];
    for (const change of changes) {
      const key = change.op === 'put' ? leaseKey(change.lease) : change.key;
      if (change.op === 'put') this.#set(key, change.lease);
      else this.#unset(key);
      this.#snapshot = undefined;
      if (change.op === 'put' && change.lease.state === 'offered') {
        this.#memoryOnly++;
        continue;
      }
      done.push(
        new Promise<void>((resolve, reject) => {
          const queued = this.#pending.get(key);
          if (queued === undefined) {
            this.#pending.set(key, { change, waiters: [{ resolve, reject }] });
          } else {
            this.#coalesced++;
            queued.change = change;
            queued.waiters.push({ resolve, reject });
          }
        }),
      );
    }
    this.#pump();
    return Promise.all(done).then(() => undefined);
  }

  /** True when no write of the record under `key` is queued or in flight: the store holds it as the table does. */
  settled(key: string): boolean {
    return !this.#pending.has(key) && !this.#inFlight.has(key);
  }

  /** Resolves when no write is queued or in flight. */
  flush(): Promise<void> {
    if (this.#pending.size === 0 && this.#inFlight.size === 0 && this.#releasing === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Writer counters. */
  stats(): LeaseCacheStats {
    return {
      records: this.#records.size,
      writes: this.#writes,
      writeErrors: this.#writeErrors,
      coalesced: this.#coalesced,
      pending: this.#pending.size + this.#inFlight.size,
      memoryOnly: this.#memoryOnly,
    };
  }

  #pump(): void {
    if (isBatchLeaseStore(this.#store)) {
      this.#pumpBatch(this.#store);
      return;
    }
    for (const [key, entry] of this.#pending) {
      if (this.#inFlight.size >= this.#concurrency) return;
      if (this.#inFlight.has(key)) continue;
      this.#pending.delete(key);
      this.#inFlight.add(key);
      void this.#write(key, entry);
    }
    if (this.#pending.size === 0 && this.#inFlight.size === 0 && this.#releasing === 0) this.#notifyIdle();
  }

  /** Group commit: one batch in flight; everything queued meanwhile goes in the next one. */
  #pumpBatch(store: BatchLeaseStore): void {
    if (this.#inFlight.size > 0) return;
    if (this.#pending.size === 0) {
      if (this.#releasing === 0) this.#notifyIdle();
      return;
    }
    const batch: [string, Pending][] = [];
    for (const entry of this.#pending) {
      batch.push(entry);
      if (batch.length >= MAX_BATCH) break;
    }
    for (const [key] of batch) {
      this.#pending.delete(key);
      this.#inFlight.add(key);
    }
    void this.#writeBatch(store, batch);
  }

  async #writeBatch(store: BatchLeaseStore, batch: [string, Pending][]): Promise<void> {
    try {
      await store.applyBatch(batch.map(([, entry]) => entry.change));
      this.#writes += batch.length;
      this.#release(batch.flatMap(([, entry]) => entry.waiters));
    } catch (err) {
      this.#writeErrors += batch.length;
      for (const [, entry] of batch) {
        this.#onWriteError(err, entry.change);
        for (const w of entry.waiters) w.reject(err);
      }
    } finally {
      this.#inFlight.clear();
      this.#pump();
    }
  }

  /** Resolves `waiters` RELEASE_SLICE at a time, one slice per turn of the event loop (the first at once). */
  #release(waiters: Pending['waiters']): void {
    let next = 0;
    const slice = (): void => {
      const end = Math.min(waiters.length, next + RELEASE_SLICE);
      for (; next < end; next++) waiters[next]?.resolve();
      if (next < waiters.length) {
        setImmediate(slice);
        return;
      }
      this.#releasing--;
      this.#pump();
    };
    this.#releasing++;
    slice();
  }

  #notifyIdle(): void {
    const idle = this.#idle;
    this.#idle = [];
    for (const resolve of idle) resolve();
  }

  async #write(key: string, entry: Pending): Promise<void> {
    try {
      if (entry.change.op === 'put') await this.#store.put(entry.change.lease);
      else await this.#store.delete(key);
      this.#writes++;
      for (const w of entry.waiters) w.resolve();
    } catch (err) {
      this.#writeErrors++;
      this.#onWriteError(err, entry.change);
      for (const w of entry.waiters) w.reject(err);
    } finally {
      this.#inFlight.delete(key);
      this.#pump();
    }
  }
}
