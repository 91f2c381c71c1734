/** Host identity by MAC: one machine's boot stages, with their different DUIDs, resolve to one MAC. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveClientMac, type ClientIdentityInput } from '../../../../bootsvc/dhcp6/identity.js';
import { decodeOptions } from '../../../../bootsvc/dhcp6/options.js';
import { bytes, duids, h16, MAC, MAC_LINK_LOCAL, opt6 } from './fixtures.js';

const relayOptions = (hex: string): ReturnType<typeof decodeOptions> => { const b = bytes(hex); return decodeOptions(b, 0, b.length); };
const OTHER_MAC_HEX = '020000aa0001';

const table: { name: string; input: ClientIdentityInput; want: ReturnType<typeof resolveClientMac> }[] = [
  { name: 'firmware (OVMF): DUID-UUID in EFI byte order, link-local source', input: { clientId: bytes(duids.uuidEfi), sourceAddress: MAC_LINK_LOCAL }, want: { mac: MAC, source: 'link-local-eui64' } },
  { name: 'iPXE: DUID-UUID in network byte order, link-local source', input: { clientId: bytes(duids.uuidNet), sourceAddress: MAC_LINK_LOCAL }, want: { mac: MAC, source: 'link-local-eui64' } },
  { name: 'iPXE without an SMBIOS UUID: all-zero DUID-UUID', input: { clientId: bytes(duids.uuidZero), sourceAddress: MAC_LINK_LOCAL }, want: { mac: MAC, source: 'link-local-eui64' } },
  { name: 'ramdisk (udhcpc6): DUID-LL, link-local source', input: { clientId: bytes(duids.ll), sourceAddress: MAC_LINK_LOCAL }, want: { mac: MAC, source: 'link-local-eui64' } },
  { name: 'stable-privacy link-local source: the DUID-LL', input: { clientId: bytes(duids.ll), sourceAddress: 'fe80::1c3a:9f2b:6d4e:8a01' }, want: { mac: MAC, source: 'duid-ll' } },
  { name: 'stable-privacy link-local source: the DUID-LLT', input: { clientId: bytes(duids.llt), sourceAddress: 'fe80::1c3a:9f2b:6d4e:8a01' }, want: { mac: MAC, source: 'duid-llt' } },
  { name: 'relayed: option 79 wins over the peer address and the DUID', input: { clientId: bytes(duids.ll), sourceAddress: 'fe80::ff:fe00:1', nearestRelayOptions: relayOptions(opt6(79, h16(1) + OTHER_MAC_HEX)) }, want: { mac: '02:00:00:aa:00:01', source: 'relay-option-79' } },
  { name: 'relayed without option 79: the peer address', input: { clientId: bytes(duids.uuidNet), sourceAddress: MAC_LINK_LOCAL, nearestRelayOptions: relayOptions(opt6(18, '01')) }, want: { mac: MAC, source: 'link-local-eui64' } },
  { name: 'option 79 of another hardware type is not a MAC', input: { clientId: bytes(duids.uuidNet), sourceAddress: MAC_LINK_LOCAL, nearestRelayOptions: relayOptions(opt6(79, h16(32) + '00'.repeat(20))) }, want: { mac: MAC, source: 'link-local-eui64' } },
  { name: 'DUID-UUID from a global source address: unknown', input: { clientId: bytes(duids.uuidNet), sourceAddress: 'fd00:1::1234' }, want: undefined },
  { name: 'DUID-EN and a stable-privacy source: unknown', input: { clientId: bytes(duids.en), sourceAddress: 'fe80::1c3a:9f2b:6d4e:8a01' }, want: undefined },
];

for (const row of table) {
  test(row.name, () => {
    assert.deepEqual(resolveClientMac(row.input), row.want);
  });
}

test("the firmware's, iPXE's and the ramdisk's requests all resolve to the same MAC", () => {
  const macs = new Set([duids.uuidEfi, duids.uuidNet, duids.ll].map((d) => resolveClientMac({ clientId: bytes(d), sourceAddress: MAC_LINK_LOCAL })?.mac));
  assert.deepEqual([...macs], [MAC]);
});

test('the captured dhclient -6 and dhcrelay -6 requests resolve to their clients\' MACs', async () => {
  const { captured6 } = await import('./fixtures.js');
  const { decodeDhcp6Message } = await import('../../../../bootsvc/dhcp6/message.js');
  const { unwrap6 } = await import('../../../../bootsvc/dhcp6/request-handler.js');
  const direct = unwrap6(decodeDhcp6Message(bytes(captured6.capturedDhclientSolicit)), 'fe80::5054:ff:fe64:1%eth0');
  assert.deepEqual([direct?.mac, direct?.macSource], ['52:54:00:64:00:01', 'link-local-eui64']);
  const relayed = unwrap6(decodeDhcp6Message(bytes(captured6.capturedDhcrelayRequest)), 'fe80::ccb3:a7ff:fea8:d7b5%eth0');
  assert.deepEqual([relayed?.mac, relayed?.macSource, relayed?.clientAddress], ['52:54:00:64:00:02', 'link-local-eui64', 'fe80::5054:ff:fe64:2']);
});
