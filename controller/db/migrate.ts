/**
 * @module Schema migrations of the controller's PostgreSQL database: ordered SQL files
 * in `controller/migrations/` (named `NNNN_name.sql`), each applied once in its own transaction and recorded
 * in `schema_version`. Runs at every start under a session advisory lock, so two controller
 * processes starting together apply each file exactly once (the second waits, then finds nothing
 * to do). A database newer than this build (a version it does not know) is refused.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from 'pg';
import { checkOut } from './pool.js';

/** Advisory lock key of migrations (any constant; documented so operators can see it in pg_locks). */
export const MIGRATION_LOCK_KEY = 7_311_402_031;

/** The folder holding the SQL files: `controller/migrations/` of the package (from dist/controller/db/ or controller/db/). */
export function defaultMigrationsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  // dist/controller/db/ → the package root is three levels up; the source tree is two.
  const fromDist = join(here, '..', '..', '..', 'controller', 'migrations');
  return here.includes(join('dist', 'controller')) ? fromDist : join(here, '..', 'migrations');
}

/** One migration file. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads the migration files of `dir`, ordered by version. @throws on a badly named file or a repeated version. */
export async function readMigrations(dir: string): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  const out: Migration[] = [];
  for (const name of names) {
    const match = /^(\d{4})_[a-z0-9_]+\.sql$/.exec(name);
    if (match === null) throw new Error(`migration file ${name} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (out.some((m) => m.version === version)) throw new Error(`migration version ${version} appears twice`);
    out.push({ version, name, sql: await readFile(join(dir, name), 'utf8') });
  }
  return out;
}

/** What {@link migrate} did. */
export interface MigrationReport {
  /** Versions applied by this call. */
  applied: number[];
  /** The schema version after. */
  version: number;
}

/**
 * Brings the database to the newest version under the advisory lock.
 * @throws when the database has a version this build does not know, or a migration fails (its transaction rolls back).
 */
export async function migrate(pool: Pool, migrations: readonly Migration[]): Promise<MigrationReport> {
  const { client, release } = await checkOut(pool);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_version (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_version')).rows.map((r) => r.version));
      const known = new Set(migrations.map((m) => m.version));
      const unknown = [...done].filter((v) => !known.has(v));
      if (unknown.length > 0) {
        throw new Error(`the database has schema version(s) ${unknown.join(', ')} that this controller does not know: it is older than the database (upgrade it)`);
      }
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_version (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${m.name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        }
        applied.push(m.version);
      }
      return { applied, version: Math.max(0, ...done, ...applied) };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    release();
  }
}
