/**
 * @module The fuzz loop every test/fuzz target runs: regression inputs first, then generated
 * ones (seeded, so input N of a run is always the same input); each input is checked within a
 * CPU-time bound (a slow input is re-run once to rule out a GC pause, then reported as a hang;
 * an answer that never comes fails after 60 s); the heap is measured after forced GCs from the end of the warm-up to the end and an
 * unbounded growth fails the run; a finding names the target, the seed, the input's index and
 * the input, and how to re-run just that input.
 *
 * Environment: `RACKSIDE_FUZZ_ITERATIONS` (inputs per target; CI runs each target's smoke
 * default), `RACKSIDE_FUZZ_SEED` (mixed into every target's seed), `RACKSIDE_FUZZ_ONLY`
 * (check only input N), `RACKSIDE_FUZZ_REPORT` (append one JSON line per target to this file).
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Dice } from './dice.js';

/** One fuzz target: how to make inputs and what every input must satisfy. */
export interface FuzzTarget<I> {
  /** Short name in reports (`dhcp`, `redfish-driver` …). */
  readonly name: string;
  /** Base seed of the target's input stream. */
  readonly seed: number;
  /** Generated inputs to check (see {@link fuzzInputs}). */
  readonly inputs: number;
  /** Inputs of past findings, checked first on every run. */
  readonly regressions?: readonly I[];
  /** Makes input `index`; must draw every choice from `dice`. */
  generate(dice: Dice, index: number): I;
  /**
   * Throws (or rejects) when `input` breaks the target's contract; may return an outcome label
   * (`decoded`, `400`, `refused` …) that the report tallies.
   */
  check(input: I): string | undefined | Promise<string | undefined>;
  /** The input as text for a failure message. */
  show(input: I): string;
  /** Per-input bound on CPU time; default 1000 ms. */
  readonly boundMs?: number;
  /** Largest allowed heap growth from after the warm-up to the end; default 64 MiB. */
  readonly maxHeapGrowthBytes?: number;
}

/** What one run did. */
export interface FuzzReport {
  readonly target: string;
  readonly seed: number;
  /** Inputs checked, regressions included. */
  readonly inputs: number;
  readonly outcomes: Readonly<Record<string, number>>;
  /** CPU time of the slowest input. */
  readonly slowestMs: number;
  readonly peakHeapBytes: number;
  /** Heap after GC at the end minus after GC at the end of the warm-up (10 % of the inputs). */
  readonly heapGrowthBytes: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  /** True when `RACKSIDE_FUZZ_ONLY` picked one input: whole-run expectations do not apply. */
  readonly focused: boolean;
}

/** An input that broke a target's contract (crash, wrong error type, hang, unbounded growth). */
export class FuzzFinding extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FuzzFinding';
  }
}

function positiveIntegerEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Inputs per target: `RACKSIDE_FUZZ_ITERATIONS` when set, else the target's CI smoke count. */
export function fuzzInputs(smoke: number): number {
  return positiveIntegerEnv('RACKSIDE_FUZZ_ITERATIONS') ?? smoke;
}

/** `base` mixed with `RACKSIDE_FUZZ_SEED` (unchanged when unset). */
export function fuzzSeed(base: number): number {
  const extra = positiveIntegerEnv('RACKSIDE_FUZZ_SEED');
  return extra === undefined ? base >>> 0 : (Math.imul(base ^ extra, 0x9e3779b1) ^ extra) >>> 0;
}

let forcedGc: (() => void) | undefined;

/** A full garbage collection (node's `gc`, exposed into a fresh context). */
function collectGarbage(): void {
  if (forcedGc === undefined) {
    setFlagsFromString('--expose-gc');
    forcedGc = runInNewContext('gc') as () => void;
  }
  forcedGc();
}

function heapUsed(): number {
  return getHeapStatistics().used_heap_size;
}

const HANG_WALL_MS = 60_000;

