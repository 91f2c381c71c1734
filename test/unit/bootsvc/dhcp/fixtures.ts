/**
 * Byte fixtures of real-world DHCP requests, written as literal hex (independent of the codec
 * under test) after what each client sends: EDK2/OVMF's UefiPxeBcDxe and HttpBootDxe, AAVMF
 * on arm64, iPXE (src/net/udp/dhcp.c: 57, 93, 94, 60, 55, 77 `iPXE`, 175 features, 61, 97),
 * ISC dhclient 4.4 and busybox udhcpc REQUESTs, and a relayed DISCOVER carrying option 82.
 */

/** Hex string (spaces and `|` ignored) → bytes. */
export function hex(s: string): Uint8Array {
  const clean = s.replace(/[\s|]/g, '');
  if (clean.length % 2 !== 0 || /[^0-9a-fA-F]/.test(clean)) throw new Error(`bad hex fixture: ${s}`);
  return Uint8Array.from(clean.match(/../g) ?? [], (b) => parseInt(b, 16));
}

/** ASCII text → hex. */
export function ascii(s: string): string {
  return Buffer.from(s, 'latin1').toString('hex');
}

/** An option TLV in hex: code, length, value. */
export function opt(code: number, valueHex: string): string {
  const value = valueHex.replace(/[\s|]/g, '');
  return code.toString(16).padStart(2, '0') + (value.length / 2).toString(16).padStart(2, '0') + value;
}

interface HeaderFields {
  op?: string;
  hops?: string;
  xid: string;
  secs?: string;
  flags?: string;
  ciaddr?: string;
  yiaddr?: string;
  siaddr?: string;
  giaddr?: string;
  mac: string;
  sname?: string;
  file?: string;
}

/** The 236-byte BOOTP header plus the magic cookie, in hex. */
export function header(f: HeaderFields): string {
  const field = (h: string | undefined, bytes: number): string => (h ?? '').padEnd(bytes * 2, '0');
  return [
    f.op ?? '01',
    '01',
    '06',
    f.hops ?? '00',
    f.xid,
    f.secs ?? '0000',
    f.flags ?? '0000',
    f.ciaddr ?? '00000000',
    f.yiaddr ?? '00000000',
    f.siaddr ?? '00000000',
    f.giaddr ?? '00000000',
    field(f.mac, 16),
    field(f.sname, 64),
    field(f.file, 128),
    '63825363',
  ].join('');
}

/** The SMBIOS UUID QEMU guests report, as option 97 carries it (type 0 + 16 bytes). */
export const GUID_HEX = '00' + '8a1e8d2c7b3f4e0a9d3c5b6a7f8e9d0c';

/** OVMF's PXE parameter request list (EDK2 PxeBcBuildDhcp4Options): 35 codes. */
const EDK2_PRL = '0102030405060c0d0f111216171c28292a2b3233363a3b3c424361' + '8081828384858687';

/** OVMF (EDK2 UefiPxeBcDxe) PXE DHCPDISCOVER on x64, MAC 52:54:00:12:34:56, BROADCAST flag set. */
export const ovmfPxeDiscover = hex(
  header({ xid: 'c1a5d00d', secs: '0004', flags: '8000', mac: '525400123456' }) +
    opt(53, '01') +
    opt(57, '05c0') +
    opt(55, EDK2_PRL) +
    opt(97, GUID_HEX) +
    opt(94, '010310') +
    opt(93, '0007') +
    opt(60, ascii('PXEClient:Arch:00007:UNDI:003016')) +
    'ff',
);

/** AAVMF (EDK2 on arm64) PXE DHCPDISCOVER: client arch 11. */
export const aavmfPxeDiscover = hex(
  header({ xid: '0badf00d', flags: '8000', mac: '525400aa0b0b' }) +
    opt(53, '01') +
    opt(57, '05c0') +
    opt(55, EDK2_PRL) +
    opt(97, GUID_HEX) +
    opt(94, '010310') +
    opt(93, '000b') +
    opt(60, ascii('PXEClient:Arch:00011:UNDI:003016')) +
    'ff',
);

/** OVMF UEFI HTTP boot (EDK2 HttpBootDxe) DHCPDISCOVER: vendor class HTTPClient, arch 16. */
export const ovmfHttpDiscover = hex(
  header({ xid: '5eed0016', flags: '8000', mac: '525400123457' }) +
    opt(53, '01') +
    opt(57, '05c0') +
    opt(55, '0103060c0f1c2b3c4361') +
    opt(97, GUID_HEX) +
    opt(94, '010310') +
    opt(93, '0010') +
    opt(60, ascii('HTTPClient:Arch:00016:UNDI:003001')) +
    'ff',
);

/** iPXE's feature list in option 175: bus id (PCI 8086:100e), version 1.21.1, then feature flags. */
const IPXE_175 = 'b105018086100e' + 'eb03011501' + ['13', '14', '15', '17', '18', '19', '21', '22', '23', '27'].map((f) => `${f}0101`).join('');

