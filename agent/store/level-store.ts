/**
 * @module The LevelDB-backed {@link Store} (docs/architecture.md, "Store"): one database at
 * `<stateDir>/db` with JSON sublevels, secrets sealed with the key in `<stateDir>/secret.key`,
 * every commit one synced batch across sublevels together with the store revision in `meta`.
 * Commits are serialized in-process; LevelDB's `LOCK` keeps other processes out. Point reads
 * (`getHost`, `getSecret`, `getFirmwareObject`, `KeyValue.get`) use LevelDB's synchronous get
 * (level-kv.ts `readNow`); `listHosts` and `listHostsJson` keep the stored JSON of the last
 * listing until the next commit (a 1000-host listing then skips the LevelDB iteration, and
 * `listHostsJson` the decoding too: test/bench/scale.bench.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import type { FirmwareKind, FirmwareObjectOf } from '../host/firmware-types.js';
import type { BareMetalHost, ObjectMeta, Secret } from '../host/types.js';
import { collectTargets, firmwareKey, planCommit, type CommitPlan } from './commit-plan.js';
import { SECRET_IV_BYTES, decodeSecretRecord, encodeSecretRecord, isSecretRecord } from './crypto.js';
import { deepFreeze } from './deep-freeze.js';
import { EventIndex } from './event-index.js';
import { LazyBuild } from './lazy-build.js';
import { DEFAULT_EVENT_CAP, eventKey, matchesEvent, normalizeFilter, numberEvents, parseEventKey, planCap } from './event-log.js';
import { loadOrCreateSecretKey } from './key-file.js';
import { LevelKeyValue, jsonSublevel, readManyNow, readNow, type JsonSublevel, type StateBatch, type StateDb } from './level-kv.js';
import { Listeners, warnListenerError } from './listeners.js';
import { migrateSchema, type Migration } from './migrations.js';
import { Mutex } from './mutex.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import { concludeRecovery, describeDamage, preserveLogs } from './log-recovery.js';
import type { Change, ChangeNotice, CommitResult, EventFilter, KeyValue, Store, StoreDamage, StoredEvent } from './types.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** The agent's state directory (created 0700 if missing); the database lives in `<stateDir>/db`. */
  stateDir: string;
  /** Events kept before the oldest are dropped (default 20000). */
  eventCap?: number;
  /** Clock for `creationTimestamp` (default: the system clock). */
  now?: () => Date;
  /** uid generator for created objects (default `crypto.randomUUID`). */
  newUid?: () => string;
  /** Schema migrations, run in version order for versions above the stored one. */
  migrations?: readonly Migration[];
  /** Receives exceptions thrown by `onChange`/`onEvent` listeners (default: a process warning). */
  onListenerError?: (err: unknown) => void;
}

const REVISION_KEY = 'revision';
const EVENT_SEQ_KEY = 'eventSeq';

function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}

function isLockError(err: unknown): boolean {
  if (errorCode(err) === 'LEVEL_LOCKED') return true;
  return err instanceof Error && errorCode(err.cause) === 'LEVEL_LOCKED';
}

function counter(value: unknown, what: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new StoreError(StoreErrorCode.corrupt, `meta/${what} holds ${JSON.stringify(value)}, not a counter`);
  }
  return value;
}

function metadataOf(value: unknown): ObjectMeta | undefined {
  if (typeof value !== 'object' || value === null || !('metadata' in value)) return undefined;
  return value.metadata as ObjectMeta;
}

class LevelStore implements Store {
  readonly nodes: KeyValue<unknown>;
  readonly inventories: KeyValue<unknown>;
  readonly leases: KeyValue<unknown>;
  readonly images: KeyValue<unknown>;
  readonly eraseRecords: KeyValue<unknown>;
  readonly outbox: KeyValue<unknown>;
  readonly damage: StoreDamage | undefined;

