import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMemoryStore, type KeyValue } from '../../../agent/store/index.js';
import { Outbox, summarizeHost, type EventSummary, type HostSummary } from '../../../agent/sync/index.js';
import { makeHost } from '../store/fixtures.js';

function summary(name: string, resourceVersion: string): HostSummary {
  const host = makeHost(name);
  host.metadata.resourceVersion = resourceVersion;
  return summarizeHost(host);
}

function event(seq: number, host = 'node-1'): EventSummary {
  return { seq, time: '2026-01-02T03:04:05.000Z', type: 'Normal', reason: 'Changed', message: `event ${seq}`, host, mac: null, source: 'test' };
}

const batchInput = { agentId: 'rack1', sentAt: '2026-01-02T03:04:05.000Z', maxHosts: 100, maxEvents: 100 };

let streams = 0;
async function openOutbox(kv: KeyValue<unknown>, extra: { maxBacklogEvents?: number; onCorrupt?: (key: string) => void } = {}): Promise<Outbox> {
  return Outbox.open({ kv, newStreamId: () => `stream-${++streams}`, ...extra });
}

test('ten updates of one host coalesce into its latest summary', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  for (let i = 1; i <= 10; i++) await outbox.putHost(summary('node-1', String(i)));
  assert.deepEqual(outbox.backlog, { hosts: 1, events: 0 });
  const { request } = await outbox.nextBatch(batchInput);
  assert.deepEqual(request.hosts.map((h) => [h.name, h.resourceVersion]), [['node-1', '10']]);
  await store.close();
});

test('a deletion replaces a pending summary of the same host', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  await outbox.putHost(summary('node-1', '1'));
  await outbox.putDeletedHost({ namespace: 'default', name: 'node-1' });
  const { request } = await outbox.nextBatch(batchInput);
  assert.deepEqual(request.hosts, []);
  assert.deepEqual(request.deletedHosts, [{ namespace: 'default', name: 'node-1' }]);
  await store.close();
});

test('events are appended in order and never taken twice', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  assert.equal(await outbox.addEvent(event(3)), true);
  assert.equal(await outbox.addEvent(event(5)), true);
  assert.equal(await outbox.addEvent(event(5)), false);
  assert.equal(await outbox.addEvent(event(4)), false, 'an older seq than the cursor is not taken');
  await outbox.skipEventsThrough(9);
  assert.equal(await outbox.addEvent(event(8)), false);
  const { request } = await outbox.nextBatch(batchInput);
  assert.deepEqual(request.events.map((e) => e.seq), [3, 5]);
  await store.close();
});

test('batches respect the limits, sequences increase, and everything is delivered once', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  for (let i = 0; i < 5; i++) await outbox.putHost(summary(`node-${i}`, '1'));
  for (let seq = 1; seq <= 7; seq++) await outbox.addEvent(event(seq));
  const seenHosts: string[] = [];
  const seenEvents: number[] = [];
  const sequences: number[] = [];
  for (let round = 0; round < 10 && (outbox.backlog.hosts > 0 || outbox.backlog.events > 0); round++) {
    const { request, retry } = await outbox.nextBatch({ ...batchInput, maxHosts: 2, maxEvents: 3 });
    assert.equal(retry, false);
    assert.ok(request.hosts.length <= 2 && request.events.length <= 3);
    sequences.push(request.sequence);
    seenHosts.push(...request.hosts.map((h) => h.name));
    seenEvents.push(...request.events.map((e) => e.seq));
    await outbox.acknowledge(request.sequence, '2026-01-02T03:04:06.000Z');
  }
  assert.deepEqual(sequences, [1, 2, 3]);
  assert.deepEqual(seenHosts, ['node-0', 'node-1', 'node-2', 'node-3', 'node-4']);
  assert.deepEqual(seenEvents, [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(await store.outbox.entries().then((e) => e.map(([k]) => k)), ['state']);
  assert.deepEqual(outbox.lastAck, { sequence: 3, at: '2026-01-02T03:04:06.000Z' });
  await store.close();
});

test('a retry resends the frozen batch; a host changed meanwhile stays for the next batch', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  await outbox.putHost(summary('node-1', '1'));
  await outbox.putHost(summary('node-2', '1'));
  const first = await outbox.nextBatch(batchInput);
  await outbox.putHost(summary('node-1', '2'));
  const again = await outbox.nextBatch({ ...batchInput, sentAt: '2030-01-01T00:00:00.000Z' });
  assert.equal(again.retry, true);
  assert.deepEqual(again.request, first.request);
  await outbox.acknowledge(first.request.sequence, '2026-01-02T03:04:06.000Z');
  assert.deepEqual(outbox.backlog, { hosts: 1, events: 0 });
  const next = await outbox.nextBatch(batchInput);
  assert.equal(next.request.sequence, first.request.sequence + 1);
  assert.deepEqual(next.request.hosts.map((h) => [h.name, h.resourceVersion]), [['node-1', '2']]);
  await store.close();
});

test('acknowledging another sequence than the one in flight throws and removes nothing', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  await outbox.putHost(summary('node-1', '1'));
  await assert.rejects(outbox.acknowledge(1, '2026-01-02T03:04:06.000Z'), /batch in flight is none/);
  const { request } = await outbox.nextBatch(batchInput);
  await assert.rejects(outbox.acknowledge(request.sequence + 1, '2026-01-02T03:04:06.000Z'), /acknowledgement of sequence 2, but the batch in flight is 1/);
  assert.deepEqual(outbox.backlog, { hosts: 1, events: 0 });
  assert.notEqual(outbox.inflight, undefined);
  await store.close();
});