/** iPXE (SeaBIOS NIC ROM, BIOS) DHCPDISCOVER: user class `iPXE` as a bare string, option 175. */
export const ipxeBiosDiscover = hex(
  header({ xid: '00abcdef', mac: '525400abcdef' }) +
    opt(53, '01') +
    opt(57, '05c0') +
    opt(93, '0000') +
    opt(94, '010201') +
    opt(60, ascii('PXEClient:Arch:00000:UNDI:002001')) +
    opt(77, ascii('iPXE')) +
    opt(55, '0103060c0f111a2b3c4243778081828384858687afcb') +
    opt(175, IPXE_175) +
    opt(61, '01525400abcdef') +
    opt(97, GUID_HEX) +
    'ff',
);

/** SeaBIOS's own PXE ROM style DISCOVER without option 93: arch only in option 60. */
export const biosPxeDiscoverNo93 = hex(
  header({ xid: '1234abcd', flags: '8000', mac: '5254000c0c0c' }) +
    opt(53, '01') +
    opt(57, '04ec') +
    opt(55, '0102030405060c0d0f111216171c28292a2b3233363a3b3c424361') +
    opt(97, GUID_HEX) +
    opt(60, ascii('PXEClient:Arch:00000:UNDI:002001')) +
    'ff',
);

/** iPXE x86_64 EFI (ipxe.efi chained from OVMF) DHCPDISCOVER, user class in RFC 3004 framing. */
export const ipxeEfiDiscover = hex(
  header({ xid: '00123456', mac: '525400123456' }) +
    opt(53, '01') +
    opt(57, '05c0') +
    opt(93, '0007') +
    opt(94, '01030a') +
    opt(60, ascii('PXEClient:Arch:00007:UNDI:003010')) +
    opt(77, '04' + ascii('iPXE')) +
    opt(55, '0103060c0f111a2b3c4243778081828384858687afcb') +
    opt(175, IPXE_175 + '240101') +
    opt(61, '01525400123456') +
    opt(97, GUID_HEX) +
    'ff',
);

/** ISC dhclient 4.4 DHCPREQUEST (SELECTING) for 10.20.0.50 from server 10.20.0.1. */
export const dhclientRequest = hex(
  header({ xid: '7c3f0a11', mac: '02000000d1c1' }) +
    opt(53, '03') +
    opt(54, '0a140001') +
    opt(50, '0a140032') +
    opt(12, ascii('node-7')) +
    opt(55, '011c02030f06770c2c2f1a792a') +
    'ff',
);

/** busybox udhcpc DHCPREQUEST (SELECTING) for 10.20.0.51 from server 10.20.0.1. */
export const udhcpcRequest = hex(
  header({ xid: '3a2b1c0d', mac: '02000000bb01' }) +
    opt(53, '03') +
    opt(61, '0102000000bb01') +
    opt(50, '0a140033') +
    opt(54, '0a140001') +
    opt(57, '0240') +
    opt(55, '0103060c0f1c2a') +
    opt(60, ascii('udhcp 1.35.0')) +
    'ff',
);

/** Option 82 from a relay: circuit id `eth0/1`, remote id = the relay's MAC. */
export const RELAY_INFO_HEX = '0106' + ascii('eth0/1') + '0206' + '0200000000f1';

/** A DISCOVER relayed by 10.30.0.1 (hops 1) from a second segment, with option 82. */
export const relayedDiscover = hex(
  header({ xid: 'feed0082', hops: '01', giaddr: '0a1e0001', mac: '525400303030', flags: '0000' }) +
    opt(53, '01') +
    opt(57, '05c0') +
    opt(55, EDK2_PRL) +
    opt(97, GUID_HEX) +
    opt(94, '010310') +
    opt(93, '0007') +
    opt(60, ascii('PXEClient:Arch:00007:UNDI:003016')) +
    opt(82, RELAY_INFO_HEX) +
    'ff',
);

/**
 * An ACK using option overload 3: option 67 begins in the options field and continues in `file`
 * (RFC 3396 concatenation across areas), option 15 lives in `file`, option 12 in `sname`.
 */
export const overloadedAck = hex(
  header({
    op: '02',
    xid: '00000052',
    yiaddr: '0a140064',
    mac: '525400123456',
    sname: opt(12, ascii('host')) + 'ff',
    file: opt(67, ascii('ipxe')) + opt(15, ascii('example.org')) + 'ff',
  }) +
    opt(53, '05') +
    opt(52, '03') +
    opt(54, '0a140001') +
    opt(67, ascii('boot/')) +
    'ff',
);

/** Every request fixture, by name. */
export const requestFixtures: Record<string, Uint8Array> = {
  ovmfPxeDiscover,
  aavmfPxeDiscover,
  ovmfHttpDiscover,
  ipxeBiosDiscover,
  biosPxeDiscoverNo93,
  ipxeEfiDiscover,
  dhclientRequest,
  udhcpcRequest,
  relayedDiscover,
};