interface Timing {
  readonly outcome: string | undefined;
  /** CPU time of the process (all threads) while the input was checked. */
  readonly cpuMs: number;
  readonly wallMs: number;
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Runs `check` once and measures it; an answer that never comes is a hang after {@link HANG_WALL_MS}. */
async function timed<I>(target: FuzzTarget<I>, input: I): Promise<Timing> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = target.check(input);
  if (!(result instanceof Promise)) return { outcome: result, cpuMs: cpuMsSince(cpu), wallMs: performance.now() - started };
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new FuzzFinding(`no answer within ${HANG_WALL_MS} ms (hang)`)); }, HANG_WALL_MS);
  });
  try {
    const outcome = await Promise.race([result, hang]);
    return { outcome, cpuMs: cpuMsSince(cpu), wallMs: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure<I>(target: FuzzTarget<I>, label: string, input: I, what: string): string {
  const rerun = label.startsWith('input ')
    ? `re-run just this input: RACKSIDE_FUZZ_ONLY=${label.slice('input '.length)} with the same RACKSIDE_FUZZ_SEED`
    : 'a regression input: every run checks it first';
  return `fuzz ${target.name} (seed 0x${target.seed.toString(16)}) ${label}: ${what}\n  input: ${target.show(input)}\n  ${rerun}`;
}

/**
 * Runs `target`: every regression input, then `target.inputs` generated ones. Throws a
 * {@link FuzzFinding} on the first input that breaks the contract or the time bound, or when
 * the heap grew by more than the limit; returns the report otherwise.
 */
export async function runFuzz<I>(target: FuzzTarget<I>): Promise<FuzzReport> {
  const boundMs = target.boundMs ?? 1000;
  const only = positiveIntegerEnv('RACKSIDE_FUZZ_ONLY');
  const outcomes: Record<string, number> = {};
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  let slowestMs = 0;
  let peak = heapUsed();
  let checked = 0;
  const warmupEnd = Math.max(1, Math.floor(target.inputs / 10));
  let baseline: number | undefined;

  const checkOne = async (input: I, label: string): Promise<void> => {
    let run: Timing;
    // CPU time is the bound (a busy machine stretches wall time, not CPU time); wall time gets 10×
    // the bound (at least 10 s) for inputs that wait instead of compute. A slow input is re-run once
    // to rule out a GC pause or a stolen core.
    const slow = (r: Timing): boolean => r.cpuMs > boundMs || r.wallMs > Math.max(10 * boundMs, 10_000);
    try {
      run = await timed(target, input);
      if (slow(run)) {
        const again = await timed(target, input);
        if (slow(again)) {
          throw new FuzzFinding(`took ${run.cpuMs.toFixed(0)} ms CPU (${run.wallMs.toFixed(0)} ms wall), then ${again.cpuMs.toFixed(0)} ms CPU `
            + `(${again.wallMs.toFixed(0)} ms wall) again; bound ${boundMs} ms CPU`);
        }
        run = again;
      }
    } catch (err) {
      const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw new FuzzFinding(describeFailure(target, label, input, what), { cause: err });
    }
    slowestMs = Math.max(slowestMs, run.cpuMs);
    const key = run.outcome ?? 'ok';
    outcomes[key] = (outcomes[key] ?? 0) + 1;
    checked += 1;
    if ((checked & 63) === 0) peak = Math.max(peak, heapUsed());
  };

  for (const [i, input] of (target.regressions ?? []).entries()) {
    if (only === undefined) await checkOne(input, `regression ${i}`);
  }
  const dice = new Dice(target.seed);
  const count = only === undefined ? target.inputs : only + 1; // input N is the same whatever the run's length
  for (let i = 0; i < count; i++) {
    const input = target.generate(dice, i);
    if (only !== undefined && i !== only) continue;
    await checkOne(input, `input ${i}`);
    if (i + 1 === warmupEnd) {
      collectGarbage();
      baseline = heapUsed();
    }
  }
  peak = Math.max(peak, heapUsed());
  collectGarbage();
  const growth = baseline === undefined ? 0 : heapUsed() - baseline;
  const limit = target.maxHeapGrowthBytes ?? 64 * 1024 * 1024;
  if (growth > limit) {
    throw new FuzzFinding(`fuzz ${target.name}: heap grew by ${(growth / 2 ** 20).toFixed(1)} MiB after the warm-up (limit ${(limit / 2 ** 20).toFixed(0)} MiB): something keeps every input`);
  }
  const cpu = process.cpuUsage(cpuStart);
  const report: FuzzReport = {
    target: target.name, seed: target.seed, inputs: checked, outcomes, slowestMs, peakHeapBytes: peak, heapGrowthBytes: growth,
    wallMs: performance.now() - wallStart, cpuMs: (cpu.user + cpu.system) / 1000, focused: only !== undefined,
  };
  const file = process.env.RACKSIDE_FUZZ_REPORT;
  if (file !== undefined && file !== '') appendFileSync(file, `${JSON.stringify(report)}\n`);
  return report;
}

/** One line for `t.diagnostic`: inputs, outcomes, slowest input, heap. */
export function formatReport(r: FuzzReport): string {
  const outcomes = Object.entries(r.outcomes).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ');
  return `${r.target}: ${r.inputs} inputs (${outcomes}); slowest ${r.slowestMs.toFixed(1)} ms CPU; peak heap ${(r.peakHeapBytes / 2 ** 20).toFixed(1)} MiB, `
    + `growth ${(r.heapGrowthBytes / 2 ** 20).toFixed(1)} MiB; ${(r.cpuMs / 1000).toFixed(1)} s CPU`;
}
