/**
 * @module The LevelDB layout: the sublevel names of docs/architecture.md, "Store" (plus `firmware`: the
 * HostFirmwareSettings/Components, HostUpdatePolicy and FirmwareSchema objects; and
 * `inventories`: each host's last hardware inventory, moved out of its `nodes` record;
 * `eraseRecords`: the signed erase records, agent/erase; an older database simply has none of
 * them, so adding them needed no schema version), how they are opened (UTF-8 keys, JSON values),
 * and the {@link KeyValue} view used for `nodes`, `inventories`, `leases`, `images`, `outbox` and
 * `eraseRecords` (each put synced: this is state a crash must not lose).
 */
import type { BatchOperation, Level } from 'level';
import type { KeyValue, KeyValueOperation } from './types.js';

/** Every sublevel of the state database. */
export const SUBLEVEL_NAMES = ['hosts', 'secrets', 'firmware', 'nodes', 'inventories', 'leases', 'events', 'outbox', 'images', 'eraseRecords', 'meta'] as const;
/** A sublevel name. */
export type SublevelName = (typeof SUBLEVEL_NAMES)[number];

/** The root database: UTF-8 keys, JSON values. */
export type StateDb = Level<string, unknown>;

/** Operations of one atomic batch across sublevels (`{ type, sublevel, key, value }`). */
export type StateBatch = BatchOperation<StateDb, string, unknown>[];

/** Opens (lazily, with the root) the JSON sublevel `name` of `db`. */
export function jsonSublevel(db: StateDb, name: SublevelName) {
  return db.sublevel<string, unknown>(name, { valueEncoding: 'json' });
}
/** A JSON sublevel of the state database. */
export type JsonSublevel = ReturnType<typeof jsonSublevel>;

/**
 * Reads `key` of `sub` on the event loop with LevelDB's synchronous get once the sublevel is
 * open (a few µs on a small, cached database, against a thread-pool round trip and a promise
 * for `get`: 5 vs 21 µs of CPU measured, and every reconcile does several —
 * test/bench/scale.bench.ts); while it is still opening (just after the store opened),
 * through the asynchronous get, which waits for it. Errors reject either way.
 */
export function readNow(sub: JsonSublevel, key: string): Promise<unknown> {
  if (sub.status !== 'open') return sub.get(key);
  return new Promise((resolve) => {
    resolve(sub.getSync(key));
  });
}

/**
 * Reads `keys` of `sub` like {@link readNow}, in order (`undefined` for a missing key): a few
 * dozen synchronous gets cost less than one trip through the thread pool for `getMany`, whose
 * futex wake-ups and completion callback were most of an event listing's cost while the event
 * loop also served a PXE storm (test/bench/api-load.bench.ts).
 */
export function readManyNow(sub: JsonSublevel, keys: readonly string[]): Promise<unknown[]> {
  if (sub.status !== 'open') return sub.getMany([...keys]);
  return new Promise((resolve) => {
    resolve(keys.map((key) => sub.getSync(key)));
  });
}

/** Throws a clear error unless `key` is a non-empty string. */
export function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key === '') throw new TypeError('store key must be a non-empty string');
}

/** Throws a clear error for a key or value LevelDB's JSON encoding cannot keep (`undefined`). */
export function checkEntry(key: unknown, value: unknown): void {
  checkKey(key);
  if (value === undefined) {
    throw new TypeError(`store value for key "${String(key)}" must not be undefined (delete the key instead)`);
  }
}

/** A {@link KeyValue} over one JSON sublevel; puts and deletes are synced. */
export class LevelKeyValue implements KeyValue<unknown> {
  readonly #db: StateDb;
  readonly #sub: JsonSublevel;
  constructor(db: StateDb, sub: JsonSublevel) {
    this.#db = db;
    this.#sub = sub;
  }
  async get(key: string): Promise<unknown> {
    checkKey(key);
    return readNow(this.#sub, key);
  }
  async put(key: string, value: unknown): Promise<void> {
    checkEntry(key, value);
    // Through the root batch: the sublevel typings do not carry classic-level's `sync` option.
    await this.#db.batch([{ type: 'put', sublevel: this.#sub, key, value }], { sync: true });
  }
  async del(key: string): Promise<void> {
    checkKey(key);
    await this.#db.batch([{ type: 'del', sublevel: this.#sub, key }], { sync: true });
  }
  async batch(operations: readonly KeyValueOperation<unknown>[]): Promise<void> {
    for (const op of operations) {
      if (op.type === 'put') checkEntry(op.key, op.value);
      else checkKey(op.key);
    }
    if (operations.length === 0) return;
    await this.#db.batch(
      operations.map((op) => (op.type === 'put' ? { type: 'put' as const, sublevel: this.#sub, key: op.key, value: op.value } : { type: 'del' as const, sublevel: this.#sub, key: op.key })),
      { sync: true },
    );
  }
  async entries(): Promise<[string, unknown][]> {
    return this.#sub.iterator().all();
  }
}
