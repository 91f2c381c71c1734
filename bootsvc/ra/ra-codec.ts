/**
 * @module Router Advertisement encoding and Router Solicitation decoding (RFC 4861 §4.1, §4.2,
 * §4.6; RFC 8106 §5.1 for RDNSS). Bytes in, bytes out: the ICMPv6 checksum is left 0, the
 * kernel fills it in on a raw ICMPv6 socket (RFC 3542 §3.1) and checks it on receipt. The
 * decoder throws only {@link RaDecodeError}.
 * @pure
 */
import { encodeIpv6 } from '../dhcp6/address6.js';

/** ICMPv6 types of Neighbor Discovery this codec knows (RFC 4861 §4). */
export const IcmpType = { routerSolicitation: 133, routerAdvertisement: 134 } as const;

/** Neighbor Discovery option types (RFC 4861 §4.6, RFC 8106 §5.1). */
export const NdOption = { sourceLinkLayerAddress: 1, prefixInformation: 3, mtu: 5, rdnss: 25 } as const;

/** Stable code of {@link RaDecodeError}. */
export const RA_DECODE_ERROR = 'RACKSIDE_ERR_RA_DECODE';

/** A message that is not a valid Router Solicitation (RFC 4861 §6.1.1); `reason` says why. */
export class RaDecodeError extends Error {
  readonly code = RA_DECODE_ERROR;
  readonly reason: string;
  constructor(reason: string) {
    super(`invalid router solicitation: ${reason}`);
    this.name = 'RaDecodeError';
    this.reason = reason;
  }
}

/** One Prefix Information option (RFC 4861 §4.6.2). */
export interface PrefixInformation {
  /** The prefix, e.g. `fd00:1::` (host bits are cleared on encoding). */
  prefix: string;
  length: number;
  /** L flag: the prefix is on-link. */
  onLink: boolean;
  /** A flag: hosts may form addresses from it (SLAAC). */
  autonomous: boolean;
  validSeconds: number;
  preferredSeconds: number;
}

/** The fields of a Router Advertisement (RFC 4861 §4.2). */
export interface RouterAdvertisement {
  /** Cur Hop Limit hosts should use; 0 is unspecified. */
  curHopLimit: number;
  /** M flag: addresses from DHCPv6. */
  managed: boolean;
  /** O flag: other configuration from DHCPv6. */
  other: boolean;
  /** 0: not a default router (RFC 4861 §4.2); at most 9000. */
  routerLifetimeSeconds: number;
  reachableTimeMs: number;
  retransTimerMs: number;
  /** The sender's MAC for the Source Link-Layer Address option (left out when undefined). */
  sourceMac?: string;
  /** Link MTU option, left out when undefined. */
  mtu?: number;
  prefixes: PrefixInformation[];
  /** RDNSS option (RFC 8106), left out when undefined or empty. */
  dns?: { addresses: string[]; lifetimeSeconds: number };
}

/** What a valid Router Solicitation tells: the sender's MAC when it sent one. */
export interface RouterSolicitation {
  sourceMac?: string;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0, 0);
  return b;
}

function ipv6Bytes(text: string, what: string): Uint8Array {
  const bytes = encodeIpv6(text);
  if (bytes === undefined) throw new RangeError(`${what} is not an IPv6 address: ${text}`);
  return bytes;
}

function macBytes(mac: string): Buffer {
  if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(mac)) throw new RangeError(`not a MAC address: ${mac}`);
  return Buffer.from(mac.split(':').map((h) => parseInt(h, 16)));
}

/** The first `length` bits of `prefix`, the rest cleared. */
function maskPrefix(prefix: string, length: number): Buffer {
  const bytes = Buffer.from(ipv6Bytes(prefix, 'prefix'));
  for (let bit = length; bit < 128; bit++) bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) & ~(0x80 >> (bit & 7));
  return bytes;
}

/** Prefix Information option, 32 bytes (RFC 4861 §4.6.2). */
function prefixOption(p: PrefixInformation): Buffer {
  if (!Number.isInteger(p.length) || p.length < 1 || p.length > 128) throw new RangeError(`prefix length ${p.length} is not 1-128`);
  const head = Buffer.from([NdOption.prefixInformation, 4, p.length, (p.onLink ? 0x80 : 0) | (p.autonomous ? 0x40 : 0)]);
  return Buffer.concat([head, u32(p.validSeconds), u32(p.preferredSeconds), Buffer.alloc(4), maskPrefix(p.prefix, p.length)]);
}

