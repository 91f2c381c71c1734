/**
 * @module An in-memory {@link Store} with the LevelDB store's semantics (same validation,
 * preconditions, revisions, event numbering and cap, deep copies in and out), for unit tests of
 * other modules. Nothing is persisted or encrypted.
 */
import { deepFreeze } from './deep-freeze.js';
import { randomUUID } from 'node:crypto';
import type { FirmwareKind, FirmwareObject, FirmwareObjectOf } from '../host/firmware-types.js';
import type { BareMetalHost, ObjectMeta, Secret } from '../host/types.js';
import { collectTargets, firmwareKey, planCommit, secretKey } from './commit-plan.js';
import { DEFAULT_EVENT_CAP, matchesEvent, normalizeFilter, numberEvents, planCap } from './event-log.js';
import { checkEntry, checkKey } from './level-kv.js';
import { Listeners, warnListenerError } from './listeners.js';
import { SCHEMA_VERSION } from './migrations.js';
import { Mutex } from './mutex.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import type { Change, ChangeNotice, CommitResult, EventFilter, KeyValue, KeyValueOperation, Store, StoredEvent } from './types.js';

/** Options of {@link createMemoryStore}; the same meaning as in `openStore`. */
export interface MemoryStoreOptions {
  eventCap?: number;
  now?: () => Date;
  newUid?: () => string;
  onListenerError?: (err: unknown) => void;
}

/** Runs `fn` now, turning a throw into a rejected promise (as the LevelDB store's async methods do). */
function settle<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => {
    resolve(fn());
  });
}

