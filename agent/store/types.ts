/**
 * @module The store's contract: what agent/ needs from persistence, independent of LevelDB.
 * Only the agent process opens the database; the CLI and status page go through the API.
 * The contract is split by owner: the resources ({@link ResourceStore} and its readers), the
 * {@link EventLog}, the raw sublevels each handed to the one module that owns them (node table,
 * lease store, erase record book, sync outbox), and the database's {@link StoreLifecycle};
 * {@link Store} is their composition.
 * @pure
 */
import type { FirmwareKind, FirmwareObject, FirmwareObjectOf } from '../host/firmware-types.js';
import type { BareMetalHost, Secret } from '../host/types.js';

/**
 * Precondition on an object's current `metadata.resourceVersion` for a write:
 * `'absent'` = must not exist (create); a version string = must equal it (update/delete);
 * `undefined` = unconditional.
 */
// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- 'absent' documents the create sentinel
export type VersionPrecondition = 'absent' | string | undefined;

/** One change inside an atomic {@link ResourceStore.commit}. */
export type Change =
  | { kind: 'host'; op: 'put'; object: BareMetalHost; ifVersion?: VersionPrecondition }
  | { kind: 'host'; op: 'delete'; name: string; ifVersion?: VersionPrecondition }
  | { kind: 'secret'; op: 'put'; object: Secret; ifVersion?: VersionPrecondition }
  | { kind: 'secret'; op: 'delete'; namespace: string; name: string; ifVersion?: VersionPrecondition }
  /** HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy or FirmwareSchema, keyed by kind, namespace and name. */
  | { kind: 'firmware'; op: 'put'; object: FirmwareObject; ifVersion?: VersionPrecondition }
  | { kind: 'firmware'; op: 'delete'; objectKind: FirmwareKind; namespace: string; name: string; ifVersion?: VersionPrecondition };

/** What a commit wrote: each put object as stored (with its new resourceVersion), in change order. */
export interface CommitResult {
  /** The store-wide revision this commit produced (the new resourceVersion of every put object). */
  revision: number;
  hosts: BareMetalHost[];
  secrets: Secret[];
  firmware: FirmwareObject[];
}

/** Notification after a successful commit (in-process only). */
export interface ChangeNotice {
  kind: 'host' | 'secret' | 'firmware';
  /** For `firmware` notices: which firmware kind changed. */
  objectKind?: FirmwareKind;
  op: 'put' | 'delete';
  namespace: string;
  name: string;
  revision: number;
}

/** A recorded event (Kubernetes-style events plus flight-recorder entries). */
export interface StoredEvent {
  /** Assigned by the store: strictly increasing. */
  seq: number;
  /** RFC 3339 time. */
  time: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Host name, when the event is about a host. */
  host?: string;
  /** Lower-case MAC, when the event is about a boot interface (flight recorder). */
  mac?: string;
  /** Emitting component, e.g. `host-controller`, `bootsvc:dhcp`. */
  source: string;
  data?: Record<string, unknown>;
}

/** Filter for {@link EventLog.listEvents}; results are oldest first. */
export interface EventFilter {
  host?: string;
  mac?: string;
  /** Only events with `seq > afterSeq`. */
  afterSeq?: number;
  /** Newest `limit` matching events (default 200). */
  limit?: number;
}

/** One operation of {@link KeyValue.batch}. */
export type KeyValueOperation<T> = { type: 'put'; key: string; value: T } | { type: 'del'; key: string };

/** A JSON key-value sublevel (`nodes`, `inventories`, `leases`, `images`, `eraseRecords`, `outbox`), handed to its owner. */
export interface KeyValue<T> {
  get(key: string): Promise<T | undefined>;
  put(key: string, value: T): Promise<void>;
  del(key: string): Promise<void>;
  /** Applies every operation atomically in one synced write (all or nothing), in order. */
  batch(operations: readonly KeyValueOperation<T>[]): Promise<void>;
  /** All entries, key order. */
  entries(): Promise<[string, T][]>;
}

/** What LevelDB dropped from a damaged write-ahead log when the store opened (log-recovery.ts). */
export interface StoreDamage {
  /** Bytes of log records dropped (sum over LevelDB's "dropping N bytes" lines). */
  droppedBytes: number;
  /** LevelDB's own lines about it, verbatim (timestamps stripped). */
  problems: string[];
  /** Where the damaged log files were kept, when they could be. */
  preservedAt: string | undefined;
}

/**
 * Reads the BareMetalHost objects. Owner: agent/host (the API service, the reconciler) and the
 * readers that only look (metrics, capacity counts, the sync loop).
 */
export interface HostReader {
  getHost(name: string): Promise<BareMetalHost | undefined>;
  listHosts(): Promise<BareMetalHost[]>;
  /**
   * The hosts of {@link HostReader.listHosts} as one JSON array text, equal to
   * `JSON.stringify(await listHosts())`, for callers that only send them on (the host list
   * endpoint): the LevelDB store returns what it stored without decoding it.
   */
  listHostsJson(): Promise<string>;
  /**
   * The hosts of {@link HostReader.listHosts}, deep-frozen and shared by every caller until the next
   * commit that changes a host: for readers that only look (capacity counts, MAC indexes), which
   * otherwise decoded every host per call. Mutating one throws.
   */
  hostSnapshot(): Promise<readonly Readonly<BareMetalHost>[]>;
}

