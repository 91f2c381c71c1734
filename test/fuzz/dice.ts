/**
 * @module The fuzzers' source of choices: a seeded PRNG (test/helpers/prng.ts) behind small
 * helpers — integers, picks, coin flips, sizes biased towards the small with a long tail — so
 * every mutation is reproducible from the target's seed and the input's index.
 */
import { prng } from '../helpers/prng.js';

/** Seeded random choices; one per fuzz target run. */
export class Dice {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = prng(seed);
  }

  /** A number in [0, 1). */
  next(): number {
    return this.#next();
  }

  /** An integer in [0, n) (0 when n ≤ 0). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor(this.#next() * n);
  }

  /** An integer in [low, high]. */
  range(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.#next() < p;
  }

  /** One of `items`; throws on an empty list (a fuzz target bug, not a finding). */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Dice.pick of an empty list');
    return items[this.int(items.length)] as T;
  }

  /**
   * A size up to `max`, biased towards the small: a uniformly chosen power of two as the
   * ceiling, then uniform below it (so 1–16 is as likely as 64 Ki–128 Ki).
   */
  size(max: number): number {
    const bits = Math.max(1, Math.ceil(Math.log2(max + 1)));
    return Math.min(max, this.int(2 ** this.range(1, bits)));
  }

  /** `n` random bytes. */
  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}
