/**
 * @module DHCP option codes (RFC 2132 and the PXE/iPXE extensions), the option TLV area codec
 * with RFC 3396 concatenation of split options, and small value encoders used to build
 * replies. Typed accessors for individual options live in `option-values.ts`; encapsulated
 * option 43 (PXE) and 175 (iPXE) in `encapsulated.ts`.
 * @pure
 */
import { DhcpDecodeError, DhcpEncodeError } from './errors.js';
import { encodeIpv4 } from './address.js';

/** Option codes this server reads or writes (RFC 2132 unless noted). */
export const DhcpOption = {
  pad: 0,
  subnetMask: 1,
  router: 3,
  dnsServers: 6,
  hostName: 12,
  domainName: 15,
  broadcastAddress: 28,
  /** Vendor-specific information; PXE sub-options (PXE 2.1 spec, RFC 4578 §2.4 note). */
  vendorSpecific: 43,
  requestedAddress: 50,
  leaseTime: 51,
  /** Option overload: 1 = `file` holds options, 2 = `sname`, 3 = both (RFC 2132 §9.3). */
  overload: 52,
  messageType: 53,
  serverIdentifier: 54,
  parameterRequestList: 55,
  message: 56,
  maxMessageSize: 57,
  renewalTime: 58,
  rebindingTime: 59,
  vendorClass: 60,
  clientIdentifier: 61,
  tftpServerName: 66,
  bootFileName: 67,
  /** User class (RFC 3004; iPXE sends the bare string `iPXE`). */
  userClass: 77,
  /** Relay agent information (RFC 3046); echoed unchanged, last. */
  relayAgentInformation: 82,
  /** Client system architecture list (RFC 4578 §2.1). */
  clientArchitecture: 93,
  /** Client network device interface (RFC 4578 §2.2). */
  clientNetworkInterface: 94,
  /** Client machine identifier, type 0 + 16-byte GUID (RFC 4578 §2.3). */
  clientMachineId: 97,
  /** iPXE encapsulated options (iPXE `DHCP_EB_ENCAP`). */
  ipxeEncapsulated: 175,
  end: 255,
} as const;

/** DHCP message types carried in option 53 (RFC 2132 §9.6). */
export const DhcpMessageType = {
  discover: 1,
  offer: 2,
  request: 3,
  decline: 4,
  ack: 5,
  nak: 6,
  release: 7,
  inform: 8,
} as const;

/** One of the option-53 values of {@link DhcpMessageType}. */
export type DhcpMessageTypeValue = (typeof DhcpMessageType)[keyof typeof DhcpMessageType];

/** Options of a packet: code → value, split instances already concatenated (RFC 3396). */
export type DhcpOptions = ReadonlyMap<number, Uint8Array>;

/** Collects option instances across the option areas of one packet (RFC 3396 §5). */
export interface OptionAccumulator {
  /** Value chunks per code, in the order options → file → sname. */
  readonly chunks: Map<number, Uint8Array[]>;
  /** Byte offset (into the datagram) of the first instance of each code, for error reports. */
  readonly firstOffset: Map<number, number>;
}

/** Creates an empty {@link OptionAccumulator}. */
export function createOptionAccumulator(): OptionAccumulator {
  return { chunks: new Map(), firstOffset: new Map() };
}

/**
 * Reads the option TLVs in `bytes[start, end)` into `acc` as views of `bytes` (so `bytes` must
 * be the caller's own copy, never a reused receive buffer: `decodeDhcpPacket` copies the
 * datagram once and every value views that copy), skipping pads and stopping at the
 * end option; running out of bytes without an end option is tolerated (several ROMs omit it
 * from overloaded fields). Throws {@link DhcpDecodeError} when a length byte is missing or a
 * value runs past `end`. Every iteration consumes at least one byte, so it always terminates.
 */
