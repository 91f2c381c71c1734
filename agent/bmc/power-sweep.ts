/**
 * @module The power-state sweep: it asks every BMC for its power state so that each answer is
 * at most `intervalMs` old when the next one arrives, with at most `concurrency` queries in
 * flight in total and at most one per BMC (a BMC whose previous query is still queued or running
 * is skipped, so a slow BMC is never flooded and one sweep never waits for another), and caches
 * the answer per host key. Sweeps start every `intervalMs − marginMs` (a tenth of the interval,
 * at most 5 s, by default): a BMC's place in a sweep drifts from one sweep to the next with its
 * latency and the load (up to 1.3 s at 1000 BMCs, so starting sweeps every `intervalMs` let
 * answers reach 61.3 s; test/bench/scale.bench.ts), and the margin absorbs that drift. The provisioner's
 * `updateHardwareState` reads {@link PowerSweep.get} instead of querying the BMC on every
 * reconcile (metal3 calls it on every pass; the Provisioner contract says "may be a cached sweep
 * result"). Entries older than `staleAfterIntervals` intervals read as undefined, so a hung BMC
 * turns into "unknown" rather than a frozen old answer. Nothing thrown by `listTargets`, a
 * driver or a callback escapes the loop: failures are cached per BMC and counted in the stats.
 * Clock and timers are injectable for tests.
 */
import { isBmcError, type PowerControl, type PowerState } from '../../drivers/index.js';

/** Something with a power capability (a `BmcDriver` is one). */
export interface PowerSource {
  readonly power: PowerControl;
}

/** One BMC to sweep. */
export interface PowerSweepTarget {
  /** Cache key, e.g. the host's `namespace/name`. */
  readonly key: string;
  /**
   * The driver, or a function returning it, called when this BMC's query starts (so drivers can
   * be created, or credentials read, lazily). A throwing factory is cached as an error.
   */
  readonly driver: PowerSource | (() => PowerSource | Promise<PowerSource>);
}

/** What the sweep knows about one BMC. */
export interface PowerSweepEntry {
  /** True/false as Ironic maps Redfish states (`PoweringOn` counts as on); undefined when unknown or failed. */
  readonly poweredOn: boolean | undefined;
  /** The state the BMC reported; undefined when the query failed. */
  readonly state: PowerState | undefined;
  /** `now()` when the query finished. */
  readonly checkedAt: number;
  /** How long the query took, per `now()`. */
  readonly durationMs: number;
  /** Why the query failed: the `BmcError` code (undefined for other errors) and message. */
  readonly error: { readonly code: string | undefined; readonly message: string } | undefined;
}

/** Outcome of one sweep. */
export interface PowerSweepSummary {
  readonly startedAt: number;
  readonly durationMs: number;
  /** Distinct keys `listTargets` returned (0 when it failed). */
  readonly targets: number;
  /** BMCs queried by this sweep. */
  readonly queried: number;
  /** BMCs skipped because their previous query was still queued or running (or the sweep was stopped). */
  readonly skipped: number;
  /** Queries of this sweep that failed. */
  readonly errors: number;
  /** Why `listTargets` failed, when it did. */
  readonly listError: string | undefined;
}

/** Counters of a {@link PowerSweep}. */
export interface PowerSweepStats {
  /** Sweeps started. */
  readonly sweeps: number;
  /** Sweeps started but not finished. */
  readonly running: number;
  /** Queries running now. */
  readonly inFlight: number;
  /** Queries waiting for a concurrency slot. */
  readonly queued: number;
  /** The most recently finished sweep. */
  readonly lastSweep: PowerSweepSummary | undefined;
  /** Failed queries since creation. */
  readonly errors: number;
  /** Skipped BMCs since creation. */
  readonly skipped: number;
  /** Failed `listTargets` calls since creation. */
  readonly listErrors: number;
  /** Keys in the cache. */
  readonly cached: number;
}

