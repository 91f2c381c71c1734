/**
 * @module The controller's PostgreSQL connection pool (`pg`), and `inTransaction`, which runs a
 * function in one transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
 * throws. A commit that fails throws, so nothing is acknowledged that was not committed.
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import type { ControllerConfig } from '../config.js';

/** A pooled client (the type the queries take). */
export type Db = pg.PoolClient;

/** Opens the pool described by `config.database` (the password file, if any, is read now). */
export async function openPool(config: ControllerConfig['database'], onError: (err: Error) => void): Promise<pg.Pool> {
  const password = config.passwordFile === undefined ? undefined : (await readFile(config.passwordFile, 'utf8')).trim();
  const pool = new pg.Pool({
    connectionString: config.url,
    ...(password === undefined ? {} : { password }),
    max: config.poolSize,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // A push must not hold a connection forever behind a stuck lock or a dead server.
    statement_timeout: 30_000,
    query_timeout: 35_000,
    application_name: 'rackside-controller',
  });
  // An idle client losing its connection (database restarted) emits here; the pool replaces it.
  pool.on('error', onError);
  return pool;
}

/** Runs `fn` in one transaction (READ COMMITTED) on a pooled connection. @throws what `fn` or COMMIT threw */
export async function inTransaction<T>(pool: pg.Pool, fn: (db: Db) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
