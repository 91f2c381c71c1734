/**
 * The DHCP server's lease table writer: changes are visible at once, each key's writes reach the
 * store in order (a newer change replacing a queued one), writes across keys are bounded, and a
 * failing store rejects the waiters without losing the in-memory change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Lease } from '../../../../bootsvc/boot-lookup.js';
import { isLease, LeaseCache, type BatchLeaseStore } from '../../../../bootsvc/dhcp/lease-cache.js';
import type { LeaseChange } from '../../../../bootsvc/dhcp/responder-context.js';
import { MemoryLeaseStore, T0 } from './server-harness.js';

const lease = (mac: string, address: string, state: Lease['state'] = 'bound'): Lease => ({ mac, address, state, expiresAtMs: T0 });

test('load skips malformed records and reports them', async () => {
  const store = new MemoryLeaseStore();
  store.records.set('52:54:00:00:00:01', lease('52:54:00:00:00:01', '10.0.0.5'));
  store.records.set('bad', { mac: 'NOT-A-MAC', address: '10.0.0.6', state: 'bound', expiresAtMs: T0 });
  const invalid: unknown[] = [];
  const cache = await LeaseCache.load(store, { onInvalid: (r) => invalid.push(r) });
  assert.deepEqual(cache.snapshot().map((l) => l.mac), ['52:54:00:00:00:01']);
  assert.equal(invalid.length, 1);
});

test('a burst for one MAC is written in order, coalesced, one write in flight per key', async () => {
  const store = new MemoryLeaseStore();
  store.delayMs = 5;
  const cache = await LeaseCache.load(store, { concurrency: 8 });
  const mac = '52:54:00:00:00:01';
  const waits = [
    cache.apply([{ op: 'put', lease: lease(mac, '10.0.0.5', 'bound') }]),
    cache.apply([{ op: 'put', lease: lease(mac, '10.0.0.6', 'bound') }]),
    cache.apply([{ op: 'delete', key: mac }]),
    cache.apply([{ op: 'put', lease: lease(mac, '10.0.0.7', 'bound') }]),
  ];
  assert.equal(cache.get(mac)?.address, '10.0.0.7', 'the table changes before the store does');
  await Promise.all(waits);
  // The first write was already in flight; the three queued behind it collapse into the newest.
  assert.deepEqual(store.log, [`put ${mac} bound 10.0.0.5`, `put ${mac} bound 10.0.0.7`]);
  assert.equal(store.maxInFlight, 1);
  assert.equal(cache.stats().coalesced, 2);
  assert.equal(store.records.get(mac)?.address, '10.0.0.7');
});

test('offers stay in memory: visible to decisions, never written', async () => {
  const store = new MemoryLeaseStore();
  store.records.set('52:54:00:00:00:01', lease('52:54:00:00:00:01', '10.0.0.5', 'bound'));
  const cache = await LeaseCache.load(store);
  await cache.apply([{ op: 'put', lease: lease('52:54:00:00:00:01', '10.0.0.9', 'offered') }, { op: 'put', lease: lease('52:54:00:00:00:02', '10.0.0.6', 'offered') }]);
  assert.deepEqual(store.log, []);
  assert.equal(cache.byClient('52:54:00:00:00:01')?.address, '10.0.0.9');
  assert.deepEqual(cache.byAddress('10.0.0.6').map((l) => l.mac), ['52:54:00:00:00:02']);
  assert.deepEqual(cache.byAddress('10.0.0.5'), [], 'the index follows the replaced record');
  assert.equal(cache.stats().memoryOnly, 2);
  assert.equal(store.records.get('52:54:00:00:00:01')?.address, '10.0.0.5', 'the stored binding is left as it was');
});

test('writes across MACs run with bounded concurrency and flush() waits for all of them', async () => {
  const store = new MemoryLeaseStore();
  store.delayMs = 2;
  const cache = await LeaseCache.load(store, { concurrency: 3 });
  for (let i = 0; i < 30; i++) void cache.apply([{ op: 'put', lease: lease(`52:54:00:00:01:${i.toString(16).padStart(2, '0')}`, `10.0.1.${i}`) }]);
  await cache.flush();
  assert.equal(store.records.size, 30);
  assert.equal(store.maxInFlight, 3);
  assert.deepEqual(cache.stats(), { records: 30, writes: 30, writeErrors: 0, coalesced: 0, pending: 0, memoryOnly: 0 });
});

test('a failing store rejects the waiters, counts the error and keeps the in-memory change', async () => {
  const store = new MemoryLeaseStore();
  store.fail = true;
  const errors: unknown[] = [];
  const cache = await LeaseCache.load(store, { onWriteError: (err) => errors.push(err) });
  await assert.rejects(cache.apply([{ op: 'put', lease: lease('52:54:00:00:00:01', '10.0.0.5') }]), /disk full/);
  assert.equal(cache.get('52:54:00:00:00:01')?.address, '10.0.0.5');
  assert.equal(cache.stats().writeErrors, 1);
  assert.equal(errors.length, 1);
});

test('deletes and quarantine keys', async () => {
  const store = new MemoryLeaseStore();
  const cache = await LeaseCache.load(store);
  await cache.apply([{ op: 'put', lease: lease('52:54:00:00:00:01', '10.0.0.5', 'declined') }, { op: 'put', lease: lease('52:54:00:00:00:01', '10.0.0.6') }]);
  assert.deepEqual([...store.records.keys()].sort(), ['52:54:00:00:00:01', 'declined:10.0.0.5']);
  await cache.apply([{ op: 'delete', key: 'declined:10.0.0.5' }]);
  assert.deepEqual([...store.records.keys()], ['52:54:00:00:00:01']);
  assert.equal(cache.snapshot().length, 1);
});

/** A MemoryLeaseStore with group commit: records every batch it was given. */
class BatchStore extends MemoryLeaseStore implements BatchLeaseStore {
  readonly batches: string[][] = [];
  async applyBatch(changes: readonly LeaseChange[]): Promise<void> {
    this.batches.push(changes.map((c) => (c.op === 'put' ? `put ${c.lease.mac} ${c.lease.address}` : `delete ${c.key}`)));
    for (const c of changes) {
      if (c.op === 'put') await this.put(c.lease);
      else await this.delete(c.key);
    }
  }
}

