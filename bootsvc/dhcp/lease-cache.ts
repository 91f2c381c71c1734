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
 */
import { leaseKey, type Lease, type LeaseStore } from '../boot-lookup.js';
import { isIpv4, normalizeMacAddress } from './address.js';
import type { LeaseIndex } from './indexed-respond.js';
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

/** The in-memory lease table (indexed by key and by address) with its ordered, coalescing writer. */
export class LeaseCache implements LeaseIndex {
  readonly #store: LeaseStore;
  readonly #records = new Map<string, Lease>();
  /** address → keys of the records for it. */
  readonly #keysByAddress = new Map<string, Set<string>>();
  readonly #pending = new Map<string, Pending>();
  readonly #inFlight = new Set<string>();
  readonly #concurrency: number;
  readonly #onWriteError: (err: unknown, change: LeaseChange) => void;
  #snapshot: readonly Lease[] | undefined;
  #idle: (() => void)[] = [];
  #writes = 0;
  #writeErrors = 0;
  #coalesced = 0;
  #memoryOnly = 0;

  private constructor(store: LeaseStore, concurrency: number, onWriteError: (err: unknown, change: LeaseChange) => void) {
    this.#store = store;
    this.#concurrency = concurrency;
    this.#onWriteError = onWriteError;
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

  /** The current records (the same array until the next change). */
  snapshot(): readonly Lease[] {
    this.#snapshot ??= [...this.#records.values()];
    return this.#snapshot;
  }

  /** {@link LeaseIndex.all}: the current records. */
  all(): readonly Lease[] {
    return this.snapshot();
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

  #set(key: string, lease: Lease): void {
    this.#unset(key);
    this.#records.set(key, lease);
    let keys = this.#keysByAddress.get(lease.address);
    if (keys === undefined) this.#keysByAddress.set(lease.address, (keys = new Set()));
    keys.add(key);
  }

  #unset(key: string): void {
    const old = this.#records.get(key);
    if (old === undefined) return;
    this.#records.delete(key);
    const keys = this.#keysByAddress.get(old.address);
    keys?.delete(key);
    if (keys?.size === 0) this.#keysByAddress.delete(old.address);
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

  /** Resolves when no write is queued or in flight. */
  flush(): Promise<void> {
    if (this.#pending.size === 0 && this.#inFlight.size === 0) return Promise.resolve();
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
    if (this.#pending.size === 0 && this.#inFlight.size === 0) this.#notifyIdle();
  }

  /** Group commit: one batch in flight; everything queued meanwhile goes in the next one. */
  #pumpBatch(store: BatchLeaseStore): void {
    if (this.#inFlight.size > 0) return;
    if (this.#pending.size === 0) {
      this.#notifyIdle();
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
      for (const [, entry] of batch) for (const w of entry.waiters) w.resolve();
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
