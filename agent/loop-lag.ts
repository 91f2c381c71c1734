/**
 * @module The event-loop lag sampler behind the agent's `nodejs_eventloop_lag_{min,max,mean,
 * stddev,p50,p90,p99}_seconds` gauges. prom-client samples with a 10 ms timer for the life of the
 * process; each run wakes an idle agent, and on the 2-vCPU head nodes this project measures on,
 * 100 wake-ups a second cost 0.7 % of a core — an idle agent's whole CPU use, and a seventh of the
 * 5 % budget of an agent with 1000 hosts (docs/PERFORMANCE.md, "1000 hosts per agent").
 *
 * This sampler runs a timer every {@link LoopLagSamplerOptions.busyPeriodMs} (10 ms) while the loop
 * has work, and every {@link LoopLagSamplerOptions.idlePeriodMs} (250 ms) once it has been idle
 * for a second; "has work" is the event-loop utilization over the last period (Node's
 * `performance.eventLoopUtilization`, which needs no timer of its own). Each run records how late
 * it ran beyond its schedule, so an idle loop reads ≈ 0 and a 30 ms stall reads 0.030 s (prom-client
 * recorded the whole interval, ≈ 0.010 s on an idle loop). An idle run is late by the whole turn it
 * waited for, so the turn that starts a burst is seen when it covers a due run.
 */
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';

/** Options of {@link LoopLagSampler}. */
export interface LoopLagSamplerOptions {
  /** Sampling period while the loop has work, in ms (default 10, prom-client's). */
  busyPeriodMs?: number;
  /** Sampling period once the loop has been idle for `idleAfterMs`, in ms (default 250). */
  idlePeriodMs?: number;
  /**
   * Event-loop utilization over a period at or above which the loop counts as busy (default 0.05).
   * Above the sampler's own: a timer run costs the loop 0.1–0.15 ms of active time here, 1–1.7 % of
   * a 10 ms period; one 13 ms turn in a 250 ms idle period is 5 %.
   */
  busyUtilization?: number;
  /** How long the loop must stay below `busyUtilization` before sampling slows down, in ms (default 1000). */
  idleAfterMs?: number;
  /**
   * The monotonic clock, in ms, that schedules are kept on and lateness is read from (default
   * `performance.now`). Tests pass a fake one together with {@link timers} and {@link utilization}.
   */
  now?: () => number;
  /**
   * Sets and clears the sampler's one timer (default `setTimeout`, unref'd so it keeps nothing
   * alive, and `clearTimeout`). `set` must call `callback` once, no sooner than `ms` later on
   * {@link now}'s clock.
   */
  timers?: LoopLagTimers;
  /**
   * The loop's cumulative active and idle time, in ms, since any fixed origin (default
   * `performance.eventLoopUtilization()`); the sampler reads its change over each period.
   */
  utilization?: () => LoopActivity;
}

/** A timer source for {@link LoopLagSampler} (see {@link LoopLagSamplerOptions.timers}). */
export interface LoopLagTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Cumulative event-loop time, in ms (the `active` and `idle` of Node's `EventLoopUtilization`). */
export interface LoopActivity {
  active: number;
  idle: number;
}

/** The real timers: `setTimeout`, unref'd. */
const NODE_TIMERS: LoopLagTimers = {
  set: (callback, ms) => setTimeout(callback, ms).unref(),
  clear: (handle) => { clearTimeout(handle as NodeJS.Timeout); },
};

/** Event-loop delay beyond the schedule since the last {@link LoopLagSampler.take}, in seconds. */
export interface LoopLagSnapshot {
  /** Timer runs recorded. */
  samples: number;
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

/** See the module comment. {@link start} begins sampling; the timer never keeps the process alive. */
export class LoopLagSampler {
  readonly #busyPeriodMs: number;
  readonly #idlePeriodMs: number;
  readonly #busyUtilization: number;
  readonly #idleAfterMs: number;
  readonly #now: () => number;
  readonly #timers: LoopLagTimers;
  readonly #readActivity: () => LoopActivity;
  readonly #histogram: RecordableHistogram = createHistogram();
  #timer: unknown;
  #dueAt = 0;
  #lastBusyAt = 0;
  #activity: LoopActivity;
  #busy = false;
  #runs = 0;

  constructor(options: LoopLagSamplerOptions = {}) {
    this.#busyPeriodMs = positive('busyPeriodMs', options.busyPeriodMs ?? 10);
    this.#idlePeriodMs = positive('idlePeriodMs', options.idlePeriodMs ?? 250);
    this.#busyUtilization = options.busyUtilization ?? 0.05;
    this.#idleAfterMs = options.idleAfterMs ?? 1000;
    this.#now = options.now ?? (() => performance.now());
    this.#timers = options.timers ?? NODE_TIMERS;
    this.#readActivity = options.utilization ?? (() => performance.eventLoopUtilization());
    this.#activity = this.#readActivity();
  }

  /** Starts sampling at the idle period (the first busy period switches it to the busy one). Idempotent. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#activity = this.#readActivity();
    this.#schedule(this.#idlePeriodMs);
  }

  /** Stops sampling; {@link take} still answers what was recorded. */
  stop(): void {
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
  }

  /** Whether the sampler runs at the busy period now. */
  get busy(): boolean {
    return this.#busy;
  }

  /** Timer runs since {@link start} (tests: how often an idle loop was woken). */
  get runs(): number {
    return this.#runs;
  }

  /** What was recorded since the last call, and forgets it (each scrape sees its own interval). */
  take(): LoopLagSnapshot {
    const h = this.#histogram;
    const seconds = (ns: number): number => (h.count === 0 ? 0 : ns / 1e9);
    const snapshot: LoopLagSnapshot = {
      samples: h.count,
      min: seconds(h.min),
      max: seconds(h.max),
      mean: seconds(h.mean),
      stddev: seconds(h.stddev),
      p50: seconds(h.percentile(50)),
      p90: seconds(h.percentile(90)),
      p99: seconds(h.percentile(99)),
    };
    h.reset();
    return snapshot;
  }

  #schedule(periodMs: number): void {
    this.#dueAt = this.#now() + periodMs;
    this.#timer = this.#timers.set(() => { this.#run(); }, periodMs);
  }

  #run(): void {
    const now = this.#now();
    this.#runs += 1;
    // record() takes whole nanoseconds ≥ 1; libuv's millisecond timers make ≈ 1 ms the floor.
    this.#histogram.record(Math.max(1, Math.round((now - this.#dueAt) * 1e6)));
    const since = this.#activity;
    this.#activity = this.#readActivity();
    const active = this.#activity.active - since.active;
    const total = active + this.#activity.idle - since.idle;
    // Node's own eventLoopUtilization(now, since) is this ratio; a period with no time in it is idle.
    const utilization = total > 0 ? active / total : 0;
    if (utilization >= this.#busyUtilization) {
      this.#busy = true;
      this.#lastBusyAt = now;
    } else if (this.#busy && now - this.#lastBusyAt >= this.#idleAfterMs) {
      this.#busy = false;
    }
    this.#schedule(this.#busy ? this.#busyPeriodMs : this.#idlePeriodMs);
  }
}

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number of milliseconds, got ${String(value)}`);
  return value;
}
