/**
 * @module Size caps for what a ramdisk result leaves behind (the operation's message and details
 * in the node table, the result event in the event log): a ramdisk holding a valid token must not
 * be able to grow the log by megabytes per result. Text is cut at a UTF-8 character boundary with
 * a marker saying how much was kept; details (plain JSON from images/ramdisk-results.ts) keep
 * their shape — long strings are cut with a marker and long arrays shortened, step by step, until
 * the JSON fits — so the provisioner still reads the root device, disks and volumes from them.
 * @pure
 */

/** Most bytes (UTF-8) of a result's message kept, and of the event message built from it. */
export const RESULT_MESSAGE_MAX_BYTES = 4 * 1024;
/** Most bytes of a result's details (as JSON) kept with the operation and in the event. */
export const RESULT_DETAILS_MAX_BYTES = 64 * 1024;

/** A cut text: `cutBytes` is 0 when it was kept whole. */
export interface CappedText {
  readonly text: string;
  /** Bytes of the original text dropped. */
  readonly cutBytes: number;
}

/**
 * Returns `text` when its UTF-8 encoding fits `maxBytes`, else its longest prefix that fits
 * together with the marker ` … [cut: kept K of N bytes]` (the result never exceeds `maxBytes`).
 */
export function capText(text: string, maxBytes: number): CappedText {
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return { text, cutBytes: 0 };
  const marker = (kept: number): string => ` … [cut: kept ${kept} of ${total} bytes]`;
  const room = Math.max(0, maxBytes - Buffer.byteLength(marker(maxBytes), 'utf8'));
  // Back off to a character boundary: UTF-8 continuation bytes are 10xxxxxx.
  const bytes = Buffer.from(text, 'utf8');
  let end = Math.min(room, bytes.length);
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  const kept = bytes.subarray(0, end).toString('utf8');
  return { text: `${kept}${marker(end)}`, cutBytes: total - end };
}

/** Details after {@link capDetails}. */
export interface CappedDetails<T> {
  readonly details: T;
  /** Size of the original details as JSON, in bytes. */
  readonly bytes: number;
  /** True when anything was cut or dropped. */
  readonly cut: boolean;
}

/** (longest string, longest array) tried in turn until the JSON fits. */
const SHRINK_STEPS: readonly (readonly [number, number])[] = [[1024, 1024], [256, 256], [64, 64], [32, 16], [16, 4], [8, 1], [0, 0]];

function shrink(value: unknown, maxString: number, maxArray: number): unknown {
  if (typeof value === 'string') return value.length <= maxString ? value : `${value.slice(0, maxString)}…[cut]`;
  if (Array.isArray(value)) return value.slice(0, maxArray).map((v: unknown) => shrink(v, maxString, maxArray));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = shrink(v, maxString, maxArray);
    return out;
  }
  return value;
}

/**
 * Returns `details` as is when its JSON fits `maxBytes`; otherwise a copy with strings cut
 * (`…[cut]`) and arrays shortened, by the least of {@link SHRINK_STEPS} that fits. The copy has the
 * same shape (every field present, each array a prefix of the original's), so code reading the
 * details keeps working on what is left. `null` stays `null`.
 */
export function capDetails<T>(details: T, maxBytes: number): CappedDetails<T> {
  if (details === null || details === undefined) return { details, bytes: 0, cut: false };
  const bytes = Buffer.byteLength(JSON.stringify(details), 'utf8');
  if (bytes <= maxBytes) return { details, bytes, cut: false };
  let smaller: unknown = details;
  for (const [maxString, maxArray] of SHRINK_STEPS) {
    smaller = shrink(details, maxString, maxArray);
    if (Buffer.byteLength(JSON.stringify(smaller), 'utf8') <= maxBytes) break;
  }
  // Same shape as T by construction: only string values and array lengths changed.
  return { details: smaller as T, bytes, cut: true };
}
