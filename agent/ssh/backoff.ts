/**
 * @module Reconnect delays for the reverse tunnel: exponential backoff with jitter ("equal
 * jitter" as in the AWS architecture blog's "Exponential Backoff And Jitter"): the delay grows
 * `initialMs · factor^attempt` up to `maxMs`, and a random share `jitter` of it is taken off so
 * that many racks losing the same bastion do not all reconnect in the same second.
 * @pure
 */

/** Backoff parameters; `jitter` is the share of the delay that is randomized (0–1). */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
  jitter: number;
}

/** 1 s doubling to 1 min, half of it randomized. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, factor: 2, jitter: 0.5 };

/**
 * The delay before reconnect attempt `attempt` (0 for the first retry), given a random number
 * `random01` in [0, 1): between `(1 - jitter)·d` and `d`, where `d = min(maxMs, initialMs·factor^attempt)`.
 */
export function computeBackoffMs(attempt: number, policy: BackoffPolicy, random01: number): number {
  const exponent = Math.max(0, Math.min(attempt, 64));
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** exponent);
  const jitter = Math.max(0, Math.min(1, policy.jitter));
  const r = Math.max(0, Math.min(1, random01));
  return Math.round(base * (1 - jitter * r));
}
