/**
 * @module IPv6 address helpers for DHCPv6: text (RFC 4291 §2.2, any valid spelling in; RFC
 * 5952 canonical text out) <-> 16-byte wire form <-> 128-bit bigint, prefix checks, bracketed
 * URL literals (RFC 3986 §3.2.2), and the MAC inside a modified EUI-64 interface identifier
 * (RFC 4291 appendix A).
 * @pure
 */
import { formatMacAddress } from '../dhcp/address.js';

/** Parses the eight 16-bit groups of `text` (no zone, no embedded IPv4 form), or `undefined`. */
function parseGroups(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const side = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = side(halves[0] ?? '');
  const tail = halves.length === 2 ? side(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** The 16 wire bytes of an IPv6 address in text form (a `%zone` suffix is ignored), or `undefined` when malformed. */
export function encodeIpv6(text: string): Uint8Array | undefined {
  const zone = text.indexOf('%');
  const groups = parseGroups(zone < 0 ? text : text.slice(0, zone));
  if (groups === undefined) return undefined;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** True when `text` is an IPv6 address (optionally with a `%zone`). */
export function isIpv6(text: string): boolean {
  return encodeIpv6(text) !== undefined;
}

/** RFC 5952 text of the 16 bytes at `bytes[offset]`: lower case, the longest run of two or more zero groups (the first on a tie) as `::`. */
export function decodeIpv6(bytes: Uint8Array, offset = 0): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push(((bytes[offset + 2 * i] ?? 0) << 8) | (bytes[offset + 2 * i + 1] ?? 0));
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(':');
  if (bestAt < 0) return hex(groups);
  return `${hex(groups.slice(0, bestAt))}::${hex(groups.slice(bestAt + bestLen))}`;
}

/** The canonical (RFC 5952) text of `text`, or `undefined` when it is not an IPv6 address. */
export function canonicalIpv6(text: string): string | undefined {
  const bytes = encodeIpv6(text);
  return bytes === undefined ? undefined : decodeIpv6(bytes);
}

/** An IPv6 address as a 128-bit number. */
export function ipv6ToBigInt(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let i = 0; i < 16; i++) v = (v << 8n) | BigInt(bytes[i] ?? 0);
  return v;
}

/** The canonical text of the 128-bit number `value`. */
export function bigIntToIpv6(value: bigint): string {
  const out = new Uint8Array(16);
  let v = value;
  for (let i = 15; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return decodeIpv6(out);
}

/** True when `address` lies in `prefix`/`prefixLength` (both IPv6 text). */
export function inPrefix(address: string, prefix: string, prefixLength: number): boolean {
  const a = encodeIpv6(address);
  const p = encodeIpv6(prefix);
  if (a === undefined || p === undefined || prefixLength < 0 || prefixLength > 128) return false;
  const shift = BigInt(128 - prefixLength);
  return ipv6ToBigInt(a) >> shift === ipv6ToBigInt(p) >> shift;
}

/** True for a link-local unicast address (fe80::/10). */
export function isLinkLocal(bytes: Uint8Array): boolean {
  return bytes[0] === 0xfe && ((bytes[1] ?? 0) & 0xc0) === 0x80;
}

/**
 * The MAC inside a modified EUI-64 interface identifier (bytes 8–15: `ff:fe` in the middle, the
 * universal/local bit inverted; RFC 4291 appendix A), or `undefined` when the identifier is not
 * of that form (RFC 7217 stable-privacy and temporary addresses are not).
 */
export function macFromEui64(bytes: Uint8Array): string | undefined {
  if (bytes.length !== 16 || bytes[11] !== 0xff || bytes[12] !== 0xfe) return undefined;
  const mac = Uint8Array.of((bytes[8] ?? 0) ^ 0x02, bytes[9] ?? 0, bytes[10] ?? 0, bytes[13] ?? 0, bytes[14] ?? 0, bytes[15] ?? 0);
  return formatMacAddress(mac);
}

/** `host` for a URL: an IPv6 literal in brackets (RFC 3986 §3.2.2), anything else as is. */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