/** RDNSS option (RFC 8106 §5.1): length 1 + 2 per address, in units of 8 bytes. */
function rdnssOption(addresses: string[], lifetimeSeconds: number): Buffer {
  const head = Buffer.from([NdOption.rdnss, 1 + 2 * addresses.length, 0, 0]);
  return Buffer.concat([head, u32(lifetimeSeconds), ...addresses.map((a) => Buffer.from(ipv6Bytes(a, 'DNS server')))]);
}

/**
 * Encodes `ra` as an ICMPv6 Router Advertisement (checksum 0: the kernel computes it). Options
 * in this order: source link-layer address, MTU, prefixes, RDNSS. Throws RangeError for a value
 * that does not fit its field (router lifetime above 9000 s, RFC 4861 §6.2.1; a bad address).
 */
export function encodeRouterAdvertisement(ra: RouterAdvertisement): Buffer {
  if (!Number.isInteger(ra.routerLifetimeSeconds) || ra.routerLifetimeSeconds < 0 || ra.routerLifetimeSeconds > 9000) {
    throw new RangeError(`router lifetime ${ra.routerLifetimeSeconds} s is not 0-9000`);
  }
  const head = Buffer.alloc(16);
  head.writeUInt8(IcmpType.routerAdvertisement, 0);
  head.writeUInt8(ra.curHopLimit & 0xff, 4);
  head.writeUInt8((ra.managed ? 0x80 : 0) | (ra.other ? 0x40 : 0), 5);
  head.writeUInt16BE(ra.routerLifetimeSeconds, 6);
  head.writeUInt32BE(ra.reachableTimeMs >>> 0, 8);
  head.writeUInt32BE(ra.retransTimerMs >>> 0, 12);
  const parts: Buffer[] = [head];
  if (ra.sourceMac !== undefined) parts.push(Buffer.concat([Buffer.from([NdOption.sourceLinkLayerAddress, 1]), macBytes(ra.sourceMac)]));
  if (ra.mtu !== undefined) parts.push(Buffer.concat([Buffer.from([NdOption.mtu, 1, 0, 0]), u32(ra.mtu)]));
  for (const p of ra.prefixes) parts.push(prefixOption(p));
  if (ra.dns !== undefined && ra.dns.addresses.length > 0) parts.push(rdnssOption(ra.dns.addresses, ra.dns.lifetimeSeconds));
  return Buffer.concat(parts);
}

/**
 * Decodes and validates a Router Solicitation as RFC 4861 §6.1.1 asks of a router: IP hop limit
 * 255, ICMP type 133 and code 0, at least 8 bytes, every option with a non-zero length that
 * fits, and no source link-layer address option when the IP source is `::`. Throws
 * {@link RaDecodeError} for anything else (the caller drops and counts it).
 */
export function decodeRouterSolicitation(bytes: Uint8Array, sourceAddress: string, hopLimit: number): RouterSolicitation {
  if (hopLimit !== 255) throw new RaDecodeError(`hop limit ${hopLimit}, not 255`);
  if (bytes.length < 8) throw new RaDecodeError(`${bytes.length} bytes, fewer than 8`);
  if (bytes[0] !== IcmpType.routerSolicitation) throw new RaDecodeError(`ICMPv6 type ${bytes[0]}, not 133`);
  if (bytes[1] !== 0) throw new RaDecodeError(`code ${bytes[1]}, not 0`);
  let sourceMac: string | undefined;
  for (let at = 8; at < bytes.length;) {
    const type = bytes[at] ?? 0;
    const units = bytes[at + 1] ?? 0;
    if (at + 2 > bytes.length || units === 0) throw new RaDecodeError(`option at byte ${at} has length 0`);
    if (at + units * 8 > bytes.length) throw new RaDecodeError(`option at byte ${at} runs past the end`);
    if (type === NdOption.sourceLinkLayerAddress) {
      if (sourceAddress === '::') throw new RaDecodeError('source link-layer address option from the unspecified address');
      if (units === 1) sourceMac = Array.from(bytes.subarray(at + 2, at + 8), (b) => b.toString(16).padStart(2, '0')).join(':');
    }
    at += units * 8;
  }
  return sourceMac === undefined ? {} : { sourceMac };
}
