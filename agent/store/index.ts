/**
 * @module Public surface of agent/store: the {@link Store} contract and the owner interfaces it
 * composes (types.ts), the LevelDB store (`openStore`), the in-memory store for tests
 * (`createMemoryStore`), schema versioning and the store's error type.
 */
export type {
  Change,
  ChangeNotice,
  CommitResult,
  EraseRecordSublevel,
  EventFilter,
  EventLog,
  FirmwareReader,
  HostReader,
  ImageSublevel,
  KeyValue,
  LeaseSublevel,
  NodeSublevels,
  OutboxSublevel,
  ResourceStore,
  SecretReader,
  Store,
  StoredEvent,
  StoreLifecycle,
  VersionPrecondition,
} from './types.js';
export { openStore, type OpenStoreOptions } from './level-store.js';
export { createMemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { SCHEMA_VERSION, type Migration, type MigrationContext } from './migrations.js';
export { SUBLEVEL_NAMES, type SublevelName } from './level-kv.js';
export { StoreError, StoreErrorCode } from './store-error.js';
export { DEFAULT_EVENT_CAP, DEFAULT_EVENT_LIMIT } from './event-log.js';