export function decodeOptionArea(bytes: Uint8Array, start: number, end: number, acc: OptionAccumulator): void {
  let i = start;
  while (i < end) {
    const code = bytes[i] ?? DhcpOption.end;
    if (code === DhcpOption.pad) {
      i += 1;
      continue;
    }
    if (code === DhcpOption.end) return;
    if (i + 1 >= end) throw new DhcpDecodeError(`option ${code} has no length byte`, i);
    const length = bytes[i + 1] ?? 0;
    if (i + 2 + length > end) throw new DhcpDecodeError(`option ${code} length ${length} runs past the end of its area`, i + 1);
    const list = acc.chunks.get(code);
    // A plain view (not Buffer#subarray, which builds a Buffer): one small object per option.
    const value = new Uint8Array(bytes.buffer, bytes.byteOffset + i + 2, length);
    if (list === undefined) {
      acc.chunks.set(code, [value]);
      acc.firstOffset.set(code, i);
    } else {
      list.push(value);
    }
    i += 2 + length;
  }
}

/** Concatenates the chunks of every option (RFC 3396 §7: in order of appearance). */
export function concatenateOptions(acc: OptionAccumulator): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  for (const [code, chunks] of acc.chunks) {
    if (chunks.length === 1 && chunks[0] !== undefined) {
      out.set(code, chunks[0]);
      continue;
    }
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const joined = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      joined.set(c, at);
      at += c.length;
    }
    out.set(code, joined);
  }
  return out;
}

/**
 * The order options are written in: message type first (RFC 2131 §3 examples and every ROM
 * expect it early), server identifier next, then ascending codes, and relay agent information
 * last (RFC 3046 §2.2: "SHOULD copy the Relay Agent Information option as the last DHCP option").
 */
export function orderOptionCodes(codes: Iterable<number>): number[] {
  const rank = (code: number): number =>
    code === DhcpOption.messageType ? -2 : code === DhcpOption.serverIdentifier ? -1 : code === DhcpOption.relayAgentInformation ? 256 : code;
  return [...codes].sort((a, b) => rank(a) - rank(b));
}

/**
 * Serialises each option as one or more TLV byte strings, in {@link orderOptionCodes} order;
 * values longer than 255 bytes are split into consecutive instances (RFC 3396 §4). Pad, end
 * and overload are managed by the packet encoder and rejected here.
 */
export function encodeOptionTlvs(options: DhcpOptions): Uint8Array[] {
  const tlvs: Uint8Array[] = [];
  for (const code of orderOptionCodes(options.keys())) {
    if (!Number.isInteger(code) || code <= DhcpOption.pad || code >= DhcpOption.end || code === DhcpOption.overload) {
      throw new DhcpEncodeError(`option code ${code} cannot be set directly`);
    }
    const value = options.get(code) ?? new Uint8Array(0);
    let at = 0;
    do {
      const length = Math.min(255, value.length - at);
      const tlv = new Uint8Array(2 + length);
      tlv[0] = code;
      tlv[1] = length;
      tlv.set(value.subarray(at, at + length), 2);
      tlvs.push(tlv);
      at += length;
    } while (at < value.length);
  }
  return tlvs;
}

/** Encodes a one-byte option value. */
export function encodeUint8(value: number): Uint8Array {
  return Uint8Array.of(value & 0xff);
}

/** Encodes a big-endian 16-bit option value. */
export function encodeUint16(value: number): Uint8Array {
  return Uint8Array.of((value >>> 8) & 0xff, value & 0xff);
}

/** Encodes a big-endian 32-bit option value (lease times in seconds, RFC 2132 §9.2). */
export function encodeUint32(value: number): Uint8Array {
  const v = value >>> 0;
  return Uint8Array.of(v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
}

/** Encodes a list of dotted-quad addresses; throws {@link DhcpEncodeError} on a malformed one. */
export function encodeAddressList(addresses: readonly string[]): Uint8Array {
  const out = new Uint8Array(addresses.length * 4);
  addresses.forEach((a, i) => {
    const bytes = encodeIpv4(a);
    if (bytes === undefined) throw new DhcpEncodeError(`"${a}" is not an IPv4 address`);
    out.set(bytes, i * 4);
  });
  return out;
}

/** Encodes text as option bytes (Latin-1: one byte per character, as DHCP NVT ASCII expects). */
export function encodeText(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}

/** Decodes option bytes as Latin-1 text (never fails; NUL bytes are kept). */
export function decodeText(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}
