/**
 * @module TFTP packet codec: RRQ, WRQ, DATA, ACK, ERROR (RFC 1350 §5) and OACK (RFC 2347),
 * with request options kept as ordered, lower-cased name/value pairs (RFC 2347: "each
 * NULL-terminated field is specified in case-insensitive ASCII"); option values are interpreted
 * by `options.ts`. Strings are read byte-for-byte (latin1) so no input byte is lost or
 * replaced; which file names are acceptable is `path.ts`'s decision.
 * {@link decodeTftpPacket} throws only {@link TftpDecodeError}.
 * @pure
 */
import { TftpDecodeError, TftpEncodeError } from './errors.js';

/** Opcodes (RFC 1350 §5, OACK from RFC 2347). */
export const TftpOpcode = { rrq: 1, wrq: 2, data: 3, ack: 4, error: 5, oack: 6 } as const;

/** The largest block number; block numbers wrap past it (see `transfer.ts`). */
export const MAX_BLOCK_NUMBER = 0xffff;

/** One option as it appeared on the wire: name lower-cased, value verbatim. */
export interface TftpOptionPair {
  readonly name: string;
  readonly value: string;
}

/** A decoded TFTP packet. */
export type TftpPacket =
  | {
      readonly kind: 'rrq' | 'wrq';
      readonly filename: string;
      /** Transfer mode, lower-cased (`octet`, `netascii`, `mail` — or whatever the client sent). */
      readonly mode: string;
      /** Options in wire order; a repeated name keeps its first value. */
      readonly options: readonly TftpOptionPair[];
    }
  | { readonly kind: 'data'; readonly block: number; readonly data: Uint8Array }
  | { readonly kind: 'ack'; readonly block: number }
  | { readonly kind: 'error'; readonly errorCode: number; readonly message: string }
  | { readonly kind: 'oack'; readonly options: readonly TftpOptionPair[] };

/** A NUL-terminated string read at `offset`; `next` is the offset after its NUL. */
function readString(bytes: Uint8Array, offset: number, what: string): { text: string; next: number } {
  const end = bytes.indexOf(0, offset);
  if (end < 0) throw new TftpDecodeError(`${what} is not NUL-terminated`, offset);
  return { text: Buffer.from(bytes.buffer, bytes.byteOffset + offset, end - offset).toString('latin1'), next: end + 1 };
}

/** True when every byte from `offset` on is NUL (some clients pad requests with zeros). */
function onlyPadding(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** Option name/value pairs from `offset` to the end (RFC 2347 request and OACK layout). */
function readOptions(bytes: Uint8Array, offset: number): TftpOptionPair[] {
  const options: TftpOptionPair[] = [];
  const seen = new Set<string>();
  let at = offset;
  while (at < bytes.length) {
    if (bytes[at] === 0 && onlyPadding(bytes, at)) break;
    const name = readString(bytes, at, 'option name');
    if (name.text.length === 0) throw new TftpDecodeError('empty option name', at);
    if (name.next >= bytes.length) throw new TftpDecodeError(`option "${name.text}" has no value`, name.next);
    const value = readString(bytes, name.next, `value of option "${name.text}"`);
    const lower = name.text.toLowerCase();
    if (!seen.has(lower)) {
      seen.add(lower);
      options.push({ name: lower, value: value.text });
    }
    at = value.next;
  }
  return options;
}

function readBlock(bytes: Uint8Array, what: string): number {
  if (bytes.length < 4) throw new TftpDecodeError(`${what} is ${bytes.length} bytes, shorter than its 4-byte header`, bytes.length);
  return ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0);
}

/**
 * Decodes one datagram into a {@link TftpPacket}; throws {@link TftpDecodeError} (with the
 * offending offset) for anything that is not a well-formed packet. Trailing NUL padding after
 * request options is tolerated, as are bytes after an ACK's block number and an ERROR message
 * without its final NUL (both seen from embedded clients).
 */
