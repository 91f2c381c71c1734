/**
 * @module Typed readers and writers of the DHCPv6 option values this server uses: DUIDs
 * (RFC 8415 §11: LLT, EN, LL, UUID), IA_NA and IAADDR (§21.4, §21.6), Status Code (§21.13),
 * Elapsed Time, ORO, User Class and Vendor Class (§21.15, §21.16), Boot File URL and
 * parameters and the client architecture list (RFC 5970), the Client Link-Layer Address
 * (RFC 6939). Readers take values already length-checked by the message decoder and throw
 * only {@link Dhcp6DecodeError} on anything else.
 * @pure
 */
import { formatHexBytes, formatMacAddress } from '../dhcp/address.js';
import { decodeIpv6, encodeIpv6 } from './address6.js';
import { Dhcp6DecodeError, Dhcp6EncodeError } from './errors.js';
import { decodeOptions, Dhcp6Option, encodeOptions, firstOption, type Dhcp6OptionTlv, type Dhcp6Options } from './options.js';

/** IANA hardware type of Ethernet (RFC 826), as in DUID-LL/LLT and option 79. */
export const HARDWARE_ETHERNET = 1;

/** A DUID (RFC 8415 §11), decoded by type. */
export type Duid =
  | { type: 'llt'; hardwareType: number; time: number; linkLayer: Uint8Array }
  | { type: 'en'; enterprise: number; identifier: Uint8Array }
  | { type: 'll'; hardwareType: number; linkLayer: Uint8Array }
  | { type: 'uuid'; uuid: Uint8Array }
  | { type: 'other'; typeCode: number; data: Uint8Array };

const u16 = (b: Uint8Array, at: number): number => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u32 = (b: Uint8Array, at: number): number => (((b[at] ?? 0) << 24) | ((b[at + 1] ?? 0) << 16) | ((b[at + 2] ?? 0) << 8) | (b[at + 3] ?? 0)) >>> 0;

function put16(out: Uint8Array, at: number, v: number): void {
  out[at] = (v >> 8) & 0xff;
  out[at + 1] = v & 0xff;
}

function put32(out: Uint8Array, at: number, v: number): void {
  put16(out, at, (v >>> 16) & 0xffff);
  put16(out, at + 2, v & 0xffff);
}

/** Decodes a DUID; a known type with a too-short body reads as `other`. */
export function decodeDuid(b: Uint8Array): Duid {
  const type = u16(b, 0);
  if (type === 1 && b.length >= 9) return { type: 'llt', hardwareType: u16(b, 2), time: u32(b, 4), linkLayer: b.subarray(8) };
  if (type === 2 && b.length >= 7) return { type: 'en', enterprise: u32(b, 2), identifier: b.subarray(6) };
  if (type === 3 && b.length >= 5) return { type: 'll', hardwareType: u16(b, 2), linkLayer: b.subarray(4) };
  if (type === 4 && b.length === 18) return { type: 'uuid', uuid: b.subarray(2) };
  return { type: 'other', typeCode: type, data: b.subarray(2) };
}

/** DUID-LL of an Ethernet MAC (RFC 8415 §11.4): the server's own identifier. */
export function duidLl(mac: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + mac.length);
  put16(out, 0, 3);
  put16(out, 2, HARDWARE_ETHERNET);
  out.set(mac, 4);
  return out;
}

/** The MAC a DUID-LL/LLT carries for Ethernet, else `undefined`. */
export function duidMac(d: Duid): string | undefined {
  if ((d.type === 'll' || d.type === 'llt') && d.hardwareType === HARDWARE_ETHERNET && d.linkLayer.length === 6) return formatMacAddress(d.linkLayer);
  return undefined;
}

/** An IA_NA (RFC 8415 §21.4). */
export interface IaNa {
  iaid: number;
  t1: number;
  t2: number;
  options: Dhcp6OptionTlv[];
}

/** An IA Address (RFC 8415 §21.6). */
export interface IaAddress {
  address: string;
  preferredLifetime: number;
  validLifetime: number;
  options: Dhcp6OptionTlv[];
}

