/**
 * @module TFTP option parsing and negotiation (RFC 2347 option extension):
 * - `blksize` 8–65464 octets (RFC 2348 §2), the server may answer a smaller value;
 * - `tsize` (RFC 2349 §4): a read request carries 0 and the OACK returns the file's size;
 * - `timeout` 1–255 seconds (RFC 2349 §3): the server retransmits after that many seconds and
 *   echoes the value unchanged — it may not change it, only decline it by leaving it out;
 * - `windowsize` 1–65535 blocks (RFC 7440 §3), the server may answer a smaller value.
 * Names are case-insensitive (already lower-cased by the codec). Unknown options and values
 * out of range are left out of the OACK (RFC 2347: "the server ... may not include options it
 * does not support"), and reported so the flight recorder can show what a client asked for.
 * @pure
 */
import type { TftpOptionPair } from './packet.js';

/** Defaults of plain RFC 1350 transfers: 512-byte blocks, lock-step. */
export const DEFAULT_BLOCK_SIZE = 512;
/** RFC 2348 limits of `blksize`. */
export const MIN_BLOCK_SIZE = 8;
export const MAX_BLOCK_SIZE = 65464;
/** RFC 2349 limits of `timeout`, in seconds. */
export const MIN_TIMEOUT_SECONDS = 1;
export const MAX_TIMEOUT_SECONDS = 255;
/** RFC 7440 limits of `windowsize`, in blocks. */
export const MIN_WINDOW_SIZE = 1;
export const MAX_WINDOW_SIZE = 65535;
/**
 * The largest window the server will grant, whatever it is configured with: with at most 32768
 * blocks outstanding, every 16-bit ACK number maps to exactly one block of the window (see
 * `transfer.ts`), so block-number wraparound stays unambiguous.
 */
export const MAX_GRANTED_WINDOW_SIZE = 32768;

/**
 * The server's default window budget: 80 KiB of payload, so windowsize 16 is granted whole up
 * to blksize 5120 and as 10 at 8192 — under the 12 that fill a default Linux receive buffer,
 * leaving room for a stray retransmission (64 KiB, 8 at 8192, before this was measured).
 */
export const DEFAULT_MAX_WINDOW_BYTES = 80 * 1024;

/** An option the server will not honour, and why. */
export interface IgnoredOption {
  readonly name: string;
  readonly value: string;
  readonly reason: string;
}

/** What a request asked for, in its valid form. */
export interface RequestedOptions {
  readonly blockSize?: number;
  /** `tsize` as sent (0 in a read request). */
  readonly transferSize?: number;
  readonly timeoutSeconds?: number;
  readonly windowSize?: number;
  /** Names of the recognized options in wire order (the OACK answers in the same order). */
  readonly order: readonly string[];
  readonly ignored: readonly IgnoredOption[];
}

/** The server's caps. */
export interface NegotiationLimits {
  readonly maxBlockSize: number;
  readonly maxWindowSize: number;
  /**
   * Most payload bytes in one window (RFC 7440 §4 lets the server answer a smaller
   * windowsize). A window is a burst the receiver must buffer whole, and the kernel charges a
   * datagram at its allocation size, not its payload: Linux's default receive buffer
   * (`net.core.rmem_default`, 208 KiB) holds 12 datagrams of 8196 bytes on loopback, 92 of
   * 1472, 166 of 516 (measured). 16 × 8192 overflowed it and every window then waited for a
   * timeout, so the granted window shrinks as blocks grow. See `DEFAULT_MAX_WINDOW_BYTES`.
   */
  readonly maxWindowBytes: number;
}

/** What the transfer will use, and the OACK that tells the client (empty: send no OACK). */
export interface NegotiatedOptions {
  readonly blockSize: number;
  readonly windowSize: number;
  /** The client's `timeout`, when it sent a valid one; the server then retransmits after it. */
  readonly timeoutSeconds?: number;
  readonly oack: readonly TftpOptionPair[];
}

/** A decimal integer within [min, max], or a reason it is not one. */
function parseInteger(value: string, min: number, max: number): number | string {
  if (!/^[0-9]{1,12}$/.test(value)) return 'not a decimal integer';
  const n = Number(value);
  if (n < min || n > max) return `outside ${min}–${max}`;
  return n;
}

const RANGES = {
  blksize: [MIN_BLOCK_SIZE, MAX_BLOCK_SIZE],
  tsize: [0, Number.MAX_SAFE_INTEGER],
  timeout: [MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS],
  windowsize: [MIN_WINDOW_SIZE, MAX_WINDOW_SIZE],
} as const;

type KnownOption = keyof typeof RANGES;

function isKnown(name: string): name is KnownOption {
  return Object.hasOwn(RANGES, name);
}

/**
 * Interprets the options of a request: valid recognized options become typed fields, anything
 * else lands in `ignored` with a reason. Never throws.
 */
export function parseRequestOptions(options: readonly TftpOptionPair[]): RequestedOptions {
  const values: Partial<Record<KnownOption, number>> = {};
  const order: string[] = [];
  const ignored: IgnoredOption[] = [];
  for (const { name, value } of options) {
    if (!isKnown(name)) {
      ignored.push({ name, value, reason: 'unknown option' });
      continue;
    }
    const [min, max] = RANGES[name];
    const parsed = parseInteger(value, min, max);
    if (typeof parsed === 'string') {
      ignored.push({ name, value, reason: parsed });
      continue;
    }
    values[name] = parsed;
    order.push(name);
  }
  return {
    ...(values.blksize === undefined ? {} : { blockSize: values.blksize }),
    ...(values.tsize === undefined ? {} : { transferSize: values.tsize }),
    ...(values.timeout === undefined ? {} : { timeoutSeconds: values.timeout }),
    ...(values.windowsize === undefined ? {} : { windowSize: values.windowsize }),
    order,
    ignored,
  };
}

/**
 * Decides the transfer parameters of a read request for a file of `fileSizeBytes`: block and
 * window sizes capped by `limits` (the window also by {@link MAX_GRANTED_WINDOW_SIZE} and by
 * `maxWindowBytes` / block size, at least 1), `tsize` answered
 * with the size, `timeout` echoed. The OACK lists the granted options in the client's order and
 * is empty when the client asked for nothing the server honours (RFC 2347: then the transfer
 * starts as plain RFC 1350, with DATA block 1).
 */
export function negotiateOptions(requested: RequestedOptions, limits: NegotiationLimits, fileSizeBytes: number): NegotiatedOptions {
  const maxBlock = Math.max(MIN_BLOCK_SIZE, Math.min(limits.maxBlockSize, MAX_BLOCK_SIZE));
  const maxWindow = Math.max(MIN_WINDOW_SIZE, Math.min(limits.maxWindowSize, MAX_GRANTED_WINDOW_SIZE));
  const blockSize = requested.blockSize === undefined ? DEFAULT_BLOCK_SIZE : Math.min(requested.blockSize, maxBlock);
  const byteCap = Math.max(1, Math.floor(limits.maxWindowBytes / blockSize));
  const windowSize = requested.windowSize === undefined ? 1 : Math.min(requested.windowSize, maxWindow, byteCap);
  const answers: Record<string, string> = {
    blksize: String(blockSize),
    tsize: String(fileSizeBytes),
    timeout: String(requested.timeoutSeconds),
    windowsize: String(windowSize),
  };
  const oack = requested.order.map((name) => ({ name, value: answers[name] ?? '' }));
  return {
    blockSize,
    windowSize,
    ...(requested.timeoutSeconds === undefined ? {} : { timeoutSeconds: requested.timeoutSeconds }),
    oack,
  };
}
