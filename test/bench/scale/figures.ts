/**
 * @module Small number helpers for scale.bench.ts: percentiles of samples and the power-state
 * ages the BMC emulator's read times imply. No I/O.
 * @pure
 */
/** The `p`-th percentile (0–100, nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** p50, p99 and max of `values`. */
export function summarize(values: readonly number[]): { p50: number; p99: number; max: number; n: number } {
  const max = values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  return { p50: percentile(values, 50), p99: percentile(values, 99), max: values.length === 0 ? Number.NaN : max, n: values.length };
}

/** What {@link powerAgesOverWindow} finds. */
export interface WindowAges {
  /** The age of every BMC's power state at every sampling instant (BMCs read before it only). */
  sampledAgesMs: number[];
  /** Per BMC read at least once by the window's end: the oldest its power state got within the window. */
  oldestPerBmcMs: number[];
  /** BMCs never read by the window's end. */
  neverRead: number;
}

/**
 * The power-state ages a set of read times implies over the window `[fromMs, toMs]`: sampled
 * every `stepMs` from `fromMs`, and the oldest per BMC (the age just before each read in the
 * window, and at `toMs`). `readsMs[i]` holds BMC i's read times in ascending order, the last one
 * before the window included so ages at its start are known; reads after `toMs` are ignored.
 */
export function powerAgesOverWindow(readsMs: readonly (readonly number[])[], fromMs: number, toMs: number, stepMs: number): WindowAges {
  const sampledAgesMs: number[] = [];
  const oldestPerBmcMs: number[] = [];
  let neverRead = 0;
  for (const reads of readsMs) {
    const inRange = reads.filter((r) => r <= toMs);
    const last = inRange[inRange.length - 1];
    if (last === undefined) {
      neverRead += 1;
      continue;
    }
    let oldest = toMs - last;
    for (let k = 1; k < inRange.length; k++) {
      const at = inRange[k] ?? 0;
      if (at > fromMs) oldest = Math.max(oldest, at - (inRange[k - 1] ?? at));
    }
    oldestPerBmcMs.push(oldest);
    let k = -1;
    for (let t = fromMs; t <= toMs; t += stepMs) {
      while (k + 1 < inRange.length && (inRange[k + 1] ?? Infinity) <= t) k += 1;
      const readAt = inRange[k];
      if (readAt !== undefined) sampledAgesMs.push(t - readAt);
    }
  }
  return { sampledAgesMs, oldestPerBmcMs, neverRead };
}

/** `goal` verdict text: "✔" when `ok`, else "✘". */
export function verdict(ok: boolean): string {
  return ok ? '✔' : '✘';
}
