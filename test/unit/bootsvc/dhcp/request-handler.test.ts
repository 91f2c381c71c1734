/**
 * The DHCP server's pure request handler, step by step: which requests need a boot lookup and
 * what it asks, the decision it hands back (with the server's settings), the reply plan (route,
 * whether it waits for its lease write, encode failure), the flight-recorder events of each
 * outcome, and what the sweep forgets. Table-driven; the socket loop is tested in
 * `dhcp-server.test.ts` and the other server tests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BootQuery, Lease } from '../../../../bootsvc/boot-lookup.js';
import type { LeaseIndex } from '../../../../bootsvc/dhcp/indexed-respond.js';
import type { DhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import {
  bootQueryFor, decideRequest, planReply, replyEvent, requestEvents, sweepChanges,
  type DhcpDecisionInput, type DhcpHandlerSettings, type DhcpRequestOrigin, type ReplyResult,
} from '../../../../bootsvc/dhcp/request-handler.js';
import { clientPacket, type ClientMessage } from '../../../helpers/dhcp-packets.js';
import { decisions, localSubnet, NOW, relayedSubnet, SERVER } from './responder-fixtures.js';

const MAC = '52:54:00:12:34:56';
const EFI = 'PXEClient:Arch:00007:UNDI:003016';
const settings: DhcpHandlerSettings = { mode: 'full', serverAddress: SERVER, subnets: [localSubnet, relayedSubnet], leaseSeconds: 3600, unknownHosts: 'ignore' };
const ORIGIN: DhcpRequestOrigin = { serverPort: 67, sourceAddress: '0.0.0.0', sourcePort: 68 };

function indexOf(leases: readonly Lease[]): LeaseIndex {
  return { all: () => leases, byClient: (mac) => leases.find((l) => l.mac === mac && l.state !== 'declined'), byAddress: (a) => leases.filter((l) => l.address === a) };
}

function input(over: Partial<DhcpDecisionInput> = {}): DhcpDecisionInput {
  return { settings, serverPort: 67, leases: indexOf([]), reservations: [], bootDecision: decisions.efi, discoveryDecision: undefined, nowMs: NOW, ...over };
}

test('bootQueryFor: which requests need a boot lookup, and what it asks', () => {
  const efi: Partial<BootQuery> = { mac: MAC, arch: 'x86_64', firmware: 'uefi', transport: 'tftp', isIpxe: false, archType: 7 };
  const cases: { name: string; m: ClientMessage; mode?: 'full' | 'proxy'; port?: number; packet?: (p: DhcpPacket) => void; expected: Partial<BootQuery> | undefined }[] = [
    { name: 'PXE DISCOVER', m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 }, expected: efi },
    { name: 'relayed DISCOVER names the relay', m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7, giaddr: '10.30.0.1' }, expected: { ...efi, relayAddress: '10.30.0.1' } },
    { name: 'iPXE names its user class', m: { type: 'request', mac: MAC, vendorClass: EFI, archType: 7, userClass: 'iPXE' }, expected: { ...efi, isIpxe: true, userClass: 'iPXE' } },
    { name: 'RELEASE to the full server: bookkeeping, no lookup', m: { type: 'release', mac: MAC, ciaddr: '10.20.0.100' }, expected: undefined },
    { name: 'DECLINE to the full server: bookkeeping, no lookup', m: { type: 'decline', mac: MAC, requestedAddress: '10.20.0.100' }, expected: undefined },
    { name: 'RELEASE in proxy mode is looked up (the responder ignores it)', m: { type: 'release', mac: MAC }, mode: 'proxy', expected: { mac: MAC } },
    { name: 'RELEASE on the boot-server port is looked up', m: { type: 'release', mac: MAC }, port: 4011, expected: { mac: MAC } },
    { name: 'a BOOTREPLY is not', m: { type: 'discover', mac: MAC }, packet: (p) => { p.op = 2; }, expected: undefined },
    { name: 'a non-Ethernet client is not', m: { type: 'discover', mac: MAC }, packet: (p) => { p.htype = 6; }, expected: undefined },
    { name: 'BOOTP (no message type) is not', m: { type: 'discover', mac: MAC }, packet: (p) => { const options = new Map(p.options); options.delete(53); p.options = options; }, expected: undefined },
  ];
  for (const c of cases) {
    const p = clientPacket(c.m);
    c.packet?.(p);
    const q = bootQueryFor(p, c.mode ?? 'full', c.port ?? 67);
    if (c.expected === undefined) assert.equal(q, undefined, c.name);
    else {
      assert.ok(q !== undefined, c.name);
      for (const [k, v] of Object.entries(c.expected)) assert.deepEqual(q[k as keyof BootQuery], v, `${c.name}: ${k}`);
    }
  }
});

test('decideRequest: the settings, reservations and decisions reach the responder', () => {
  const held: Lease = { mac: MAC, address: '10.20.0.150', state: 'bound', expiresAtMs: NOW + 600_000 };
  const cases: { name: string; m: ClientMessage; over?: Partial<DhcpDecisionInput>; expected: string }[] = [
    { name: 'a new client gets the first free address', m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 }, expected: 'offer 10.20.0.100 free' },
    { name: 'a returning client its previous one', m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 }, over: { leases: indexOf([held]) }, expected: 'offer 10.20.0.150 previous' },
    { name: 'a reservation wins', m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 }, over: { reservations: [{ mac: MAC, address: '10.20.0.20' }] }, expected: 'offer 10.20.0.20 reservation' },
    {
      name: 'a reserved address is skipped for others (given as a set)',
      m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 },
      over: { reservations: [{ mac: '52:54:00:00:00:99', address: '10.20.0.100' }], reservedAddresses: new Set([0x0a140064]) },
      expected: 'offer 10.20.0.101 free',
    },
    { name: 'an unknown host is ignored by policy', m: { type: 'discover', mac: MAC }, over: { bootDecision: undefined }, expected: 'ignore unknown-host' },
    {
      name: 'an unknown host boots discovery under discover',
      m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 },
      over: { bootDecision: undefined, discoveryDecision: decisions.efi, settings: { ...settings, unknownHosts: 'discover' } },
      expected: 'offer 10.20.0.100 free',
    },
    { name: 'proxy mode gives no address', m: { type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 }, over: { settings: { ...settings, mode: 'proxy' } }, expected: 'offer 0.0.0.0 proxy' },
  ];
  for (const c of cases) {
    const r = decideRequest(clientPacket(c.m), input(c.over));
    const got = r.kind === 'reply' ? [r.messageType, r.packet.yiaddr, r.detail].filter((x) => x !== undefined).join(' ') : r.kind === 'ignore' ? `ignore ${r.reason}` : r.event;
    assert.equal(got, c.expected, c.name);
  }
  const offer = decideRequest(clientPacket({ type: 'discover', mac: MAC, vendorClass: EFI, archType: 7 }), input({ settings: { ...settings, offerHoldSeconds: 5 } }));
  assert.deepEqual(offer.leaseChanges, [{ op: 'put', lease: { mac: MAC, address: '10.20.0.100', state: 'offered', expiresAtMs: NOW + 5000 } }], 'the offer hold comes from the settings');
});

function reply(m: ClientMessage, over: Partial<DhcpDecisionInput> = {}): ReplyResult {
  const r = decideRequest(clientPacket(m), input(over));
  if (r.kind !== 'reply') assert.fail(`no reply: ${r.kind}`);
  return r;
}

test('planReply: the route, and whether the reply waits for its lease write', () => {
  const bound: Lease = { mac: MAC, address: '10.20.0.150', state: 'bound', expiresAtMs: NOW + 3600_000 };
  const cases: { name: string; m: ClientMessage; over?: Partial<DhcpDecisionInput>; origin?: DhcpRequestOrigin; expected: string }[] = [
    { name: 'OFFER: hardware unicast, no wait', m: { type: 'discover', mac: MAC }, expected: 'hardware-unicast 10.20.0.100:68 nowait' },
    { name: 'OFFER with the broadcast flag', m: { type: 'discover', mac: MAC, broadcast: true }, expected: 'broadcast 255.255.255.255:68 nowait' },
    { name: 'relayed ACK: to the relay, after the write', m: { type: 'request', mac: MAC, giaddr: '10.30.0.1', serverId: SERVER, requestedAddress: '10.30.0.100' }, expected: 'relay 10.30.0.1:67 wait' },
    { name: 'renewing ACK: to ciaddr, after the write', m: { type: 'request', mac: MAC, ciaddr: '10.20.0.150' }, over: { leases: indexOf([bound]) }, expected: 'client-address 10.20.0.150:68 wait' },
    {
      name: 'reused lease: nothing to write, no wait',
      m: { type: 'request', mac: MAC, ciaddr: '10.20.0.150' },
      over: { leases: indexOf([bound]), leaseSettled: () => true },
      expected: 'client-address 10.20.0.150:68 nowait',
    },
    { name: 'NAK: broadcast', m: { type: 'request', mac: MAC, requestedAddress: '10.99.0.1' }, expected: 'broadcast 255.255.255.255:68 nowait' },
    { name: '4011: back to the source', m: { type: 'request', mac: MAC, vendorClass: EFI, archType: 7 }, over: { serverPort: 4011 }, origin: { serverPort: 4011, sourceAddress: '10.20.0.150', sourcePort: 4011 }, expected: 'source 10.20.0.150:4011 nowait' },
  ];
  for (const c of cases) {
    const plan = planReply(clientPacket(c.m), reply(c.m, c.over), c.origin ?? ORIGIN);
    const got = plan.kind === 'send' ? `${plan.route.kind} ${plan.route.address}:${plan.route.port} ${plan.awaitLeaseWrite ? 'wait' : 'nowait'}` : plan.kind;
    assert.equal(got, c.expected, c.name);
  }
  const r = reply({ type: 'discover', mac: MAC });
  r.packet.sname = 'x'.repeat(200);
  assert.equal(planReply(clientPacket({ type: 'discover', mac: MAC }), r, ORIGIN).kind, 'encode-error', 'a reply that cannot be encoded is a plan to drop it');
});

test('requestEvents and replyEvent: what the flight recorder sees of each outcome', () => {
  const discover = clientPacket({ type: 'discover', mac: MAC, requestedAddress: '10.20.0.120' });
  const offer = reply({ type: 'discover', mac: MAC, requestedAddress: '10.20.0.120' });
  const ignored = decideRequest(discover, input({ bootDecision: undefined }));
  const release = clientPacket({ type: 'release', mac: MAC, ciaddr: '10.20.0.150' });
  const released = decideRequest(release, input({ leases: indexOf([{ mac: MAC, address: '10.20.0.150', state: 'bound', expiresAtMs: NOW + 1000 }]) }));
  const summary = (events: { message: string; address?: string; detail?: string }[]): string[] => events.map((e) => [e.message, e.address, e.detail].filter((x) => x !== undefined).join(' '));
  const cases: { name: string; got: string[]; expected: string[] }[] = [
    { name: 'replied: the message with the address asked for', got: summary(requestEvents(discover, offer, ORIGIN, NOW)), expected: ['discover 10.20.0.120'] },
    { name: 'ignored: the message, then why', got: summary(requestEvents(discover, ignored, ORIGIN, NOW, 'unknown-host')), expected: ['discover 10.20.0.120', 'ignored discover: unknown-host'] },
    { name: 'released: ciaddr is the address', got: summary(requestEvents(release, released, ORIGIN, NOW)), expected: ['release 10.20.0.150'] },
    { name: 'no client: nothing', got: summary(requestEvents(discover, { kind: 'ignore', reason: 'not-a-request', leaseChanges: [] }, ORIGIN, NOW)), expected: [] },
    { name: 'reply: address, boot file and route', got: summary([replyEvent(discover, offer, ORIGIN, NOW, 'hardware-unicast')]), expected: ['offer 10.20.0.120 requested; sent hardware-unicast'] },
  ];
  for (const c of cases) assert.deepEqual(c.got, c.expected, c.name);
  const e = replyEvent(discover, offer, { serverPort: 67, sourceAddress: '10.20.0.7', sourcePort: 68 }, NOW + 5, 'broadcast-fallback');
  assert.deepEqual({ atMs: e.atMs, mac: e.mac, clientAddress: e.clientAddress, serverPort: e.serverPort, xid: e.xid }, { atMs: NOW + 5, mac: MAC, clientAddress: '10.20.0.7', serverPort: 67, xid: discover.xid });
});

test('sweepChanges: expired offers and quarantines go; an expired binding only once its address is held by a later record', () => {
  const l = (mac: string, address: string, state: Lease['state'], dt: number): Lease => ({ mac, address, state, expiresAtMs: NOW + dt });
  const cases: { name: string; records: Lease[]; expected: string[] }[] = [
    { name: 'live records stay', records: [l(MAC, '10.20.0.100', 'offered', 1), l('52:54:00:00:00:02', '10.20.0.101', 'bound', 1)], expected: [] },
    { name: 'an expired offer goes', records: [l(MAC, '10.20.0.100', 'offered', 0)], expected: [MAC] },
    { name: 'an expired quarantine goes', records: [l(MAC, '10.20.0.100', 'declined', -5)], expected: ['declined/10.20.0.100'] },
    { name: 'an expired binding alone stays', records: [l(MAC, '10.20.0.100', 'bound', -5)], expected: [] },
    { name: 'an expired binding superseded goes', records: [l(MAC, '10.20.0.100', 'bound', -5), l('52:54:00:00:00:02', '10.20.0.100', 'offered', 50)], expected: [MAC] },
  ];
  for (const c of cases) {
    const got = sweepChanges(c.records, NOW).map((ch) => (ch.op === 'delete' ? ch.key : 'put'));
    assert.deepEqual(got.map((k) => (k.startsWith('declined') ? 'declined/10.20.0.100' : k)), c.expected, c.name);
  }
});
