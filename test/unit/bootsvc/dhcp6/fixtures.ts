/**
 * DHCPv6 request fixtures for the codec, identity and responder tests (and the fuzz campaign's
 * seeds): hex builders and the requests of the clients the integration tests run (dhclient
 * -6, busybox udhcpc6, relayed by dhcrelay -6) and of the boot stages of one machine (OVMF's
 * PXE with DUID-UUID in EFI byte order, iPXE with DUID-UUID in network byte order and user
 * class `iPXE`, OVMF's HTTP boot with vendor class `HTTPClient`), laid out as those clients
 * send them.
 */

/** Hex of a 2-byte value. */
export const h16 = (n: number): string => n.toString(16).padStart(4, '0');
/** Hex of a 4-byte value. */
export const h32 = (n: number): string => n.toString(16).padStart(8, '0');
/** Hex of ASCII text. */
export const ascii = (s: string): string => Buffer.from(s, 'latin1').toString('hex');
/** One option TLV in hex. */
export const opt6 = (code: number, valueHex: string): string => h16(code) + h16(valueHex.length / 2) + valueHex;
/** A length-prefixed list item. */
export const item = (s: string): string => h16(s.length) + ascii(s);
/** Hex → bytes. */
export const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex.replace(/\s+/g, ''), 'hex'));
/** A client message in hex. */
export const msg6 = (type: number, xid: number, ...options: string[]): string => type.toString(16).padStart(2, '0') + xid.toString(16).padStart(6, '0') + options.join('');
/** IPv6 text → hex (full form only, 8 groups after expansion by the caller's choice of literals). */
export function ip6hex(text: string): string {
  const [head = '', tail] = text.split('::');
  const hg = head === '' ? [] : head.split(':');
  const tg = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? hg : [...hg, ...new Array<string>(8 - hg.length - tg.length).fill('0'), ...tg];
  return groups.map((g) => g.padStart(4, '0')).join('');
}
/** A Relay-Forw in hex around `inner`. */
export const relayForw = (hops: number, link: string, peer: string, inner: string, ...options: string[]): string =>
  '0c' + hops.toString(16).padStart(2, '0') + ip6hex(link) + ip6hex(peer) + options.join('') + opt6(9, inner);

/** The test machine's MAC and the link-local address derived from it (EUI-64). */
export const MAC = '52:54:00:12:34:56';
export const MAC_LINK_LOCAL = 'fe80::5054:ff:fe12:3456';
const MAC_HEX = '525400123456';
/** SMBIOS UUID of the test machine, network byte order; EFI byte order swaps the first three fields. */
const UUID_NET = '8a7b6c5d4e3f20110123456789abcdef';
const UUID_EFI = '5d6c7b8a3f4e1120' + '0123456789abcdef';

export const duids = {
  ll: h16(3) + h16(1) + MAC_HEX,
  llt: h16(1) + h16(1) + h32(0x2b3c4d5e) + MAC_HEX,
  uuidEfi: h16(4) + UUID_EFI,
  uuidNet: h16(4) + UUID_NET,
  uuidZero: h16(4) + '00'.repeat(16),
  en: h16(2) + h32(343) + '0102030405',
};

const iaNa = (iaid: number, ...inner: string[]): string => opt6(3, h32(iaid) + h32(0) + h32(0) + inner.join(''));
const elapsed = opt6(8, '0000');
const pxeVendor = opt6(16, h32(343) + item('PXEClient:Arch:00007:UNDI:003016'));
const httpVendor = opt6(16, h32(343) + item('HTTPClient:Arch:00016:UNDI:003016'));
const nii = opt6(62, '010310');

