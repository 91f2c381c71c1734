/**
 * @module The DHCPv6 server's lease table: loaded once from a {@link LeaseStore} (the agent's,
 * keeping DHCPv6 records apart from DHCPv4's), kept in memory as the pool's
 * {@link Lease6Index}, and written back by group commit — one write in flight, every change
 * made meanwhile coalesced per key (the newest wins) into the next write, through
 * `applyBatch` when the store has it. Offers are written like bindings (their hold is short,
 * and DHCPv6 clients Request within a second).
 */
import { leaseKey, type Lease, type LeaseStore } from '../boot-lookup.js';
import { normalizeMacAddress } from '../dhcp/address.js';
import { isBatchLeaseStore } from '../dhcp/lease-cache.js';
import type { LeaseChange } from '../dhcp/responder-context.js';
import { canonicalIpv6 } from './address6.js';
import type { Lease6Index } from './pool.js';

/** True when `value` is a DHCPv6 lease record this table can use. */
export function isIpv6Lease(value: unknown): value is Lease {
  if (typeof value !== 'object' || value === null) return false;
  const l = value as Record<string, unknown>;
  return typeof l.mac === 'string' && normalizeMacAddress(l.mac) === l.mac && typeof l.address === 'string' && canonicalIpv6(l.address) === l.address &&
    (l.state === 'offered' || l.state === 'bound' || l.state === 'declined') && typeof l.expiresAtMs === 'number' && Number.isFinite(l.expiresAtMs);
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Options of {@link Lease6Table.load}. */
export interface Lease6TableOptions {
  onInvalid?: (record: unknown) => void;
  onWriteError?: (err: unknown, changes: readonly LeaseChange[]) => void;
}

/** The in-memory lease table over a {@link LeaseStore}. */
export class Lease6Table implements Lease6Index {
  readonly #store: LeaseStore;
  readonly #options: Lease6TableOptions;
  readonly #records = new Map<string, Lease>();
  readonly #holders = new Map<string, Lease>();
  #queue = new Map<string, LeaseChange>();
  #waiters: Waiter[] = [];
  #writing: Promise<void> | undefined;
  #writes = 0;
  #writeErrors = 0;

  private constructor(store: LeaseStore, options: Lease6TableOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Reads every record of `store`; malformed ones are reported and skipped. */
  static async load(store: LeaseStore, options: Lease6TableOptions = {}): Promise<Lease6Table> {
    const table = new Lease6Table(store, options);
    for (const record of await store.list()) {
      if (isIpv6Lease(record)) table.#put(record);
      else options.onInvalid?.(record);
    }
    return table;
  }

  #put(lease: Lease): void {
    const key = leaseKey(lease);
    this.#drop(key);
    this.#records.set(key, lease);
    if (lease.state !== 'declined') this.#holders.set(lease.address, lease);
  }

  #drop(key: string): void {
    const old = this.#records.get(key);
    if (old === undefined) return;
    this.#records.delete(key);
    if (old.state !== 'declined' && this.#holders.get(old.address) === old) this.#holders.delete(old.address);
  }

  byMac(mac: string): Lease | undefined {
    return this.#records.get(mac);
  }

  holder(address: string): Lease | undefined {
    return this.#holders.get(address);
  }

  declined(address: string): Lease | undefined {
    return this.#records.get(`declined:${address}`);
  }

  size(): number {
    return this.#records.size;
  }

  /** Every record (a copy). */
  all(): Lease[] {
    return [...this.#records.values()];
  }

  /** Counters: records, writes, write errors, changes waiting. */
  stats(): { records: number; writes: number; writeErrors: number; pending: number } {
    return { records: this.#records.size, writes: this.#writes, writeErrors: this.#writeErrors, pending: this.#queue.size };
  }

  /**
   * Applies `changes` in memory at once (a later request sees them) and resolves once they are
   * durable; rejects with the store's error (the memory keeps them).
   */
  apply(changes: readonly LeaseChange[]): Promise<void> {
    if (changes.length === 0) return Promise.resolve();
    for (const c of changes) {
      if (c.op === 'put') {
        // A host holds one address: its previous record for another address goes with the new one.
        this.#put(c.lease);
        this.#queue.set(leaseKey(c.lease), c);
      } else {
        this.#drop(c.key);
        this.#queue.set(c.key, c);
      }
    }
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    this.#kick();
    return done;
  }

  /** The deletions of records expired at `nowMs`. */
  expired(nowMs: number): LeaseChange[] {
    return [...this.#records.entries()].filter(([, l]) => l.expiresAtMs <= nowMs).map(([key]) => ({ op: 'delete', key }));
  }

  /** Resolves when every change applied so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  #kick(): void {
    if (this.#writing !== undefined || this.#queue.size === 0) return;
    const batch = [...this.#queue.values()];
    const waiters = this.#waiters;
    this.#queue = new Map();
    this.#waiters = [];
    this.#writing = this.#write(batch).then(
      () => { this.#writes++; for (const w of waiters) w.resolve(); },
      (err: unknown) => {
        this.#writeErrors++;
        this.#options.onWriteError?.(err, batch);
        for (const w of waiters) w.reject(err);
      },
    ).finally(() => {
      this.#writing = undefined;
      this.#kick();
    });
  }

  async #write(batch: readonly LeaseChange[]): Promise<void> {
    if (isBatchLeaseStore(this.#store)) {
      await this.#store.applyBatch(batch);
      return;
    }
    for (const c of batch) {
      if (c.op === 'put') await this.#store.put(c.lease);
      else await this.#store.delete(c.key);
    }
  }
}