/** Timer functions (Node's by default; tests pass controllable ones). */
export interface SweepTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of {@link createPowerSweep}. */
export interface PowerSweepOptions {
  /** How old an answer may get before the next one (config `bmc.powerPollSeconds` × 1000). */
  readonly intervalMs: number;
  /**
   * A sweep starts this much less than `intervalMs` after the previous one, for the drift of a
   * BMC's place in a sweep; default {@link defaultSweepMarginMs}. From 0 to half the interval.
   */
  readonly marginMs?: number;
  /** Queries in flight at most, over all running sweeps (config `bmc.concurrency`). */
  readonly concurrency: number;
  /** The BMCs to sweep now; called at the start of every sweep. Keys not listed are dropped from the cache. */
  readonly listTargets: () => Promise<readonly PowerSweepTarget[]>;
  /** Called with every fresh entry (for the flight recorder or metrics); a throw is ignored. */
  readonly onResult?: (key: string, entry: PowerSweepEntry) => void;
  /** An entry older than this many intervals reads as undefined; default 3. */
  readonly staleAfterIntervals?: number;
  /** Milliseconds clock; default `Date.now`. */
  readonly now?: () => number;
  readonly timers?: SweepTimers;
}

/** A running (or stopped) sweep. */
export interface PowerSweep {
  /** Sweeps now, then every `intervalMs − marginMs`; a second call is a no-op. */
  start(): void;
  /**
   * Stops scheduling, drops queries still waiting for a slot, and resolves when the running ones
   * settle (each bounded by its driver's timeout). `start` may be called again afterwards.
   */
  stop(): Promise<void>;
  /** Runs one sweep now (whether or not started); never rejects. */
  sweepNow(): Promise<PowerSweepSummary>;
  /** The cached entry for `key`; undefined when never checked or stale. */
  get(key: string): PowerSweepEntry | undefined;
  /** The cached entry for `key` however old (for status pages that show the age). */
  peek(key: string): PowerSweepEntry | undefined;
  stats(): PowerSweepStats;
}

/**
 * `poweredOn` for a reported state, as Ironic maps Redfish PowerState (`PoweringOn` → on,
 * `PoweringOff` → off; ironic/drivers/modules/redfish/power.py GET_POWER_STATE_MAP); `unknown` → undefined.
 */
export function poweredOnOf(state: PowerState): boolean | undefined {
  if (state === 'on' || state === 'powering-on') return true;
  if (state === 'off' || state === 'powering-off') return false;
  return undefined;
}

/** The default margin of {@link PowerSweepOptions.marginMs}: a tenth of the interval, at most 5 s. */
export function defaultSweepMarginMs(intervalMs: number): number {
  return Math.min(intervalMs / 10, 5000);
}

const nodeTimers: SweepTimers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

interface Job {
  readonly target: PowerSweepTarget;
  /** Resolves true when the query failed, false when it succeeded, undefined when dropped. */
  readonly done: (failed: boolean | undefined) => void;
}

function describeError(err: unknown): { code: string | undefined; message: string } {
  return { code: isBmcError(err) ? err.code : undefined, message: err instanceof Error ? err.message : String(err) };
}

