/**
 * @module Schema versioning of the state database: the version this build writes, the shape of
 * a migration, and the runner that brings an older database up to date inside `openStore`.
 * `meta/schemaVersion` is written after each migration, so a crash mid-way re-runs only the
 * unfinished step; migrations must therefore be idempotent.
 */
import type { KeyValue } from './types.js';
import { LevelKeyValue, jsonSublevel, type JsonSublevel, type StateDb, type SublevelName } from './level-kv.js';
import { StoreError, StoreErrorCode } from './store-error.js';

/** The schema version this build of rackside writes. */
export const SCHEMA_VERSION = 1;

/** The `meta` key holding the schema version. */
const SCHEMA_KEY = 'schemaVersion';

/** What a migration can touch: the raw JSON sublevels (secrets hold sealed records, see crypto.ts). */
export interface MigrationContext {
  /** The schema version before this migration ran. */
  readonly fromVersion: number;
  /** The sublevel `name` as a key-value map with synced writes. */
  sublevel(name: SublevelName): KeyValue<unknown>;
}

/** One schema step: `up` brings a database at `version - 1` (or lower, after earlier steps) to `version`. */
export interface Migration {
  version: number;
  description: string;
  up(db: MigrationContext): Promise<void>;
}

function schemaError(message: string, cause?: unknown): StoreError {
  return new StoreError(StoreErrorCode.schema, message, cause === undefined ? undefined : { cause });
}

/** Returns `migrations` sorted by version; throws StoreError `schema` on a non-integer or repeated version. */
export function sortMigrations(migrations: readonly Migration[]): Migration[] {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (!Number.isSafeInteger(m.version) || m.version < 1) {
      throw schemaError(`migration "${m.description}" has invalid version ${String(m.version)} (must be an integer ≥ 1)`);
    }
    const previous = sorted[i - 1];
    if (previous !== undefined && previous.version === m.version) {
      throw schemaError(`two migrations have version ${m.version}: "${previous.description}" and "${m.description}"`);
    }
  });
  return sorted;
}

/**
 * Brings the database to the newest of {@link SCHEMA_VERSION} and the migrations' versions,
 * running each migration above the stored version in order; a fresh database is stamped
 * without running any. Returns the resulting version. Throws StoreError `schema` when the
 * stored version is newer than this code supports or a migration fails.
 */
export async function migrateSchema(
  db: StateDb,
  meta: JsonSublevel,
  dbDir: string,
  migrations: readonly Migration[],
): Promise<number> {
  const sorted = sortMigrations(migrations);
  const target = Math.max(SCHEMA_VERSION, ...sorted.map((m) => m.version));
  const stored = await meta.get(SCHEMA_KEY);
  const setVersion = (version: number) =>
    db.batch([{ type: 'put', sublevel: meta, key: SCHEMA_KEY, value: version }], { sync: true });
  if (stored === undefined) {
    await setVersion(target);
    return target;
  }
  if (typeof stored !== 'number' || !Number.isSafeInteger(stored) || stored < 1) {
    throw schemaError(`state database ${dbDir} has an invalid meta/${SCHEMA_KEY} (${JSON.stringify(stored)})`);
  }
  if (stored > target) {
    throw schemaError(
      `state database ${dbDir} has schema version ${stored}, newer than this rackside supports (${target}); ` +
        'run the rackside release that wrote it, or restore a backup made for this release',
    );
  }
  let version = stored;
  for (const migration of sorted) {
    if (migration.version <= version) continue;
    const context: MigrationContext = {
      fromVersion: version,
      sublevel: (name) => new LevelKeyValue(db, jsonSublevel(db, name)),
    };
    try {
      await migration.up(context);
    } catch (err) {
      throw schemaError(
        `migration of ${dbDir} to schema version ${migration.version} ("${migration.description}") failed: ` +
          `${err instanceof Error ? err.message : String(err)}; the database is still at version ${version}`,
        err,
      );
    }
    await setVersion(migration.version);
    version = migration.version;
  }
  if (version < target) await setVersion(target);
  return target;
}
