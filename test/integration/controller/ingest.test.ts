/**
 * The fleet controller's push endpoint on a real PostgreSQL 15 (a private cluster per test):
 * idempotence on (agent, stream, sequence), newest-revision-wins, deleted hosts, resets, rack
 * credentials (a wrong, revoked or other rack's token is 401 and writes nothing), the command
 * exchange of wire version 2 (v1 gets none; queued → delivered → done; expiry), migrations run
 * by two pools at once, retention, and the fleet API, page and metrics.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { defaultMigrationsDir, migrate, readMigrations } from '../../../controller/db/migrate.js';
import { addRack, revokeRack } from '../../../controller/racks.js';
import { runRetention } from '../../../controller/retention.js';
import { controllerFor, eventSummary, hostSummary, postPush, push, tableCounts } from './fleet-fixtures.js';

test('a push is applied once: a retry, or a resend of an older sequence, is acknowledged again and changes nothing', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const token = await addRack(c.pool, 'rack1');
  const first = push('rack1', 1, { hosts: [hostSummary('n1', 10), hostSummary('n2', 11)], events: [eventSummary(1, 'n1'), eventSummary(2, 'n2')] });
  const a = await postPush(c.controller.url, token, first);
  assert.deepEqual(a, { status: 200, body: { acknowledged: 1, commands: [] } });
  const before = await tableCounts(c.pool);
  assert.equal(before.hosts, 2);
  assert.equal(before.events, 2);
  assert.equal(before.applied_batches, 1);
  const again = await postPush(c.controller.url, token, first);
  assert.deepEqual(again, { status: 200, body: { acknowledged: 1, commands: [] } }, 'a retry is acknowledged again');
  assert.deepEqual(await tableCounts(c.pool), before, 'the retry changed nothing');
  await postPush(c.controller.url, token, push('rack1', 2, { events: [eventSummary(3, 'n1')] }));
  const older = await postPush(c.controller.url, token, { ...first, events: [eventSummary(9, 'n1')] });
  assert.equal(older.status, 200);
  const after = await tableCounts(c.pool);
  assert.equal(after.events, 3, 'sequence 1 resent after 2 (its ledger row pruned or not) adds nothing');
  assert.equal(after.pushes, 2);
});

test('summaries are newest-revision-wins; deletions are marked; a new stream is a reset and its revisions win', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const token = await addRack(c.pool, 'rack1');
  const state = async (name: string) => (await c.pool.query<{ state: string; rv: string; deleted: boolean }>(
    'SELECT state, resource_version::text AS rv, deleted_at IS NOT NULL AS deleted FROM hosts WHERE name = $1', [name])).rows[0];
  await postPush(c.controller.url, token, push('rack1', 1, { hosts: [hostSummary('n1', 20, { state: 'provisioned' })] }));
  await postPush(c.controller.url, token, push('rack1', 2, { hosts: [hostSummary('n1', 15, { state: 'inspecting' })] }));
  assert.deepEqual(await state('n1'), { state: 'provisioned', rv: '20', deleted: false }, 'an older revision does not overwrite');
  await postPush(c.controller.url, token, push('rack1', 3, { deletedHosts: [{ namespace: 'default', name: 'n1' }] }));
  assert.equal((await state('n1'))?.deleted, true, 'deleted hosts are marked, not removed');
  const reset = await postPush(c.controller.url, token, push('rack1', 1, { streamId: 'rack1-stream-2', hosts: [hostSummary('n1', 2, { state: 'registering' })] }));
  assert.equal(reset.status, 200);
  assert.deepEqual(await state('n1'), { state: 'registering', rv: '2', deleted: false }, 'after a reset the new stream wins');
  const rack = (await c.pool.query<{ resets: number }>('SELECT resets FROM racks WHERE name = $1', ['rack1'])).rows[0];
  assert.equal(rack?.resets, 1);
  const streams = (await c.pool.query<{ is_reset: boolean }>('SELECT is_reset FROM rack_streams ORDER BY first_at')).rows.map((r) => r.is_reset);
  assert.deepEqual(streams, [false, true]);
});

test('a wrong, missing, revoked or other rack\'s token is 401 and writes nothing', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const token1 = await addRack(c.pool, 'rack1');
  const token2 = await addRack(c.pool, 'rack2');
  await postPush(c.controller.url, token2, push('rack2', 1, { hosts: [hostSummary('victim', 5, { state: 'provisioned' })] }));
  const before = await tableCounts(c.pool);
  const attack = push('rack2', 2, { hosts: [hostSummary('victim', 99, { state: 'deprovisioning' })], deletedHosts: [{ namespace: 'default', name: 'victim' }] });
  for (const [what, token] of [['rack1 token naming rack2', token1], ['made-up token', 'rsk_not-a-real-token'], ['no token', undefined]] as const) {
    const answer = await postPush(c.controller.url, token, attack);
    assert.equal(answer.status, 401, what);
    assert.deepEqual(await tableCounts(c.pool), before, `${what}: nothing written`);
  }
  await revokeRack(c.pool, 'rack2');
  const revoked = await postPush(c.controller.url, token2, attack);
  assert.equal(revoked.status, 401, 'revoked token');
  assert.deepEqual(await tableCounts(c.pool), before, 'revoked: nothing written');
  const stored = (await c.pool.query<{ state: string }>('SELECT state FROM hosts WHERE name = $1', ['victim'])).rows[0];
  assert.equal(stored?.state, 'provisioned');
});

test('malformed pushes are refused with a 400 naming the field, and write nothing', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const token = await addRack(c.pool, 'rack1');
  const before = await tableCounts(c.pool);
  const cases: [string, unknown, string][] = [
    ['version 3', { ...push('rack1', 1), version: 3 }, 'version'],
    ['sequence 0', push('rack1', 0), 'sequence'],
    ['bad revision', push('rack1', 1, { hosts: [hostSummary('n1', 1, { resourceVersion: '1e9' })] }), 'hosts[0].resourceVersion'],
    ['boolean as string', { ...push('rack1', 1), hosts: [{ ...hostSummary('n1', 1), poweredOn: 'yes' }] }, 'hosts[0].poweredOn'],
  ];
  for (const [what, body, field] of cases) {
    const answer = await postPush(c.controller.url, token, body);
    assert.equal(answer.status, 400, what);
    assert.equal((answer.body.error as { field?: string } | undefined)?.field, field, what);
  }
  assert.equal((await postPush(c.controller.url, token, undefined, Buffer.from('not gzip'))).status, 400, 'damaged gzip');
  assert.equal((await postPush(c.controller.url, token, undefined, gzipSync(Buffer.from('{"version":')))).status, 400, 'truncated JSON');
  assert.deepEqual(await tableCounts(c.pool), before);
});

test('commands: a v1 push gets none; v2 gets it (delivered, resent until reported), the result closes it; an expired one is never handed out', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t, { operatorTokenFile: undefined });
  if (c === undefined) return;
  const token = await addRack(c.pool, 'rack1');
  const queue = async (body: Record<string, unknown>) => (await c.pool.query<{ id: string }>(
    `INSERT INTO commands (id, rack_id, kind, namespace, host, body, state, expires_at)
     SELECT gen_random_uuid(), id, $2, 'default', $3, '{}'::jsonb, 'queued', now() + make_interval(secs => $4) FROM racks WHERE name = $1 RETURNING id::text AS id`,
    [body.rack, body.kind, body.host, body.expires])).rows[0]?.id ?? '';
  const id = await queue({ rack: 'rack1', kind: 'power-off', host: 'n1', expires: 3600 });
  const v1 = await postPush(c.controller.url, token, { ...push('rack1', 1), version: 1 });
  assert.deepEqual(v1.body, { acknowledged: 1 }, 'a version-1 agent gets no commands');
  const v2 = await postPush(c.controller.url, token, push('rack1', 2));
  const commands = v2.body.commands as { id: string; kind: string; host: unknown }[];
  assert.deepEqual(commands.map((x) => [x.id, x.kind, x.host]), [[id, 'power-off', { namespace: 'default', name: 'n1' }]]);
  const stateOf = async (cid: string) => (await c.pool.query<{ state: string; error: string | null }>('SELECT state, error FROM commands WHERE id = $1', [cid])).rows[0];
  assert.equal((await stateOf(id))?.state, 'delivered');
  const resent = await postPush(c.controller.url, token, push('rack1', 3));
  assert.equal((resent.body.commands as unknown[]).length, 1, 'resent until its outcome arrives');
  await postPush(c.controller.url, token, push('rack1', 4, { commandResults: [{ id, outcome: 'failed', message: 'host n1 not found', finishedAt: '2026-01-02T03:04:06.000Z' }] }));
  assert.deepEqual(await stateOf(id), { state: 'failed', error: 'host n1 not found' });
  const short = await queue({ rack: 'rack1', kind: 'reboot', host: 'n2', expires: 1 });
  await sleep(1500);
  const late = await postPush(c.controller.url, token, push('rack1', 5));
  assert.deepEqual(late.body.commands, [], 'an expired command is not handed out');
  assert.equal((await stateOf(short))?.state, 'expired');
  // Another rack cannot close rack1's commands.
  const other = await queue({ rack: 'rack1', kind: 'inspect', host: 'n3', expires: 3600 });
  const token2 = await addRack(c.pool, 'rack2');
  await postPush(c.controller.url, token2, push('rack2', 1, { commandResults: [{ id: other, outcome: 'done', message: 'ok', finishedAt: '2026-01-02T03:04:06.000Z' }] }));
  assert.equal((await stateOf(other))?.state, 'queued');
});

test('two processes migrating one database at once apply each migration exactly once', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  await c.pool.query('DROP TABLE racks, rack_streams, applied_batches, hosts, events, commands, schema_version CASCADE');
  const pools = [new pg.Pool({ connectionString: c.cluster.url, max: 2 }), new pg.Pool({ connectionString: c.cluster.url, max: 2 })];
  for (const p of pools) p.on('error', () => undefined);
  t.after(() => Promise.all(pools.map((p) => p.end())));
  const migrations = await readMigrations(defaultMigrationsDir());
  const reports = await Promise.all(pools.map((p) => migrate(p, migrations)));
  assert.deepEqual(reports.map((r) => r.applied.length).sort(), [0, migrations.length]);
  const rows = await c.pool.query<{ version: number }>('SELECT version FROM schema_version ORDER BY version');
  assert.deepEqual(rows.rows.map((r) => r.version), migrations.map((m) => m.version));
});

test('retention keeps at most eventsPerRack events per rack (the newest) and expires queued commands', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const token = await addRack(c.pool, 'rack1');
  const events = Array.from({ length: 150 }, (_, i) => eventSummary(i + 1, 'n1'));
  await postPush(c.controller.url, token, push('rack1', 1, { events }));
  const report = await runRetention(c.pool, { ...c.config.retention, eventMaxAgeDays: 3650, eventsPerRack: 100 });
  assert.equal(report.ran, true);
  assert.equal(report.eventsByAge, 0);
  assert.equal(report.eventsByCount, 50);
  const seqs = (await c.pool.query<{ min: string; n: string }>('SELECT min(seq)::text AS min, count(*)::text AS n FROM events')).rows[0];
  assert.deepEqual(seqs, { min: '51', n: '100' });
  const byAge = await runRetention(c.pool, { ...c.config.retention, eventMaxAgeDays: 1 });
  assert.equal(byAge.eventsByAge, 100, 'events dated 2026-01-02 are older than a day');
  const expiring = await c.pool.query(`INSERT INTO commands (id, rack_id, kind, namespace, host, body, state, expires_at)
    SELECT gen_random_uuid(), id, 'reboot', 'default', 'n1', '{}'::jsonb, 'queued', now() - interval '1 second' FROM racks`);
  assert.equal(expiring.rowCount, 1);
  assert.equal((await runRetention(c.pool, c.config.retention)).commandsExpired, 1, 'a queued command past its expiry is expired even if its rack never pushes');
});

test('the fleet API finds hosts by name, MAC, serial, error text, state and rack; the page shows racks and errors and no token', { timeout: 120_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const tokens = [await addRack(c.pool, 'rack1'), await addRack(c.pool, 'rack2')];
  await postPush(c.controller.url, tokens[0], push('rack1', 1, {
    statusUrl: 'http://10.0.0.1:8080/', hosts: [
      hostSummary('web-1', 3, { bootMACAddress: '52:54:00:AA:BB:01', serialNumber: 'SN-001', state: 'provisioned' }),
      hostSummary('db-1', 4, { state: 'inspecting', errorType: 'inspection error', errorMessage: 'disk sdb not found' }),
    ],
  }));
  await postPush(c.controller.url, tokens[1], push('rack2', 1, { hosts: [hostSummary('web-2', 3, { serialNumber: 'SN-002' })] }));
  const find = async (query: string) => {
    const res = await fetch(`${c.controller.url}/api/v1/hosts?${query}`);
    assert.equal(res.status, 200, query);
    return ((await res.json()) as { items: { rack: string; name: string }[] }).items.map((h) => `${h.rack}/${h.name}`).sort();
  };
  assert.deepEqual(await find('q=web'), ['rack1/web-1', 'rack2/web-2']);
  assert.deepEqual(await find('q=52:54:00:aa:bb:01'), ['rack1/web-1']);
  assert.deepEqual(await find('q=sn-002'), ['rack2/web-2']);
  assert.deepEqual(await find('q=sdb'), ['rack1/db-1']);
  assert.deepEqual(await find('state=provisioned'), ['rack1/web-1']);
  assert.deepEqual(await find('rack=rack2'), ['rack2/web-2']);
  assert.deepEqual(await find('errors=true'), ['rack1/db-1']);
  assert.equal((await fetch(`${c.controller.url}/api/v1/hosts?limit=0`)).status, 400);
  const racks = ((await (await fetch(`${c.controller.url}/api/v1/racks`)).json()) as { items: { name: string; hosts: number; errors: number; offline: boolean; states: Record<string, number> }[] }).items;
  assert.deepEqual(racks.map((r) => [r.name, r.hosts, r.errors, r.offline]), [['rack1', 2, 1, false], ['rack2', 1, 0, false]]);
  const host = await fetch(`${c.controller.url}/api/v1/racks/rack1/hosts/default/db-1`);
  assert.equal(host.status, 200);
  assert.equal(((await host.json()) as { summary: { errorMessage: string } }).summary.errorMessage, 'disk sdb not found');
  const page = await (await fetch(`${c.controller.url}/?q=web`)).text();
  assert.match(page, /data-rack="rack1"/);
  assert.match(page, /<a href="http:\/\/10\.0\.0\.1:8080\/" rel="noreferrer">rack1<\/a>/);
  assert.match(page, /disk sdb not found/);
  for (const token of tokens) assert.ok(!page.includes(token) && !page.includes(token.slice(4, 20)), 'no token on the page');
  const metrics = await (await fetch(`${c.controller.url}/metrics`)).text();
  assert.match(metrics, /rackside_controller_pushes_total\{result="applied"\} 2/);
  assert.match(metrics, /rackside_controller_racks\{state="online"\} 2/);
});
