/**
 * The pool over the lease cache's index must answer exactly as the pool over a plain array of
 * the same records (a differential test over random tables changed by random puts and deletes,
 * random reservations, times and requests), and the free-address search over the index must
 * not rescan recorded addresses (amortised O(1) per allocation).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaseKey, type Lease } from '../../../../bootsvc/boot-lookup.js';
import { parseIpv4 } from '../../../../bootsvc/dhcp/address.js';
import { LeaseCache } from '../../../../bootsvc/dhcp/lease-cache.js';
import { allocateAddress, checkAddress, findClientLease, reservedAddresses, type DhcpSubnet, type PoolState, type Reservation } from '../../../../bootsvc/dhcp/pool.js';
import type { LeaseChange } from '../../../../bootsvc/dhcp/responder-context.js';
import { prng } from '../../../helpers/prng.js';
import { MemoryLeaseStore, T0 } from './server-harness.js';

const byKey = (a: Lease, b: Lease): number => (leaseKey(a) < leaseKey(b) ? -1 : leaseKey(a) > leaseKey(b) ? 1 : 0);
const subnet: DhcpSubnet = { network: '10.20.0.0', prefixLength: 24, rangeStart: '10.20.0.100', rangeEnd: '10.20.0.111', router: '10.20.0.105' };
const MACS = Array.from({ length: 14 }, (_, i) => `52:54:00:00:00:${(i + 16).toString(16)}`);
const ADDRESSES = [...Array.from({ length: 12 }, (_, i) => `10.20.0.${100 + i}`), '10.20.0.1', '10.20.0.50', '10.30.0.7'];

test('allocation over the indexed snapshot equals allocation over a plain copy (3000 random steps × 20 tables)', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const cache = await LeaseCache.load(new MemoryLeaseStore());
    let reservations: Reservation[] = [];
    for (let step = 0; step < 3000; step++) {
      const nowMs = T0 + Math.floor(rnd() * 600_000);
      const roll = rnd();
      if (roll < 0.45) {
        const state: Lease['state'] = pick(['offered', 'bound', 'bound', 'declined']);
        const lease: Lease = { mac: pick(MACS), address: pick(ADDRESSES), state, expiresAtMs: T0 + Math.floor(rnd() * 600_000) };
        void cache.apply([{ op: 'put', lease }]);
      } else if (roll < 0.6) {
        const records = cache.snapshot();
        const victim = records[Math.floor(rnd() * records.length)];
        if (victim !== undefined) void cache.apply([{ op: 'delete', key: leaseKey(victim) } satisfies LeaseChange]);
      } else if (roll < 0.63) {
        reservations = Array.from({ length: Math.floor(rnd() * 3) }, () => ({ mac: pick(MACS), address: pick(ADDRESSES) }));
      } else {
        const indexed = cache.snapshot();
        const plain = [...indexed];
        const mac = pick(MACS);
        const requested = rnd() < 0.3 ? pick(ADDRESSES) : undefined;
        const base = { subnet, serverAddress: '10.20.0.1', reservations, nowMs };
        const withIndex: PoolState = { ...base, leases: indexed, index: cache, reserved: reservedAddresses(reservations) };
        const without: PoolState = { ...base, leases: plain };
        const context = `seed ${seed} step ${step}`;
        assert.deepEqual(allocateAddress(withIndex, mac, requested), allocateAddress(without, mac, requested), context);
        const address = pick(ADDRESSES);
        assert.equal(checkAddress(withIndex, mac, address), checkAddress(without, mac, address), context);
        assert.equal(findClientLease(indexed, mac, cache), findClientLease(plain, mac), context);
        const live: PoolState = { ...base, leases: cache.all(), index: cache };
        assert.deepEqual(allocateAddress(live, mac, requested), allocateAddress(without, mac, requested), `${context} (live table)`);
        assert.deepEqual([...cache.all()].sort(byKey), [...plain].sort(byKey), `${context}: the live table holds the same records`);
        // What the server does with a DISCOVER: hold the offered address.
        const got = allocateAddress(withIndex, mac, requested);
        if (got !== undefined && rnd() < 0.7) void cache.apply([{ op: 'put', lease: { mac, address: got.address, state: 'offered', expiresAtMs: nowMs + 60_000 } }]);
      }
    }
    await cache.flush();
  }
});

test('a rack powering on: each new client costs a constant number of steps however many leases exist', async () => {
  const big: DhcpSubnet = { network: '10.90.0.0', prefixLength: 16, rangeStart: '10.90.1.0', rangeEnd: '10.90.255.254' };
  const cache = await LeaseCache.load(new MemoryLeaseStore());
  const first = parseIpv4(big.rangeStart) ?? 0;
  const last = parseIpv4(big.rangeEnd) ?? 0;
  let maxSteps = 0;
  for (let i = 0; i < 5000; i++) {
    let steps = 0;
    const value = cache.firstUnrecorded(first, last, () => {
      steps++;
      return false;
    });
    assert.equal(value, first + i);
    maxSteps = Math.max(maxSteps, steps);
    const mac = `02:00:00:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
    void cache.apply([{ op: 'put', lease: { mac, address: `10.90.${1 + (i >> 8)}.${i & 255}`, state: 'offered', expiresAtMs: T0 + 60_000 } }]);
  }
  assert.ok(maxSteps <= 1, `the search looked at ${maxSteps} candidate addresses for one client`);
  // A freed address below the mark is found again first, without a rescan.
  void cache.apply([{ op: 'delete', key: '02:00:00:00:00:07' }]);
  let steps = 0;
  const again = cache.firstUnrecorded(first, last, () => {
    steps++;
    return false;
  });
  assert.equal(again, first + 7);
  assert.equal(steps, 1);
  const state: PoolState = { subnet: big, serverAddress: '10.90.0.1', reservations: [], nowMs: T0, leases: cache.snapshot(), index: cache };
  assert.deepEqual(allocateAddress(state, '52:54:00:aa:bb:cc'), { address: '10.90.1.7', source: 'free' });
  await cache.flush();
});

test('an exhausted pool answers undefined, and an expired record is reused longest-expired first', async () => {
  const tiny: DhcpSubnet = { network: '10.20.0.0', prefixLength: 24, rangeStart: '10.20.0.100', rangeEnd: '10.20.0.102' };
  const cache = await LeaseCache.load(new MemoryLeaseStore());
  const put = (mac: string, address: string, expiresAtMs: number, state: Lease['state'] = 'bound'): void => {
    void cache.apply([{ op: 'put', lease: { mac, address, state, expiresAtMs } }]);
  };
  put('52:54:00:00:00:01', '10.20.0.100', T0 + 1000);
  put('52:54:00:00:00:02', '10.20.0.101', T0 + 1000, 'declined');
  put('52:54:00:00:00:03', '10.20.0.102', T0 + 1000);
  const at = (nowMs: number): PoolState => ({ subnet: tiny, serverAddress: '10.20.0.1', reservations: [], nowMs, leases: cache.snapshot(), index: cache });
  assert.equal(allocateAddress(at(T0), '52:54:00:00:00:09'), undefined);
  put('52:54:00:00:00:03', '10.20.0.102', T0 - 50);
  put('52:54:00:00:00:01', '10.20.0.100', T0 - 10);
  assert.deepEqual(allocateAddress(at(T0), '52:54:00:00:00:09'), { address: '10.20.0.102', source: 'expired' });
  assert.deepEqual(allocateAddress(at(T0 + 2000), '52:54:00:00:00:09'), { address: '10.20.0.102', source: 'expired' });
  await cache.flush();
});
