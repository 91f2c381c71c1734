/**
 * @module The BOOTP/DHCP message codec (RFC 951, RFC 2131 §2, RFC 2132): the 236-byte fixed
 * header, the magic cookie, and the options area with option overload (52) into `file` and
 * `sname` and RFC 3396 concatenation of split options. {@link decodeDhcpPacket} throws only
 * {@link DhcpDecodeError} and always terminates; {@link encodeDhcpPacket} writes options in a
 * stable order, overloads `file`/`sname` only when the options would not fit otherwise, and
 * pads to the 300-byte BOOTP minimum.
 * @pure
 */
import { Buffer } from 'node:buffer';
import { decodeIpv4, encodeIpv4 } from './address.js';
import { DhcpDecodeError, DhcpEncodeError } from './errors.js';
import {
  concatenateOptions,
  createOptionAccumulator,
  decodeOptionArea,
  decodeText,
  DhcpOption,
  encodeOptionTlvs,
  type DhcpOptions,
} from './options.js';

/** BOOTP `op` values (RFC 951). */
export const BootpOp = { request: 1, reply: 2 } as const;

/** The BROADCAST bit of `flags` (RFC 2131 §2, figure 2). */
export const BROADCAST_FLAG = 0x8000;

/** The DHCP magic cookie 99.130.83.99 (RFC 2131 §3). */
export const MAGIC_COOKIE = Uint8Array.of(99, 130, 83, 99);

/** Size of the fixed BOOTP header before the magic cookie. */
export const HEADER_BYTES = 236;

/** Smallest encoded message: the BOOTP 300-byte minimum (RFC 951 vendor area of 64 bytes). */
export const MIN_PACKET_BYTES = 300;

/** Largest message every client must accept: 576-byte IP datagram − 28 (RFC 2131 §2). */
export const DEFAULT_MAX_PACKET_BYTES = 548;

const SNAME_OFFSET = 44;
const SNAME_BYTES = 64;
const FILE_OFFSET = 108;
const FILE_BYTES = 128;
const OPTIONS_OFFSET = 240;

/** A decoded BOOTP/DHCP message. Addresses are dotted quads; `0.0.0.0` means unset. */
export interface DhcpPacket {
  /** 1 = BOOTREQUEST, 2 = BOOTREPLY. */
  op: number;
  /** Hardware type (1 = Ethernet). */
  htype: number;
  /** Hardware address length, 0–16. */
  hlen: number;
  hops: number;
  /** Transaction id, unsigned 32-bit. */
  xid: number;
  secs: number;
  /** Flags; only {@link BROADCAST_FLAG} is defined. */
  flags: number;
  ciaddr: string;
  yiaddr: string;
  siaddr: string;
  giaddr: string;
  /** The 16-byte `chaddr` field as on the wire; the address is its first `hlen` bytes. */
  chaddr: Uint8Array;
  /** Server host name; `''` when unset or when the field carried options. */
  sname: string;
  /** Boot file name; `''` when unset or when the field carried options. */
  file: string;
  /** Options, split instances concatenated; 52 (overload) is consumed by the codec. */
  options: DhcpOptions;
}

/** Fixed-length options validated at decode time: a wrong length is a malformed packet. */
const FIXED_LENGTH: ReadonlyMap<number, number> = new Map([
  [DhcpOption.messageType, 1],
  [DhcpOption.requestedAddress, 4],
  [DhcpOption.leaseTime, 4],
  [DhcpOption.serverIdentifier, 4],
  [DhcpOption.maxMessageSize, 2],
  [DhcpOption.clientNetworkInterface, 3],
]);

/** Decodes a NUL-terminated Latin-1 string field. */
function decodeField(bytes: Uint8Array, offset: number, length: number): string {
  const field = bytes.subarray(offset, offset + length);
  const nul = field.indexOf(0);
  return decodeText(nul < 0 ? field : field.subarray(0, nul));
}

/**
 * Decodes one UDP payload as a BOOTP/DHCP message. Throws {@link DhcpDecodeError} (and
 * nothing else) on a truncated header, bad `op` or `hlen`, missing or wrong magic cookie,
 * an option running past its area, a bad overload value, or a wrong-length fixed-size option.
 */
