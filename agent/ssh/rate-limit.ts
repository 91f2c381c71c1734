/**
 * @module Per-source rate limiting of failed SSH logins, in the spirit of OpenSSH's
 * `PerSourcePenalties` (sshd_config(5), OpenSSH 9.8): a connection that ends without
 * authenticating after at least one refused credential counts as one failure of its source
 * address; `maxFailures` failures within `windowMs` ban the address for `banMs`, during which
 * its new connections are dropped before the SSH handshake. Time comes in as arguments.
 * Memory is bounded: at most `maxTracked` addresses are remembered, the oldest forgotten first.
 * @pure
 */

/** The limits; see the module comment. */
export interface RateLimitPolicy {
  maxFailures: number;
  windowMs: number;
  banMs: number;
  maxTracked: number;
}

/** Ten failed connections a minute ban a source for five minutes. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = { maxFailures: 10, windowMs: 60_000, banMs: 300_000, maxTracked: 10_000 };

interface SourceState {
  failuresMs: number[];
  bannedUntilMs?: number;
  dropsReported: boolean;
}

/** The verdict on a new connection. */
export type AdmitVerdict =
  | { admitted: true }
  | { admitted: false; bannedUntilMs: number; firstDrop: boolean };

/** Tracks failures per source address and decides whether to admit new connections. */
export class FailureLimiter {
  private readonly policy: RateLimitPolicy;
  private readonly sources = new Map<string, SourceState>();

  constructor(policy: Partial<RateLimitPolicy> = {}) {
    this.policy = { ...DEFAULT_RATE_LIMIT, ...policy };
  }

  /** Decides on a new connection from `address` at `nowMs`. `firstDrop` is true once per ban. */
  admit(address: string, nowMs: number): AdmitVerdict {
    const state = this.sources.get(address);
    if (state?.bannedUntilMs === undefined) return { admitted: true };
    if (nowMs >= state.bannedUntilMs) {
      this.sources.delete(address);
      return { admitted: true };
    }
    const firstDrop = !state.dropsReported;
    state.dropsReported = true;
    return { admitted: false, bannedUntilMs: state.bannedUntilMs, firstDrop };
  }

  /**
   * Records one failure of `address` at `nowMs`.
   * @returns true when this failure starts a ban.
   */
  recordFailure(address: string, nowMs: number): boolean {
    let state = this.sources.get(address);
    if (state === undefined) {
      state = { failuresMs: [], dropsReported: false };
      this.sources.set(address, state);
      this.evict();
    }
    if (state.bannedUntilMs !== undefined && nowMs < state.bannedUntilMs) return false;
    state.failuresMs = state.failuresMs.filter((t) => nowMs - t < this.policy.windowMs);
    state.failuresMs.push(nowMs);
    if (state.failuresMs.length < this.policy.maxFailures) return false;
    state.failuresMs = [];
    state.bannedUntilMs = nowMs + this.policy.banMs;
    state.dropsReported = false;
    return true;
  }

  /** Addresses currently banned at `nowMs` (for status output). */
  banned(nowMs: number): { address: string; untilMs: number }[] {
    const out: { address: string; untilMs: number }[] = [];
    for (const [address, s] of this.sources) {
      if (s.bannedUntilMs !== undefined && nowMs < s.bannedUntilMs) out.push({ address, untilMs: s.bannedUntilMs });
    }
    return out;
  }

  private evict(): void {
    for (const address of this.sources.keys()) {
      if (this.sources.size <= this.policy.maxTracked) return;
      this.sources.delete(address);
    }
  }
}
