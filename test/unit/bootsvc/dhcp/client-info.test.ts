import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyClient, describeArchType, isNetbootClient, type ClientInfo } from '../../../../bootsvc/dhcp/client-info.js';
import { decodeDhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import { ascii, header, hex, opt, requestFixtures } from './fixtures.js';

type Expected = Pick<ClientInfo, 'mac' | 'isPxeClient' | 'isHttpClient' | 'isIpxe' | 'arch' | 'firmware' | 'transport'> & { archType?: number };

const cases: Record<string, Expected> = {
  ovmfPxeDiscover: { mac: '52:54:00:12:34:56', isPxeClient: true, isHttpClient: false, isIpxe: false, arch: 'x86_64', firmware: 'uefi', transport: 'tftp', archType: 7 },
  aavmfPxeDiscover: { mac: '52:54:00:aa:0b:0b', isPxeClient: true, isHttpClient: false, isIpxe: false, arch: 'arm64', firmware: 'uefi', transport: 'tftp', archType: 11 },
  ovmfHttpDiscover: { mac: '52:54:00:12:34:57', isPxeClient: false, isHttpClient: true, isIpxe: false, arch: 'x86_64', firmware: 'uefi', transport: 'http', archType: 16 },
  ipxeBiosDiscover: { mac: '52:54:00:ab:cd:ef', isPxeClient: true, isHttpClient: false, isIpxe: true, arch: 'x86', firmware: 'bios', transport: 'tftp', archType: 0 },
  biosPxeDiscoverNo93: { mac: '52:54:00:0c:0c:0c', isPxeClient: true, isHttpClient: false, isIpxe: false, arch: 'x86', firmware: 'bios', transport: 'tftp', archType: 0 },
  ipxeEfiDiscover: { mac: '52:54:00:12:34:56', isPxeClient: true, isHttpClient: false, isIpxe: true, arch: 'x86_64', firmware: 'uefi', transport: 'tftp', archType: 7 },
  dhclientRequest: { mac: '02:00:00:00:d1:c1', isPxeClient: false, isHttpClient: false, isIpxe: false, arch: 'unknown', firmware: 'unknown', transport: 'tftp' },
  udhcpcRequest: { mac: '02:00:00:00:bb:01', isPxeClient: false, isHttpClient: false, isIpxe: false, arch: 'unknown', firmware: 'unknown', transport: 'tftp' },
  relayedDiscover: { mac: '52:54:00:30:30:30', isPxeClient: true, isHttpClient: false, isIpxe: false, arch: 'x86_64', firmware: 'uefi', transport: 'tftp', archType: 7 },
};
for (const [name, expected] of Object.entries(cases)) {
  test(`classify ${name}`, () => {
    const bytes = requestFixtures[name];
    assert.ok(bytes !== undefined);
    const c = classifyClient(decodeDhcpPacket(bytes));
    const picked: Expected = { mac: c.mac, isPxeClient: c.isPxeClient, isHttpClient: c.isHttpClient, isIpxe: c.isIpxe, arch: c.arch, firmware: c.firmware, transport: c.transport };
    if (c.archType !== undefined) picked.archType = c.archType;
    assert.deepEqual(picked, expected);
  });
}

const archTypes: Record<number, ReturnType<typeof describeArchType>> = {
  0: { arch: 'x86', firmware: 'bios', http: false },
  6: { arch: 'x86', firmware: 'uefi', http: false },
  7: { arch: 'x86_64', firmware: 'uefi', http: false },
  9: { arch: 'x86_64', firmware: 'uefi', http: false },
  10: { arch: 'arm32', firmware: 'uefi', http: false },
  11: { arch: 'arm64', firmware: 'uefi', http: false },
  15: { arch: 'x86', firmware: 'uefi', http: true },
  16: { arch: 'x86_64', firmware: 'uefi', http: true },
  18: { arch: 'arm32', firmware: 'uefi', http: true },
  19: { arch: 'arm64', firmware: 'uefi', http: true },
  27: { arch: 'riscv64', firmware: 'uefi', http: false },
  999: { arch: 'unknown', firmware: 'unknown', http: false },
};
for (const [code, expected] of Object.entries(archTypes)) {
  test(`IANA architecture type ${code}`, () => {
    assert.deepEqual(describeArchType(Number(code)), expected);
  });
}

test('option 93 wins over the Arch field of option 60', () => {
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + opt(53, '01') + opt(93, '000b') + opt(60, ascii('PXEClient:Arch:00000:UNDI:002001')) + 'ff'));
  assert.equal(classifyClient(p).arch, 'arm64');
});

test('HTTPClient with only option 60 is an HTTP boot client', () => {
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + opt(53, '01') + opt(60, ascii('HTTPClient:Arch:00019:UNDI:003000')) + 'ff'));
  const c = classifyClient(p);
  assert.deepEqual([c.isHttpClient, c.arch, c.transport, isNetbootClient(c)], [true, 'arm64', 'http', true]);
});

test('option 175 alone marks iPXE', () => {
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + opt(53, '01') + opt(175, '130101') + 'ff'));
  assert.equal(classifyClient(p).isIpxe, true);
});
