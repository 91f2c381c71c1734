/**
 * @module The event log's rules shared by both stores: the sortable key of a sequence number,
 * event and filter validation, filter matching, and the cap arithmetic (oldest dropped first).
 * @pure
 */
import { ValidationError } from '../errors.js';
import { redactedCopy } from '../redact-text.js';
import type { EventFilter, StoredEvent } from './types.js';

/** Default number of events kept before the oldest are dropped. */
export const DEFAULT_EVENT_CAP = 20_000;
/** Default number of events {@link EventLog.listEvents} returns. */
export const DEFAULT_EVENT_LIMIT = 200;
/** Digits of a zero-padded event key: enough for Number.MAX_SAFE_INTEGER. */
const SEQ_DIGITS = 16;

/** The `events` sublevel key of `seq`: zero-padded so lexicographic order is numeric order. */
export function eventKey(seq: number): string {
  return String(seq).padStart(SEQ_DIGITS, '0');
}

/** The sequence number in an {@link eventKey}, or undefined when `key` is not one. */
export function parseEventKey(key: string): number | undefined {
  if (!/^\d{16}$/.test(key)) return undefined;
  return Number(key);
}

/** A filter with defaults applied and the MAC lower-cased. */
export interface NormalizedFilter {
  host?: string;
  mac?: string;
  afterSeq: number;
  limit: number;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Applies defaults to `filter`; throws ValidationError for a negative or fractional `afterSeq` or `limit`. */
export function normalizeFilter(filter: EventFilter = {}): NormalizedFilter {
  const afterSeq = filter.afterSeq ?? 0;
  const limit = filter.limit ?? DEFAULT_EVENT_LIMIT;
  if (!isCount(afterSeq)) throw new ValidationError('afterSeq', 'must be a non-negative integer');
  if (!isCount(limit)) throw new ValidationError('limit', 'must be a non-negative integer');
  const out: NormalizedFilter = { afterSeq, limit };
  if (filter.host !== undefined) out.host = filter.host;
  if (filter.mac !== undefined) out.mac = filter.mac.toLowerCase();
  return out;
}

/** True when `event` passes `filter`'s host, MAC and afterSeq conditions (not the limit). */
export function matchesEvent(event: StoredEvent, filter: NormalizedFilter): boolean {
  if (event.seq <= filter.afterSeq) return false;
  if (filter.host !== undefined && event.host !== filter.host) return false;
  if (filter.mac !== undefined && event.mac?.toLowerCase() !== filter.mac) return false;
  return true;
}

/**
 * Numbers `events` from `lastSeq + 1` on, lower-casing MACs and removing URL credentials and
 * queries from every string (agent/redact-text.ts); throws ValidationError naming the first
 * malformed entry (missing time/reason/message/source, unknown type).
 */
export function numberEvents(events: readonly Omit<StoredEvent, 'seq'>[], lastSeq: number): StoredEvent[] {
  return events.map((event, i) => {
    for (const field of ['time', 'reason', 'message', 'source'] as const) {
      if (typeof event[field] !== 'string') throw new ValidationError(`events[${i}].${field}`, 'must be a string');
    }
    const type: unknown = event.type;
    if (type !== 'Normal' && type !== 'Warning') {
      throw new ValidationError(`events[${i}].type`, 'must be "Normal" or "Warning"');
    }
    // The log is read without a token and pushed to the controller: no URL credentials or signed queries.
    const stored: StoredEvent = { ...redactedCopy(event), seq: lastSeq + 1 + i };
    if (stored.mac !== undefined) stored.mac = stored.mac.toLowerCase();
    return stored;
  });
}

/** What to drop so at most `cap` events remain after appending `added` to `count` kept ones. */
export interface CapPlan {
  /** How many of the oldest stored events to delete. */
  dropStored: number;
  /** How many of the new events (from the front) to not store at all (only when `added > cap`). */
  skipNew: number;
}

/** Computes the oldest-first trimming that keeps the log at `cap` events. */
export function planCap(count: number, added: number, cap: number): CapPlan {
  const excess = Math.max(0, count + added - cap);
  const dropStored = Math.min(excess, count);
  return { dropStored, skipNew: excess - dropStored };
}
