/**
 * @module Controller sync against a real HTTP controller on 127.0.0.1 (node:http): delivery,
 * coalescing, a controller that is down then back, lost responses (same Idempotency-Key and
 * sequence on retry), restart with the LevelDB store, no secret in any payload, 401, and a
 * controller that misbehaves in every way the issue lists. Backoff is 20 ms → 200 ms with fixed
 * jitter, so recoveries are quick; every wait is bounded.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BareMetalHost } from '../../agent/host/types.js';
import { createMemoryStore, openStore, type Store } from '../../agent/store/index.js';
import { createSyncLoop, type SyncLoop, type SyncLoopOptions } from '../../agent/sync/index.js';
import { makeEvent, makeHost, makeSecret } from '../unit/store/fixtures.js';
import { FakeController, freePort, waitFor, type Delivery, type Reply } from './sync-controller.js';

const TOKEN = 'sync-test-token-0123456789';
const TEST_TIMEOUT = { timeout: 30_000 };

function loopFor(store: Store, url: string, extra: Partial<SyncLoopOptions> = {}): SyncLoop {
  return createSyncLoop({
    store,
    agentId: 'rack1-head',
    rack: 'rack1',
    controller: { url, token: TOKEN, intervalSeconds: 3600 },
    backoff: { baseMs: 20, capMs: 200 },
    random: () => 0.5,
    flushDelayMs: 10,
    requestTimeoutMs: 5000,
    stopTimeoutMs: 2000,
    ...extra,
  });
}

async function putHost(store: Store, host: BareMetalHost): Promise<BareMetalHost> {
  const result = await store.commit([{ kind: 'host', op: 'put', object: host }]);
  return result.hosts[0]!;
}

function backlogEmpty(loop: SyncLoop): boolean {
  const s = loop.status();
  return s.backlog.hosts === 0 && s.backlog.events === 0 && s.inflight === null;
}

test('hosts and events are delivered gzip-compressed with token and idempotency key', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  const controller = await FakeController.start();
  await putHost(store, makeHost('node-1'));
  await putHost(store, makeHost('node-2'));
  await store.appendEvents([makeEvent('Registered', { host: 'node-1' }), makeEvent('DhcpOffer', { mac: '52:54:00:00:00:09' })]);
  const loop = loopFor(store, controller.url);
  try {
    await loop.start();
    await waitFor('both hosts applied', () => new Set(controller.appliedHostVersions().map(([n]) => n)).size === 2 && backlogEmpty(loop));
    const first = controller.deliveries[0]!;
    assert.equal(first.headers['content-encoding'], 'gzip');
    assert.equal(first.headers['content-type'], 'application/json');
    assert.equal(first.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(first.key, `rack1-head:${first.request.sequence}`);
    assert.equal(first.request.rack, 'rack1');
    const events = controller.applied.flatMap((r) => r.events);
    assert.deepEqual(events.map((e) => e.reason), ['Registered'], 'host events are pushed, per-packet records are not');
    const status = loop.status();
    assert.equal(status.enabled, true);
    assert.equal(status.lastAckSequence, controller.applied.at(-1)!.sequence);
    assert.notEqual(status.lastAckAt, null);
    assert.equal(status.consecutiveFailures, 0);
    assert.equal(status.lastError, null);
    assert.equal(status.url, controller.url);
    assert.deepEqual(controller.invalid, []);
  } finally {
    await loop.stop();
    await controller.close();
    await store.close();
  }
});

test('ten rapid changes of one host reach the controller as one summary, the latest', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  const controller = await FakeController.start();
  const loop = loopFor(store, controller.url, { flushDelayMs: 60_000 });
  try {
    await loop.start();
    await waitFor('the start-up heartbeat', () => controller.applied.length === 1);
    let host = await putHost(store, makeHost('node-1'));
    for (let i = 1; i < 10; i++) {
      host.spec.description = `change ${i}`;
      host = await putHost(store, host);
    }
    assert.equal(controller.deliveries.length, 1, 'nothing pushed before the flush delay');
    const status = await loop.syncNow();
    assert.equal(status.consecutiveFailures, 0);
    assert.equal(controller.applied.length, 2);
    const pushed = controller.applied[1]!.hosts;
    assert.deepEqual(pushed.map((h) => [h.name, h.resourceVersion]), [['node-1', host.metadata.resourceVersion]]);
  } finally {
    await loop.stop();
    await controller.close();
    await store.close();
  }
});

test('controller down: the backlog grows, status shows the error and backoff, the store keeps working; back: it catches up', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/v1/push`;
  const loop = loopFor(store, url);
  let controller: FakeController | undefined;
  try {
    await loop.start();
    const versions = new Map<string, string>();
    for (let i = 0; i < 5; i++) versions.set(`node-${i}`, (await putHost(store, makeHost(`node-${i}`))).metadata.resourceVersion);
    await waitFor('three failed attempts', () => loop.status().consecutiveFailures >= 3);
    const down = loop.status();
    assert.equal(down.running, true);
    assert.equal(down.lastError?.code, 'unreachable');
    assert.match(down.lastError.message, /ECONNREFUSED/);
    assert.match(down.lastError.message, new RegExp(`POST http://127\\.0\\.0\\.1:${port}/api/v1/push`));
    assert.notEqual(down.nextAttemptAt, null);
    assert.equal(down.lastAckAt, null);
    assert.equal(down.backlog.hosts, 5);
    // The rest of the agent is unaffected: the store still commits and lists.
    const late = await putHost(store, makeHost('node-late'));
    versions.set('node-late', late.metadata.resourceVersion);
    assert.equal((await store.listHosts()).length, 6);
    await waitFor('the late host queued', () => loop.status().backlog.hosts === 6);

    controller = await FakeController.start({ port });
    await waitFor('catch-up', () => backlogEmpty(loop) && loop.status().consecutiveFailures === 0);
    const latest = new Map<string, number>();
    for (const [name, version] of controller.appliedHostVersions()) latest.set(name, Math.max(latest.get(name) ?? 0, version));
    assert.deepEqual([...latest].sort(), [...versions].map(([n, v]): [string, number] => [n, Number(v)]).sort());
    assert.equal(new Set(controller.appliedKeys).size, controller.appliedKeys.length);
    assert.equal(loop.status().lastError?.code, 'unreachable', 'the last error is kept for the record');
  } finally {
    await loop.stop();
    await controller?.close();
    await store.close();
  }
});

test('a lost response is retried with the same Idempotency-Key, sequence and body', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  await putHost(store, makeHost('node-1'));
  let dropped = 0;
  const controller = await FakeController.start({
    respond: (d) => (d.request.hosts.length > 0 && dropped++ === 0 ? 'destroy' : undefined),
  });
  const loop = loopFor(store, controller.url);
  try {
    await loop.start();
    await waitFor('delivery after the lost response', () => controller.applied.some((r) => r.hosts.length > 0) && backlogEmpty(loop));
    const withHost = controller.deliveries.filter((d) => d.request.hosts.length > 0);
    assert.equal(withHost.length, 2);
    assert.equal(withHost[0]!.key, withHost[1]!.key);
    assert.equal(withHost[0]!.request.sequence, withHost[1]!.request.sequence);
    assert.equal(withHost[0]!.json, withHost[1]!.json, 'the retry is byte-identical');
    assert.deepEqual(controller.appliedKeys.filter((k) => k === withHost[0]!.key), [withHost[0]!.key]);
    const status = loop.status();
    assert.equal(status.lastError?.code, 'unreachable');
    assert.equal(status.consecutiveFailures, 0);
    assert.equal(status.lastAckSequence, withHost[0]!.request.sequence);
  } finally {
    await loop.stop();
    await controller.close();
    await store.close();
  }
});

test('the outbox survives a restart: the unacknowledged batch is resent as it was, then the rest', TEST_TIMEOUT, async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-sync-'));
  const controller = await FakeController.start({ respond: () => 'destroy' });
  try {
    let store = await openStore({ stateDir });
    let loop = loopFor(store, controller.url);
    await loop.start();
    for (let i = 0; i < 3; i++) await putHost(store, makeHost(`node-${i}`));
    await store.appendEvents([makeEvent('Registered', { host: 'node-0' })]);
    await waitFor('a dropped delivery', () => controller.deliveries.length >= 1 && loop.status().consecutiveFailures >= 1);
    const before = loop.status();
    await loop.stop();
    await store.close();
    const firstLost = controller.deliveries[0]!;

    controller.respond = undefined;
    store = await openStore({ stateDir });
    loop = loopFor(store, controller.url);
    const seenBefore = controller.deliveries.length;
    await loop.start();
    assert.equal(loop.status().streamId, before.streamId);
    await waitFor('catch-up after restart', () => backlogEmpty(loop) && controller.applied.length > 0);
    const afterRestart = controller.deliveries[seenBefore]!;
    assert.equal(afterRestart.key, controller.deliveries[seenBefore - 1]!.key, 'the batch in flight is resent first');
    assert.equal(afterRestart.json, controller.deliveries[seenBefore - 1]!.json);
    assert.equal(firstLost.request.streamId, afterRestart.request.streamId);
    const names = new Set(controller.appliedHostVersions().map(([n]) => n));
    assert.deepEqual([...names].sort(), ['node-0', 'node-1', 'node-2']);
    assert.ok(controller.applied.flatMap((r) => r.events).some((e) => e.reason === 'Registered'));
    assert.equal(new Set(controller.appliedKeys).size, controller.appliedKeys.length);
    await loop.stop();
    await store.close();
  } finally {
    await controller.close();
    await rm(stateDir, { recursive: true, force: true });
  }
});

test('no secret reaches the controller or the outbox', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  const password = 'hunter2-Pa55word-from-a-Secret';
  const userData = '#cloud-config password: userdata-secret-9f3';
  await store.commit([
    { kind: 'secret', op: 'put', object: makeSecret('node-1-bmc', { username: 'admin', password }) },
    { kind: 'secret', op: 'put', object: makeSecret('node-1-user-data', { userData }) },
  ]);
  const host = makeHost('node-1');
  host.spec.userData = { name: 'node-1-user-data' };
  host.spec.image = { url: `https://admin:${password}@images.example/os.qcow2?sig=${password}` };
  host.status.errorMessage = 'BMC said: unauthorized';
  await putHost(store, host);
  await store.appendEvents([{ ...makeEvent('CredentialsChecked', { host: 'node-1' }), data: { password, userData } }]);
  const controller = await FakeController.start();
  const loop = loopFor(store, controller.url);
  try {
    await loop.start();
    await waitFor('delivery', () => controller.applied.some((r) => r.hosts.length > 0 && r.events.length > 0) && backlogEmpty(loop));
    const encodedPassword = Buffer.from(password).toString('base64');
    for (const d of controller.deliveries) {
      for (const needle of [password, encodedPassword, 'userdata-secret', 'node-1-bmc', 'node-1-user-data']) {
        assert.ok(!d.json.includes(needle), `payload ${d.request.sequence} contains ${needle}`);
      }
    }
    assert.ok(!JSON.stringify(await store.outbox.entries()).includes(password));
  } finally {
    await loop.stop();
    await controller.close();
    await store.close();
  }
});

test('401 from the controller is reported clearly and the backlog is kept', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  await putHost(store, makeHost('node-1'));
  const controller = await FakeController.start({ respond: () => ({ status: 401, body: '{"error":"unknown token"}' }) });
  const loop = loopFor(store, controller.url);
  try {
    await loop.start();
    await waitFor('an unauthorized error', () => loop.status().lastError?.code === 'unauthorized');
    const status = loop.status();
    assert.equal(status.lastError?.httpStatus, 401);
    assert.match(status.lastError.message, /controller refused our credentials \(HTTP 401; check controller\.token\): \{"error":"unknown token"\}/);
    assert.equal(status.backlog.hosts, 1);
    assert.equal(status.lastAckAt, null);
    assert.ok(status.consecutiveFailures >= 1);
    assert.equal(controller.applied.length, 0);
  } finally {
    await loop.stop();
    await controller.close();
    await store.close();
  }
});

/** One misbehaviour for the first `times` pushes that carry hosts, then good behaviour. */
const misbehaviours: Record<string, { reply: Reply | ((d: Delivery) => Reply); code: string; extra?: Partial<SyncLoopOptions> }> = {
  'HTTP 500': { reply: { status: 500, body: 'database on fire' }, code: 'http-status' },
  'HTTP 503 with Retry-After': { reply: { status: 503, body: '', headers: { 'retry-after': '0' } }, code: 'http-status' },
  'a stale duplicate acknowledgement': { reply: (d) => ({ status: 200, body: JSON.stringify({ acknowledged: d.request.sequence - 1 }) }), code: 'bad-response' },
  'a non-JSON 200': { reply: { status: 200, body: '<html>OK</html>' }, code: 'bad-response' },
  'an oversized answer': { reply: { status: 200, body: JSON.stringify({ acknowledged: 0, pad: 'x'.repeat(100_000) }) }, code: 'bad-response' },
  'a connection reset': { reply: 'destroy', code: 'unreachable' },
  'a slow answer': { reply: { status: 200, body: '{}', delayMs: 1500 }, code: 'timeout', extra: { requestTimeoutMs: 300 } },
};
for (const [name, { reply, code, extra }] of Object.entries(misbehaviours)) {
  test(`after ${name}, every summary is delivered once and in per-host order`, TEST_TIMEOUT, async () => {
    const store = createMemoryStore();
    let bad = 0;
    const controller = await FakeController.start({
      respond: (d) => (d.request.hosts.length > 0 && bad++ < 2 ? (typeof reply === 'function' ? reply(d) : reply) : undefined),
    });
    const loop = loopFor(store, controller.url, extra);
    try {
      await loop.start();
      const latest = new Map<string, string>();
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 4; i++) {
          const existing = await store.getHost(`node-${i}`);
          const host = existing ?? makeHost(`node-${i}`);
          host.spec.description = `round ${round}`;
          latest.set(host.metadata.name, (await putHost(store, host)).metadata.resourceVersion);
        }
      }
      await waitFor('recovery', () => backlogEmpty(loop) && loop.status().consecutiveFailures === 0 && bad >= 2);
      assert.equal(loop.status().lastError?.code, code);
      assert.equal(new Set(controller.appliedKeys).size, controller.appliedKeys.length, 'no key applied twice');
      const perHost = new Map<string, number[]>();
      for (const [host, version] of controller.appliedHostVersions()) perHost.set(host, [...(perHost.get(host) ?? []), version]);
      for (const [host, versions] of perHost) {
        assert.deepEqual(versions, [...versions].sort((a, b) => a - b), `${host} summaries arrive in order`);
        assert.equal(versions.at(-1), Number(latest.get(host)), `${host}'s latest summary arrives`);
      }
      assert.equal(perHost.size, 4);
      const sequences = controller.applied.map((r) => r.sequence);
      assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b));
    } finally {
      await loop.stop();
      await controller.close();
      await store.close();
    }
  });
}

test('stop() is bounded while the controller never answers, and the batch stays queued', TEST_TIMEOUT, async () => {
  const store = createMemoryStore();
  await putHost(store, makeHost('node-1'));
  const controller = await FakeController.start({ respond: () => ({ status: 200, body: '{}', delayMs: 20_000 }) });
  const loop = loopFor(store, controller.url, { stopTimeoutMs: 100, requestTimeoutMs: 60_000 });
  try {
    await loop.start();
    await waitFor('a request in flight', () => controller.deliveries.length > 0);
    await loop.stop();
    const status = loop.status();
    assert.equal(status.running, false);
    assert.equal(status.backlog.hosts, 1);
    assert.notEqual(status.inflight, null);
  } finally {
    await controller.close();
    await store.close();
  }
});

test('a loop without a controller section is disabled and harmless', async () => {
  const store = createMemoryStore();
  const loop = createSyncLoop({ store, agentId: 'rack1-head', controller: undefined });
  await loop.start();
  await putHost(store, makeHost('node-1'));
  const status = loop.status();
  assert.equal(status.enabled, false);
  assert.equal(status.running, false);
  assert.equal(status.url, null);
  assert.deepEqual(await store.outbox.entries(), []);
  await loop.stop();
  await store.close();
});
