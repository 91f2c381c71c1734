/** The DHCPv6 responder: message exchanges, boot options by client, one address per host. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Lease6Table } from '../../../../bootsvc/dhcp6/lease-table.js';
import { decodeDhcp6Message, type Dhcp6ClientMessage } from '../../../../bootsvc/dhcp6/message.js';
import { Dhcp6MessageType as T, Dhcp6Option, Dhcp6Status, firstOption } from '../../../../bootsvc/dhcp6/options.js';
import { respond6, type Responder6Result } from '../../../../bootsvc/dhcp6/responder.js';
import { decodeIaNa, decodeStatusCode, getBootFileUrl, getVendorClass, iaAddresses } from '../../../../bootsvc/dhcp6/values.js';
import { bytes, duids, h16, h32, ip6hex, msg6, opt6, requests6 } from './fixtures.js';
import { link6 } from '../../../../bootsvc/dhcp6/pool.js';
import { context6, decisions6, memoryLeaseStore, SERVER_DUID, settings6 } from './responder-fixtures.js';

const serverId = opt6(2, Buffer.from(SERVER_DUID).toString('hex'));
const client = (hex: string): Dhcp6ClientMessage => {
  const m = decodeDhcp6Message(bytes(hex));
  assert.equal(m.kind, 'client');
  return m;
};
const replyOf = (r: Responder6Result): Dhcp6ClientMessage => {
  assert.equal(r.kind, 'reply', r.kind === 'ignore' ? r.reason : '');
  return (r).message;
};
const addressesOf = (m: Dhcp6ClientMessage): string[] => m.options.filter((o) => o.code === Dhcp6Option.iaNa).flatMap((o) => iaAddresses(decodeIaNa(o.value))).filter((a) => a.validLifetime > 0).map((a) => a.address);
const iaNa = (iaid: number, address?: string): string => opt6(3, h32(iaid) + h32(0) + h32(0) + (address === undefined ? '' : opt6(5, ip6hex(address) + h32(0) + h32(0))));

test('Solicit gets an Advertise with an address of the range, preference 255 and no Rapid Commit', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const r = respond6(client(requests6.dhclientSolicit), context6(table));
  const m = replyOf(r);
  assert.equal(m.type, T.advertise);
  assert.equal(m.transactionId, 0x5e6f70);
  assert.deepEqual(firstOption(m.options, Dhcp6Option.serverId), SERVER_DUID);
  assert.deepEqual(firstOption(m.options, Dhcp6Option.preference), Uint8Array.of(255));
  assert.equal(firstOption(m.options, Dhcp6Option.rapidCommit), undefined);
  const [address] = addressesOf(m);
  assert.ok(address?.startsWith('fd00:1::1'), address);
  assert.deepEqual(r.leaseChanges.map((c) => c.op === 'put' && c.lease.state), ['offered']);
});

test('Solicit with Rapid Commit gets a binding Reply carrying Rapid Commit; without the setting an Advertise', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const rapid = respond6(client(requests6.udhcpc6Solicit), context6(table));
  assert.equal(replyOf(rapid).type, T.reply);
  assert.ok(firstOption(replyOf(rapid).options, Dhcp6Option.rapidCommit) !== undefined);
  assert.deepEqual(rapid.leaseChanges.map((c) => c.op === 'put' && c.lease.state), ['bound']);
  const off = respond6(client(requests6.udhcpc6Solicit), context6(table, { settings: settings6({ rapidCommit: false }) }));
  assert.equal(replyOf(off).type, T.advertise);
});

test('boot options: PXE firmware gets tftp://[server]/ipxe.efi and no vendor class; iPXE (user class first) the script; HTTP boot the URL and HTTPClient echoed', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const pxe = replyOf(respond6(client(requests6.ovmfPxeSolicit), context6(table)));
  assert.equal(getBootFileUrl(pxe.options), 'tftp://[fd00:1::1]/ipxe.efi');
  assert.equal(getVendorClass(pxe.options), undefined);
  const ipxe = replyOf(respond6(client(requests6.ipxeSolicit), context6(table)));
  assert.equal(getBootFileUrl(ipxe.options), 'http://[fd00:1::1]:8081/boot/52:54:00:12:34:56.ipxe');
  assert.equal(getVendorClass(ipxe.options), undefined);
  const http = replyOf(respond6(client(requests6.ovmfHttpSolicit), context6(table, { bootDecision: decisions6.http })));
  assert.equal(getBootFileUrl(http.options), 'http://[fd00:1::1]:8081/boot/ipxe.efi');
  assert.deepEqual(getVendorClass(http.options), { enterprise: 343, data: ['HTTPClient'] });
});

test('a host with nothing to boot, or a client that does not network-boot, gets an address and no boot URL', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const none = replyOf(respond6(client(requests6.ovmfPxeSolicit), context6(table, { bootDecision: decisions6.none })));
  assert.equal(getBootFileUrl(none.options), undefined);
  assert.equal(addressesOf(none).length, 1);
  const plain = replyOf(respond6(client(requests6.dhclientSolicit), context6(table)));
  assert.equal(getBootFileUrl(plain.options), undefined);
});

test('unknown hosts, clients without a MAC, Requests for another server and Solicits with a server id are ignored', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const reason = (r: Responder6Result): string => (r.kind === 'ignore' ? r.reason : 'reply');
  assert.equal(reason(respond6(client(requests6.dhclientSolicit), context6(table, { bootDecision: undefined }))), 'unknown-host');
  assert.equal(reason(respond6(client(requests6.dhclientSolicit), context6(table, { mac: undefined }))), 'no-mac');
  assert.equal(reason(respond6(client(msg6(3, 1, opt6(1, duids.ll), opt6(2, h16(3) + h16(1) + '0200000000ff'), iaNa(1))), context6(table))), 'not-for-us');
  assert.equal(reason(respond6(client(requests6.dhclientRequest), context6(table))), 'reply');
  assert.equal(reason(respond6(client(msg6(1, 1, opt6(1, duids.ll), serverId)), context6(table))), 'invalid');
  assert.equal(reason(respond6(client(msg6(3, 1, serverId)), context6(table))), 'invalid');
  assert.equal(reason(respond6(client(msg6(2, 1, opt6(1, duids.ll))), context6(table))), 'not-a-request');
});

test("one host's boot stages (firmware, iPXE, ramdisk: three DUIDs and IAIDs) get one address", async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const seen = new Set<string>();
  for (const hex of [requests6.ovmfPxeSolicit, requests6.ipxeSolicit, requests6.udhcpc6Solicit]) {
    const r = respond6(client(hex), context6(table));
    await table.apply(r.leaseChanges);
    for (const a of addressesOf(replyOf(r))) seen.add(a);
  }
  assert.equal(seen.size, 1);
  assert.equal(table.size(), 1);
});

test('200 boots of 20 hosts (three stages each, new DUIDs and IAIDs every time) never exhaust a 64-address range', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const byHost = new Map<string, Set<string>>();
  let now = 1_000_000;
  for (let boot = 0; boot < 200; boot++) {
    const mac = `52:54:00:00:00:${(boot % 20).toString(16).padStart(2, '0')}`;
    for (let stage = 0; stage < 3; stage++) {
      const duid = h16(4) + h32(boot) + h32(stage) + '00'.repeat(8);
      const solicit = msg6(1, boot * 3 + stage, opt6(1, duid), iaNa(boot * 7 + stage), opt6(14, ''));
      const r = respond6(client(solicit), context6(table, { mac, nowMs: now }));
      await table.apply(r.leaseChanges);
      const addresses = addressesOf(replyOf(r));
      assert.equal(addresses.length, 1, `boot ${boot} stage ${stage} of ${mac} got no address`);
      const set = byHost.get(mac) ?? new Set<string>();
      for (const a of addresses) set.add(a);
      byHost.set(mac, set);
      now += 1000;
    }
  }
  assert.equal(table.size(), 20);
  assert.deepEqual([...byHost.values()].map((s) => s.size), new Array<number>(20).fill(1));
  assert.equal(new Set([...byHost.values()].flatMap((s) => [...s])).size, 20);
});

test('a full range answers NoAddrsAvail in the IA', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const link = link6('fd00:1::/64', 'fd00:1::100', 'fd00:1::100');
  await table.apply([{ op: 'put', lease: { mac: '02:00:00:00:00:99', address: 'fd00:1::100', state: 'bound', expiresAtMs: 9e12 } }]);
  const m = replyOf(respond6(client(requests6.dhclientSolicit), context6(table, { link })));
  const ia = decodeIaNa(firstOption(m.options, Dhcp6Option.iaNa) ?? new Uint8Array());
  assert.equal(decodeStatusCode(firstOption(ia.options, Dhcp6Option.statusCode) ?? new Uint8Array()).code, Dhcp6Status.noAddrsAvail);
});

test('Request and Renew bind the host address; a stale address the client names is returned with zero lifetimes', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const adv = respond6(client(requests6.dhclientSolicit), context6(table));
  await table.apply(adv.leaseChanges);
  const address = addressesOf(replyOf(adv))[0] ?? '';
  const req = respond6(client(msg6(3, 2, opt6(1, duids.llt), serverId, iaNa(0x123456, address))), context6(table));
  assert.deepEqual(addressesOf(replyOf(req)), [address]);
  assert.deepEqual(req.leaseChanges.map((c) => c.op === 'put' && c.lease.state), ['bound']);
  await table.apply(req.leaseChanges);
  const renew = replyOf(respond6(client(msg6(5, 3, opt6(1, duids.llt), serverId, iaNa(0x123456, 'fd00:1::1ff'))), context6(table)));
  const all = iaAddresses(decodeIaNa(firstOption(renew.options, Dhcp6Option.iaNa) ?? new Uint8Array()));
  assert.deepEqual(all.map((a) => [a.address, a.validLifetime]), [[address, 3600], ['fd00:1::1ff', 0]]);
});

test('Confirm: Success on link, NotOnLink off it, silence without addresses', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const status = (hex: string): number | undefined => {
    const r = respond6(client(hex), context6(table));
    if (r.kind === 'ignore') return undefined;
    return decodeStatusCode(firstOption(r.message.options, Dhcp6Option.statusCode) ?? new Uint8Array()).code;
  };
  assert.equal(status(msg6(4, 1, opt6(1, duids.ll), iaNa(1, 'fd00:1::abc'))), Dhcp6Status.success);
  assert.equal(status(msg6(4, 1, opt6(1, duids.ll), iaNa(1, 'fd00:9::abc'))), Dhcp6Status.notOnLink);
  assert.equal(status(msg6(4, 1, opt6(1, duids.ll), iaNa(1))), undefined);
});

test('Release frees the binding; Decline quarantines the address and the next Solicit gets another', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const first = respond6(client(requests6.udhcpc6Solicit), context6(table));
  await table.apply(first.leaseChanges);
  const address = addressesOf(replyOf(first))[0] ?? '';
  const decline = respond6(client(msg6(9, 5, opt6(1, duids.ll), serverId, iaNa(1, address))), context6(table));
  assert.equal(replyOf(decline).type, T.reply);
  await table.apply(decline.leaseChanges);
  assert.equal(table.declined(address)?.state, 'declined');
  const again = respond6(client(requests6.udhcpc6Solicit), context6(table));
  await table.apply(again.leaseChanges);
  const next = addressesOf(replyOf(again))[0] ?? '';
  assert.notEqual(next, address);
  const release = respond6(client(msg6(8, 6, opt6(1, duids.ll), serverId, iaNa(1, next))), context6(table));
  await table.apply(release.leaseChanges);
  assert.equal(table.byMac('52:54:00:12:34:56'), undefined);
});

test('Information-Request gets options and no address; with an IA it is ignored', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const m = replyOf(respond6(client(requests6.informationRequest), context6(table, { settings: settings6({ dns: ['fd00:1::53'] }) })));
  assert.equal(m.type, T.reply);
  assert.equal(addressesOf(m).length, 0);
  assert.ok(firstOption(m.options, Dhcp6Option.dnsServers) !== undefined);
  assert.equal(respond6(client(msg6(11, 1, opt6(1, duids.ll), iaNa(1))), context6(table)).kind, 'ignore');
});

test('the lease table persists through its store and reloads', async () => {
  const store = memoryLeaseStore();
  const table = await Lease6Table.load(store);
  const r = respond6(client(requests6.udhcpc6Solicit), context6(table));
  await table.apply(r.leaseChanges);
  const reloaded = await Lease6Table.load(store);
  assert.deepEqual(reloaded.byMac('52:54:00:12:34:56')?.address, addressesOf(replyOf(r))[0]);
  let invalid = 0;
  await Lease6Table.load(memoryLeaseStore([{ mac: 'x', address: '10.0.0.1', state: 'bound', expiresAtMs: 1 }]), { onInvalid: () => { invalid++; } });
  assert.equal(invalid, 1);
});

test('a request from a link without a range is ignored, except Release, Decline and Information-Request', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const noLink = context6(table, { link: undefined });
  const r = respond6(client(requests6.dhclientSolicit), noLink);
  assert.equal(r.kind === 'ignore' && r.reason, 'no-range-for-link');
  assert.equal(respond6(client(requests6.informationRequest), noLink).kind, 'reply');
  assert.equal(respond6(client(msg6(8, 6, opt6(1, duids.ll), serverId, iaNa(1, 'fd00:1::100'))), noLink).kind, 'reply');
});

test('addresses come from the link the request came from', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const remote = link6('fd00:2::/64', 'fd00:2::100', 'fd00:2::1ff');
  const m = replyOf(respond6(client(requests6.dhclientSolicit), context6(table, { link: remote })));
  assert.match(addressesOf(m)[0] ?? '', /^fd00:2::1[0-9a-f]{2}$/);
});

test('a client unicasting to the server: Request gets UseMulticast, Solicit is discarded (RFC 8415 §16)', async () => {
  const table = await Lease6Table.load(memoryLeaseStore());
  const request = respond6(client(msg6(3, 2, opt6(1, duids.llt), serverId, iaNa(1, 'fd00:1::100'))), context6(table, { unicast: true }));
  const m = replyOf(request);
  assert.equal(decodeStatusCode(firstOption(m.options, Dhcp6Option.statusCode) ?? new Uint8Array()).code, Dhcp6Status.useMulticast);
  assert.deepEqual(request.leaseChanges, []);
  const solicit = respond6(client(requests6.dhclientSolicit), context6(table, { unicast: true }));
  assert.equal(solicit.kind === 'ignore' && solicit.reason, 'unicast');
});
