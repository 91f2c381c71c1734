import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from '../../../../bootsvc/boot-lookup.js';
import { allocateAddress, checkAddress, selectSubnet, type DhcpSubnet, type PoolState } from '../../../../bootsvc/dhcp/pool.js';

const NOW = 1_800_000_000_000;
const MAC = '52:54:00:00:00:01';
const OTHER = '52:54:00:00:00:02';
const subnet: DhcpSubnet = { network: '10.20.0.0', prefixLength: 24, rangeStart: '10.20.0.100', rangeEnd: '10.20.0.103', router: '10.20.0.254' };

const live = (mac: string, address: string, state: Lease['state'] = 'bound'): Lease => ({ mac, address, state, expiresAtMs: NOW + 60_000 });
const expired = (mac: string, address: string, agoMs = 1): Lease => ({ mac, address, state: 'bound', expiresAtMs: NOW - agoMs });

function pool(over: Partial<PoolState> = {}): PoolState {
  return { subnet, serverAddress: '10.20.0.1', leases: [], reservations: [], nowMs: NOW, ...over };
}

const allocations: Record<string, { state: PoolState; requested?: string; expected: ReturnType<typeof allocateAddress> }> = {
  'empty pool: first address': { state: pool(), expected: { address: '10.20.0.100', source: 'free' } },
  'reservation, even outside the range': {
    state: pool({ reservations: [{ mac: MAC, address: '10.20.0.10' }] }),
    expected: { address: '10.20.0.10', source: 'reservation' },
  },
  'reservation written in upper case still matches': {
    state: pool({ reservations: [{ mac: MAC.toUpperCase(), address: '10.20.0.10' }] }),
    expected: { address: '10.20.0.10', source: 'reservation' },
  },
  'reservation held by another live lease: dynamic instead': {
    state: pool({ reservations: [{ mac: MAC, address: '10.20.0.101' }], leases: [live(OTHER, '10.20.0.101')] }),
    expected: { address: '10.20.0.100', source: 'free' },
  },
  'reservation in another subnet is not used here': {
    state: pool({ reservations: [{ mac: MAC, address: '10.30.0.10' }] }),
    expected: { address: '10.20.0.100', source: 'free' },
  },
  'previous address, even after expiry': {
    state: pool({ leases: [expired(MAC, '10.20.0.102', 86_400_000)] }),
    expected: { address: '10.20.0.102', source: 'previous' },
  },
  'previous address now held by another client': {
    state: pool({ leases: [expired(MAC, '10.20.0.102'), live(OTHER, '10.20.0.102')] }),
    expected: { address: '10.20.0.100', source: 'free' },
  },
  'requested address when free': { state: pool(), requested: '10.20.0.103', expected: { address: '10.20.0.103', source: 'requested' } },
  'requested address outside the range': { state: pool(), requested: '10.20.0.50', expected: { address: '10.20.0.100', source: 'free' } },
  'requested address reserved for another client': {
    state: pool({ reservations: [{ mac: OTHER, address: '10.20.0.103' }] }),
    requested: '10.20.0.103',
    expected: { address: '10.20.0.100', source: 'free' },
  },
  'never-used addresses before expired ones': {
    state: pool({ leases: [live(OTHER, '10.20.0.100'), expired('52:54:00:00:00:03', '10.20.0.101')] }),
    expected: { address: '10.20.0.102', source: 'free' },
  },
  'quarantined addresses are skipped': {
    state: pool({ leases: [live(OTHER, '10.20.0.100', 'declined')] }),
    expected: { address: '10.20.0.101', source: 'free' },
  },
  'full of records: the longest-expired one': {
    state: pool({
      leases: [live('a', '10.20.0.100'), expired('b', '10.20.0.101', 10), expired('c', '10.20.0.102', 5000), live('d', '10.20.0.103')],
    }),
    expected: { address: '10.20.0.102', source: 'expired' },
  },
  'exhausted: every address live': {
    state: pool({ leases: [live('a', '10.20.0.100'), live('b', '10.20.0.101'), live('c', '10.20.0.102', 'offered'), live('d', '10.20.0.103', 'declined')] }),
    expected: undefined,
  },
  'network, broadcast, server and router are never offered': {
    state: pool({ subnet: { network: '10.20.0.0', prefixLength: 30, rangeStart: '10.20.0.0', rangeEnd: '10.20.0.3', router: '10.20.0.2' } }),
    expected: undefined,
  },
  'a range running past the subnet is clamped': {
    state: pool({
      subnet: { network: '10.20.0.0', prefixLength: 24, rangeStart: '10.20.0.250', rangeEnd: '10.21.255.255' },
      leases: [live('a', '10.20.0.250'), live('b', '10.20.0.251'), live('c', '10.20.0.252'), live('d', '10.20.0.253')],
    }),
    expected: { address: '10.20.0.254', source: 'free' },
  },
  'a huge range with many leases stops at the first free address': {
    state: pool({
      subnet: { network: '10.0.0.0', prefixLength: 8, rangeStart: '10.0.0.1', rangeEnd: '10.255.255.254' },
      serverAddress: '10.0.0.1',
      leases: Array.from({ length: 2000 }, (_, i) => live(`m${i}`, `10.0.${(i + 2) >> 8}.${(i + 2) & 255}`)),
    }),
    expected: { address: '10.0.7.210', source: 'free' },
  },
};
for (const [name, c] of Object.entries(allocations)) {
  test(`allocate: ${name}`, () => {
    assert.deepEqual(allocateAddress(c.state, MAC, c.requested), c.expected);
  });
}

