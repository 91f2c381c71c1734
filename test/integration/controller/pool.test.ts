/**
 * controller/db/pool.ts on a real PostgreSQL 15: a backend terminated in the middle of an
 * `inTransaction` (`pg_terminate_backend` from another connection while the transaction waits
 * in `pg_sleep`) rejects that transaction with the server's 57P01 or a connection error, the
 * process goes on (node-postgres emits `error` on the client, and pg-pool has taken its own
 * listener off a checked-out client: without `checkOut`'s listener that event is an uncaught
 * exception), and the next transaction succeeds on a fresh connection. The same with the pool's
 * idle clients terminated (the pool's own `error` listener), after the migrations ran on it.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { defaultMigrationsDir, migrate, readMigrations } from '../../../controller/db/migrate.js';
import { inTransaction, openPool } from '../../../controller/db/pool.js';
import { pgClusterFor, type PgCluster } from '../../helpers/postgres.js';

/** Records uncaught exceptions while the test runs (node:test would attribute them to no test). */
function uncaughtRecorder(t: { after: (fn: () => void) => void }): unknown[] {
  const seen: unknown[] = [];
  const record = (err: unknown): void => { seen.push(err); };
  process.on('uncaughtException', record);
  t.after(() => { process.off('uncaughtException', record); });
  return seen;
}

/** The pid of the controller backend running `pg_sleep`, once it does. */
async function sleepingBackend(db: pg.Pool): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const res = await db.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'rackside-controller' AND state = 'active' AND query LIKE '%pg_sleep%'");
    if (res.rows[0] !== undefined) return res.rows[0].pid;
    await sleep(50);
  }
  throw new Error('no controller backend in pg_sleep within 10 s');
}

/** A test cluster and the controller's own pool of 2 on it, migrated; `poolErrors` collects what the pool reports. */
async function migratedPool(t: TestContext): Promise<{ cluster: PgCluster; pool: Awaited<ReturnType<typeof openPool>>; poolErrors: Error[] } | undefined> {
  const cluster = await pgClusterFor(t);
  if (cluster === undefined) return undefined;
  const poolErrors: Error[] = [];
  const pool = await openPool({ url: cluster.url, poolSize: 2 }, (err) => { poolErrors.push(err); });
  t.after(() => pool.end());
  await migrate(pool, await readMigrations(defaultMigrationsDir()));
  return { cluster, pool, poolErrors };
}

test('a backend terminated mid-transaction rejects that transaction with 57P01, the process lives on, the next transaction succeeds', { timeout: 120_000 }, async (t) => {
  const uncaught = uncaughtRecorder(t);
  const opened = await migratedPool(t);
  if (opened === undefined) return;
  const { cluster, pool } = opened;
  // The test's own connection comes from the cluster helper: it listens for `error`, and it is
  // ended before the cluster stops (a bare pg.Client here was the uncaught 57P01 at cleanup).
  const db = cluster.pool(1);
  let reachedAfterSleep = false;
  const tx = inTransaction(pool, async (c) => {
    await c.query("INSERT INTO racks (name) VALUES ('doomed')");
    await c.query('SELECT pg_sleep(60)');
    reachedAfterSleep = true;
  });
  const pid = await sleepingBackend(db);
  const killed = await db.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
  assert.equal(killed.rows[0]?.ok, true);
  await assert.rejects(tx, (err: unknown) => {
    const e = err as { code?: string; message?: string };
    return e.code === '57P01' || /Connection terminated/.test(e.message ?? '');
  });
  assert.equal(reachedAfterSleep, false);
  const next = await inTransaction(pool, async (c) => (await c.query<{ n: string }>('SELECT count(*)::text AS n FROM racks')).rows[0]?.n);
  assert.equal(next, '0', 'the next transaction ran, and the terminated one was rolled back');
  // Late events (the socket's end after the server's FATAL message) come on later turns.
  await sleep(500);
  assert.deepEqual(uncaught, [], 'no uncaught exception');
  assert.equal(pool.totalCount <= 2, true);
});

test('idle pooled connections terminated by the server are replaced; no uncaught exception', { timeout: 120_000 }, async (t) => {
  const uncaught = uncaughtRecorder(t);
  const opened = await migratedPool(t);
  if (opened === undefined) return;
  const { cluster, pool, poolErrors } = opened;
  await Promise.all([inTransaction(pool, (c) => c.query('SELECT pg_sleep(0.1)')), inTransaction(pool, (c) => c.query('SELECT pg_sleep(0.1)'))]);
  const idle = (): number => pool.idleCount;
  assert.equal(idle(), 2);
  const db = cluster.pool(1);
  const killed = await db.query<{ n: string }>(
    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE application_name = 'rackside-controller'");
  assert.equal(killed.rows[0]?.n, '2');
  for (let i = 0; i < 100 && idle() > 0; i++) await sleep(50);
  assert.equal(idle(), 0, 'the pool dropped its terminated idle clients');
  assert.ok(poolErrors.length >= 1 && poolErrors.every((e) => (e as { code?: string }).code === '57P01' || /Connection terminated/.test(e.message)), poolErrors.map(String).join('; '));
  assert.equal(await inTransaction(pool, async (c) => (await c.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one), 1);
  await sleep(500);
  assert.deepEqual(uncaught, []);
});