  readonly #db: StateDb;
  readonly #hosts: JsonSublevel;
  readonly #secrets: JsonSublevel;
  readonly #firmware: JsonSublevel;
  readonly #events: JsonSublevel;
  readonly #meta: JsonSublevel;
  readonly #key: Buffer;
  readonly #commitLock = new Mutex();
  readonly #eventLock = new Mutex();
  readonly #changes: Listeners<ChangeNotice>;
  readonly #appended: Listeners<StoredEvent>;
  readonly #eventCap: number;
  readonly #now: () => Date;
  readonly #newUid: () => string;
  readonly #schemaVersion: number;
  #revision: number;
  /** See #parsedHosts and hostSnapshot. */
  readonly #parsed = new LazyBuild<Map<string, Readonly<BareMetalHost>>>();
  #snapshot: { revision: number; hosts: readonly Readonly<BareMetalHost>[] } | undefined;
  /** Every host's stored JSON at store revision `revision`, and joined as an array once asked (see #hostTexts). */
  #hostJson: { revision: number; values: string[]; array?: string } | undefined;
  /** Stored events are exactly seqs `#oldestSeq..#lastSeq` (contiguous; oldest dropped first). */
  #lastSeq: number;
  #oldestSeq: number;
  /** Stored events' seqs by host and MAC, once a filtered listing asked (#eventIndex). */
  readonly #index = new LazyBuild<EventIndex>();
  /** Serves unfiltered listings, which need no index (a range of seqs). */
  readonly #noIndex = new EventIndex();
  #closing: Promise<void> | undefined;

  constructor(init: {
    db: StateDb;
    key: Buffer;
    options: OpenStoreOptions;
    schemaVersion: number;
    damage: StoreDamage | undefined;
    revision: number;
    lastSeq: number;
    oldestSeq: number;
  }) {
    const { db, options } = init;
    this.#db = db;
    this.#hosts = jsonSublevel(db, 'hosts');
    this.#secrets = jsonSublevel(db, 'secrets');
    this.#firmware = jsonSublevel(db, 'firmware');
    this.#events = jsonSublevel(db, 'events');
    this.#meta = jsonSublevel(db, 'meta');
    this.nodes = new LevelKeyValue(db, jsonSublevel(db, 'nodes'));
    this.inventories = new LevelKeyValue(db, jsonSublevel(db, 'inventories'));
    this.leases = new LevelKeyValue(db, jsonSublevel(db, 'leases'));
    this.images = new LevelKeyValue(db, jsonSublevel(db, 'images'));
    this.eraseRecords = new LevelKeyValue(db, jsonSublevel(db, 'eraseRecords'));
    this.outbox = new LevelKeyValue(db, jsonSublevel(db, 'outbox'));
    this.#key = init.key;
    const report = options.onListenerError ?? warnListenerError;
    this.#changes = new Listeners(report);
    this.#appended = new Listeners(report);
    this.#eventCap = options.eventCap ?? DEFAULT_EVENT_CAP;
    this.#now = options.now ?? (() => new Date());
    this.#newUid = options.newUid ?? randomUUID;
    this.#schemaVersion = init.schemaVersion;
    this.damage = init.damage;
    this.#revision = init.revision;
    this.#lastSeq = init.lastSeq;
    this.#oldestSeq = init.oldestSeq;
  }

  #checkOpen(): void {
    if (this.#closing !== undefined) throw new StoreError(StoreErrorCode.closed, 'the store is closed');
  }