test('group commit: one batch in flight, everything queued meanwhile goes in the next, per-key order kept', async () => {
  const store = new BatchStore();
  store.delayMs = 5;
  const cache = await LeaseCache.load(store);
  const a = '52:54:00:00:00:0a';
  const first = cache.apply([{ op: 'put', lease: lease(a, '10.0.0.1') }]);
  const rest = [
    cache.apply([{ op: 'put', lease: lease('52:54:00:00:00:0b', '10.0.0.2') }]),
    cache.apply([{ op: 'put', lease: lease(a, '10.0.0.3') }]),
    cache.apply([{ op: 'put', lease: lease('52:54:00:00:00:0c', '10.0.0.4') }]),
  ];
  await Promise.all([first, ...rest]);
  assert.deepEqual(store.batches, [[`put ${a} 10.0.0.1`], ['put 52:54:00:00:00:0b 10.0.0.2', `put ${a} 10.0.0.3`, 'put 52:54:00:00:00:0c 10.0.0.4']]);
  assert.equal(store.records.get(a)?.address, '10.0.0.3');
  assert.equal(cache.stats().writes, 4);
});

test('group commit: a failed batch rejects every waiter in it', async () => {
  const store = new BatchStore();
  store.fail = true;
  const cache = await LeaseCache.load(store);
  await assert.rejects(cache.apply([{ op: 'put', lease: lease('52:54:00:00:00:01', '10.0.0.5') }, { op: 'delete', key: '52:54:00:00:00:02' }]), /disk full/);
  assert.equal(cache.stats().writeErrors, 2);
  await cache.flush();
});

const cases: Record<string, [unknown, boolean]> = {
  'a bound lease': [lease('52:54:00:00:00:01', '10.0.0.5'), true],
  'with a host name': [{ ...lease('52:54:00:00:00:01', '10.0.0.5'), hostName: 'node-1' }, true],
  'upper-case MAC': [lease('52:54:00:AA:00:01', '10.0.0.5'), false],
  'bad address': [lease('52:54:00:00:00:01', '10.0.0.500'), false],
  'unknown state': [{ ...lease('52:54:00:00:00:01', '10.0.0.5'), state: 'leased' }, false],
  'infinite expiry': [{ ...lease('52:54:00:00:00:01', '10.0.0.5'), expiresAtMs: Infinity }, false],
  'null': [null, false],
};
for (const [name, [value, ok]] of Object.entries(cases)) {
  test(`isLease: ${name}`, () => {
    assert.equal(isLease(value), ok);
  });
}

test('a completed group commit releases its waiters a slice per event-loop turn; flush waits for all of them', async () => {
  const store = new BatchStore();
  const cache = await LeaseCache.load(store);
  const order: string[] = [];
  const macs = Array.from({ length: 100 }, (_, i) => `52:54:00:00:01:${i.toString(16).padStart(2, '0')}`);
  const done = macs.map((mac, i) => cache.apply([{ op: 'put', lease: lease(mac, `10.0.1.${i}`) }]).then(() => order.push(mac)));
  // Something else the event loop has to do once the write completes: it must run before the last ACK is released.
  const other = new Promise<void>((resolve) => {
    const poll = (): void => {
      if (order.length > 0) {
        order.push('other work');
        resolve();
      } else setImmediate(poll);
    };
    setImmediate(poll);
  });
  await cache.flush();
  await Promise.all([...done, other]);
  assert.equal(order.length, 101);
  const at = order.indexOf('other work');
  assert.ok(at > 0 && at < 100, `other work ran between slices (at ${at} of 101)`);
  assert.deepEqual(order.filter((m) => m !== 'other work').sort(), [...macs].sort());
  assert.ok(Math.max(...store.batches.map((b) => b.length)) > 64, 'the burst was group-committed (more than two slices in one write)');
});
