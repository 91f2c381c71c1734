import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeEncapsulatedOptions,
  decodeIpxeOptions,
  decodePxeVendorOptions,
  encodePxeVendorOptions,
  getIpxeOptions,
  getPxeVendorOptions,
  IpxeFeature,
  PxeDiscoveryControl,
  type PxeVendorOptions,
} from '../../../../bootsvc/dhcp/encapsulated.js';
import {
  decodeRelayAgentInformation,
  decodeUserClasses,
  getClientArchitectures,
  getClientIdentifier,
  getClientMachineId,
  getClientNetworkInterface,
  getLeaseSeconds,
  getMaxMessageSize,
  getMessageType,
  getParameterRequestList,
  getRequestedAddress,
  getServerIdentifier,
  getTftpServerName,
  getUserClasses,
  getVendorClass,
} from '../../../../bootsvc/dhcp/option-values.js';
import { decodeDhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import { ascii, dhclientRequest, hex, ipxeBiosDiscover, ovmfPxeDiscover, relayedDiscover, RELAY_INFO_HEX, udhcpcRequest } from './fixtures.js';
import { toHex } from './golden.js';

test('accessors read the OVMF PXE DISCOVER', () => {
  const { options } = decodeDhcpPacket(ovmfPxeDiscover);
  assert.equal(getMessageType(options), 1);
  assert.equal(getMaxMessageSize(options), 1472);
  assert.deepEqual(getClientArchitectures(options), [7]);
  assert.deepEqual(getClientNetworkInterface(options), { type: 1, major: 3, minor: 16 });
  assert.equal(getClientMachineId(options), '8a1e8d2c-7b3f-4e0a-9d3c-5b6a7f8e9d0c');
  assert.equal(getVendorClass(options), 'PXEClient:Arch:00007:UNDI:003016');
  assert.ok(getParameterRequestList(options).includes(67));
  assert.equal(getParameterRequestList(options).length, 35);
});

test('accessors read the dhclient and udhcpc REQUESTs', () => {
  const d = decodeDhcpPacket(dhclientRequest).options;
  assert.equal(getServerIdentifier(d), '10.20.0.1');
  assert.equal(getRequestedAddress(d), '10.20.0.50');
  const u = decodeDhcpPacket(udhcpcRequest).options;
  assert.equal(getRequestedAddress(u), '10.20.0.51');
  assert.equal(getClientIdentifier(u), '0102000000bb01');
  assert.equal(getMaxMessageSize(u), 576);
});

test('absent options read as undefined or empty', () => {
  const { options } = decodeDhcpPacket(dhclientRequest);
  assert.equal(getLeaseSeconds(options), undefined);
  assert.equal(getTftpServerName(options), undefined);
  assert.deepEqual(getUserClasses(options), []);
  assert.deepEqual(getClientArchitectures(options), []);
  assert.equal(getClientMachineId(options), undefined);
});

const userClasses: Record<string, { value: string; expected: string[] }> = {
  'iPXE bare string': { value: ascii('iPXE'), expected: ['iPXE'] },
  'RFC 3004 single class': { value: '04' + ascii('iPXE'), expected: ['iPXE'] },
  'RFC 3004 two classes': { value: '04' + ascii('iPXE') + '03' + ascii('abc'), expected: ['iPXE', 'abc'] },
  'zero-length class is not RFC 3004 framing': { value: '00' + ascii('x'), expected: ['\u0000x'] },
  'framing that overruns reads as one string': { value: '09' + ascii('abc'), expected: ['\tabc'] },
  'empty value': { value: '', expected: [] },
};
for (const [name, c] of Object.entries(userClasses)) {
  test(`user class (77): ${name}`, () => {
    assert.deepEqual(decodeUserClasses(hex(c.value)), c.expected);
  });
}

test('relay agent information (82) sub-options decode for the flight recorder', () => {
  const raw = decodeDhcpPacket(relayedDiscover).options.get(82);
  assert.equal(toHex(raw ?? new Uint8Array()), RELAY_INFO_HEX);
  const subs = decodeRelayAgentInformation(raw ?? new Uint8Array());
  assert.deepEqual(subs?.map((s) => [s.code, Buffer.from(s.value).toString('latin1')]), [
    [1, 'eth0/1'],
    [2, '\u0002\u0000\u0000\u0000\u0000\u00f1'],
  ]);
  assert.equal(decodeRelayAgentInformation(hex('0105aa')), undefined);
});

test('option 97 of the wrong type or size is not a UUID', () => {
  assert.equal(getClientMachineId(new Map([[97, hex('01' + '00'.repeat(16))]])), undefined);
  assert.equal(getClientMachineId(new Map([[97, hex('00' + '00'.repeat(15))]])), undefined);
});

test('option 93 lists several architectures in preference order', () => {
  assert.deepEqual(getClientArchitectures(new Map([[93, hex('000700060000')]])), [7, 6, 0]);
});

const pxeOptions: Record<string, PxeVendorOptions> = {
  'discovery control only': { discoveryControl: PxeDiscoveryControl.skipWhenFilePresent },
  'boot servers, menu, prompt, item': {
    discoveryControl: PxeDiscoveryControl.noBroadcast | PxeDiscoveryControl.onlyListedServers,
    bootServers: [{ type: 0x8000, addresses: ['10.20.0.1', '10.20.0.2'] }],
    bootMenu: [{ type: 0x8000, description: 'rackside' }],
    menuPrompt: { timeoutSeconds: 0, prompt: 'PXE' },
    bootItem: { type: 0x8000, layer: 0 },
  },
};
for (const [name, o] of Object.entries(pxeOptions)) {
  test(`PXE vendor options (43) round trip: ${name}`, () => {
    const bytes = encodePxeVendorOptions(o);
    assert.equal(bytes[bytes.length - 1], 255);
    assert.deepEqual(decodePxeVendorOptions(bytes), o);
  });
}

test('the PXE boot item a client asks port 4011 for reads through getPxeVendorOptions', () => {
  assert.deepEqual(getPxeVendorOptions(new Map([[43, hex('470480000001ff')]])), { bootItem: { type: 0x8000, layer: 1 } });
  assert.equal(getPxeVendorOptions(new Map()), undefined);
});

test('PXE discovery control "use the file name" is 06 01 08 ff on the wire', () => {
  assert.equal(toHex(encodePxeVendorOptions({ discoveryControl: 8 })), '060108ff');
});

test('malformed encapsulated options read as undefined', () => {
  assert.equal(decodeEncapsulatedOptions(hex('0605')), undefined);
  assert.equal(decodePxeVendorOptions(hex('0805800002')), undefined);
  assert.equal(decodeIpxeOptions(hex('13')), undefined);
});

test('iPXE options (175): features, version and bus id', () => {
  const o = getIpxeOptions(decodeDhcpPacket(ipxeBiosDiscover).options);
  assert.ok(o !== undefined);
  assert.equal(o.version, '1.21.1');
  assert.deepEqual(o.busId, { type: 1, vendor: 0x8086, device: 0x100e });
  assert.ok(o.features.includes(IpxeFeature.http));
  assert.ok(o.features.includes(IpxeFeature.tftp));
  assert.equal(o.features.includes(IpxeFeature.efi), false);
});