/** Reads the Secrets (BMC credentials, user data, network data). */
export interface SecretReader {
  /** The secret with `data` decrypted. */
  getSecret(namespace: string, name: string): Promise<Secret | undefined>;
  /** Every secret, metadata and key names only (values are never listed). */
  listSecrets(): Promise<{ metadata: Secret['metadata']; type?: string; keys: string[] }[]>;
}

/** Reads the firmware objects (HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, FirmwareSchema). */
export interface FirmwareReader {
  /** The firmware object of `kind` in `namespace` named `name` (HFS, HFC and HUP are named after their host). */
  getFirmwareObject<K extends FirmwareKind>(kind: K, namespace: string, name: string): Promise<FirmwareObjectOf<K> | undefined>;
  /** Every firmware object of `kind`, by namespace then name. */
  listFirmwareObjects<K extends FirmwareKind>(kind: K): Promise<FirmwareObjectOf<K>[]>;
}

/**
 * The resource owner: hosts, secrets and firmware objects (sublevels `hosts`, `secrets`,
 * `firmware`, with the store revision in `meta`), read through the readers above and written
 * only through atomic, preconditioned commits.
 */
export interface ResourceStore extends HostReader, SecretReader, FirmwareReader {
  /**
   * Applies all changes atomically (one LevelDB batch, synced) after checking every
   * precondition; a failed precondition throws ConflictError and writes nothing. Assigns
   * `resourceVersion` (the new store revision), `uid` and `creationTimestamp` on create.
   * An empty change list writes nothing and returns the current revision.
   */
  commit(changes: Change[]): Promise<CommitResult>;
  /** Subscribes to commits; returns the unsubscribe function. */
  onChange(listener: (notice: ChangeNotice) => void): () => void;
}

/** The event log owner (sublevel `events`): Kubernetes-style events and flight-recorder entries, capped. */
export interface EventLog {
  /** Appends events (not synced: events are diagnostics); the log is capped, oldest dropped first. */
  appendEvents(events: Omit<StoredEvent, 'seq'>[]): Promise<StoredEvent[]>;
  /** The matching events, oldest first (see {@link EventFilter}). */
  listEvents(filter?: EventFilter): Promise<StoredEvent[]>;
  /** Subscribes to appended events; returns the unsubscribe function. */
  onEvent(listener: (event: StoredEvent) => void): () => void;
}

/**
 * The raw sublevels of the local provisioner's node table (agent/provisioner/local/node-table.ts),
 * its only reader and writer; handed to it where it is made.
 */
export interface NodeSublevels {
  /** Provisioner-private state per host uid. */
  readonly nodes: KeyValue<unknown>;
  /**
   * The last hardware inventory per host uid (the ramdisk's IPA-style JSON, tens of KB), kept
   * apart from `nodes` as Ironic keeps `node_inventory` apart from `nodes`: the `nodes` record is
   * read on every boot lookup, reconcile and ramdisk callback, the inventory only when an
   * inspection finishes or a RAID plan needs the disks.
   */
  readonly inventories: KeyValue<unknown>;
}

/** The raw sublevel of the DHCP lease store (agent/boot/lease-store.ts), its only reader and writer. */
export interface LeaseSublevel {
  readonly leases: KeyValue<unknown>;
}

/** The raw sublevel kept for an OS image index; nothing in rackside reads or writes it yet. */
export interface ImageSublevel {
  readonly images: KeyValue<unknown>;
}

/** The raw sublevel of the erase record book (agent/erase/book.ts), its only reader and writer. */
export interface EraseRecordSublevel {
  /** Signed erase records by record id: written once, never dropped by rackside. */
  readonly eraseRecords: KeyValue<unknown>;
}

/** The raw sublevel of the controller sync outbox (agent/sync/outbox.ts), its only reader and writer. */
export interface OutboxSublevel {
  readonly outbox: KeyValue<unknown>;
}

/** The database itself: how it opened, its schema version, closing it. */
export interface StoreLifecycle {
  /**
   * Set when opening found a damaged write-ahead log and LevelDB dropped records (never silently:
   * a `StoreDamaged` Warning event is recorded too); undefined for a clean open.
   */
  readonly damage: StoreDamage | undefined;
  /** The on-disk schema version after migrations. */
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Persistent state of one agent: the composition of every owner above, as LevelStore and
 * MemoryStore implement it. All writes that an API call acknowledges are durable (synced).
 * The composition root (agent/main.ts) holds the whole Store and hands each module the owner
 * it needs; test/unit/boundaries.test.ts lists the files that still take a whole Store, and why.
 */
export interface Store
  extends ResourceStore,
    EventLog,
    NodeSublevels,
    LeaseSublevel,
    ImageSublevel,
    EraseRecordSublevel,
    OutboxSublevel,
    StoreLifecycle {}
