/**
 * agent/boot/lease-store6.ts: DHCPv6 lease records in the `leases` sublevel under `dhcp6/`
 * keys beside DHCPv4's — each store sees only its own records, one MAC holds a lease of each
 * family, invalid records are refused on put and skipped on read, batches are one write.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLeaseStore } from '../../../../agent/boot/lease-store.js';
import { createLease6Store } from '../../../../agent/boot/lease-store6.js';
import { createMemoryStore } from '../../../../agent/store/index.js';
import type { Lease } from '../../../../bootsvc/index.js';

const v4: Lease = { mac: '52:54:00:12:34:56', address: '10.20.0.100', state: 'bound', expiresAtMs: 1_800_000_000_000 };
const v6: Lease = { mac: '52:54:00:12:34:56', address: 'fd00:1::100', state: 'bound', expiresAtMs: 1_800_000_000_000 };
const quarantine: Lease = { mac: '52:54:00:12:34:56', address: 'fd00:1::101', state: 'declined', expiresAtMs: 1_800_000_000_000 };

test('one MAC holds a DHCPv4 and a DHCPv6 lease; each store lists only its own', async () => {
  const store = createMemoryStore();
  const leases4 = createLeaseStore(store.leases, { onInvalid: (key) => { assert.fail(`DHCPv4 store read ${key}`); } });
  const leases6 = createLease6Store(store.leases);
  await leases4.put(v4);
  await leases6.put(v6);
  await leases6.put(quarantine);
  assert.deepEqual(await leases4.list(), [v4]);
  assert.deepEqual((await leases6.list()).map((l) => l.address).sort(), ['fd00:1::100', 'fd00:1::101']);
  assert.deepEqual(await leases6.get('52:54:00:12:34:56'), v6);
  assert.deepEqual((await store.leases.entries()).map(([k]) => k).sort(), ['52:54:00:12:34:56', 'dhcp6/52:54:00:12:34:56', 'dhcp6/declined:fd00:1::101']);
  await leases6.delete('52:54:00:12:34:56');
  assert.deepEqual(await leases4.get('52:54:00:12:34:56'), v4);
  assert.equal(await leases6.get('52:54:00:12:34:56'), undefined);
});

test('invalid DHCPv6 records are refused on put and skipped (and reported) on read', async () => {
  const store = createMemoryStore();
  const skipped: string[] = [];
  const leases6 = createLease6Store(store.leases, (key) => skipped.push(key));
  await assert.rejects(leases6.put({ ...v6, address: '10.0.0.1' }), TypeError);
  await assert.rejects(leases6.put({ ...v6, address: 'FD00:1::100' }), TypeError);
  await store.leases.put('dhcp6/52:54:00:00:00:01', { mac: '52:54:00:00:00:01', address: 'nope', state: 'bound', expiresAtMs: 1 });
  assert.deepEqual(await leases6.list(), []);
  assert.deepEqual(skipped, ['dhcp6/52:54:00:00:00:01']);
});

test('applyBatch writes puts and deletes in one batch', async () => {
  const store = createMemoryStore();
  const leases6 = createLease6Store(store.leases);
  await leases6.put(quarantine);
  await leases6.applyBatch([{ op: 'put', lease: v6 }, { op: 'delete', key: 'declined:fd00:1::101' }]);
  assert.deepEqual((await store.leases.entries()).map(([k]) => k), ['dhcp6/52:54:00:12:34:56']);
});
