/**
 * @module Address choice for DHCPv6 IA_NA (RFC 8415 §18.3): one address per host (per MAC),
 * whatever DUID or IAID a boot stage presents, so a machine's firmware, iPXE and ramdisk share
 * it and repeated boots never drain the range (the "multiple reservation" trick). A
 * host keeps the address its record holds; a new host gets the first free address probing
 * from a hash of its MAC, so its address is the same after its record is gone, in the common
 * case.
 * @pure
 */
import type { Lease } from '../boot-lookup.js';
import { bigIntToIpv6, encodeIpv6, ipv6ToBigInt } from './address6.js';

/** An inclusive address range. */
export interface Range6 {
  first: bigint;
  last: bigint;
}

/** A link the server hands addresses out on: its on-link prefix and its range (inside it). */
export interface Link6 {
  /** Canonical network address of the prefix. */
  prefix: string;
  prefixLength: number;
  range: Range6;
}

/**
 * The link of `subnet` (`ADDRESS/LENGTH`) with the range `first`–`last`; throws a RangeError when
 * malformed, reversed, or when the range leaves the subnet.
 */
export function link6(subnet: string, first: string, last: string): Link6 {
  const [address = '', length = ''] = subnet.split('/');
  const bytes = encodeIpv6(address);
  const prefixLength = Number(length);
  if (bytes === undefined || !/^[0-9]{1,3}$/.test(length) || prefixLength < 1 || prefixLength > 128) throw new RangeError(`dhcp6 subnet "${subnet}" is not ADDRESS/LENGTH`);
  const shift = BigInt(128 - prefixLength);
  const network = (ipv6ToBigInt(bytes) >> shift) << shift;
  const range = range6(first, last);
  if (range.first >> shift !== network >> shift || range.last >> shift !== network >> shift) throw new RangeError(`dhcp6 range ${first}-${last} is not inside ${subnet}`);
  return { prefix: bigIntToIpv6(network), prefixLength, range };
}

/** The link whose prefix holds `address`, if any. */
export function linkOfAddress(links: readonly Link6[], address: string): Link6 | undefined {
  const bytes = encodeIpv6(address);
  if (bytes === undefined) return undefined;
  const v = ipv6ToBigInt(bytes);
  return links.find((l) => {
    const shift = BigInt(128 - l.prefixLength);
    return v >> shift === l.range.first >> shift;
  });
}

/** The lease table as the pool reads it. */
export interface Lease6Index {
  /** The bound or offered record of `mac`. */
  byMac(mac: string): Lease | undefined;
  /** The bound or offered record holding `address` (canonical text). */
  holder(address: string): Lease | undefined;
  /** The decline quarantine record of `address`. */
  declined(address: string): Lease | undefined;
  /** Records in the table (holders and quarantines). */
  size(): number;
}

/** The range of `first`–`last` (IPv6 text); throws a RangeError when malformed or reversed. */
export function range6(first: string, last: string): Range6 {
  const a = encodeIpv6(first);
  const b = encodeIpv6(last);
  if (a === undefined || b === undefined) throw new RangeError(`dhcp6 range ${first}-${last} is not two IPv6 addresses`);
  const r = { first: ipv6ToBigInt(a), last: ipv6ToBigInt(b) };
  if (r.first > r.last) throw new RangeError(`dhcp6 range ${first}-${last} is reversed`);
  return r;
}

/** True when `address` lies in `range`. */
export function inRange6(range: Range6, address: string): boolean {
  const a = encodeIpv6(address);
  if (a === undefined) return false;
  const v = ipv6ToBigInt(a);
  return v >= range.first && v <= range.last;
}

/** FNV-1a of the MAC text, as the probe's starting offset. */
function macHash(mac: string): bigint {
  let h = 0x811c9dc5;
  for (let i = 0; i < mac.length; i++) h = Math.imul(h ^ mac.charCodeAt(i), 0x01000193) >>> 0;
  return BigInt(h);
}

/** True when `mac` may take `address` at `nowMs`: nobody else holds it live and it is not quarantined. */
export function addressFreeFor(index: Lease6Index, address: string, mac: string, nowMs: number): boolean {
  const q = index.declined(address);
  if (q !== undefined && q.expiresAtMs > nowMs) return false;
  const h = index.holder(address);
  return h === undefined || h.mac === mac || h.expiresAtMs <= nowMs;
}

/**
 * The address for `mac`: the one its record holds when still in the range and free for it,
 * else the first free one probing linearly from the MAC's hash. At most `index.size() + 1`
 * candidates are probed (one more than there are records, so a free address is found whenever
 * one exists among them); `undefined` when the range is full.
 */
export function chooseAddress(range: Range6, index: Lease6Index, mac: string, nowMs: number): string | undefined {
  const own = index.byMac(mac);
  if (own !== undefined && inRange6(range, own.address) && addressFreeFor(index, own.address, mac, nowMs)) return own.address;
  const size = range.last - range.first + 1n;
  const start = macHash(mac) % size;
  const probes = BigInt(index.size() + 1) < size ? BigInt(index.size() + 1) : size;
  for (let i = 0n; i < probes; i++) {
    const candidate = bigIntToIpv6(range.first + ((start + i) % size));
    if (addressFreeFor(index, candidate, mac, nowMs)) return candidate;
  }
  return undefined;
}