  async getHost(name: string): Promise<BareMetalHost | undefined> {
    this.#checkOpen();
    return (await readNow(this.#hosts, name)) as BareMetalHost | undefined;
  }

  /**
   * Every host's stored JSON, oldest key first. Hosts change only in commit(), which moves the
   * revision: what was read at a revision serves every listing until the next commit. The
   * revision is taken before reading, so what is kept is never older than its label.
   */
  async #hostTexts(): Promise<{ values: string[]; array?: string }> {
    this.#checkOpen();
    const revision = this.#revision;
    if (this.#hostJson?.revision === revision) return this.#hostJson;
    const values = await this.#hosts.values<string, string>({ valueEncoding: 'utf8' }).all();
    this.#hostJson = { revision, values };
    return this.#hostJson;
  }

  async listHosts(): Promise<BareMetalHost[]> {
    // Each listing gets its own objects, parsed from the kept JSON.
    return (await this.#hostTexts()).values.map((text) => JSON.parse(text) as BareMetalHost);
  }

  /**
   * Parsed, frozen hosts by name, built by one scan under the commit lock on first use and then
   * kept in step by every commit (commit() updates just the hosts it wrote).
   */
  #parsedHosts(): Promise<Map<string, Readonly<BareMetalHost>>> {
    return this.#parsed.get(() => this.#commitLock.run(async () => {
      const map = new Map<string, Readonly<BareMetalHost>>();
      for await (const [name, text] of this.#hosts.iterator<string, string>({ valueEncoding: 'utf8' })) map.set(name, deepFreeze(JSON.parse(text) as BareMetalHost));
      this.#parsed.value = map; // before the lock is released: the next commit must update it
      return map;
    }));
  }

