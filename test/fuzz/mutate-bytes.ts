/**
 * @module Byte-level mutations for binary protocols (DHCP, TFTP, RMCP+/IPMI): bit and byte
 * flips, truncation, extension, insertion and deletion, slice duplication, splices between
 * seeds, length-field corruption (1-, 2- and 4-byte fields in both byte orders set to boundary
 * values), dictionary tokens, and wholly random datagrams. One call stacks 1–4 of them.
 */
import type { Dice } from './dice.js';

/** What a byte mutator may draw on besides the input itself. */
export interface ByteMutationOptions {
  /** Other real inputs, for splices. */
  readonly seeds: readonly Uint8Array[];
  /** Protocol tokens worth inserting (option TLVs, keywords, separators). */
  readonly tokens?: readonly Uint8Array[];
  /** Offsets of known length fields (a hint; random offsets are used too). */
  readonly lengthOffsets?: readonly number[];
  /** Upper bound of a grown input; default 4096 bytes. */
  readonly maxBytes?: number;
  /** Extra target-specific mutation, given a turn like the built-in ones. */
  readonly custom?: (dice: Dice, bytes: Buffer) => Buffer;
}

/** Values that break length arithmetic: zero, one, sign bits, all-ones, just past small buffers. */
export const BOUNDARY_VALUES = [0, 1, 2, 3, 4, 7, 8, 15, 16, 0x3f, 0x40, 0x7f, 0x80, 0xfe, 0xff, 0x100, 0x7fff, 0x8000, 0xfffe, 0xffff,
  0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff] as const;

function writeField(dice: Dice, b: Buffer, at: number): void {
  const width = dice.pick([1, 2, 4] as const);
  if (at + width > b.length) return;
  const value = dice.chance(0.8) ? dice.pick(BOUNDARY_VALUES) : dice.int(2 ** 32);
  const masked = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
  if (width === 1) b[at] = masked;
  else if (width === 2) {
    if (dice.chance(0.5)) b.writeUInt16LE(masked, at);
    else b.writeUInt16BE(masked, at);
  } else if (dice.chance(0.5)) b.writeUInt32LE(masked, at);
  else b.writeUInt32BE(masked, at);
}

function insert(b: Buffer, at: number, extra: Uint8Array): Buffer {
  return Buffer.concat([b.subarray(0, at), extra, b.subarray(at)]);
}

/** One mutation of `b` (a fresh or the same buffer). */
function mutateOnce(dice: Dice, b: Buffer, o: ByteMutationOptions, maxBytes: number): Buffer {
  switch (dice.int(o.custom === undefined ? 12 : 13)) {
    case 0: { // flip single bits
      for (let k = dice.range(1, 4); k > 0 && b.length > 0; k--) {
        const at = dice.int(b.length);
        b[at] = (b[at] ?? 0) ^ (1 << dice.int(8));
      }
      return b;
    }
    case 1: { // overwrite bytes
      for (let k = dice.range(1, 8); k > 0 && b.length > 0; k--) b[dice.int(b.length)] = dice.chance(0.5) ? dice.int(256) : dice.pick([0, 0xff, 0x7f, 0x80]);
      return b;
    }
    case 2: // truncate
      return b.subarray(0, dice.int(b.length + 1));
    case 3: // extend at the end
      return Buffer.concat([b, dice.bytes(Math.min(dice.size(256), Math.max(0, maxBytes - b.length)))]);
    case 4: // insert random bytes
      return insert(b, dice.int(b.length + 1), dice.bytes(dice.range(1, 40)));
    case 5: { // delete a slice
      const at = dice.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), b.subarray(at + dice.range(1, 32))]);
    }
    case 6: { // duplicate a slice (repeated fields, options)
      const from = dice.int(b.length);
      const slice = b.subarray(from, from + dice.range(1, 64));
      return insert(b, dice.int(b.length + 1), Buffer.from(slice));
    }
    case 7: { // splice with another seed, at independent cut points
      const other = dice.pick(o.seeds);
      const cut = dice.int(b.length + 1);
      const otherCut = dice.chance(0.5) ? cut : dice.int(other.length + 1);
      return Buffer.concat([b.subarray(0, cut), other.subarray(otherCut)]);
    }
    case 8: // corrupt a length field: a hinted offset or a random one
    case 9: {
      if (b.length === 0) return b;
      const hinted = o.lengthOffsets !== undefined && o.lengthOffsets.length > 0 && dice.chance(0.5);
      writeField(dice, b, hinted ? dice.pick(o.lengthOffsets ?? []) : dice.int(b.length));
      return b;
    }
    case 10: { // dictionary token
      if (o.tokens === undefined || o.tokens.length === 0) return b;
      const token = dice.pick(o.tokens);
      const at = dice.int(b.length + 1);
      if (dice.chance(0.5)) return insert(b, at, token);
      const out = Buffer.from(b);
      Buffer.from(token).copy(out, Math.min(at, Math.max(0, out.length - 1)));
      return out;
    }
    case 11: // random bytes, sometimes behind the input's first bytes (a valid header)
      return dice.chance(0.5) ? dice.bytes(dice.size(maxBytes)) : Buffer.concat([b.subarray(0, dice.int(b.length + 1)), dice.bytes(dice.size(512))]);
    default:
      return o.custom === undefined ? b : o.custom(dice, b);
  }
}

/** A mutated copy of `input`: 1–4 stacked mutations, never longer than `maxBytes` (+ one insertion). */
export function mutateBytes(dice: Dice, input: Uint8Array, options: ByteMutationOptions): Buffer {
  const maxBytes = options.maxBytes ?? 4096;
  let b: Buffer = Buffer.from(input);
  for (let rounds = dice.range(1, 4); rounds > 0; rounds--) {
    b = mutateOnce(dice, b, options, maxBytes);
    if (b.length > maxBytes) b = b.subarray(0, maxBytes);
  }
  return b;
}

/** Hex of at most `maxBytes` bytes of `bytes`, for failure messages. */
export function showBytes(bytes: Uint8Array, maxBytes = 2048): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, maxBytes)).toString('hex');
  return `${bytes.length} bytes: ${hex}${bytes.length > maxBytes ? '…' : ''}`;
}
