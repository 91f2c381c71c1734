/**
 * @module IPv4 and MAC address helpers shared by the DHCP codec, the responder and the pool:
 * dotted-quad text <-> 32-bit numbers and 4-byte wire form, prefix masks, and the lower-case
 * colon-separated MAC spelling used as the key of leases, reservations and boot lookups.
 * @pure
 */

/** Two lower-case hex digits per byte value, so hot paths format bytes without a callback per byte. */
const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** `bytes` as lower-case hex, two digits per byte, `separator` between bytes. */
export function formatHexBytes(bytes: Uint8Array, separator = ''): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += (i === 0 ? '' : separator) + (HEX_BYTE[bytes[i] ?? 0] ?? '00');
  return out;
}

/** The unspecified address `0.0.0.0` (a zero `ciaddr`/`yiaddr`/`siaddr`/`giaddr`). */
export const ZERO_ADDRESS = '0.0.0.0';

/** The limited broadcast address (RFC 2131 §4.1 broadcast replies). */
export const BROADCAST_ADDRESS = '255.255.255.255';

/**
 * Parses a dotted-quad IPv4 address (four groups of 1–3 ASCII digits, each at most 255, leading
 * zeros allowed) into an unsigned 32-bit number, or `undefined` if malformed. A hand-written
 * scanner: it runs several times per DHCP message, and a regular expression allocated a match
 * array each time.
 */
export function parseIpv4(address: string): number | undefined {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits > 3) return undefined;
      octet = octet * 10 + (c - 48);
    } else if (c === 46 && digits > 0 && dots < 3) {
      if (octet > 255) return undefined;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else {
      return undefined;
    }
  }
  if (dots !== 3 || digits === 0 || octet > 255) return undefined;
  return value * 256 + octet;
}

/** True when `address` is a dotted-quad IPv4 address. */
export function isIpv4(address: string): boolean {
  return parseIpv4(address) !== undefined;
}

/** Formats an unsigned 32-bit number as a dotted-quad IPv4 address. */
export function formatIpv4(value: number): string {
  const v = value >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** Reads the 4-byte IPv4 address at `offset` of `bytes` (the caller guarantees 4 bytes exist). */
export function decodeIpv4(bytes: Uint8Array, offset = 0): string {
  return `${bytes[offset] ?? 0}.${bytes[offset + 1] ?? 0}.${bytes[offset + 2] ?? 0}.${bytes[offset + 3] ?? 0}`;
}

/** Returns the 4-byte wire form of a dotted-quad address, or `undefined` if it is malformed. */
export function encodeIpv4(address: string): Uint8Array | undefined {
  const value = parseIpv4(address);
  if (value === undefined) return undefined;
  return Uint8Array.of(value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255);
}

/** The netmask of a prefix length 0–32 as a 32-bit number (`24` → `0xffffff00`). */
export function prefixMask(prefixLength: number): number {
  if (prefixLength <= 0) return 0;
  if (prefixLength >= 32) return 0xffffffff;
  return (0xffffffff << (32 - prefixLength)) >>> 0;
}

/** Formats hardware-address bytes as lower-case colon-separated hex (`52:54:00:12:34:56`). */
export function formatMacAddress(bytes: Uint8Array): string {
  return formatHexBytes(bytes, ':');
}

/**
 * Normalises a MAC address written with `:` or `-` separators (any case) to the lower-case
 * colon form, or returns `undefined` when it is not six hex octets.
 */
export function normalizeMacAddress(mac: string): string | undefined {
  const parts = mac.trim().split(/[:-]/);
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-fA-F]{1,2}$/.test(p))) return undefined;
  return parts.map((p) => p.toLowerCase().padStart(2, '0')).join(':');
}