const checks: Record<string, { state: PoolState; address: string; expected: ReturnType<typeof checkAddress> }> = {
  available: { state: pool(), address: '10.20.0.101', expected: 'available' },
  malformed: { state: pool(), address: '10.20.0', expected: 'malformed' },
  'other subnet': { state: pool(), address: '10.30.0.101', expected: 'outside-subnet' },
  'outside range': { state: pool(), address: '10.20.0.99', expected: 'outside-range' },
  'our own address': { state: pool(), address: '10.20.0.1', expected: 'excluded' },
  router: { state: pool(), address: '10.20.0.254', expected: 'excluded' },
  broadcast: { state: pool(), address: '10.20.0.255', expected: 'excluded' },
  'held by another client': { state: pool({ leases: [live(OTHER, '10.20.0.101')] }), address: '10.20.0.101', expected: 'in-use' },
  'held by this client': { state: pool({ leases: [live(MAC, '10.20.0.101')] }), address: '10.20.0.101', expected: 'available' },
  'expired lease of another client': { state: pool({ leases: [expired(OTHER, '10.20.0.101')] }), address: '10.20.0.101', expected: 'available' },
  quarantined: { state: pool({ leases: [live(MAC, '10.20.0.101', 'declined')] }), address: '10.20.0.101', expected: 'quarantined' },
  'reserved for another': { state: pool({ reservations: [{ mac: OTHER, address: '10.20.0.101' }] }), address: '10.20.0.101', expected: 'reserved-for-other' },
  'reserved for this client outside the range': { state: pool({ reservations: [{ mac: MAC, address: '10.20.0.5' }] }), address: '10.20.0.5', expected: 'available' },
};
for (const [name, c] of Object.entries(checks)) {
  test(`check address: ${name}`, () => {
    assert.equal(checkAddress(c.state, MAC, c.address), c.expected);
  });
}

const relayed: DhcpSubnet = { network: '10.30.0.0', prefixLength: 24, rangeStart: '10.30.0.100', rangeEnd: '10.30.0.110' };
const subnets: Record<string, { giaddr: string; expected: DhcpSubnet | undefined }> = {
  'local segment: the subnet of our address': { giaddr: '0.0.0.0', expected: subnet },
  'relayed: the subnet of giaddr': { giaddr: '10.30.0.1', expected: relayed },
  'relayed from an unconfigured subnet': { giaddr: '10.99.0.1', expected: undefined },
};
for (const [name, c] of Object.entries(subnets)) {
  test(`select subnet: ${name}`, () => {
    assert.equal(selectSubnet([subnet, relayed], c.giaddr, '10.20.0.1'), c.expected);
  });
}
