/**
 * @module Retry delays for controller pushes: exponential backoff with full jitter (AWS
 * Architecture Blog, "Exponential Backoff And Jitter": sleep = random(0, min(cap, base·2^n))),
 * raised to the controller's `Retry-After` (RFC 9110 §10.2.3) when it sent one, never above the cap.
 * @pure
 */

/** Backoff bounds in milliseconds. */
export interface BackoffPolicy {
  /** Ceiling of the first retry's delay. */
  baseMs: number;
  /** Ceiling of any delay. */
  capMs: number;
}

/** The defaults: 1 s doubling to 5 min. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 300_000 };

/**
 * The delay before retry number `failures` (1 = after the first failure): a uniform draw from
 * [0, min(cap, base·2^(failures−1))) using `random01` ∈ [0, 1), then at least `retryAfterMs`
 * (capped). Non-finite or out-of-range inputs are clamped, never thrown.
 */
export function backoffDelayMs(failures: number, policy: BackoffPolicy, random01: number, retryAfterMs?: number): number {
  const cap = Math.max(0, policy.capMs);
  const base = Math.min(Math.max(0, policy.baseMs), cap);
  const exponent = Math.min(Math.max(0, Math.floor(failures) - 1), 52);
  const ceiling = Math.min(cap, base * 2 ** exponent);
  const r = Number.isFinite(random01) ? Math.min(Math.max(random01, 0), 1) : 0.5;
  const jittered = Math.floor(ceiling * r);
  const floor = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) ? Math.min(Math.max(0, retryAfterMs), cap) : 0;
  return Math.max(jittered, floor);
}

/**
 * Parses a `Retry-After` header value (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) into
 * milliseconds from `nowMs`; undefined when absent or unparsable.
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
