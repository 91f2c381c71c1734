/**
 * @module The inbound session sequence number check of an RMCP+ session (IPMI v2.0 §6.12.13):
 * a sliding window of 32 numbers ending at the highest accepted one. A number is accepted once
 * if it is inside the window and not seen before, or ahead of the highest by at most the window
 * size (responses lost on the way make small gaps); duplicates (replays), numbers older than the
 * window, numbers too far ahead and 0 (reserved for sessionless packets) are refused.
 * Arithmetic is modulo 2^32, so the window follows the counter across its wrap.
 * @pure
 */

/** Size of the window (FreeIPMI's maximum; the spec lets the BMC choose up to 32). */
export const REPLAY_WINDOW_SIZE = 32;

/** Outcome of {@link ReplayWindow.check}. */
export type ReplayVerdict = 'accept' | 'replay' | 'too-old' | 'too-far' | 'zero';

/** Tracks which inbound sequence numbers a session has accepted. */
export class ReplayWindow {
  #highest: number | undefined;
  /** Bit i set = number (highest − i) was accepted; bit 0 is the highest itself. */
  #seen = 0;

  /** Highest accepted number, undefined before the first. */
  get highest(): number | undefined {
    return this.#highest;
  }

  /** Judges `sequence` without recording it. */
  check(sequence: number): ReplayVerdict {
    const seq = sequence >>> 0;
    if (seq === 0) return 'zero';
    if (this.#highest === undefined) return 'accept';
    const delta = (seq - this.#highest) | 0; // signed distance modulo 2^32
    if (delta > 0) return delta <= REPLAY_WINDOW_SIZE ? 'accept' : 'too-far';
    const back = -delta;
    if (back >= REPLAY_WINDOW_SIZE) return 'too-old';
    return ((this.#seen >>> back) & 1) === 1 ? 'replay' : 'accept';
  }

  /** Records `sequence` if {@link check} accepts it; returns the verdict either way. */
  accept(sequence: number): ReplayVerdict {
    const verdict = this.check(sequence);
    if (verdict !== 'accept') return verdict;
    const seq = sequence >>> 0;
    if (this.#highest === undefined) {
      this.#highest = seq;
      this.#seen = 1;
      return verdict;
    }
    const delta = (seq - this.#highest) | 0;
    if (delta > 0) {
      this.#seen = delta >= REPLAY_WINDOW_SIZE ? 1 : ((this.#seen << delta) | 1) >>> 0;
      this.#highest = seq;
    } else {
      this.#seen = (this.#seen | (1 << -delta)) >>> 0;
    }
    return verdict;
  }

  /** Forgets everything (a new session starts a new window). */
  reset(): void {
    this.#highest = undefined;
    this.#seen = 0;
  }
}
