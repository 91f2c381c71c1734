import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMemoryStore } from '../../../agent/store/index.js';
import { CommandExecutor } from '../../../agent/sync/command-executor.js';
import { CommandLedger } from '../../../agent/sync/command-ledger.js';
import { Outbox } from '../../../agent/sync/outbox.js';
import type { FleetCommand } from '../../../wire/index.js';

const NOW = new Date('2026-01-02T03:04:05.000Z');
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const cmd = (n: number, expiresAt = '2026-01-02T04:00:00.000Z'): FleetCommand => ({ id: id(n), kind: 'power-off', host: { namespace: 'default', name: 'n1' }, expiresAt });

test('each command id runs once, however often it is handed over; an expired one never runs', async () => {
  const store = createMemoryStore();
  const ledger = await CommandLedger.open(store.outbox, NOW.toISOString());
  const ran: string[] = [];
  const executor = new CommandExecutor({ ledger, now: () => NOW, onOutcome: () => undefined, run: (c) => { ran.push(c.id); return Promise.resolve({ outcome: 'done', message: 'ok' }); } });
  const ack = { acknowledged: 1, commands: [cmd(1), cmd(1), cmd(2, '2026-01-02T03:00:00.000Z')], rejected: [{ id: id(3), reason: 'bad kind' }] };
  executor.take(ack);
  executor.take(ack);
  await executor.idle();
  executor.take(ack);
  await executor.idle();
  assert.deepEqual(ran, [id(1)]);
  assert.deepEqual(new Set(ledger.unreported(10).map((r) => `${r.id} ${r.outcome}`)), new Set([`${id(1)} done`, `${id(2)} expired`, `${id(3)} failed`]));
  await store.close();
});

test('a command found running after a crash is reported failed and not run again; the outbox keeps its own records', async () => {
  const store = createMemoryStore();
  const outbox = await Outbox.open({ kv: store.outbox, newStreamId: () => 'stream-1' });
  const ledger = await CommandLedger.open(store.outbox, NOW.toISOString());
  assert.equal(await ledger.begin(id(7), NOW.toISOString()), true);
  // "crash": reopen both from the same sublevel.
  const reopened = await CommandLedger.open(store.outbox, NOW.toISOString());
  assert.equal(await reopened.begin(id(7), NOW.toISOString()), false, 'not run again');
  assert.deepEqual(reopened.unreported(10).map((r) => [r.id, r.outcome]), [[id(7), 'failed']]);
  assert.match(reopened.unreported(10)[0]?.message ?? '', /stopped while running/);
  const corrupt: string[] = [];
  await Outbox.open({ kv: store.outbox, newStreamId: () => 'other', onCorrupt: (key) => { corrupt.push(key); } });
  assert.deepEqual(corrupt, [], 'the outbox leaves the ledger keys alone');
  // Reported in a batch, acknowledged in the same write.
  const { request } = await outbox.nextBatch({ agentId: 'a', sentAt: NOW.toISOString(), maxHosts: 10, maxEvents: 10, version: 2, commandResults: reopened.unreported(10) });
  assert.equal(request.version, 2);
  assert.deepEqual(request.commandResults?.map((r) => r.id), [id(7)]);
  await outbox.acknowledge(request.sequence, NOW.toISOString(), reopened.reportedOperations(request.commandResults ?? []));
  reopened.markReported(request.commandResults ?? []);
  assert.deepEqual(reopened.unreported(10), []);
  const again = await CommandLedger.open(store.outbox, NOW.toISOString());
  assert.deepEqual(again.unreported(10), [], 'reported survives a restart');
  assert.equal(again.has(id(7)), true, 'and the id is still known');
  await store.close();
});