/** Requests as hex, by client. */
export const requests6 = {
  /** OVMF UEFI PXE over IPv6 (EDK2 PxeBcDhcp6.c): DUID-UUID in EFI byte order, random IAID, arch 7, vendor class PXEClient. */
  ovmfPxeSolicit: msg6(1, 0x1a2b3c, opt6(1, duids.uuidEfi), iaNa(0x6e9f1a2b), opt6(6, h16(59) + h16(60) + h16(23) + h16(24)), elapsed, opt6(61, h16(7)), nii, pxeVendor),
  /** OVMF UEFI HTTP boot over IPv6 (EDK2 HttpBootDhcp6.c): arch 16, vendor class HTTPClient. */
  ovmfHttpSolicit: msg6(1, 0x2b3c4d, opt6(1, duids.uuidEfi), iaNa(0x7f001122), opt6(6, h16(59) + h16(23) + h16(24) + h16(16)), elapsed, opt6(61, h16(16)), nii, httpVendor),
  /** iPXE (src/net/udp/dhcpv6.c): DUID-UUID in network byte order, IAID from the MAC, user class iPXE, and also PXEClient arch 7. */
  ipxeSolicit: msg6(1, 0x3c4d5e, opt6(1, duids.uuidNet), iaNa(0x00123456), opt6(6, h16(23) + h16(24) + h16(59) + h16(60)), elapsed, opt6(15, item('iPXE')), pxeVendor, opt6(61, h16(7)), nii),
  /** busybox udhcpc6 in the ramdisk: DUID-LL, Rapid Commit. */
  udhcpc6Solicit: msg6(1, 0x4d5e6f, opt6(1, duids.ll), elapsed, opt6(6, h16(23) + h16(24)), iaNa(0x00000001), opt6(14, '')),
  /** dhclient -6 (ISC): DUID-LLT, IA_NA, ORO, elapsed time. */
  dhclientSolicit: msg6(1, 0x5e6f70, opt6(1, duids.llt), opt6(6, h16(23) + h16(24) + h16(39) + h16(31)), elapsed, iaNa(0x00123456)),
  /** A Request naming an address of the configured range. */
  dhclientRequest: msg6(3, 0x6f7081, opt6(1, duids.llt), opt6(2, h16(3) + h16(1) + '020000000001'), elapsed, iaNa(0x00123456, opt6(5, ip6hex('fd00:1::100') + h32(3600) + h32(3600)))),
  /** An Information-Request. */
  informationRequest: msg6(11, 0x708192, opt6(1, duids.ll), opt6(6, h16(23) + h16(59)), elapsed),
};

/** The udhcpc6 Solicit relayed by dhcrelay -6 with Interface-ID and option 79. */
export const relayedSolicit = relayForw(0, 'fd00:2::1', MAC_LINK_LOCAL, requests6.udhcpc6Solicit, opt6(18, ascii('veth-r0')), opt6(79, h16(1) + MAC_HEX));

/**
 * Datagrams captured from real peers on a lab bridge (Debian 12: ISC dhclient 4.4.3-P1 `-6`
 * with DUID-LLT, MAC 52:54:00:64:00:01; ISC dhcrelay 4.4.3-P1 `-6` relaying for a client with
 * DUID-LL, MAC 52:54:00:64:00:02), answered by rackside's server (DUID-LL 02:00:00:64:00:fe).
 */
export const captured6 = {
  capturedDhclientSolicit: '01bd281a0001000e0001000132a88b4352540064000100060008001700180027001f0008000200000003000c0064000100000e1000001518',
  capturedDhclientRequest: '034ca1c80001000e0001000132a88b435254006400010002000a000300010200006400fe00060008001700180027001f000800020000000300280064000100000e100000151800050018fd00006400000000000000000000015c00001c2000001d4c',
  capturedDhcrelaySolicit: '0c00fd000065000000000000000000000001fe80000000000000505400fffe6400020009003401e575930001000a0003000152540064000200060008001700180027001f0008000200000003000c0064000200000e1000001518',
  capturedDhcrelayRequest: '0c00fd000065000000000000000000000001fe80000000000000505400fffe6400020009005e03190e5c0001000a000300015254006400020002000a000300010200006400fe00060008001700180027001f000800020000000300280064000200000e100000151800050018fd00006400000000000000000000011500001c2000001d4c',
};
