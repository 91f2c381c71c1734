/**
 * @module Path-aware readers for validating decoded JSON on the sync wire: each reader either
 * returns the typed value or throws {@link SyncWireError} naming the path, what was expected
 * and what was found (`hosts[3].poweredOn: expected a boolean, got "yes"`).
 * @pure
 */

/** Stable code of {@link SyncWireError}. */
export const SYNC_WIRE_ERROR_CODE = 'RACKSIDE_ERR_SYNC_WIRE';

/** A sync message (push request, controller response or outbox record) is malformed; `path` names the bad field. */
export class SyncWireError extends Error {
  readonly code = SYNC_WIRE_ERROR_CODE;
  /** Dotted path of the offending field, `''` for the whole message. */
  readonly path: string;
  constructor(what: string, path: string, expected: string, got: unknown) {
    super(`${what}: ${path === '' ? '(top level)' : path}: expected ${expected}, got ${describe(got)}`);
    this.name = 'SyncWireError';
    this.path = path;
  }
}

/** Renders a found value briefly for an error message (strings quoted and cut at 40 characters). */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** A plain JSON object as a record. */
export type JsonObject = Record<string, unknown>;

/** Reads fields of one message; every failure throws a {@link SyncWireError} labelled `what`. */
export class WireReader {
  readonly what: string;
  constructor(what: string) {
    this.what = what;
  }

  fail(path: string, expected: string, got: unknown): never {
    throw new SyncWireError(this.what, path, expected, got);
  }

  object(path: string, value: unknown): JsonObject {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(path, 'an object', value);
    return value as JsonObject;
  }

  array(path: string, value: unknown, maxItems: number): unknown[] {
    if (!Array.isArray(value)) this.fail(path, 'an array', value);
    if (value.length > maxItems) this.fail(path, `at most ${maxItems} items`, value);
    return value;
  }

  string(path: string, value: unknown, maxLength: number): string {
    if (typeof value !== 'string') this.fail(path, 'a string', value);
    if (value.length > maxLength) this.fail(path, `a string of at most ${maxLength} characters`, value);
    return value;
  }

  nonEmptyString(path: string, value: unknown, maxLength: number): string {
    const s = this.string(path, value, maxLength);
    if (s === '') this.fail(path, 'a non-empty string', value);
    return s;
  }

  nullableString(path: string, value: unknown, maxLength: number): string | null {
    return value === null ? null : this.string(path, value, maxLength);
  }

  boolean(path: string, value: unknown): boolean {
    if (typeof value !== 'boolean') this.fail(path, 'a boolean', value);
    return value;
  }

  /** A non-negative safe integer. */
  count(path: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) this.fail(path, 'a non-negative integer', value);
    return value;
  }

  nullableCount(path: string, value: unknown): number | null {
    return value === null ? null : this.count(path, value);
  }

  /** A finite number ≥ 0. */
  nullableAmount(path: string, value: unknown): number | null {
    if (value === null) return null;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) this.fail(path, 'a number ≥ 0 or null', value);
    return value;
  }

  oneOf<const T extends string>(path: string, value: unknown, allowed: readonly T[]): T {
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.fail(path, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, value);
    }
    return value as T;
  }

  /** An RFC 3339 date-time (`2026-01-02T03:04:05Z`, fractional seconds and offsets allowed). */
  time(path: string, value: unknown): string {
    const s = this.string(path, value, 64);
    if (!RFC3339.test(s) || Number.isNaN(Date.parse(s))) this.fail(path, 'an RFC 3339 date-time', value);
    return s;
  }

  nullableTime(path: string, value: unknown): string | null {
    return value === null ? null : this.time(path, value);
  }
}

/** RFC 3339 §5.6 `date-time` (upper- or lower-case `T`/`Z`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
