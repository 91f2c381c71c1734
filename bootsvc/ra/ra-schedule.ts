/**
 * @module When a router sends its advertisements (RFC 4861 §6.2.4, §6.2.6, §10): a uniformly
 * random interval between MinRtrAdvInterval and MaxRtrAdvInterval, at most
 * MAX_INITIAL_RTR_ADVERT_INTERVAL for the first MAX_INITIAL_RTR_ADVERTISEMENTS, and an answer
 * to a Router Solicitation after a random delay up to MAX_RA_DELAY_TIME, no sooner than
 * MIN_DELAY_BETWEEN_RAS after the previous multicast advertisement. `random` returns [0, 1).
 * @pure
 */

/** RFC 4861 §10 router constants. */
export const RA_CONSTANTS = {
  maxInitialAdvertisements: 3,
  maxInitialIntervalMs: 16_000,
  maxRaDelayMs: 500,
  minDelayBetweenRasMs: 3_000,
} as const;

/** MinRtrAdvInterval and MaxRtrAdvInterval (RFC 4861 §6.2.1: max 4-1800 s, min 3 s to 0.75 × max). */
export interface RaIntervals {
  minMs: number;
  maxMs: number;
}

/** The defaults of RFC 4861 §6.2.1: MaxRtrAdvInterval 600 s, MinRtrAdvInterval 0.33 × that. */
export const DEFAULT_RA_INTERVALS: RaIntervals = { minMs: 198_000, maxMs: 600_000 };

/**
 * Delay until the next unsolicited advertisement, after `sent` multicast advertisements so far:
 * uniform in [min, max], capped at 16 s while fewer than 3 have been sent (§6.2.4).
 */
export function nextUnsolicitedDelayMs(sent: number, intervals: RaIntervals, random: () => number): number {
  const delay = intervals.minMs + random() * (intervals.maxMs - intervals.minMs);
  return sent < RA_CONSTANTS.maxInitialAdvertisements ? Math.min(delay, RA_CONSTANTS.maxInitialIntervalMs) : delay;
}

/**
 * Delay from `nowMs` until the advertisement answering a solicitation (§6.2.6): random up to
 * 500 ms, and not before 3 s after the last multicast advertisement (`lastSentMs`, undefined
 * when none was sent yet).
 */
export function solicitedDelayMs(nowMs: number, lastSentMs: number | undefined, random: () => number): number {
  const delay = random() * RA_CONSTANTS.maxRaDelayMs;
  if (lastSentMs === undefined) return delay;
  return Math.max(delay, lastSentMs + RA_CONSTANTS.minDelayBetweenRasMs - nowMs);
}
