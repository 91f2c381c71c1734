/**
 * @module Event-loop delay probe for benchmarks, loaded into a process under test with
 * `node --import=file:///…/loop-delay-probe.js?out=/path/to/file.json` (bench code only; the
 * agent does not ship it). A 1 ms timer records every gap between its runs — the agent's own
 * `nodejs_eventloop_lag_*` metrics sample at 10 ms at best (agent/loop-lag.ts) — and on each
 * SIGUSR2 the probe writes the window since the previous signal to `out` as JSON
 * ({@link LoopDelayWindow}), then starts a new one; loop-delay-reader.ts sends the signal and
 * reads the window. This module is what the process under test loads, so it imports no test
 * helpers.
 *
 * Two readings of the same gaps. Per timer run (`p50Ms`/`p99Ms`/`maxMs`): how late each run was
 * beyond its 1 ms schedule, as http.bench and images.bench measure lag; an idle loop reads ≈ 0,
 * and since an idle loop runs the timer a thousand times a second while a 30 ms stall is one run,
 * stalls weigh little in it. Over time (`waitP99Ms`): the wait that work becoming ready at a
 * random moment of the window exceeds 1 % of the time — a stall of B ms makes everything that
 * arrives in it wait up to B, so a 30 ms stall every 200 ms reads ≈ 28 ms here and ≈ 0 per run.
 * The benchmarks judge the event-loop goal on the time-weighted reading.
 */
