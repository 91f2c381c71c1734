/** The server's pure per-datagram steps: unwrapping, the client's link, Relay-Repl wrapping, the boot query and events. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeDhcp6Message, encodeDhcp6Message, type Dhcp6ClientMessage } from '../../../../bootsvc/dhcp6/message.js';
import { Dhcp6Option, firstOption } from '../../../../bootsvc/dhcp6/options.js';
import { link6 } from '../../../../bootsvc/dhcp6/pool.js';
import { bootQuery6, events6, linkOfRequest, unwrap6, wrapReply } from '../../../../bootsvc/dhcp6/request-handler.js';
import { bytes, MAC, MAC_LINK_LOCAL, relayedSolicit, relayForw, requests6 } from './fixtures.js';

const LOCAL = link6('fd00:1::/64', 'fd00:1::100', 'fd00:1::1ff');
const REMOTE = link6('fd00:2::/64', 'fd00:2::100', 'fd00:2::1ff');
const reply: Dhcp6ClientMessage = { kind: 'client', type: 7, transactionId: 0x4d5e6f, options: [] };

test('a direct request: the client is its link-local source, on the server\'s own link', () => {
  const u = unwrap6(decodeDhcp6Message(bytes(requests6.ipxeSolicit)), `${MAC_LINK_LOCAL}%eth0`);
  assert.ok(u !== undefined);
  assert.equal(u.mac, MAC);
  assert.equal(u.clientAddress, MAC_LINK_LOCAL);
  assert.equal(linkOfRequest(u, [REMOTE, LOCAL], 'fd00:1::1'), LOCAL);
  assert.deepEqual(bootQuery6(u.client, MAC), { mac: MAC, arch: 'x86_64', archType: 7, firmware: 'uefi', transport: 'tftp', isIpxe: true, userClass: 'iPXE' });
});

test('a relayed request: the relay link-address picks the link; "::" defers to the next relay out', () => {
  const u = unwrap6(decodeDhcp6Message(bytes(relayedSolicit)), 'fd00:1::2');
  assert.equal(u === undefined ? undefined : linkOfRequest(u, [LOCAL, REMOTE], 'fd00:1::1'), REMOTE);
  const unspecified = unwrap6(decodeDhcp6Message(bytes(relayForw(1, 'fd00:1::2', 'fd00:9::1', relayForw(0, '::', MAC_LINK_LOCAL, requests6.udhcpc6Solicit)))), 'fd00:1::2');
  assert.equal(unspecified === undefined ? undefined : linkOfRequest(unspecified, [LOCAL, REMOTE], 'fd00:1::1'), LOCAL);
  const elsewhere = unwrap6(decodeDhcp6Message(bytes(relayForw(0, 'fd00:7::1', MAC_LINK_LOCAL, requests6.udhcpc6Solicit))), 'fd00:1::2');
  assert.equal(elsewhere === undefined ? undefined : linkOfRequest(elsewhere, [LOCAL, REMOTE], 'fd00:1::1'), undefined);
});

test('the reply goes back in one Relay-Repl per relay with Interface-ID echoed and option 79 not', () => {
  const u = unwrap6(decodeDhcp6Message(bytes(relayedSolicit)), 'fd00:1::2');
  assert.ok(u !== undefined);
  const wrapped = decodeDhcp6Message(encodeDhcp6Message(wrapReply(reply, u.relays)));
  assert.ok(wrapped.kind === 'relay');
  assert.equal(wrapped.type, 13);
  assert.equal(wrapped.linkAddress, 'fd00:2::1');
  assert.equal(wrapped.peerAddress, MAC_LINK_LOCAL);
  assert.equal(Buffer.from(firstOption(wrapped.options, Dhcp6Option.interfaceId) ?? []).toString(), 'veth-r0');
  assert.equal(firstOption(wrapped.options, Dhcp6Option.clientLinkLayerAddress), undefined);
  assert.deepEqual(wrapped.message, reply);
});

test('Relay-Repl and server messages are not requests', () => {
  assert.equal(unwrap6(decodeDhcp6Message(bytes('0d00' + '00'.repeat(32) + '0009000407000001')), 'fe80::1'), undefined);
});

test('events name the DHCPv6 messages and carry the relay link as giaddr', () => {
  const u = unwrap6(decodeDhcp6Message(bytes(relayedSolicit)), 'fd00:1::2');
  assert.ok(u !== undefined);
  const events = events6(u, { kind: 'ignore', reason: 'unknown-host', leaseChanges: [] }, 1000);
  assert.deepEqual(events.map((e) => [e.message, e.detail, e.giaddr, e.mac]), [
    ['discover', 'dhcpv6 solicit (MAC by relay-option-79)', 'fd00:2::1', MAC],
    ['ignored', 'dhcpv6 solicit: unknown-host', 'fd00:2::1', MAC],
  ]);
});

