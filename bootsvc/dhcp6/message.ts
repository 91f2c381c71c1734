/**
 * @module The DHCPv6 message codec (RFC 8415 §8, §9): client/server messages (type, 3-byte
 * transaction id, options) and relay agent messages (Relay-Forw / Relay-Repl: hop count,
 * link-address, peer-address, options, with the relayed message inside the Relay Message
 * option, §21.10), nested up to {@link MAX_RELAY_DEPTH} relays. {@link decodeDhcp6Message}
 * validates every option this server reads (lengths, nested IA_NA / IAADDR options, the
 * length-prefixed lists of user class, vendor class and boot parameters) and throws only
 * {@link Dhcp6DecodeError}; it always terminates (each step consumes bytes, nesting is bounded).
 * @pure
 */
import { Buffer } from 'node:buffer';
import { decodeIpv6, encodeIpv6 } from './address6.js';
import { Dhcp6DecodeError, Dhcp6EncodeError } from './errors.js';
import { decodeOptions, Dhcp6MessageType, Dhcp6Option, encodeOptions, type Dhcp6OptionTlv } from './options.js';

/** Relay levels accepted inside one datagram (RFC 8415 §7.6 HOP_COUNT_LIMIT is 8; one more for the client). */
export const MAX_RELAY_DEPTH = 9;

/** A client or server message (RFC 8415 §8). */
export interface Dhcp6ClientMessage {
  kind: 'client';
  /** Message type (RFC 8415 §7.3), anything but 12 and 13. */
  type: number;
  /** 24-bit transaction id. */
  transactionId: number;
  options: Dhcp6OptionTlv[];
}

/** A relay agent message (RFC 8415 §9); `message` is the content of its Relay Message option. */
export interface Dhcp6RelayMessage {
  kind: 'relay';
  type: typeof Dhcp6MessageType.relayForw | typeof Dhcp6MessageType.relayRepl;
  hopCount: number;
  /** Canonical text; `::` when the relay leaves it unspecified. */
  linkAddress: string;
  /** Canonical text: the client's (or the next relay's) source address. */
  peerAddress: string;
  /** The relay's options other than the Relay Message option (Interface-ID, option 79 …). */
  options: Dhcp6OptionTlv[];
  message: Dhcp6Message;
}

/** A decoded DHCPv6 datagram. */
export type Dhcp6Message = Dhcp6ClientMessage | Dhcp6RelayMessage;

/** Length rules of the options the server reads: exact, or at least `min`, or an even count. */
const LENGTHS: ReadonlyMap<number, { exact?: number; min?: number; max?: number; even?: boolean }> = new Map([
  [Dhcp6Option.clientId, { min: 3, max: 130 }],
  [Dhcp6Option.serverId, { min: 3, max: 130 }],
  [Dhcp6Option.iaNa, { min: 12 }],
  [Dhcp6Option.iaTa, { min: 4 }],
  [Dhcp6Option.iaAddr, { min: 24 }],
  [Dhcp6Option.oro, { even: true }],
  [Dhcp6Option.preference, { exact: 1 }],
  [Dhcp6Option.elapsedTime, { exact: 2 }],
  [Dhcp6Option.unicast, { exact: 16 }],
  [Dhcp6Option.statusCode, { min: 2 }],
  [Dhcp6Option.rapidCommit, { exact: 0 }],
  [Dhcp6Option.vendorClass, { min: 4 }],
  [Dhcp6Option.clientArchType, { min: 2, even: true }],
  [Dhcp6Option.clientNii, { exact: 3 }],
  [Dhcp6Option.clientLinkLayerAddress, { min: 3 }],
]);

/** Checks an RFC 8415 §21.15-style list of 2-byte-length-prefixed items in `value`. */
function checkLengthPrefixedList(value: Uint8Array, at: number, code: number): void {
  let i = 0;
  while (i < value.length) {
    if (i + 2 > value.length) throw new Dhcp6DecodeError(`option ${code} item length truncated`, at + i);
    const n = ((value[i] ?? 0) << 8) | (value[i + 1] ?? 0);
    if (i + 2 + n > value.length) throw new Dhcp6DecodeError(`option ${code} item of ${n} bytes runs past the option`, at + i);
    i += 2 + n;
  }
}

/** Validates `options` (views of `bytes`, which starts at datagram byte `base`) and the options nested in IA_NA, IA_TA and IAADDR. */
function checkOptions(options: readonly Dhcp6OptionTlv[], bytes: Uint8Array, base: number): void {
  for (const o of options) {
    const at = base + o.value.byteOffset - bytes.byteOffset - 4;
    const rule = LENGTHS.get(o.code);
    const n = o.value.length;
    if (rule !== undefined) {
      const bad = (rule.exact !== undefined && n !== rule.exact) || (rule.min !== undefined && n < rule.min) ||
        (rule.max !== undefined && n > rule.max) || (rule.even === true && n % 2 !== 0);
      if (bad) throw new Dhcp6DecodeError(`option ${o.code} has bad length ${n}`, at);
    }
    if (o.code === Dhcp6Option.userClass || o.code === Dhcp6Option.bootFileParameters) checkLengthPrefixedList(o.value, at + 4, o.code);
    if (o.code === Dhcp6Option.vendorClass) checkLengthPrefixedList(o.value.subarray(4), at + 8, o.code);
    const nestedAt = o.code === Dhcp6Option.iaNa ? 12 : o.code === Dhcp6Option.iaTa ? 4 : o.code === Dhcp6Option.iaAddr ? 24 : -1;
    if (nestedAt >= 0) checkOptions(decodeOptions(o.value, nestedAt, n, at + 4), bytes, base);
  }
}