  async hostSnapshot(): Promise<readonly Readonly<BareMetalHost>[]> {
    this.#checkOpen();
    const revision = this.#revision;
    if (this.#snapshot?.revision === revision) return this.#snapshot.hosts;
    const parsed = await this.#parsedHosts();
    // The map follows commits, so it is at the current revision now (read without a turn in between).
    const hosts = [...parsed.keys()].sort().flatMap((name) => parsed.get(name) ?? []);
    this.#snapshot = { revision: this.#revision, hosts };
    return hosts;
  }

  async listHostsJson(): Promise<string> {
    const texts = await this.#hostTexts();
    texts.array ??= `[${texts.values.join(',')}]`;
    return texts.array;
  }

  #decode(key: string, record: unknown): Secret {
    const slash = key.indexOf('/');
    const [namespace, name] = [key.slice(0, slash), key.slice(slash + 1)];
    if (!isSecretRecord(record)) {
      throw new StoreError(StoreErrorCode.corrupt, `stored secret "${key}" is not a sealed secret record`);
    }
    return decodeSecretRecord(record, this.#key, namespace, name);
  }

  async getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    this.#checkOpen();
    const key = `${namespace}/${name}`;
    const record = await readNow(this.#secrets, key);
    return record === undefined ? undefined : this.#decode(key, record);
  }

  async listSecrets(): Promise<{ metadata: ObjectMeta; type?: string; keys: string[] }[]> {
    this.#checkOpen();
    const entries = await this.#secrets.iterator().all();
    return entries.map(([key, record]) => {
      const secret = this.#decode(key, record);
      const item: { metadata: ObjectMeta; type?: string; keys: string[] } = {
        metadata: secret.metadata,
        keys: Object.keys(secret.data).sort(),
      };
      if (secret.type !== undefined) item.type = secret.type;
      return item;
    });
  }

  async getFirmwareObject<K extends FirmwareKind>(kind: K, namespace: string, name: string): Promise<FirmwareObjectOf<K> | undefined> {
    this.#checkOpen();
    return (await readNow(this.#firmware, firmwareKey(kind, namespace, name))) as FirmwareObjectOf<K> | undefined;
  }

  async listFirmwareObjects<K extends FirmwareKind>(kind: K): Promise<FirmwareObjectOf<K>[]> {
    this.#checkOpen();
    // Keys are `kind/namespace/name`: one key range per kind.
    return (await this.#firmware.values({ gt: `${kind}/`, lt: `${kind}/\uffff` }).all()) as FirmwareObjectOf<K>[];
  }

  async commit(changes: Change[]): Promise<CommitResult> {
    // Checked on entry: commits queued before close() still run, later ones are refused.
    this.#checkOpen();
    return this.#commitLock.run(async () => {
      const targets = collectTargets(changes);
      const [hostValues, secretValues, firmwareValues] = await Promise.all([
        targets.hostKeys.length === 0 ? [] : this.#hosts.getMany(targets.hostKeys),
        targets.secretKeys.length === 0 ? [] : this.#secrets.getMany(targets.secretKeys),
        targets.firmwareKeys.length === 0 ? [] : this.#firmware.getMany(targets.firmwareKeys),
      ]);
      const metas = (keys: string[], values: unknown[]) =>
        new Map(keys.flatMap((k, i) => {
          const meta = metadataOf(values[i]);
          return meta === undefined ? [] : [[k, meta] as const];
        }));
      const plan = planCommit(changes, {
        hosts: metas(targets.hostKeys, hostValues),
        secrets: metas(targets.secretKeys, secretValues),
        firmware: metas(targets.firmwareKeys, firmwareValues),
        revision: this.#revision,
        now: this.#now(),
        newUid: this.#newUid,
      });
      if (changes.length === 0) return plan.result;
      await this.#db.batch(this.#batchOf(plan), { sync: true });
      this.#revision = plan.revision;
      const parsed = this.#parsed.value;
      if (parsed !== undefined) {
        for (const w of plan.writes) {
          if (w.kind !== 'host') continue;
          if (w.op === 'delete') parsed.delete(w.key);
          else parsed.set(w.key, deepFreeze(structuredClone(w.object)));
        }
      }
      this.#changes.emit(plan.notices);
      return plan.result;
    });
  }

  #batchOf(plan: CommitPlan): StateBatch {
    const ops: StateBatch = plan.writes.map((w) => {
      const sublevel = w.kind === 'host' ? this.#hosts : w.kind === 'secret' ? this.#secrets : this.#firmware;
      if (w.op === 'delete') return { type: 'del', sublevel, key: w.key };
      const value = w.kind === 'secret' ? encodeSecretRecord(w.object, this.#key, randomBytes(SECRET_IV_BYTES)) : w.object;
      return { type: 'put', sublevel, key: w.key, value };
    });
    ops.push({ type: 'put', sublevel: this.#meta, key: REVISION_KEY, value: plan.revision });
    return ops;
  }

  onChange(listener: (notice: ChangeNotice) => void): () => void {
    return this.#changes.add(listener);
  }

  async appendEvents(events: Omit<StoredEvent, 'seq'>[]): Promise<StoredEvent[]> {
    this.#checkOpen();
    return this.#eventLock.run(async () => {
      const numbered = numberEvents(events, this.#lastSeq);
      if (numbered.length === 0) return [];
      const stored = this.#lastSeq - this.#oldestSeq + 1;
      const cap = planCap(stored, numbered.length, this.#eventCap);
      const ops: StateBatch = [];
      for (let i = 0; i < cap.dropStored; i++) {
        ops.push({ type: 'del', sublevel: this.#events, key: eventKey(this.#oldestSeq + i) });
      }
      for (const event of numbered.slice(cap.skipNew)) {
        ops.push({ type: 'put', sublevel: this.#events, key: eventKey(event.seq), value: event });
      }
      const lastSeq = this.#lastSeq + numbered.length;
      ops.push({ type: 'put', sublevel: this.#meta, key: EVENT_SEQ_KEY, value: lastSeq });
      // Not synced: events are diagnostics (types.ts); a crash may lose the newest few.
      await this.#db.batch(ops);
      this.#lastSeq = lastSeq;
      this.#oldestSeq += cap.dropStored + cap.skipNew;
      const index = this.#index.value;
      if (index !== undefined) for (const event of numbered.slice(cap.skipNew)) index.add(event, this.#oldestSeq);
      this.#appended.emit(numbered);
      return structuredClone(numbered);
    });
  }

  async listEvents(filter?: EventFilter): Promise<StoredEvent[]> {
    this.#checkOpen();
    const f = normalizeFilter(filter);
    if (f.limit === 0) return [];
    // Point reads of exactly the seqs to return (event-index.ts); a seq dropped by the cap
    // between the selection and the read comes back undefined and is left out.
    const index = f.host === undefined && f.mac === undefined ? this.#noIndex : await this.#eventIndex();
    const seqs = index.select(f, this.#oldestSeq, this.#lastSeq);
    if (seqs.length === 0) return [];
    const values = await readManyNow(this.#events, seqs.map(eventKey));
    return values.filter((value): value is StoredEvent => value !== undefined && matchesEvent(value as StoredEvent, f));
  }

  /** The index of the stored events by host and MAC, built by one scan on first use (appends wait for it). */
  #eventIndex(): Promise<EventIndex> {
    return this.#index.get(() => this.#eventLock.run(async () => {
      const index = new EventIndex();
      for await (const value of this.#events.values()) index.add(value as StoredEvent, this.#oldestSeq, Number.POSITIVE_INFINITY);
      this.#index.value = index; // before the lock is released: the next append must update it
      return index;
    }));
  }


  onEvent(listener: (event: StoredEvent) => void): () => void {
    return this.#appended.add(listener);
  }

  schemaVersion(): Promise<number> {
    return Promise.resolve(this.#schemaVersion);
  }

  close(): Promise<void> {
    // Queued behind every commit and append already requested; later ones see the store closed.
    this.#closing ??= this.#commitLock.run(() =>
      this.#eventLock.run(async () => {
        await this.#db.close();
      }),
    );
    return this.#closing;
  }
}

/** Opens the database, turning LevelDB's lock error into a message naming the state directory. */
async function openDb(stateDir: string, dbDir: string): Promise<StateDb> {
  const db: StateDb = new Level<string, unknown>(dbDir, { valueEncoding: 'json' });
  try {
    await db.open();
  } catch (err) {
    if (isLockError(err)) {
      throw new StoreError(
        StoreErrorCode.locked,
        `state directory ${stateDir} is in use by another rackside agent (LevelDB lock on ${join(dbDir, 'LOCK')}); ` +
          'stop the other agent, or use the management API instead of opening the database',
        { cause: err },
      );
    }
    throw err;
  }
  return db;
}

/** Reads the persisted counters and the event log's extent. */
async function readCounters(db: StateDb): Promise<{ revision: number; lastSeq: number; oldestSeq: number }> {
  const meta = jsonSublevel(db, 'meta');
  const events = jsonSublevel(db, 'events');
  const revision = counter(await meta.get(REVISION_KEY), REVISION_KEY);
  let lastSeq = counter(await meta.get(EVENT_SEQ_KEY), EVENT_SEQ_KEY);
  const [first] = await events.keys({ limit: 1 }).all();
  const [last] = await events.keys({ limit: 1, reverse: true }).all();
  const firstSeq = first === undefined ? undefined : parseEventKey(first);
  const lastStored = last === undefined ? undefined : parseEventKey(last);
  if (lastStored !== undefined) lastSeq = Math.max(lastSeq, lastStored);
  return { revision, lastSeq, oldestSeq: firstSeq ?? lastSeq + 1 };
}

/**
 * Opens (creating if needed) the state store in `options.stateDir`: takes the LevelDB lock,
 * loads or creates the secret key, runs migrations and restores the counters. Throws
 * {@link StoreError} `locked` when another agent holds the directory, `keyFile` for a bad key
 * file, `schema` for a database newer than this build or a failed migration.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const cap = options.eventCap ?? DEFAULT_EVENT_CAP;
  if (!Number.isSafeInteger(cap) || cap < 1) throw new RangeError(`eventCap must be a positive integer, got ${String(cap)}`);
  await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
  const dbDir = join(options.stateDir, 'db');
  const pending = await preserveLogs(options.stateDir, dbDir);
  const db = await openDb(options.stateDir, dbDir);
  try {
    const damage = await concludeRecovery(options.stateDir, dbDir, pending, options.now ?? (() => new Date()));
    const key = await loadOrCreateSecretKey(options.stateDir);
    const schemaVersion = await migrateSchema(db, jsonSublevel(db, 'meta'), dbDir, options.migrations ?? []);
    const counters = await readCounters(db);
    const store = new LevelStore({ db, key, options, schemaVersion, damage, ...counters });
    if (damage !== undefined) {
      await store.appendEvents([{ time: (options.now?.() ?? new Date()).toISOString(), type: 'Warning', reason: 'StoreDamaged', message: describeDamage(damage), source: 'store' }]);
    }
    return store;
  } catch (err) {
    await db.close();
    throw err;
  }
}