export function decodeTftpPacket(bytes: Uint8Array): TftpPacket {
  if (bytes.length < 2) throw new TftpDecodeError('datagram is shorter than the 2-byte opcode', 0);
  const opcode = ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0);
  switch (opcode) {
    case TftpOpcode.rrq:
    case TftpOpcode.wrq: {
      const filename = readString(bytes, 2, 'filename');
      if (filename.text.length === 0) throw new TftpDecodeError('empty filename', 2);
      if (filename.next >= bytes.length) throw new TftpDecodeError('mode is missing', filename.next);
      const mode = readString(bytes, filename.next, 'mode');
      if (mode.text.length === 0) throw new TftpDecodeError('empty mode', filename.next);
      const kind = opcode === TftpOpcode.rrq ? 'rrq' : 'wrq';
      return { kind, filename: filename.text, mode: mode.text.toLowerCase(), options: readOptions(bytes, mode.next) };
    }
    case TftpOpcode.data:
      return { kind: 'data', block: readBlock(bytes, 'DATA'), data: bytes.subarray(4) };
    case TftpOpcode.ack:
      return { kind: 'ack', block: readBlock(bytes, 'ACK') };
    case TftpOpcode.error: {
      const errorCode = readBlock(bytes, 'ERROR');
      const end = bytes.indexOf(0, 4);
      const message = Buffer.from(bytes.buffer, bytes.byteOffset + 4, (end < 0 ? bytes.length : end) - 4).toString('latin1');
      return { kind: 'error', errorCode, message };
    }
    case TftpOpcode.oack:
      return { kind: 'oack', options: readOptions(bytes, 2) };
    default:
      throw new TftpDecodeError(`unknown opcode ${opcode}`, 0);
  }
}

function checkBlock(block: number): void {
  if (!Number.isInteger(block) || block < 0 || block > MAX_BLOCK_NUMBER) throw new TftpEncodeError(`block number ${block} is not in 0–65535`);
}

function checkString(text: string, what: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0 || c > 0xff) throw new TftpEncodeError(`${what} contains ${c === 0 ? 'a NUL' : 'a non-latin1 character'} at index ${i}`);
  }
}

function encodeStrings(opcode: number, strings: readonly string[]): Buffer {
  const size = strings.reduce((n, s) => n + s.length + 1, 2);
  const out = Buffer.alloc(size);
  out.writeUInt16BE(opcode, 0);
  let at = 2;
  for (const s of strings) {
    at += out.write(s, at, 'latin1') + 1;
  }
  return out;
}

function optionStrings(options: readonly TftpOptionPair[]): string[] {
  return options.flatMap((o) => {
    checkString(o.name, 'option name');
    checkString(o.value, `value of option "${o.name}"`);
    if (o.name.length === 0) throw new TftpEncodeError('empty option name');
    return [o.name, o.value];
  });
}

/** Encodes a read or write request (used by test clients and benchmarks; the server only decodes them). */
export function encodeTftpRequest(kind: 'rrq' | 'wrq', filename: string, mode = 'octet', options: readonly TftpOptionPair[] = []): Buffer {
  checkString(filename, 'filename');
  checkString(mode, 'mode');
  if (filename.length === 0) throw new TftpEncodeError('empty filename');
  return encodeStrings(kind === 'rrq' ? TftpOpcode.rrq : TftpOpcode.wrq, [filename, mode, ...optionStrings(options)]);
}

/** Writes the 4-byte DATA header for `block` at the start of `target` (the payload follows it). */
export function writeDataHeader(target: Buffer, block: number): void {
  checkBlock(block);
  target.writeUInt16BE(TftpOpcode.data, 0);
  target.writeUInt16BE(block, 2);
}

/** The 4-byte DATA header for `block`. */
export function encodeDataHeader(block: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  writeDataHeader(out, block);
  return out;
}

/** Encodes a DATA packet: header and a copy of `data`. */
export function encodeDataPacket(block: number, data: Uint8Array): Buffer {
  return Buffer.concat([encodeDataHeader(block), data]);
}

/** Encodes an ACK of `block`. */
export function encodeAckPacket(block: number): Buffer {
  checkBlock(block);
  const out = Buffer.allocUnsafe(4);
  out.writeUInt16BE(TftpOpcode.ack, 0);
  out.writeUInt16BE(block, 2);
  return out;
}

/** Encodes an ERROR packet; `message` is truncated to 255 characters so it always fits one datagram. */
export function encodeErrorPacket(errorCode: number, message: string): Buffer {
  checkBlock(errorCode);
  const text = message.slice(0, 255);
  checkString(text, 'error message');
  const out = Buffer.alloc(4 + text.length + 1);
  out.writeUInt16BE(TftpOpcode.error, 0);
  out.writeUInt16BE(errorCode, 2);
  out.write(text, 4, 'latin1');
  return out;
}

/** Encodes an OACK carrying `options` in the given order (RFC 2347). */
export function encodeOackPacket(options: readonly TftpOptionPair[]): Buffer {
  return encodeStrings(TftpOpcode.oack, optionStrings(options));
}