/** Decodes `bytes` (a view of the datagram starting at `base`) at relay depth `depth`. */
function decodeAt(bytes: Uint8Array, base: number, depth: number): Dhcp6Message {
  if (bytes.length < 4) throw new Dhcp6DecodeError(`truncated header (${bytes.length} bytes)`, base + bytes.length);
  const type = bytes[0] ?? 0;
  if (type === 0) throw new Dhcp6DecodeError('message type 0', base);
  if (type !== Dhcp6MessageType.relayForw && type !== Dhcp6MessageType.relayRepl) {
    const options = decodeOptions(bytes, 4, bytes.length, base);
    checkOptions(options, bytes, base);
    if (options.some((o) => o.code === Dhcp6Option.relayMessage)) throw new Dhcp6DecodeError('relay message option outside a relay message', base + 4);
    return { kind: 'client', type, transactionId: ((bytes[1] ?? 0) << 16) | ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0), options };
  }
  if (bytes.length < 34) throw new Dhcp6DecodeError(`truncated relay header (${bytes.length} of 34 bytes)`, base + bytes.length);
  if (depth >= MAX_RELAY_DEPTH) throw new Dhcp6DecodeError(`relay messages nested deeper than ${MAX_RELAY_DEPTH}`, base);
  const all = decodeOptions(bytes, 34, bytes.length, base);
  const relayed = all.filter((o) => o.code === Dhcp6Option.relayMessage);
  const inner = relayed[0];
  if (relayed.length !== 1 || inner === undefined) throw new Dhcp6DecodeError(`relay message carries ${relayed.length} relay message options (exactly 1 needed)`, base + 34);
  const options = all.filter((o) => o.code !== Dhcp6Option.relayMessage);
  checkOptions(options, bytes, base);
  const innerBase = base + (inner.value.byteOffset - bytes.byteOffset);
  return {
    kind: 'relay', type, hopCount: bytes[1] ?? 0, linkAddress: decodeIpv6(bytes, 2), peerAddress: decodeIpv6(bytes, 18),
    options, message: decodeAt(inner.value, innerBase, depth + 1),
  };
}

/**
 * Decodes one UDP payload as a DHCPv6 message. Throws {@link Dhcp6DecodeError} (and nothing
 * else) on a truncated header, an option running past its container, a wrong-length option
 * the server reads, a malformed item list, a relay message without exactly one Relay Message
 * option, or relays nested deeper than {@link MAX_RELAY_DEPTH}. Option values are views of
 * one private copy of `buf`, so a reused receive buffer cannot change them.
 */
export function decodeDhcp6Message(buf: Uint8Array): Dhcp6Message {
  return decodeAt(new Uint8Array(buf), 0, 0);
}

/** The 16 bytes of an address field; throws {@link Dhcp6EncodeError} when malformed. */
function addressBytes(text: string, field: string): Uint8Array {
  const bytes = encodeIpv6(text);
  if (bytes === undefined) throw new Dhcp6EncodeError(`${field} "${text}" is not an IPv6 address`);
  return bytes;
}

/**
 * Encodes a message model (relay messages with their inner message as the Relay Message
 * option, after the relay's other options). Throws {@link Dhcp6EncodeError} for a bad type, transaction id, hop count,
 * address, or an option value over 65535 bytes.
 */
export function encodeDhcp6Message(m: Dhcp6Message): Buffer {
  if (m.kind === 'client') {
    if (!Number.isInteger(m.type) || m.type < 1 || m.type > 255 || m.type === 12 || m.type === 13) throw new Dhcp6EncodeError(`bad message type ${m.type}`);
    if (!Number.isInteger(m.transactionId) || m.transactionId < 0 || m.transactionId > 0xffffff) throw new Dhcp6EncodeError(`bad transaction id ${m.transactionId}`);
    const options = encodeOptions(m.options);
    const out = Buffer.alloc(4 + options.length);
    out[0] = m.type;
    out.writeUIntBE(m.transactionId, 1, 3);
    out.set(options, 4);
    return out;
  }
  if (!Number.isInteger(m.hopCount) || m.hopCount < 0 || m.hopCount > 255) throw new Dhcp6EncodeError(`bad hop count ${m.hopCount}`);
  const options = encodeOptions([...m.options, { code: Dhcp6Option.relayMessage, value: encodeDhcp6Message(m.message) }]);
  const out = Buffer.alloc(34 + options.length);
  out[0] = m.type;
  out[1] = m.hopCount;
  out.set(addressBytes(m.linkAddress, 'link-address'), 2);
  out.set(addressBytes(m.peerAddress, 'peer-address'), 18);
  out.set(options, 34);
  return out;
}

/** The client's message inside any relay layers, and the relay layers outermost first. */
export function unwrapRelays(m: Dhcp6Message): { client: Dhcp6ClientMessage; relays: Dhcp6RelayMessage[] } {
  const relays: Dhcp6RelayMessage[] = [];
  let at: Dhcp6Message = m;
  while (at.kind === 'relay') {
    relays.push(at);
    at = at.message;
  }
  return { client: at, relays };
}