/** Creates a power sweep; nothing runs until {@link PowerSweep.start} or {@link PowerSweep.sweepNow}. @throws RangeError on a bad interval, margin or concurrency. */
export function createPowerSweep(options: PowerSweepOptions): PowerSweep {
  const { intervalMs, concurrency, listTargets, onResult } = options;
  if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new RangeError(`power sweep intervalMs must be > 0, got ${intervalMs}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`power sweep concurrency must be an integer ≥ 1, got ${concurrency}`);
  const marginMs = options.marginMs ?? defaultSweepMarginMs(intervalMs);
  if (!Number.isFinite(marginMs) || marginMs < 0 || marginMs > intervalMs / 2) {
    throw new RangeError(`power sweep marginMs must be from 0 to half of intervalMs (${intervalMs}), got ${marginMs}`);
  }
  const periodMs = intervalMs - marginMs;
  const staleAfterMs = (options.staleAfterIntervals ?? 3) * intervalMs;
  const now = options.now ?? ((): number => Date.now());
  const timers = options.timers ?? nodeTimers;

  const cache = new Map<string, PowerSweepEntry>();
  /** Keys of the latest listing: results for keys dropped meanwhile are not cached. */
  let live = new Set<string>();
  /** Keys queued or running. */
  const pending = new Set<string>();
  const queue: Job[] = [];
  const running = new Set<Promise<void>>();
  let timer: unknown;
  let started = false;
  const counters = { sweeps: 0, running: 0, errors: 0, skipped: 0, listErrors: 0 };
  let lastSweep: PowerSweepSummary | undefined;

  const query = async (target: PowerSweepTarget): Promise<PowerSweepEntry> => {
    const t0 = now();
    try {
      const source = typeof target.driver === 'function' ? await target.driver() : target.driver;
      const state = await source.power.getPowerState();
      const t1 = now();
      return { poweredOn: poweredOnOf(state), state, checkedAt: t1, durationMs: t1 - t0, error: undefined };
    } catch (err) {
      const t1 = now();
      return { poweredOn: undefined, state: undefined, checkedAt: t1, durationMs: t1 - t0, error: describeError(err) };
    }
  };

  const pump = (): void => {
    while (running.size < concurrency) {
      const job = queue.shift();
      if (job === undefined) return;
      const { key } = job.target;
      const run = query(job.target).then((entry) => {
        if (live.has(key)) cache.set(key, entry);
        if (entry.error !== undefined) counters.errors += 1;
        try {
          onResult?.(key, entry);
        } catch {
          // A broken observer must not stop the sweep.
        }
        return entry.error !== undefined;
      }).then((failed) => {
        running.delete(run);
        pending.delete(key);
        job.done(failed);
        pump();
      });
      running.add(run);
    }
  };

  const enqueue = (target: PowerSweepTarget): Promise<boolean | undefined> => new Promise((resolve) => {
    queue.push({ target, done: resolve });
    pump();
  });

  /** One sweep from listing to the last answer; never rejects. */
  const runSweep = async (startedAt: number): Promise<PowerSweepSummary> => {
    const failed = (err: unknown): PowerSweepSummary => ({
      startedAt, durationMs: now() - startedAt, targets: 0, queried: 0, skipped: 0, errors: 0, listError: describeError(err).message,
    });
    let targets: readonly PowerSweepTarget[];
    try {
      targets = await listTargets();
    } catch (err) {
      counters.listErrors += 1;
      return failed(err);
    }
    try {
      const unique = new Map<string, PowerSweepTarget>();
      for (const t of targets) if (!unique.has(t.key)) unique.set(t.key, t);
      live = new Set(unique.keys());
      for (const key of [...cache.keys()]) if (!live.has(key)) cache.delete(key);
      const jobs: Promise<boolean | undefined>[] = [];
      let skipped = 0;
      for (const target of unique.values()) {
        if (pending.has(target.key)) {
          skipped += 1;
          continue;
        }
        pending.add(target.key);
        jobs.push(enqueue(target));
      }
      const outcomes = await Promise.all(jobs);
      const dropped = outcomes.filter((o) => o === undefined).length;
      counters.skipped += skipped + dropped;
      return {
        startedAt, durationMs: now() - startedAt, targets: unique.size, queried: jobs.length - dropped,
        skipped: skipped + dropped, errors: outcomes.filter((o) => o === true).length, listError: undefined,
      };
    } catch (err) {
      // Only a malformed target list (not an array, entries without keys) gets here.
      counters.listErrors += 1;
      return failed(err);
    }
  };

  const sweepNow = async (): Promise<PowerSweepSummary> => {
    counters.sweeps += 1;
    counters.running += 1;
    const summary = await runSweep(now());
    counters.running -= 1;
    lastSweep = summary;
    return summary;
  };

  const tick = (): void => {
    timer = timers.setTimeout(tick, periodMs);
    void sweepNow();
  };

  return {
    start: () => {
      if (started) return;
      started = true;
      tick();
    },
    stop: async () => {
      started = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      for (const job of queue.splice(0)) {
        pending.delete(job.target.key);
        job.done(undefined);
      }
      await Promise.all([...running]);
    },
    sweepNow,
    get: (key) => {
      const entry = cache.get(key);
      return entry !== undefined && now() - entry.checkedAt <= staleAfterMs ? entry : undefined;
    },
    peek: (key) => cache.get(key),
    stats: () => ({
      sweeps: counters.sweeps, running: counters.running, inFlight: running.size, queued: queue.length,
      lastSweep, errors: counters.errors, skipped: counters.skipped, listErrors: counters.listErrors, cached: cache.size,
    }),
  };
}