import { appendFileSync, closeSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { percentile } from '../lab/pxe-sim/storm-summary.js';

/** Resolution of the probe's timer, ms. */
export const PROBE_RESOLUTION_MS = 1;

/** One window of the probe (ms unless named otherwise). */
export interface LoopDelayWindow {
  /** Per timer run: how late it ran beyond its 1 ms schedule. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Timer runs in the window. */
  samples: number;
  /** Over time: the wait that ready work exceeds 1 % of the window's time (timeWeightedWait). */
  waitP99Ms: number;
  /** Share of the window the loop spent beyond its timer's schedule (0–1; the timer's own ≈ 0.1 ms jitter per run included). */
  stalledShare: number;
  windowMs: number;
  /**
   * Where the stalls of {@link LONG_STALL_MS} or more went, from the loop thread's
   * `/proc/thread-self/schedstat` (Linux): ms spent running (JavaScript, GC, synchronous calls
   * on the CPU), waiting runnable for a CPU (preempted or not yet scheduled: contention), and
   * neither (blocked in a synchronous system call: disk, a lock). Only when the sampler was
   * asked to split stalls (a procfs read per timer run: ≈ 1 % of a core) and Linux provides it.
   */
  longStalls?: { count: number; totalMs: number; runningMs: number; runnableMs: number; blockedMs: number };
}

/** Stalls at least this long are split into running, runnable and blocked time. */
export const LONG_STALL_MS = 10;

/** How far apart the clock and schedstat reads of one instant may be, ms, and how often to try for it. */
const SNAPSHOT_SKEW_MS = 0.25;
const SNAPSHOT_TRIES = 4;

/** The loop thread's CPU time and run-queue wait, ns, from `/proc/thread-self/schedstat` (Linux). */
class ThreadSchedstat {
  private readonly buffer = Buffer.alloc(128);

  private constructor(private readonly fd: number) {}

  /** Opens the calling thread's schedstat; undefined where Linux does not provide it. */
  static open(): ThreadSchedstat | undefined {
    try {
      return new ThreadSchedstat(openSync('/proc/thread-self/schedstat', 'r'));
    } catch {
      return undefined;
    }
  }

  /**
   * [running ns, runnable-waiting ns], read at position 0 (procfs regenerates the line per read).
   * Linux adds a running thread's CPU time to the running figure only at scheduler events (a tick,
   * a sleep, a preemption), so right after a long run of JavaScript it lags by up to a tick (here:
   * 3.4 ms behind) and the next interval's split gets the rest; getrusage (`process.cpuUsage`)
   * brings the calling thread's figure up to date first (within 0.1 ms here).
   */
  read(): [number, number] {
    process.cpuUsage();
    const n = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
    const [run, wait] = this.buffer.toString('latin1', 0, n).split(' ');
    return [Number(run), Number(wait)];
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Options of {@link LoopDelaySampler}. */
export interface LoopDelaySamplerOptions {
  /** Also split each long stall into running, runnable and blocked time ({@link LoopDelayWindow.longStalls}). */
  splitStalls?: boolean;
  /**
   * Append a line per long stall to this file: `<end, µs of CLOCK_MONOTONIC> <stall ms> <running
   * ms> <runnable ms>` (the last two `-` unless split) — the clock of `--cpu-prof` profiles, so
   * stall-profile.ts can show what ran inside each stall.
   */
  stallLog?: string;
  /** The monotonic clock, ms (default `performance.now`; tests pass a fake one with {@link setTimer}). */
  now?: () => number;
  /** Runs `callback` once, `ms` or later on {@link now}'s clock, keeping nothing alive (default: an unref'd `setTimeout`); returns its canceller. */
  setTimer?: (callback: () => void, ms: number) => () => void;
}

/** The real timer: `setTimeout`, unref'd. */
function nodeTimer(callback: () => void, ms: number): () => void {
  const timer = setTimeout(callback, ms).unref();
  return () => { clearTimeout(timer); };
}

/** The `--import` argument that loads the probe writing to `out` (options: see {@link LoopDelaySamplerOptions}). */
export function loopDelayProbeArg(out: string, options: LoopDelaySamplerOptions = {}): string {
  const url = new URL(import.meta.url);
  url.search = new URLSearchParams({ out, ...(options.splitStalls === true ? { split: '1' } : {}), ...(options.stallLog === undefined ? {} : { stalls: options.stallLog }) }).toString();
  return `--import=${url.href}`;
}

/** The file the probe writes once its SIGUSR2 handler is installed (before that, the signal's default action ends the process). */
export function armedFile(out: string): string {
  return `${out}.armed`;
}

/**
 * The wait exceeded `share` of the time: for stalls `stalls` (ms beyond the schedule) over
 * `windowMs`, the X at which the time in which ready work would wait longer than X — Σ max(0, b − X)
 * — is `share` of the window (0 when the stalls add up to less). Pure; exported for its test.
 */
export function timeWeightedWait(stalls: readonly number[], windowMs: number, share: number): number {
  const target = share * windowMs;
  const sorted = [...stalls].filter((b) => b > 0).sort((a, b) => b - a);
  let sum = 0;
  for (let k = 1; k <= sorted.length; k++) {
    sum += sorted[k - 1] ?? 0;
    // With the k longest stalls above X: Σ (b − X) = sum − k·X, valid while X ≥ the next stall.
    const x = (sum - target) / k;
    if (x >= (sorted[k] ?? 0)) return Math.max(0, x);
  }
  return 0;
}

/**
 * Samples this process's event loop with a 1 ms timer (unref'd: it keeps nothing alive) and
 * hands out windows of it ({@link LoopDelayWindow}). In-process use: `new LoopDelaySampler()`,
 * then `takeWindow()` at each mark; `stop()` at the end.
 */
export class LoopDelaySampler {
  private readonly now: () => number;
  private readonly setTimer: (callback: () => void, ms: number) => () => void;
  private stalls: number[] = [];
  private windowStart: number;
  private last: number;
  private cancelTimer: () => void;
  private readonly schedstat: ThreadSchedstat | undefined;
  private lastSched: [number, number] | undefined;
  private long = { count: 0, totalMs: 0, runningMs: 0, runnableMs: 0, blockedMs: 0 };
  private readonly stallLog: string | undefined;

  constructor(options: LoopDelaySamplerOptions = {}) {
    this.stallLog = options.stallLog;
    this.now = options.now ?? (() => performance.now());
    this.setTimer = options.setTimer ?? nodeTimer;
    this.schedstat = options.splitStalls === true ? ThreadSchedstat.open() : undefined;
    [this.windowStart, this.lastSched] = this.snapshot();
    this.last = this.windowStart;
    this.cancelTimer = this.setTimer(this.tick, PROBE_RESOLUTION_MS);
  }

  /**
   * The clock and the schedstat read as one instant: a preemption between the two reads would put
   * its wait in one stall's split but the next one's gap (a loaded machine: 2 ms of parts beyond
   * a stall's length), so a pair read more than {@link SNAPSHOT_SKEW_MS} apart is read again
   * (at most {@link SNAPSHOT_TRIES} times; the closest pair is kept).
   */
  private snapshot(): [number, [number, number] | undefined] {
    const schedstat = this.schedstat;
    if (schedstat === undefined) return [this.now(), undefined];
    let best: [number, [number, number]] | undefined;
    let bestSkew = Infinity;
    for (let i = 0; i < SNAPSHOT_TRIES && bestSkew > SNAPSHOT_SKEW_MS; i++) {
      const before = this.now();
      const sched = schedstat.read();
      const skew = this.now() - before;
      if (skew < bestSkew) [best, bestSkew] = [[before, sched], skew];
    }
    return best ?? [this.now(), schedstat.read()];
  }

  private readonly tick = (): void => {
    const [now, sched] = this.snapshot();
    const gap = now - this.last;
    const stall = Math.max(0, gap - PROBE_RESOLUTION_MS);
    this.stalls.push(stall);
    let split: [number, number] | undefined;
    if (stall >= LONG_STALL_MS && sched !== undefined && this.lastSched !== undefined) {
      const runningMs = (sched[0] - this.lastSched[0]) / 1e6;
      const runnableMs = (sched[1] - this.lastSched[1]) / 1e6;
      split = [runningMs, runnableMs];
      this.long.count++;
      this.long.totalMs += gap;
      this.long.runningMs += runningMs;
      this.long.runnableMs += runnableMs;
      this.long.blockedMs += Math.max(0, gap - runningMs - runnableMs);
    }
    if (stall >= LONG_STALL_MS && this.stallLog !== undefined) {
      const cells = split === undefined ? ['-', '-'] : split.map((ms) => ms.toFixed(2));
      appendFileSync(this.stallLog, `${String(process.hrtime.bigint() / 1000n)} ${gap.toFixed(2)} ${cells.join(' ')}\n`);
    }
    this.lastSched = sched;
    this.last = now;
    this.cancelTimer = this.setTimer(this.tick, PROBE_RESOLUTION_MS);
  };

  /** The window since the previous call (or the start), and a new one begun. */
  takeWindow(): LoopDelayWindow {
    const now = this.now();
    const windowMs = now - this.windowStart;
    const stalls = this.stalls;
    this.stalls = [];
    this.windowStart = now;
    const stalled = stalls.reduce((a, b) => a + b, 0);
    const round = (ms: number): number => Number(ms.toFixed(2));
    const long = this.long;
    this.long = { count: 0, totalMs: 0, runningMs: 0, runnableMs: 0, blockedMs: 0 };
    return {
      ...(this.schedstat === undefined ? {} : { longStalls: { count: long.count, totalMs: round(long.totalMs), runningMs: round(long.runningMs), runnableMs: round(long.runnableMs), blockedMs: round(long.blockedMs) } }),
      p50Ms: round(percentile(stalls, 50)), p99Ms: round(percentile(stalls, 99)), maxMs: round(stalls.reduce((a, b) => Math.max(a, b), 0)), samples: stalls.length,
      waitP99Ms: round(timeWeightedWait(stalls, windowMs, 0.01)), stalledShare: Number((stalled / Math.max(1, windowMs)).toFixed(4)), windowMs: Math.round(windowMs),
    };
  }

  stop(): void {
    this.cancelTimer();
    this.schedstat?.close();
  }
}

/** One line for a window: the time-weighted p99 first (what goals are judged on), then per timer run. */
export function formatLoopDelay(window: LoopDelayWindow): string {
  const long = window.longStalls;
  const split = long === undefined || long.count === 0 ? '' : `; ${String(long.count)} stalls ≥ ${String(LONG_STALL_MS)} ms, ${long.totalMs.toFixed(0)} ms in all: running ${long.runningMs.toFixed(0)}, waiting for a CPU ${long.runnableMs.toFixed(0)}, blocked ${long.blockedMs.toFixed(0)} ms`;
  return `ready work waited > ${window.waitP99Ms.toFixed(1)} ms for 1 % of ${String(window.windowMs)} ms (stalled ${(window.stalledShare * 100).toFixed(1)} %); per timer run p50 ${window.p50Ms.toFixed(1)}, p99 ${window.p99Ms.toFixed(1)}, max ${window.maxMs.toFixed(1)} ms${split}`;
}

/** Starts the probe when this module is the one loaded by `--import` with `?out=`. */
function startProbe(): void {
  const params = new URL(import.meta.url).searchParams;
  const out = params.get('out');
  if (out === null || out === '') return;
  const stallLog = params.get('stalls');
  const sampler = new LoopDelaySampler({ splitStalls: params.get('split') === '1', ...(stallLog === null || stallLog === '' ? {} : { stallLog }) });
  process.on('SIGUSR2', () => {
    const window = sampler.takeWindow();
    // Written aside and renamed, so the reader never sees half of it.
    writeFileSync(`${out}.tmp`, `${JSON.stringify(window)}\n`);
    renameSync(`${out}.tmp`, out);
  });
  writeFileSync(armedFile(out), `${String(process.pid)}\n`);
}

startProbe();
