/**
 * respondIndexed must decide exactly as respond() does with the full lease table: a
 * differential test over random lease tables (unique keys, as the store keeps them), random
 * reservations and every kind of request, plus a check that a returning client is decided
 * without reading the full table.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaseKey, type Lease } from '../../../../bootsvc/boot-lookup.js';
import { respondIndexed, type LeaseIndex } from '../../../../bootsvc/dhcp/indexed-respond.js';
import { encodeDhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import type { Reservation } from '../../../../bootsvc/dhcp/pool.js';
import { respond } from '../../../../bootsvc/dhcp/responder.js';
import type { ResponderContext } from '../../../../bootsvc/dhcp/responder-context.js';
import { clientPacket, type ClientMessage } from '../../../helpers/dhcp-packets.js';
import { context, NOW, SERVER } from './responder-fixtures.js';
import { prng } from '../../../helpers/prng.js';


function indexOf(leases: readonly Lease[]): LeaseIndex & { fullReads: number } {
  const index = {
    fullReads: 0,
    all: () => {
      index.fullReads++;
      return leases;
    },
    byClient: (mac: string) => leases.find((l) => l.mac === mac && l.state !== 'declined'),
    byAddress: (address: string) => leases.filter((l) => l.address === address),
  };
  return index;
}

const MACS = Array.from({ length: 8 }, (_, i) => `52:54:00:00:00:0${i}`);
const ADDRESSES = [...Array.from({ length: 6 }, (_, i) => `10.20.0.${100 + i}`), '10.20.0.250', '10.30.0.100', '10.30.0.101', '10.99.0.1'];

test('respondIndexed equals respond over 4000 random cases', () => {
  for (let seed = 1; seed <= 4000; seed++) {
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const table = new Map<string, Lease>();
    const records = Math.floor(rnd() * 10);
    for (let i = 0; i < records; i++) {
      const l: Lease = { mac: pick(MACS), address: pick(ADDRESSES), state: pick(['offered', 'bound', 'bound', 'declined'] as const), expiresAtMs: NOW + (rnd() < 0.4 ? -1000 : 60_000) };
      table.set(leaseKey(l), l);
    }
    const leases = [...table.values()];
    const reservations: Reservation[] = rnd() < 0.3 ? [{ mac: pick(MACS), address: pick(ADDRESSES) }] : [];
    const mac = pick(MACS);
    const kind = pick(['discover', 'discover', 'selecting', 'init-reboot', 'renewing', 'release', 'decline', 'inform'] as const);
    const m: ClientMessage = { type: 'discover', mac, vendorClass: 'PXEClient:Arch:00007:UNDI:003016', archType: 7 };
    if (rnd() < 0.2) m.giaddr = '10.30.0.1';
    if (kind === 'discover' && rnd() < 0.5) m.requestedAddress = pick(ADDRESSES);
    if (kind === 'selecting') Object.assign(m, { type: 'request', serverId: rnd() < 0.8 ? SERVER : '10.20.0.2', requestedAddress: pick(ADDRESSES) });
    if (kind === 'init-reboot') Object.assign(m, { type: 'request', requestedAddress: pick(ADDRESSES) });
    if (kind === 'renewing') Object.assign(m, { type: 'request', ciaddr: pick(ADDRESSES) });
    if (kind === 'release') Object.assign(m, { type: 'release', ciaddr: pick(ADDRESSES) });
    if (kind === 'decline') Object.assign(m, { type: 'decline', requestedAddress: pick(ADDRESSES) });
    if (kind === 'inform') Object.assign(m, { type: 'inform', ciaddr: pick(ADDRESSES) });
    const request = clientPacket(m);
    const ctx = context({ reservations, unknownHosts: 'discover' });
    const { leases: _all, ...rest } = ctx;
    const expected = respond(request, { ...ctx, leases });
    const actual = respondIndexed(request, rest, indexOf(leases));
    const wire = (r: typeof expected): unknown => (r.kind === 'reply' ? { ...r, packet: encodeDhcpPacket(r.packet).toString('hex') } : r);
    assert.deepEqual(wire(actual), wire(expected), `seed ${seed}: ${kind} from ${mac} with ${JSON.stringify(leases)} reservations ${JSON.stringify(reservations)}`);
  }
});

test('a returning client is decided from its own records, without reading the whole table', () => {
  const own: Lease = { mac: '52:54:00:00:00:01', address: '10.20.0.150', state: 'bound', expiresAtMs: NOW + 60_000 };
  const others = Array.from({ length: 50 }, (_, i): Lease => ({ mac: `52:54:00:00:01:${i.toString(16).padStart(2, '0')}`, address: `10.20.0.${100 + i}`, state: 'bound', expiresAtMs: NOW + 60_000 }));
  const index = indexOf([own, ...others]);
  const ctx: Omit<ResponderContext, 'leases'> = (({ leases: _l, ...rest }) => rest)(context());
  const offer = respondIndexed(clientPacket({ type: 'discover', mac: own.mac, vendorClass: 'PXEClient' }), ctx, index);
  assert.equal(offer.kind === 'reply' ? offer.packet.yiaddr : offer.kind, '10.20.0.150');
  const ack = respondIndexed(clientPacket({ type: 'request', mac: own.mac, serverId: SERVER, requestedAddress: '10.20.0.150' }), ctx, index);
  assert.equal(ack.kind === 'reply' ? ack.messageType : ack.kind, 'ack');
  assert.equal(index.fullReads, 0);
  const fresh = respondIndexed(clientPacket({ type: 'discover', mac: '52:54:00:00:02:01' }), ctx, index);
  assert.equal(fresh.kind === 'reply' ? fresh.packet.yiaddr : fresh.kind, '10.20.0.151', 'a new client needs the full table (first free address)');
  assert.equal(index.fullReads, 1);
});
