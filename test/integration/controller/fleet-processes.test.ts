/**
 * The fleet with real processes: two controller processes on one PostgreSQL 15, three rack
 * agents (the real store and sync loop, wire version 2) pushing with `controller.url` lists.
 * - kill -9 of a controller in the middle of the pushes: the racks fail over, no batch is lost
 *   (every host's last revision arrives), none is counted twice (events and batches unique), and
 *   each rack's command runs exactly once;
 * - PostgreSQL stopped for 30 s and started again: controllers answer 503 meanwhile, then
 *   everyone recovers by themselves, nothing lost;
 * - a command queued for a rack that is offline for 2 minutes (flagged offline meanwhile) runs
 *   once when it comes back; one whose expiry passes while the rack is away is reported expired
 *   and never runs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { addRack } from '../../../controller/racks.js';
import { pgClusterFor, type PgCluster } from '../../helpers/postgres.js';
import { controllerConfigFile, freePort, rackDone, startControllerProcess, startRack, type Proc } from './processes.js';

const HOSTS = 4;
/** The durations: the database down for 30 s, a rack away for 2 minutes. */
const OUTAGE_MS = 30_000;
const OFFLINE_MS = 120_000;

async function tempDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function queue(pool: pg.Pool, rack: string, kind: string, host: string, expiresSeconds: number): Promise<string> {
  const res = await pool.query<{ id: string }>(
    `INSERT INTO commands (id, rack_id, kind, namespace, host, body, state, expires_at)
     SELECT gen_random_uuid(), id, $2, 'default', $3, '{}'::jsonb, 'queued', now() + make_interval(secs => $4) FROM racks WHERE name = $1
     RETURNING id::text AS id`, [rack, kind, host, expiresSeconds]);
  return res.rows[0]?.id ?? '';
}

async function runs(stateDir: string): Promise<string[]> {
  try {
    return (await readFile(join(stateDir, 'runs.log'), 'utf8')).split('\n').filter((l) => l !== '');
  } catch {
    return [];
  }
}

async function fleet(t: TestContext): Promise<{ cluster: PgCluster; pool: pg.Pool; urls: string[]; controllers: Proc[]; configs: string[] } | undefined> {
  const cluster = await pgClusterFor(t);
  if (cluster === undefined) return undefined;
  const ports = [await freePort(), await freePort()];
  const configs = await Promise.all(ports.map((p) => controllerConfigFile(t, cluster.url, p)));
  // Both start at once: the migrations must serialize on their advisory lock.
  const controllers = await Promise.all(configs.map((c) => startControllerProcess(t, c)));
  const pool = new pg.Pool({ connectionString: cluster.url, max: 3 });
  pool.on('error', () => undefined); // idle clients lose their connection when the test stops the database
  t.after(() => pool.end());
  return { cluster, pool, urls: ports.map((p) => `http://127.0.0.1:${p}/api/v1/racks/push`), controllers, configs };
}

async function assertConverged(pool: pg.Pool, rack: string, rv: Record<string, string>): Promise<void> {
  const rows = await pool.query<{ name: string; rv: string }>(
    `SELECT h.name, h.resource_version::text AS rv FROM hosts h JOIN racks r ON r.id = h.rack_id WHERE r.name = $1 ORDER BY h.name`, [rack]);
  assert.deepEqual(Object.fromEntries(rows.rows.map((r) => [r.name, r.rv])), rv, `${rack}: every host's last revision arrived`);
}

async function assertNoneTwice(pool: pg.Pool): Promise<void> {
  const e = (await pool.query<{ n: string; d: string }>('SELECT count(*)::text AS n, count(DISTINCT (rack_id, stream_id, seq))::text AS d FROM events')).rows[0];
  assert.equal(e?.n, e?.d, 'no event stored twice');
  const b = (await pool.query<{ batches: string; pushes: string }>('SELECT (SELECT count(*) FROM applied_batches)::text AS batches, (SELECT sum(pushes) FROM racks)::text AS pushes')).rows[0];
  assert.equal(b?.batches, b?.pushes, 'each applied batch counted once');
}

