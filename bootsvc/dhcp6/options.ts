/**
 * @module DHCPv6 vocabulary (RFC 8415 §7.3, §21, §24; RFC 5970; RFC 6939) and the option TLV
 * codec: options are 2-byte code, 2-byte length, value (RFC 8415 §21.1), kept in wire order
 * because several may share a code (one IA_NA per IAID, RFC 8415 §21.4).
 * @pure
 */
import { Dhcp6DecodeError, Dhcp6EncodeError } from './errors.js';

/** Message types (RFC 8415 §7.3). */
export const Dhcp6MessageType = {
  solicit: 1,
  advertise: 2,
  request: 3,
  confirm: 4,
  renew: 5,
  rebind: 6,
  reply: 7,
  release: 8,
  decline: 9,
  reconfigure: 10,
  informationRequest: 11,
  relayForw: 12,
  relayRepl: 13,
} as const;

/** Option codes this server reads or writes. */
export const Dhcp6Option = {
  clientId: 1,
  serverId: 2,
  iaNa: 3,
  iaTa: 4,
  iaAddr: 5,
  oro: 6,
  preference: 7,
  elapsedTime: 8,
  relayMessage: 9,
  unicast: 12,
  statusCode: 13,
  rapidCommit: 14,
  userClass: 15,
  vendorClass: 16,
  interfaceId: 18,
  dnsServers: 23,
  iaPd: 25,
  /** Boot File URL (RFC 5970 §3.1). */
  bootFileUrl: 59,
  /** Boot File Parameters (RFC 5970 §3.2). */
  bootFileParameters: 60,
  /** Client System Architecture Type (RFC 5970 §3.3). */
  clientArchType: 61,
  /** Client Network Interface Identifier (RFC 5970 §3.4). */
  clientNii: 62,
  /** Client Link-Layer Address, added by relays (RFC 6939). */
  clientLinkLayerAddress: 79,
} as const;

/** Status codes (RFC 8415 §21.13). */
export const Dhcp6Status = {
  success: 0,
  unspecFail: 1,
  noAddrsAvail: 2,
  noBinding: 3,
  notOnLink: 4,
  useMulticast: 5,
} as const;

/** One option as on the wire. */
export interface Dhcp6OptionTlv {
  code: number;
  value: Uint8Array;
}

/** Options of a message or of an option's payload, in wire order. */
export type Dhcp6Options = readonly Dhcp6OptionTlv[];

/**
 * Reads the options in `bytes[start, end)` as views of `bytes`. Throws {@link Dhcp6DecodeError}
 * (offsets relative to `base` + index) when an option header or value runs past `end`.
 */
export function decodeOptions(bytes: Uint8Array, start: number, end: number, base = 0): Dhcp6OptionTlv[] {
  const out: Dhcp6OptionTlv[] = [];
  let at = start;
  while (at < end) {
    if (at + 4 > end) throw new Dhcp6DecodeError('truncated option header', base + at);
    const code = ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
    const length = ((bytes[at + 2] ?? 0) << 8) | (bytes[at + 3] ?? 0);
    if (at + 4 + length > end) throw new Dhcp6DecodeError(`option ${code} of ${length} bytes runs past the end`, base + at);
    out.push({ code, value: bytes.subarray(at + 4, at + 4 + length) });
    at += 4 + length;
  }
  return out;
}

/** The encoded TLVs of `options`, concatenated. Throws {@link Dhcp6EncodeError} for a value over 65535 bytes. */
export function encodeOptions(options: Dhcp6Options): Uint8Array {
  let total = 0;
  for (const o of options) {
    if (o.value.length > 0xffff) throw new Dhcp6EncodeError(`option ${o.code} value is ${o.value.length} bytes (max 65535)`);
    total += 4 + o.value.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const o of options) {
    out[at] = o.code >> 8;
    out[at + 1] = o.code & 0xff;
    out[at + 2] = o.value.length >> 8;
    out[at + 3] = o.value.length & 0xff;
    out.set(o.value, at + 4);
    at += 4 + o.value.length;
  }
  return out;
}

/** The value of the first option `code`, if present. */
export function firstOption(options: Dhcp6Options, code: number): Uint8Array | undefined {
  return options.find((o) => o.code === code)?.value;
}

/** Every value of option `code`, in wire order. */
export function allOptions(options: Dhcp6Options, code: number): Uint8Array[] {
  return options.filter((o) => o.code === code).map((o) => o.value);
}
