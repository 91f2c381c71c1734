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

/**
 * A pooled client checked out with an `error` listener for as long as it is out. node-postgres
 * emits `error` on a client whose connection ends unexpectedly (the database stopped or
 * restarted) even while its queries are rejected with the same error, and pg-pool takes its own
 * listener off a client it hands out: an unlistened `error` event would end the whole process.
 * The queries' rejections report the failure; `release` puts the client back (or, `broken`, drops it).
 */
export async function checkOut(pool: pg.Pool): Promise<{ client: Db; release: (broken?: boolean) => void }> {
  const client = await pool.connect();
  let lost = false;
  const onError = (): void => { lost = true; };
  client.on('error', onError);
  return {
    client,
    release: (broken = false) => {
      client.removeListener('error', onError);
      client.release(broken || lost);
    },
  };
}

/** Runs `fn` in one transaction (READ COMMITTED) on a pooled connection. @throws what `fn` or COMMIT threw */
export async function inTransaction<T>(pool: pg.Pool, fn: (db: Db) => Promise<T>): Promise<T> {
  const { client, release } = await checkOut(pool);
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
    release(broken);
  }
}