/** Reads an IA_NA value (at least 12 bytes, checked by the decoder). */
export function decodeIaNa(b: Uint8Array): IaNa {
  if (b.length < 12) throw new Dhcp6DecodeError(`IA_NA of ${b.length} bytes`, 0);
  return { iaid: u32(b, 0), t1: u32(b, 4), t2: u32(b, 8), options: decodeOptions(b, 12, b.length) };
}

/** Encodes an IA_NA option. */
export function iaNaOption(ia: IaNa): Dhcp6OptionTlv {
  const inner = encodeOptions(ia.options);
  const out = new Uint8Array(12 + inner.length);
  put32(out, 0, ia.iaid);
  put32(out, 4, ia.t1);
  put32(out, 8, ia.t2);
  out.set(inner, 12);
  return { code: Dhcp6Option.iaNa, value: out };
}

/** Reads an IAADDR value. */
export function decodeIaAddress(b: Uint8Array): IaAddress {
  if (b.length < 24) throw new Dhcp6DecodeError(`IAADDR of ${b.length} bytes`, 0);
  return { address: decodeIpv6(b, 0), preferredLifetime: u32(b, 16), validLifetime: u32(b, 20), options: decodeOptions(b, 24, b.length) };
}

/** Encodes an IAADDR option; throws {@link Dhcp6EncodeError} for a bad address. */
export function iaAddressOption(a: IaAddress): Dhcp6OptionTlv {
  const addr = encodeIpv6(a.address);
  if (addr === undefined) throw new Dhcp6EncodeError(`IAADDR address "${a.address}" is not IPv6`);
  const inner = encodeOptions(a.options);
  const out = new Uint8Array(24 + inner.length);
  out.set(addr, 0);
  put32(out, 16, a.preferredLifetime);
  put32(out, 20, a.validLifetime);
  out.set(inner, 24);
  return { code: Dhcp6Option.iaAddr, value: out };
}

/** The addresses inside an IA_NA. */
export function iaAddresses(ia: IaNa): IaAddress[] {
  return ia.options.filter((o) => o.code === Dhcp6Option.iaAddr).map((o) => decodeIaAddress(o.value));
}

/** A Status Code option (RFC 8415 §21.13); the message is UTF-8. */
export function statusCodeOption(code: number, message: string): Dhcp6OptionTlv {
  const text = new TextEncoder().encode(message);
  const out = new Uint8Array(2 + text.length);
  put16(out, 0, code);
  out.set(text, 2);
  return { code: Dhcp6Option.statusCode, value: out };
}

/** Reads a Status Code value. */
export function decodeStatusCode(b: Uint8Array): { code: number; message: string } {
  return { code: u16(b, 0), message: new TextDecoder().decode(b.subarray(2)) };
}

/** Items of a 2-byte-length-prefixed list (user class, vendor class data, boot parameters). */
export function decodeLengthPrefixed(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i + 2 <= b.length;) {
    const n = u16(b, i);
    out.push(b.subarray(i + 2, Math.min(b.length, i + 2 + n)));
    i += 2 + n;
  }
  return out;
}

/** A 2-byte-length-prefixed list of `items`. */
export function encodeLengthPrefixed(items: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(items.reduce((n, i) => n + 2 + i.length, 0));
  let at = 0;
  for (const item of items) {
    if (item.length > 0xffff) throw new Dhcp6EncodeError(`list item of ${item.length} bytes`);
    put16(out, at, item.length);
    out.set(item, at + 2);
    at += 2 + item.length;
  }
  return out;
}

const latin1 = (b: Uint8Array): string => String.fromCharCode(...b);
const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);

/** The user classes (option 15) as text. */
export function getUserClasses(options: Dhcp6Options): string[] {
  const v = firstOption(options, Dhcp6Option.userClass);
  return v === undefined ? [] : decodeLengthPrefixed(v).map(latin1);
}

/** A Vendor Class (option 16): enterprise number and its data items as text. */
export interface VendorClass {
  enterprise: number;
  data: string[];
}

/** The Vendor Class option, if present. */
export function getVendorClass(options: Dhcp6Options): VendorClass | undefined {
  const v = firstOption(options, Dhcp6Option.vendorClass);
  if (v === undefined) return undefined;
  return { enterprise: u32(v, 0), data: decodeLengthPrefixed(v.subarray(4)).map(latin1) };
}

