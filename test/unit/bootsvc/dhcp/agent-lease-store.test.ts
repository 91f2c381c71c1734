/**
 * agent/boot/lease-store.ts: the LeaseStore over the store's `leases` sublevel — keys by
 * leaseKey, validation on write, malformed values skipped and reported on read, and records
 * surviving a reopen of the LevelDB store.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkLeaseRecord, createLeaseStore } from '../../../../agent/boot/lease-store.js';
import type { KeyValue, KeyValueOperation } from '../../../../agent/store/types.js';
import { createMemoryStore, openStore } from '../../../../agent/store/index.js';
import type { Lease } from '../../../../bootsvc/index.js';

const bound: Lease = { mac: '52:54:00:12:34:56', address: '10.20.0.100', state: 'bound', expiresAtMs: 1_800_000_000_000, hostName: 'node-1' };
const declined: Lease = { mac: '52:54:00:12:34:56', address: '10.20.0.101', state: 'declined', expiresAtMs: 1_800_000_000_000 };

test('put/get/list/delete under leaseKey', async () => {
  const store = createMemoryStore();
  const leases = createLeaseStore(store.leases);
  await leases.put(bound);
  await leases.put(declined);
  assert.deepEqual(await leases.get('52:54:00:12:34:56'), bound);
  assert.deepEqual(await leases.get('declined:10.20.0.101'), declined);
  assert.deepEqual((await leases.list()).map((l) => l.address).sort(), ['10.20.0.100', '10.20.0.101']);
  await leases.delete('52:54:00:12:34:56');
  await leases.delete('52:54:00:00:00:00'); // missing: not an error
  assert.equal(await leases.get('52:54:00:12:34:56'), undefined);
  assert.deepEqual(await store.leases.entries(), [['declined:10.20.0.101', declined]]);
});

test('stray fields are not stored and invalid records are refused on put', async () => {
  const store = createMemoryStore();
  const leases = createLeaseStore(store.leases);
  await leases.put({ ...bound, extra: 'x' } as Lease);
  assert.deepEqual(await store.leases.get(bound.mac), bound);
  await assert.rejects(leases.put({ ...bound, address: '10.20.0' }), /refusing to store lease .*address is not an IPv4 address/);
  await assert.rejects(leases.put({ ...bound, mac: '52-54-00-12-34-56' }), TypeError);
});

test('malformed stored values are skipped on read and reported', async () => {
  const store = createMemoryStore();
  await store.leases.put('52:54:00:00:00:01', { mac: '52:54:00:00:00:01', address: 'x', state: 'bound', expiresAtMs: 1 });
  await store.leases.put('52:54:00:00:00:02', { ...bound, mac: '52:54:00:00:00:03' });
  await store.leases.put('52:54:00:00:00:04', 'garbage');
  const reports: string[] = [];
  const leases = createLeaseStore(store.leases, { onInvalid: (key, why) => reports.push(`${key}: ${why}`) });
  assert.deepEqual(await leases.list(), []);
  assert.equal(await leases.get('52:54:00:00:00:04'), undefined);
  assert.deepEqual(reports, [
    '52:54:00:00:00:01: address is not an IPv4 address',
    '52:54:00:00:00:02: stored under "52:54:00:00:00:02" instead of "52:54:00:00:00:03"',
    '52:54:00:00:00:04: not an object',
    '52:54:00:00:00:04: not an object',
  ]);
});

test('leases survive closing and reopening the LevelDB store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-leases-'));
  try {
    const first = await openStore({ stateDir: dir });
    await createLeaseStore(first.leases).put(bound);
    await first.close();
    const second = await openStore({ stateDir: dir });
    assert.deepEqual(await createLeaseStore(second.leases).list(), [bound]);
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('applyBatch writes all changes in one batch of the KeyValue, or none', async () => {
  const store = createMemoryStore();
  assert.ok(createLeaseStore(store.leases).applyBatch, 'the agent store batches: leases use it');
  const batches: KeyValueOperation<unknown>[][] = [];
  const kv: KeyValue<unknown> = {
    get: (k) => store.leases.get(k),
    put: (k, v) => store.leases.put(k, v),
    del: (k) => store.leases.del(k),
    entries: () => store.leases.entries(),
    async batch(operations) {
      batches.push([...operations]);
      for (const o of operations) await (o.type === 'put' ? store.leases.put(o.key, o.value) : store.leases.del(o.key));
    },
  };
  const leases = createLeaseStore(kv);
  assert.ok(leases.applyBatch);
  await leases.applyBatch([{ op: 'put', lease: bound }, { op: 'put', lease: declined }, { op: 'delete', key: '52:54:00:00:00:09' }]);
  assert.deepEqual(batches, [[
    { type: 'put', key: bound.mac, value: bound },
    { type: 'put', key: 'declined:10.20.0.101', value: declined },
    { type: 'del', key: '52:54:00:00:00:09' },
  ]]);
  await assert.rejects(leases.applyBatch([{ op: 'put', lease: { ...bound, mac: '52:54:00:00:00:07' } }, { op: 'put', lease: { ...bound, address: 'x' } }]), TypeError);
  assert.equal(batches.length, 1, 'an invalid lease stops the whole batch before anything is written');
});

const records: Record<string, [string, unknown, string | undefined]> = {
  'bound under its MAC': ['52:54:00:12:34:56', bound, undefined],
  'declined under declined:<address>': ['declined:10.20.0.101', declined, undefined],
  'declined under the MAC': ['52:54:00:12:34:56', declined, 'stored under "52:54:00:12:34:56" instead of "declined:10.20.0.101"'],
  'array': ['k', [], 'not an object'],
  'bad state': ['52:54:00:12:34:56', { ...bound, state: 'free' }, 'state is not offered, bound or declined'],
  'string expiry': ['52:54:00:12:34:56', { ...bound, expiresAtMs: '1' }, 'expiresAtMs is not a number'],
  'numeric host name': ['52:54:00:12:34:56', { ...bound, hostName: 5 }, 'hostName is not a string'],
};
for (const [name, [key, value, problem]] of Object.entries(records)) {
  test(`checkLeaseRecord: ${name}`, () => {
    assert.equal(checkLeaseRecord(key, value), problem);
  });
}