test('kill -9 of a controller mid-push from 3 racks: failover, no batch lost or counted twice, each command run once', { timeout: 300_000 }, async (t) => {
  const f = await fleet(t);
  if (f === undefined) return;
  const racks = ['rack1', 'rack2', 'rack3'];
  const tokens = await Promise.all(racks.map((r) => addRack(f.pool, r)));
  const commands = await Promise.all(racks.map((r) => queue(f.pool, r, 'power-off', 'n0', 3600)));
  const dirs = await Promise.all(racks.map(() => tempDir(t, 'rackside-rack-')));
  const children = racks.map((rack, i) => startRack(t, {
    stateDir: dirs[i] ?? '', rack, token: tokens[i] ?? '', urls: i === 2 ? [...f.urls].reverse() : f.urls, mode: 'write', hosts: HOSTS, rounds: 40, alsoWaitMs: 500,
  }));
  await Promise.all(children.map((c) => c.waitFor(/^ROUND 5$/, 60_000, 'rack')));
  f.controllers[0]?.kill9();
  const reports = await Promise.all(children.map((c, i) => rackDone(c, 180_000, racks[i] ?? '')));
  for (const [i, rack] of racks.entries()) await assertConverged(f.pool, rack, reports[i]?.rv ?? {});
  await assertNoneTwice(f.pool);
  for (const [i, id] of commands.entries()) {
    assert.deepEqual(await runs(dirs[i] ?? ''), [id], `${racks[i] ?? ''}: its command ran exactly once`);
    const row: { state: string } | undefined = (await f.pool.query<{ state: string }>('SELECT state FROM commands WHERE id = $1', [id])).rows[0];
    assert.equal(row?.state, 'done');
  }
});

test('PostgreSQL stopped 30 s and started again: controllers and racks recover by themselves, nothing lost', { timeout: 360_000 }, async (t) => {
  const f = await fleet(t);
  if (f === undefined) return;
  const token = await addRack(f.pool, 'rack1');
  const dir = await tempDir(t, 'rackside-rack-');
  const child = startRack(t, { stateDir: dir, rack: 'rack1', token, urls: f.urls, mode: 'write', hosts: HOSTS, rounds: 200, alsoWaitMs: 0 });
  await child.waitFor(/^ROUND 3$/, 60_000, 'rack');
  await f.cluster.stop();
  await sleep(OUTAGE_MS);
  await f.cluster.start();
  const report = await rackDone(child, 200_000, 'rack1');
  await assertConverged(f.pool, 'rack1', report.rv);
  await assertNoneTwice(f.pool);
  for (const [i, url] of f.urls.entries()) {
    const proc: Proc | undefined = f.controllers[i];
    const gone: string | undefined = proc === undefined ? 'no process' : proc.child.exitCode !== null || proc.child.signalCode !== null ? `exited (${String(proc.child.exitCode)} ${String(proc.child.signalCode)})` : undefined;
    assert.equal(gone, undefined, `${url}: the controller outlived the outage; stderr: ${proc?.stderr.slice(-3000) ?? ''}\nstdout: ${proc?.lines.slice(-20).join('\n') ?? ''}`);
    const health = await fetch(url.replace('/api/v1/racks/push', '/healthz'));
    assert.equal(health.status, 200, `${url}: the controller serves again`);
  }
});

test('a command for a rack offline for 2 minutes runs once when it returns; an expired one never runs', { timeout: 360_000 }, async (t) => {
  const f = await fleet(t);
  if (f === undefined) return;
  const token = await addRack(f.pool, 'rack1');
  const dir = await tempDir(t, 'rackside-rack-');
  const first = startRack(t, { stateDir: dir, rack: 'rack1', token, urls: f.urls, mode: 'write', hosts: 2, rounds: 2, alsoWaitMs: 0 });
  await rackDone(first, 60_000, 'rack1 first run');
  await first.exited;
  const waiting = await queue(f.pool, 'rack1', 'reboot', 'n1', 3600);
  const expiring = await queue(f.pool, 'rack1', 'inspect', 'n0', 2);
  await sleep(OFFLINE_MS);
  const away = await fetch(f.urls[0]?.replace('/racks/push', '/racks') ?? '');
  const listed = ((await away.json()) as { items: { name: string; offline: boolean }[] }).items;
  assert.deepEqual(listed.map((r) => [r.name, r.offline]), [['rack1', true]], 'the rack is flagged offline while it is away (offlineAfterSeconds: 30)');
  const back = startRack(t, { stateDir: dir, rack: 'rack1', token, urls: f.urls, mode: 'drain', hosts: 2, rounds: 0, alsoWaitMs: 1000 });
  await rackDone(back, 60_000, 'rack1 back');
  assert.deepEqual(await runs(dir), [waiting], 'the waiting command ran once, the expired one never');
  const states = await f.pool.query<{ id: string; state: string }>('SELECT id::text AS id, state FROM commands ORDER BY created_at');
  assert.deepEqual(states.rows.map((r) => [r.id, r.state]), [[waiting, 'done'], [expiring, 'expired']]);
});