/** A {@link KeyValue} over a sorted-on-read Map; values are deep-copied in and out. */
class MemoryKeyValue implements KeyValue<unknown> {
  readonly #map = new Map<string, unknown>();
  readonly #checkOpen: () => void;
  constructor(checkOpen: () => void) {
    this.#checkOpen = checkOpen;
  }
  get(key: string): Promise<unknown> {
    return settle(() => {
      this.#checkOpen();
      checkKey(key);
      return structuredClone(this.#map.get(key));
    });
  }
  put(key: string, value: unknown): Promise<void> {
    return settle(() => {
      this.#checkOpen();
      checkEntry(key, value);
      // A JSON round trip, as LevelDB's JSON encoding does (drops undefined fields, refuses cycles).
      this.#map.set(key, JSON.parse(JSON.stringify(value)));
    });
  }
  del(key: string): Promise<void> {
    return settle(() => {
      this.#checkOpen();
      checkKey(key);
      this.#map.delete(key);
    });
  }
  batch(operations: readonly KeyValueOperation<unknown>[]): Promise<void> {
    return settle(() => {
      this.#checkOpen();
      for (const op of operations) {
        if (op.type === 'put') checkEntry(op.key, op.value);
        else checkKey(op.key);
      }
      for (const op of operations) {
        if (op.type === 'put') this.#map.set(op.key, JSON.parse(JSON.stringify(op.value)));
        else this.#map.delete(op.key);
      }
    });
  }
  entries(): Promise<[string, unknown][]> {
    return settle(() => {
      this.#checkOpen();
      const keys = [...this.#map.keys()].sort();
      return keys.map((k): [string, unknown] => [k, structuredClone(this.#map.get(k))]);
    });
  }
}

function sortedValues<T>(map: Map<string, T>): T[] {
  return [...map.keys()].sort().flatMap((k) => {
    const v = map.get(k);
    return v === undefined ? [] : [structuredClone(v)];
  });
}

class MemoryStore implements Store {
  readonly nodes: KeyValue<unknown>;
  readonly inventories: KeyValue<unknown>;
  readonly leases: KeyValue<unknown>;
  readonly images: KeyValue<unknown>;
  readonly eraseRecords: KeyValue<unknown>;
  readonly outbox: KeyValue<unknown>;
  readonly #hosts = new Map<string, BareMetalHost>();
  readonly #secrets = new Map<string, Secret>();
  readonly #firmware = new Map<string, FirmwareObject>();
  readonly #events: StoredEvent[] = [];
  readonly #lock = new Mutex();
  readonly #changes: Listeners<ChangeNotice>;
  readonly #appended: Listeners<StoredEvent>;
  readonly #eventCap: number;
  readonly #now: () => Date;
  readonly #newUid: () => string;
  #revision = 0;
  #lastSeq = 0;
  #closed = false;

  constructor(options: MemoryStoreOptions) {
    const check = () => {
      this.#checkOpen();
    };
    this.nodes = new MemoryKeyValue(check);
    this.inventories = new MemoryKeyValue(check);
    this.leases = new MemoryKeyValue(check);
    this.images = new MemoryKeyValue(check);
    this.eraseRecords = new MemoryKeyValue(check);
    this.outbox = new MemoryKeyValue(check);
    const report = options.onListenerError ?? warnListenerError;
    this.#changes = new Listeners(report);
    this.#appended = new Listeners(report);
    this.#eventCap = options.eventCap ?? DEFAULT_EVENT_CAP;
    if (!Number.isSafeInteger(this.#eventCap) || this.#eventCap < 1) {
      throw new RangeError(`eventCap must be a positive integer, got ${String(this.#eventCap)}`);
    }
    this.#now = options.now ?? (() => new Date());
    this.#newUid = options.newUid ?? randomUUID;
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError(StoreErrorCode.closed, 'the store is closed');
  }

  getHost(name: string): Promise<BareMetalHost | undefined> {
    return settle(() => {
      this.#checkOpen();
      return structuredClone(this.#hosts.get(name));
    });
  }

  listHosts(): Promise<BareMetalHost[]> {
    return settle(() => {
      this.#checkOpen();
      return sortedValues(this.#hosts);
    });
  }

  listHostsJson(): Promise<string> {
    return settle(() => {
      this.#checkOpen();
      return JSON.stringify(sortedValues(this.#hosts));
    });
  }

  #snapshot: { revision: number; hosts: readonly Readonly<BareMetalHost>[] } | undefined;

  hostSnapshot(): Promise<readonly Readonly<BareMetalHost>[]> {
    return settle(() => {
      this.#checkOpen();
      // Any commit moves the revision; a snapshot is rebuilt at most once per revision.
      if (this.#snapshot?.revision !== this.#revision) this.#snapshot = { revision: this.#revision, hosts: deepFreeze(sortedValues(this.#hosts)) };
      return this.#snapshot.hosts;
    });
  }

  getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    return settle(() => {
      this.#checkOpen();
      return structuredClone(this.#secrets.get(secretKey(namespace, name)));
    });
  }

  listSecrets(): Promise<{ metadata: ObjectMeta; type?: string; keys: string[] }[]> {
    return settle(() => {
      this.#checkOpen();
      return sortedValues(this.#secrets).map((s) => {
        const item: { metadata: ObjectMeta; type?: string; keys: string[] } = {
          metadata: s.metadata,
          keys: Object.keys(s.data).sort(),
        };
        if (s.type !== undefined) item.type = s.type;
        return item;
      });
    });
  }

  getFirmwareObject<K extends FirmwareKind>(kind: K, namespace: string, name: string): Promise<FirmwareObjectOf<K> | undefined> {
    return settle(() => {
      this.#checkOpen();
      return structuredClone(this.#firmware.get(firmwareKey(kind, namespace, name))) as FirmwareObjectOf<K> | undefined;
    });
  }

  listFirmwareObjects<K extends FirmwareKind>(kind: K): Promise<FirmwareObjectOf<K>[]> {
    return settle(() => {
      this.#checkOpen();
      return sortedValues(this.#firmware).filter((o): o is FirmwareObjectOf<K> => o.kind === kind);
    });
  }

  async commit(changes: Change[]): Promise<CommitResult> {
    this.#checkOpen();
    return this.#lock.run(() => {
      const targets = collectTargets(changes);
      const metas = <T extends { metadata: ObjectMeta }>(keys: string[], map: Map<string, T>) =>
        new Map(keys.flatMap((k) => {
          const v = map.get(k);
          return v === undefined ? [] : [[k, structuredClone(v.metadata)] as const];
        }));
      const plan = planCommit(changes, {
        hosts: metas(targets.hostKeys, this.#hosts),
        secrets: metas(targets.secretKeys, this.#secrets),
        firmware: metas(targets.firmwareKeys, this.#firmware),
        revision: this.#revision,
        now: this.#now(),
        newUid: this.#newUid,
      });
      if (changes.length === 0) return Promise.resolve(plan.result);
      for (const w of plan.writes) {
        if (w.op === 'delete') (w.kind === 'host' ? this.#hosts : w.kind === 'secret' ? this.#secrets : this.#firmware).delete(w.key);
        // JSON round trip, as LevelDB's JSON encoding does (fields set to undefined disappear).
        else if (w.kind === 'host') this.#hosts.set(w.key, JSON.parse(JSON.stringify(w.object)) as BareMetalHost);
        else if (w.kind === 'secret') this.#secrets.set(w.key, JSON.parse(JSON.stringify(w.object)) as Secret);
        else this.#firmware.set(w.key, JSON.parse(JSON.stringify(w.object)) as FirmwareObject);
      }
      this.#revision = plan.revision;
      this.#changes.emit(plan.notices);
      return Promise.resolve(plan.result);
    });
  }

  onChange(listener: (notice: ChangeNotice) => void): () => void {
    return this.#changes.add(listener);
  }

  async appendEvents(events: Omit<StoredEvent, 'seq'>[]): Promise<StoredEvent[]> {
    this.#checkOpen();
    return this.#lock.run(() => {
      const numbered = numberEvents(events, this.#lastSeq);
      const cap = planCap(this.#events.length, numbered.length, this.#eventCap);
      this.#events.splice(0, cap.dropStored);
      this.#events.push(...structuredClone(numbered.slice(cap.skipNew)));
      this.#lastSeq += numbered.length;
      this.#appended.emit(numbered);
      return Promise.resolve(structuredClone(numbered));
    });
  }

  listEvents(filter?: EventFilter): Promise<StoredEvent[]> {
    return settle(() => {
      this.#checkOpen();
      const f = normalizeFilter(filter);
      const out: StoredEvent[] = [];
      for (let i = this.#events.length - 1; i >= 0 && out.length < f.limit; i--) {
        const event = this.#events[i];
        if (event !== undefined && matchesEvent(event, f)) out.push(structuredClone(event));
      }
      return out.reverse();
    });
  }

  onEvent(listener: (event: StoredEvent) => void): () => void {
    return this.#appended.add(listener);
  }

  /** A memory store is never damaged. */
  readonly damage = undefined;

  schemaVersion(): Promise<number> {
    return Promise.resolve(SCHEMA_VERSION);
  }

  async close(): Promise<void> {
    await this.#lock.run(() => {
      this.#closed = true;
      return Promise.resolve();
    });
  }
}

/** Creates an empty in-memory {@link Store} with the same commit, secret and event semantics as `openStore`. */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store {
  return new MemoryStore(options);
}