export function decodeDhcpPacket(buf: Uint8Array): DhcpPacket {
  if (buf.length < HEADER_BYTES) throw new DhcpDecodeError(`truncated header (${buf.length} of ${HEADER_BYTES} bytes)`, buf.length);
  const op = buf[0] ?? 0;
  if (op !== BootpOp.request && op !== BootpOp.reply) throw new DhcpDecodeError(`bad op ${op}`, 0);
  const hlen = buf[2] ?? 0;
  if (hlen > 16) throw new DhcpDecodeError(`bad hlen ${hlen} (chaddr holds 16 bytes)`, 2);
  if (buf.length < OPTIONS_OFFSET) throw new DhcpDecodeError('truncated magic cookie', buf.length);
  for (let i = 0; i < 4; i++) {
    if (buf[HEADER_BYTES + i] !== MAGIC_COOKIE[i]) throw new DhcpDecodeError('bad magic cookie', HEADER_BYTES);
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  // One copy of the datagram: option values are views of it, so they neither alias a receive
  // buffer the caller reuses nor cost a backing store each.
  const own = new Uint8Array(buf);
  const acc = createOptionAccumulator();
  decodeOptionArea(own, OPTIONS_OFFSET, own.length, acc);
  // RFC 2131 §4.1: the overload option appears in the options field; `file` is read next, then `sname`.
  const overloadChunks = acc.chunks.get(DhcpOption.overload);
  let overload = 0;
  if (overloadChunks !== undefined) {
    const at = acc.firstOffset.get(DhcpOption.overload) ?? OPTIONS_OFFSET;
    const first = overloadChunks[0];
    if (overloadChunks.length !== 1 || first?.length !== 1) throw new DhcpDecodeError('option 52 must appear once with length 1', at);
    overload = first[0] ?? 0;
    if (overload < 1 || overload > 3) throw new DhcpDecodeError(`bad option overload value ${overload}`, at + 2);
    acc.chunks.delete(DhcpOption.overload);
    if (overload & 1) decodeOptionArea(own, FILE_OFFSET, FILE_OFFSET + FILE_BYTES, acc);
    if (overload & 2) decodeOptionArea(own, SNAME_OFFSET, SNAME_OFFSET + SNAME_BYTES, acc);
    acc.chunks.delete(DhcpOption.overload);
  }
  const options = concatenateOptions(acc);
  for (const [code, length] of FIXED_LENGTH) {
    const value = options.get(code);
    if (value !== undefined && value.length !== length) {
      throw new DhcpDecodeError(`option ${code} has length ${value.length}, expected ${length}`, acc.firstOffset.get(code) ?? OPTIONS_OFFSET);
    }
  }
  const arch = options.get(DhcpOption.clientArchitecture);
  if (arch !== undefined && (arch.length === 0 || arch.length % 2 !== 0)) {
    throw new DhcpDecodeError(`option 93 has odd or zero length ${arch.length}`, acc.firstOffset.get(DhcpOption.clientArchitecture) ?? OPTIONS_OFFSET);
  }
  return {
    op,
    htype: buf[1] ?? 0,
    hlen,
    hops: buf[3] ?? 0,
    xid: view.getUint32(4),
    secs: view.getUint16(8),
    flags: view.getUint16(10),
    ciaddr: decodeIpv4(buf, 12),
    yiaddr: decodeIpv4(buf, 16),
    siaddr: decodeIpv4(buf, 20),
    giaddr: decodeIpv4(buf, 24),
    chaddr: new Uint8Array(buf.subarray(28, 44)),
    sname: overload & 2 ? '' : decodeField(buf, SNAME_OFFSET, SNAME_BYTES),
    file: overload & 1 ? '' : decodeField(buf, FILE_OFFSET, FILE_BYTES),
    options,
  };
}

/** Options for {@link encodeDhcpPacket}. */
export interface EncodeDhcpPacketOptions {
  /** Largest message to produce, in bytes of UDP payload (default 548; see {@link maxReplyBytes}). */
  maxPacketBytes?: number;
}

/** Writes an address field; throws {@link DhcpEncodeError} on a malformed address. */
function writeAddress(out: Buffer, offset: number, address: string, field: string): void {
  const bytes = encodeIpv4(address);
  if (bytes === undefined) throw new DhcpEncodeError(`${field} "${address}" is not an IPv4 address`);
  out.set(bytes, offset);
}

/** Writes a Latin-1 string field, which must leave no byte past `length`. */
function writeField(out: Buffer, offset: number, length: number, text: string, field: string): void {
  const bytes = Buffer.from(text, 'latin1');
  if (bytes.length > length) throw new DhcpEncodeError(`${field} is ${bytes.length} bytes, the field holds ${length}`);
  out.set(bytes, offset);
}

/** An option area being filled: where it starts, how much it holds, what was written. */
interface Area {
  start: number;
  capacity: number;
  used: number;
}

/**
 * Encodes a packet model. Options go into the options field while they fit within
 * `maxPacketBytes`; the rest overflow into `file` and then `sname` when those are empty, with
 * option 52 announcing it (RFC 2131 §4.1). An option of at most 255 bytes is never split
 * across areas (ROMs without RFC 3396 would misread it). Throws {@link DhcpEncodeError} when
 * a field is malformed or the options cannot fit.
 */
export function encodeDhcpPacket(p: DhcpPacket, opts: EncodeDhcpPacketOptions = {}): Buffer {
  const requested = opts.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
  if (!Number.isFinite(requested)) throw new DhcpEncodeError(`maxPacketBytes ${requested} is not a finite number`);
  const maxBytes = Math.min(65507, Math.max(MIN_PACKET_BYTES, Math.floor(requested)));
  if (p.chaddr.length > 16) throw new DhcpEncodeError(`chaddr is ${p.chaddr.length} bytes, the field holds 16`);
  const tlvs = encodeOptionTlvs(p.options);
  const total = tlvs.reduce((n, t) => n + t.length, 0);
  const mainCapacity = maxBytes - OPTIONS_OFFSET;
  const areas: Area[] = [];
  if (total + 1 <= mainCapacity) {
    areas.push({ start: OPTIONS_OFFSET, capacity: mainCapacity, used: 0 });
  } else {
    // Reserve 3 bytes for option 52 in the options field; overflow areas each keep 1 byte for `end`.
    areas.push({ start: OPTIONS_OFFSET + 3, capacity: mainCapacity - 3, used: 0 });
    if (p.file === '') areas.push({ start: FILE_OFFSET, capacity: FILE_BYTES, used: 0 });
    if (p.sname === '') areas.push({ start: SNAME_OFFSET, capacity: SNAME_BYTES, used: 0 });
  }
  const out = Buffer.alloc(maxBytes);
  let area = 0;
  for (const tlv of tlvs) {
    let target = areas[area];
    while (target !== undefined && target.used + tlv.length + 1 > target.capacity) target = areas[++area];
    if (target === undefined) throw new DhcpEncodeError(`options (${total} bytes) do not fit in ${maxBytes} bytes`);
    out.set(tlv, target.start + target.used);
    target.used += tlv.length;
  }
  let overload = 0;
  for (const [i, a] of areas.entries()) {
    if (i > 0 && a.used === 0) continue;
    out[a.start + a.used] = DhcpOption.end;
    if (a.start === FILE_OFFSET && a.used > 0) overload |= 1;
    if (a.start === SNAME_OFFSET && a.used > 0) overload |= 2;
  }
  const main = areas[0] ?? { start: OPTIONS_OFFSET, used: 0 };
  if (main.start !== OPTIONS_OFFSET) {
    if (overload === 0) {
      // Nothing overflowed after all: shift the options back over the reserved bytes.
      out.copy(out, OPTIONS_OFFSET, main.start, main.start + main.used + 1);
      main.start = OPTIONS_OFFSET;
    } else {
      out.set([DhcpOption.overload, 1, overload], OPTIONS_OFFSET);
    }
  }
  out[0] = p.op;
  out[1] = p.htype;
  out[2] = p.hlen;
  out[3] = p.hops;
  out.writeUInt32BE(p.xid >>> 0, 4);
  out.writeUInt16BE(p.secs & 0xffff, 8);
  out.writeUInt16BE(p.flags & 0xffff, 10);
  writeAddress(out, 12, p.ciaddr, 'ciaddr');
  writeAddress(out, 16, p.yiaddr, 'yiaddr');
  writeAddress(out, 20, p.siaddr, 'siaddr');
  writeAddress(out, 24, p.giaddr, 'giaddr');
  out.set(p.chaddr, 28);
  if (!(overload & 2)) writeField(out, SNAME_OFFSET, SNAME_BYTES, p.sname, 'sname');
  if (!(overload & 1)) writeField(out, FILE_OFFSET, FILE_BYTES, p.file, 'file');
  out.set(MAGIC_COOKIE, HEADER_BYTES);
  const length = Math.max(MIN_PACKET_BYTES, main.start + main.used + 1);
  return out.subarray(0, length);
}

/**
 * The largest reply a client accepts, in bytes of UDP payload: its option 57 less the 28 bytes
 * of IP and UDP headers (option 57 counts the whole datagram, RFC 2132 §9.10; values below
 * 576 are raised to it), capped at 1472 (an Ethernet MTU) — 548 without option 57.
 */
export function maxReplyBytes(request: DhcpPacket): number {
  const v = request.options.get(DhcpOption.maxMessageSize);
  if (v?.length !== 2) return DEFAULT_MAX_PACKET_BYTES;
  const size = ((v[0] ?? 0) << 8) | (v[1] ?? 0);
  return Math.min(1472, Math.max(576, size) - 28);
}