/** Encodes a Vendor Class option. */
export function vendorClassOption(vc: VendorClass): Dhcp6OptionTlv {
  const items = encodeLengthPrefixed(vc.data.map(ascii));
  const out = new Uint8Array(4 + items.length);
  put32(out, 0, vc.enterprise);
  out.set(items, 4);
  return { code: Dhcp6Option.vendorClass, value: out };
}

/** The client architecture types of option 61 (RFC 5970 §3.3), in order. */
export function getClientArchTypes(options: Dhcp6Options): number[] {
  const v = firstOption(options, Dhcp6Option.clientArchType);
  const out: number[] = [];
  if (v !== undefined) for (let i = 0; i + 1 < v.length; i += 2) out.push(u16(v, i));
  return out;
}

/** Encodes option 61. */
export function clientArchOption(types: readonly number[]): Dhcp6OptionTlv {
  const out = new Uint8Array(2 * types.length);
  types.forEach((t, i) => { put16(out, 2 * i, t); });
  return { code: Dhcp6Option.clientArchType, value: out };
}

/** The Client Link-Layer Address (option 79, RFC 6939 §4): hardware type and address. */
export function getClientLinkLayer(options: Dhcp6Options): { hardwareType: number; address: Uint8Array } | undefined {
  const v = firstOption(options, Dhcp6Option.clientLinkLayerAddress);
  return v === undefined ? undefined : { hardwareType: u16(v, 0), address: v.subarray(2) };
}

/** Encodes option 79 for an Ethernet MAC. */
export function clientLinkLayerOption(mac: Uint8Array): Dhcp6OptionTlv {
  const out = new Uint8Array(2 + mac.length);
  put16(out, 0, HARDWARE_ETHERNET);
  out.set(mac, 2);
  return { code: Dhcp6Option.clientLinkLayerAddress, value: out };
}

/** A Boot File URL option (RFC 5970 §3.1). */
export function bootFileUrlOption(url: string): Dhcp6OptionTlv {
  return { code: Dhcp6Option.bootFileUrl, value: new TextEncoder().encode(url) };
}

/** The Boot File URL, if present. */
export function getBootFileUrl(options: Dhcp6Options): string | undefined {
  const v = firstOption(options, Dhcp6Option.bootFileUrl);
  return v === undefined ? undefined : new TextDecoder().decode(v);
}

/** A Boot File Parameters option (RFC 5970 §3.2). */
export function bootFileParametersOption(params: readonly string[]): Dhcp6OptionTlv {
  return { code: Dhcp6Option.bootFileParameters, value: encodeLengthPrefixed(params.map((p) => new TextEncoder().encode(p))) };
}

/** The option codes of the ORO (RFC 8415 §21.7). */
export function getRequestedOptions(options: Dhcp6Options): number[] {
  const v = firstOption(options, Dhcp6Option.oro);
  const out: number[] = [];
  if (v !== undefined) for (let i = 0; i + 1 < v.length; i += 2) out.push(u16(v, i));
  return out;
}

/** Elapsed time (RFC 8415 §21.9) in hundredths of a second, if present. */
export function getElapsedTime(options: Dhcp6Options): number | undefined {
  const v = firstOption(options, Dhcp6Option.elapsedTime);
  return v?.length === 2 ? u16(v, 0) : undefined;
}

/** An option of one byte (Preference, RFC 8415 §21.8). */
export function preferenceOption(value: number): Dhcp6OptionTlv {
  return { code: Dhcp6Option.preference, value: Uint8Array.of(value & 0xff) };
}

/** A DNS Recursive Name Server option (RFC 3646 §3). */
export function dnsServersOption(addresses: readonly string[]): Dhcp6OptionTlv {
  const out = new Uint8Array(16 * addresses.length);
  addresses.forEach((a, i) => {
    const bytes = encodeIpv6(a);
    if (bytes === undefined) throw new Dhcp6EncodeError(`DNS server "${a}" is not IPv6`);
    out.set(bytes, 16 * i);
  });
  return { code: Dhcp6Option.dnsServers, value: out };
}

/** A DUID as lower-case hex (the form lease records and events use). */
export function duidHex(b: Uint8Array): string {
  return formatHexBytes(b);
}
