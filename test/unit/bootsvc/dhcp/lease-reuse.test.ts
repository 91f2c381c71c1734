/**
 * Lease reuse (pool.ts LEASE_REUSE_SHARE, ISC dhcpd's dhcp-cache-threshold): a client asking
 * again within the first quarter of its lease — the next stage of a network boot — is
 * acknowledged with the lease it holds and the time left, and nothing is written; any other
 * case (an older lease, a write of it still pending, another address or host name, a lease
 * longer than the configured time) writes a new lease as before.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Lease } from '../../../../bootsvc/boot-lookup.js';
import { classifyClient } from '../../../../bootsvc/dhcp/client-info.js';
import { LEASE_REUSE_SHARE, reusableLeaseSeconds } from '../../../../bootsvc/dhcp/pool.js';
import { respond } from '../../../../bootsvc/dhcp/responder.js';
import { ipxeEfiDiscover, udhcpcRequest } from './fixtures.js';
import { context, expectReply, lease, NOW, optionHex, request } from './responder-fixtures.js';

const HOUR = 3600;
const bound = (ageSeconds: number, over: Partial<Lease> = {}): Lease => ({ ...lease('02:00:00:00:bb:01', '10.20.0.51', 'bound', NOW + (HOUR - ageSeconds) * 1000), ...over });
const u32 = (n: number): string => n.toString(16).padStart(8, '0');

const cases: Record<string, { lease: Lease | undefined; settled?: boolean; address?: string; hostName?: string; leaseSeconds?: number; expected: number | undefined }> = {
  'given a second ago': { lease: bound(1), expected: HOUR - 1 },
  'exactly at the share': { lease: bound(HOUR * LEASE_REUSE_SHARE), expected: HOUR * (1 - LEASE_REUSE_SHARE) },
  'just past the share': { lease: bound(HOUR * LEASE_REUSE_SHARE + 1), expected: undefined },
  'its write still pending': { lease: bound(1), settled: false, expected: undefined },
  'another address': { lease: bound(1), address: '10.20.0.52', expected: undefined },
  'another host name': { lease: bound(1, { hostName: 'old-name' }), expected: undefined },
  'only offered': { lease: bound(1, { state: 'offered' }), expected: undefined },
  'longer than the configured time (shortened since)': { lease: bound(1), leaseSeconds: 600, expected: undefined },
  'expired': { lease: bound(HOUR + 5), expected: undefined },
  'no lease': { lease: undefined, expected: undefined },
};
for (const [name, c] of Object.entries(cases)) {
  test(`reusableLeaseSeconds: ${name}`, () => {
    assert.equal(reusableLeaseSeconds(c.lease, c.address ?? '10.20.0.51', c.hostName, NOW, c.leaseSeconds ?? HOUR, c.settled ?? true), c.expected);
  });
}

const selecting = request(udhcpcRequest);
const hostName = classifyClient(selecting).hostName;
const held = (ageSeconds: number): Lease => bound(ageSeconds, hostName === undefined ? {} : { hostName });
/** 10.20.0.51 is outside the dynamic range: the client's reservation. */
const reservations = [{ mac: '02:00:00:00:bb:01', address: '10.20.0.51' }];

test('REQUEST for a lease given 20 s ago and durable: ACK with the time left, nothing written', () => {
  const r = respond(selecting, context({ leases: [held(20)], reservations, leaseSettled: () => true }));
  const { packet: p, leaseChanges, detail } = expectReply(r, 'ack');
  assert.equal(p.yiaddr, '10.20.0.51');
  assert.deepEqual(leaseChanges, []);
  assert.equal(detail, 'selecting, lease reused');
  const left = HOUR - 20;
  assert.deepEqual([optionHex(p, 51), optionHex(p, 58), optionHex(p, 59)], [u32(left), u32(Math.floor(left / 2)), u32(Math.floor((left * 7) / 8))]);
});

test('REQUEST for the same lease while its write is in flight, or once it is older than the share: a new lease is written', () => {
  for (const [ctx, why] of [[context({ leases: [held(20)], reservations, leaseSettled: () => false }), 'pending'], [context({ leases: [held(HOUR / 2)], reservations, leaseSettled: () => true }), 'old'], [context({ leases: [held(20)], reservations }), 'no settled predicate']] as const) {
    const { packet: p, leaseChanges, detail } = expectReply(respond(selecting, ctx), 'ack');
    assert.equal(detail, 'selecting', why);
    assert.equal(optionHex(p, 51), u32(HOUR), why);
    assert.equal(leaseChanges.length, 1, why);
  }
});

test('iPXE DISCOVER from a client with a fresh durable lease: OFFER of that address with the time left, no offer record', () => {
  const ipxe = request(ipxeEfiDiscover);
  const mac = classifyClient(ipxe).mac;
  const ipxeHost = classifyClient(ipxe).hostName;
  const own: Lease = { ...lease(mac, '10.20.0.120', 'bound', NOW + (HOUR - 10) * 1000), ...(ipxeHost === undefined ? {} : { hostName: ipxeHost }) };
  const { packet: p, leaseChanges } = expectReply(respond(ipxe, context({ leases: [own], leaseSettled: () => true })), 'offer');
  assert.equal(p.yiaddr, '10.20.0.120');
  assert.equal(optionHex(p, 51), u32(HOUR - 10));
  assert.deepEqual(leaseChanges, []);
});