test('reopening keeps stream id, sequence, the batch in flight and the backlog', async () => {
  const store = createMemoryStore();
  const first = await openOutbox(store.outbox);
  await first.putHost(summary('node-1', '1'));
  await first.addEvent(event(4));
  const batch = await first.nextBatch(batchInput);
  await first.putHost(summary('node-2', '1'));
  const second = await openOutbox(store.outbox);
  assert.equal(second.streamId, first.streamId);
  assert.equal(second.lastSequence, 1);
  assert.deepEqual(second.backlog, { hosts: 2, events: 1 });
  assert.equal(second.eventCursor, 4);
  const retry = await second.nextBatch(batchInput);
  assert.equal(retry.retry, true);
  assert.deepEqual(retry.request, batch.request);
  await second.acknowledge(1, '2026-01-02T03:04:06.000Z');
  const next = await second.nextBatch(batchInput);
  assert.equal(next.request.sequence, 2);
  assert.deepEqual(next.request.hosts.map((h) => h.name), ['node-2']);
  await store.close();
});

test('a crash during the acknowledgement write changes nothing: the batch is sent again once, then continues', async () => {
  const store = createMemoryStore();
  let failAcknowledgement = true;
  const flaky: KeyValue<unknown> = {
    get: (k) => store.outbox.get(k),
    put: (k, v) => store.outbox.put(k, v),
    entries: () => store.outbox.entries(),
    del: (k) => store.outbox.del(k),
    batch: (ops) => (failAcknowledgement && ops.some((op) => op.key === 'inflight') ? Promise.reject(new Error('power cut')) : store.outbox.batch(ops)),
  };
  const first = await openOutbox(flaky);
  await first.putHost(summary('node-1', '1'));
  await first.addEvent(event(1));
  const batch = await first.nextBatch(batchInput);
  await assert.rejects(first.acknowledge(1, '2026-01-02T03:04:06.000Z'), /power cut/);
  failAcknowledgement = false;
  const second = await openOutbox(store.outbox);
  const retry = await second.nextBatch(batchInput);
  assert.deepEqual(retry.request, batch.request, 'the same bytes, sequence and key: the controller dedupes');
  await second.acknowledge(1, '2026-01-02T03:04:06.000Z');
  assert.equal(second.inflight, undefined);
  assert.deepEqual(second.backlog, { hosts: 0, events: 0 });
  assert.deepEqual((await store.outbox.entries()).map(([k]) => k), ['state'], 'one write removed everything acknowledged');
  assert.equal((await second.nextBatch(batchInput)).request.sequence, 2);
  await store.close();
});

test('the event backlog is capped: the oldest are dropped and counted', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox, { maxBacklogEvents: 3 });
  for (let seq = 1; seq <= 5; seq++) await outbox.addEvent(event(seq));
  assert.deepEqual(outbox.backlog, { hosts: 0, events: 3 });
  assert.equal(outbox.droppedEvents, 2);
  const { request } = await outbox.nextBatch(batchInput);
  assert.deepEqual(request.events.map((e) => e.seq), [3, 4, 5]);
  await store.close();
});

test('unreadable records are reported and deleted; the rest loads', async () => {
  const store = createMemoryStore();
  await store.outbox.put('host/broken', { summary: { name: 'broken' } });
  await store.outbox.put('event/0000000000000001', 'nonsense');
  await store.outbox.put('surprise', 1);
  await store.outbox.put('host/ok', { summary: summary('ok', '1') });
  const corrupt: string[] = [];
  const outbox = await openOutbox(store.outbox, { onCorrupt: (key) => corrupt.push(key) });
  assert.deepEqual(corrupt.sort(), ['event/0000000000000001', 'host/broken', 'surprise']);
  assert.deepEqual(outbox.backlog, { hosts: 1, events: 0 });
  assert.deepEqual((await store.outbox.entries()).map(([k]) => k), ['host/ok', 'state']);
  await store.close();
});

test('an empty backlog gives an empty batch (heartbeat)', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  const { request } = await outbox.nextBatch({ ...batchInput, rack: 'r1', bootServices: { dhcp: { healthy: true } } });
  assert.equal(request.sequence, 1);
  assert.equal(request.rack, 'r1');
  assert.deepEqual([request.hosts, request.deletedHosts, request.events], [[], [], []]);
  assert.deepEqual(request.bootServices, { dhcp: { healthy: true } });
  await store.close();
});

test('resync summaries stay in memory unless a written record for the host is pending', async () => {
  const store = createMemoryStore();
  const outbox = await openOutbox(store.outbox);
  await outbox.putHost(summary('node-1', '1'), { durable: false });
  await outbox.putHost(summary('node-2', '1'));
  await outbox.putHost(summary('node-2', '2'), { durable: false });
  const keys = async () => (await store.outbox.entries()).map(([k]) => k).filter((k) => k.startsWith('host/'));
  assert.deepEqual(await keys(), ['host/node-2']);
  assert.deepEqual(await store.outbox.get('host/node-2'), { summary: summary('node-2', '2') });
  assert.deepEqual(outbox.backlog, { hosts: 2, events: 0 });
  await outbox.putHost(summary('node-1', '1'));
  assert.deepEqual(await keys(), ['host/node-1', 'host/node-2'], 'the same summary becomes durable when a change asks for it');
  const reopened = await openOutbox(store.outbox);
  assert.deepEqual(reopened.backlog, { hosts: 2, events: 0 });
  const { request } = await outbox.nextBatch(batchInput);
  await outbox.acknowledge(request.sequence, '2026-01-02T03:04:06.000Z');
  assert.deepEqual(await keys(), []);
  await outbox.putHost(summary('node-3', '1'), { durable: false });
  assert.deepEqual((await openOutbox(store.outbox)).backlog, { hosts: 0, events: 0 }, 'a memory-only summary is gone after a restart');
  await store.close();
});
