/**
 * The loop-delay probe's time-weighted wait (test/bench/loop-delay-probe.ts): the wait ready work
 * exceeds for a given share of the time, from the stalls beyond the timer's schedule — and the
 * probe itself, loaded into a child process that stalls its loop on purpose.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { LoopDelaySampler, loopDelayProbeArg, timeWeightedWait, type LoopDelaySamplerOptions } from '../../bench/loop-delay-probe.js';
import { parseStallLog } from '../../bench/stall-profile.js';
import { readLoopDelayWindow } from '../../bench/loop-delay-reader.js';
import { waitFor } from '../../helpers/netns.js';

/** A node child running `script` (with the probe unless `probe` is false), killed and its scratch directory removed after the test. */
async function probeChild(t: TestContext, script: string, probe: LoopDelaySamplerOptions | false = {}): Promise<{ child: ChildProcess; out: string; cycles: Cycles }> {
  const dir = await mkdtemp(join(tmpdir(), 'loop-probe-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const out = join(dir, 'window.json');
  const child = spawn(process.execPath, [...(probe === false ? [] : [loopDelayProbeArg(out, probe)]), '-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.after(() => { child.kill(); });
  return { child, out, cycles: new Cycles(child) };
}

/**
 * How many stall cycles the child has run in each probe window: a child script that starts with
 * {@link COUNT_CYCLES} and calls `cycle()` after each stall prints `<window> <cycles>`, its count
 * starting over with each window (SIGUSR2, after the probe's own handler). The tests wait for a
 * number of cycles, not of milliseconds: a loaded machine stretches each cycle, never removes one.
 */
class Cycles {
  readonly #seen = new Map<number, number>();

  constructor(child: ChildProcess) {
    let pending = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [window, count] = line.split(' ').map(Number);
        if (window !== undefined && count !== undefined) this.#seen.set(window, Math.max(count, this.#seen.get(window) ?? 0));
      }
    });
  }

  /** Resolves once the child has ended `count` cycles in window `window` (1: after the first read). */
  async reach(window: number, count: number): Promise<void> {
    await waitFor(() => (this.#seen.get(window) ?? 0) >= count, `${String(count)} stall cycles in probe window ${String(window)}`, 60_000, 20);
  }
}

/** The child-side counter {@link Cycles} reads (the probe's SIGUSR2 handler is installed first, by --import). */
const COUNT_CYCLES = 'let probeWindow = 0, cycles = 0;\nprocess.on(\'SIGUSR2\', () => { probeWindow++; cycles = 0; });\nconst cycle = () => { cycles++; process.stdout.write(`${probeWindow} ${cycles}\\n`); };\n';

test('timeWeightedWait: no stalls, or stalls adding up to less than the share, read 0', () => {
  assert.equal(timeWeightedWait([], 1000, 0.01), 0);
  assert.equal(timeWeightedWait([0, 0, 0], 1000, 0.01), 0);
  assert.equal(timeWeightedWait([4, 5], 1000, 0.01), 0);
});

test('timeWeightedWait: one 30 ms stall per 200 ms waits > 28 ms for 1 % of the time', () => {
  // Five stalls of 30 ms in 1000 ms: Σ (30 − X) · 5 = 10 ms → X = 28.
  assert.equal(timeWeightedWait([30, 30, 30, 30, 30, ...Array<number>(500).fill(0.1)], 1000, 0.01), 28);
});

test('timeWeightedWait: mixed stalls solve on the right segment', () => {
  // 40 and 20 ms stalls in 2000 ms, 1 % = 20 ms: the longest alone, 40 − X = 20, gives X = 20,
  // not below the next stall: 20.
  assert.equal(timeWeightedWait([20, 40], 2000, 0.01), 20);
  // 1 % of 1000 ms = 10 ms from stalls of 12, 11, 10: the longest alone gives X = 2 (below 11),
  // two give (23 − 10) / 2 = 6.5 (below 10), all three (33 − 10) / 3 = 7.67.
  assert.ok(Math.abs(timeWeightedWait([12, 11, 10], 1000, 0.01) - 23 / 3) < 1e-9);
  // A larger share never reads a longer wait.
  const stalls = [50, 3, 3, 8, 25, 1, 0.2];
  assert.ok(timeWeightedWait(stalls, 5000, 0.05) <= timeWeightedWait(stalls, 5000, 0.01));
});

test('per timer run a stall weighs one run in many, over time it weighs its length: a loop stalling 30 ms every 200 ms on a fake clock', () => {
  // The probe's arithmetic on a fake clock and timer, exact whatever else the machine runs (a real
  // loop on a loaded machine adds preemptions of its own to every reading).
  let now = 0;
  let due = 0;
  let callback: (() => void) | undefined;
  const sampler = new LoopDelaySampler({ now: () => now, setTimer: (run, ms) => { callback = run; due = now + ms; return () => { callback = undefined; }; } });
  for (let stallAt = 200; now < 2000;) {
    now = due;
    // A 30 ms turn began when the run at 200, 400, … 2000 fell due: it runs 30 ms late.
    if (now >= stallAt) [now, stallAt] = [now + 30, stallAt + 200];
    callback?.();
  }
  const window = sampler.takeWindow();
  sampler.stop();
  // A run due every ms from 1 to 2000, less 30 for each of the first nine turns (the run due at
  // 200 runs at 230, where the next one would have; the tenth ends the window at 2030).
  assert.equal(window.samples, 2000 - 9 * 30);
  assert.equal(window.windowMs, 2030);
  assert.equal(window.maxMs, 30);
  // Ten stalls in 1,730 runs: under 1 %, so neither the median run nor the p99 sees one.
  assert.equal(window.p50Ms, 0);
  assert.equal(window.p99Ms, 0);
  // Σ (30 − X) over ten stalls = 1 % of 2030 ms: X = 27.97.
  assert.equal(window.waitP99Ms, 27.97);
  assert.equal(window.stalledShare, Number((300 / 2030).toFixed(4)));
  assert.equal(callback, undefined, 'stop() cancels the timer');
});

test('the probe in a child whose loop stalls 30 ms every 200 ms: its stalls are in the window it writes', async (t) => {
  const { child, out, cycles } = await probeChild(t, `${COUNT_CYCLES}setInterval(() => { const t = Date.now(); while (Date.now() - t < 30); cycle(); }, 200)`);
  const spanStart = performance.now();
  // Read at once, while node is still starting: the reader waits for the probe to arm (a signal
  // before that would end the child — CI's failure when this test slept 500 ms first).
  await readLoopDelayWindow(child.pid ?? 0, out);
  await new Promise((r) => setTimeout(r, 2000));
  await cycles.reach(1, 10);
  const window = await readLoopDelayWindow(child.pid ?? 0, out);
  const spanMs = performance.now() - spanStart;
  // What load cannot break (how often the timer ran, and how late on a typical run, it can: the
  // test above checks those on a fake clock). The window lies inside this test's span of it and
  // holds at least the 2 s slept; the timer runs at most once per ms of it.
  assert.ok(window.windowMs >= 1900 && window.windowMs <= spanMs + 1, `window ${String(window.windowMs)} ms in a span of ${spanMs.toFixed(0)} ms`);
  assert.ok(window.samples >= 10 && window.samples <= window.windowMs + 2, `timer runs: ${String(window.samples)} in ${String(window.windowMs)} ms`);
  // Each of the ≥ 10 wall-clock stalls holds the loop 30 ms: load lengthens stalls, never shortens them.
  assert.ok(window.maxMs >= 25, `max ${String(window.maxMs)}`);
  // ≈ 28 ms; load adds stalls of its own (a preempted child), never takes the child's away — it
  // would take a stall of 29 ms or more per 900 ms of window to read under 20 — and no wait
  // exceeds the longest stall.
  assert.ok(window.waitP99Ms >= 20 && window.waitP99Ms <= window.maxMs, `time-weighted p99 ${String(window.waitP99Ms)}, max ${String(window.maxMs)}`);
});

test('a process without the probe: the reader says it never armed, and does not signal it', async (t) => {
  const { child, out } = await probeChild(t, 'setTimeout(() => {}, 20_000)', false);
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => { r(signal); }));
  await assert.rejects(readLoopDelayWindow(child.pid ?? 0, out, 1000), /never armed/);
  // SIGUSR2's default action would have ended it; it is still running.
  assert.equal(child.exitCode, null);
  assert.equal(child.signalCode, null);
  child.kill();
  assert.equal(await exited, 'SIGTERM');
});

test('with splitStalls, a child stalling 30 ms on the CPU and 30 ms blocked: the long stalls split into running and blocked time', async (t) => {
  // Every 200 ms: 30 ms of CPU time in a busy loop (CPU time, not wall time: on a loaded machine
  // a wall-clock loop spends much of its 30 ms waiting for a CPU — CI: running 159 of 638 ms),
  // then 100 ms later 30 ms asleep in a futex (Atomics.wait).
  // The window ends after 10 such cycles, not after 2 s: a loaded machine stretches them (CI:
  // 6 long stalls in 2 s).
  const script = [
    COUNT_CYCLES,
    'const cell = new Int32Array(new SharedArrayBuffer(4));',
    'const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };',
    'setInterval(() => { const t = cpuMs(); while (cpuMs() - t < 30); setTimeout(() => { Atomics.wait(cell, 0, 0, 30); cycle(); }, 100); }, 200);',
  ].join('\n');
  const { child, out, cycles } = await probeChild(t, script, { splitStalls: true });
  await readLoopDelayWindow(child.pid ?? 0, out);
  await cycles.reach(1, 10);
  const window = await readLoopDelayWindow(child.pid ?? 0, out);
  const long = window.longStalls;
  assert.ok(long !== undefined, 'longStalls present');
  // 10 of each kind at least; a loaded machine may merge or stretch some, never remove them (the
  // probe's timer runs between two busy stalls: it falls due long before the next interval).
  assert.ok(long.count >= 10, `long stalls: ${String(long.count)}`);
  // About as much running as blocked; waiting for a CPU is whatever the machine's load adds, so
  // the shares are of the time the child was not waiting.
  const own = long.runningMs + long.blockedMs;
  assert.ok(long.runningMs >= 0.25 * own, `running ${String(long.runningMs)} of ${String(own)} ms (${JSON.stringify(long)})`);
  assert.ok(long.blockedMs >= 0.25 * own, `blocked ${String(long.blockedMs)} of ${String(own)} ms (${JSON.stringify(long)})`);
  // The three parts add up to the stalls they split: the probe reads the clock and schedstat as
  // one instant and brings schedstat's running time up to date first (LoopDelaySampler's
  // snapshot, ThreadSchedstat.read), within 0.35 ms a stall; 2 % + 1 ms of slack, and a counting
  // error (a stall split twice, ns read as µs) is far outside it.
  const parts = long.runningMs + long.runnableMs + long.blockedMs;
  assert.ok(parts <= long.totalMs * 1.02 + 1 && parts >= long.totalMs - 1, JSON.stringify(long));
});

test('without splitStalls the window has no longStalls (no procfs read per timer run)', async (t) => {
  const { child, out } = await probeChild(t, 'setInterval(() => {}, 1000)');
  const window = await readLoopDelayWindow(child.pid ?? 0, out);
  assert.equal(window.longStalls, undefined);
});

test('with a stall log, each stall of 10 ms or more is a line on CLOCK_MONOTONIC (the clock of --cpu-prof) with its split', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'loop-probe-log-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const stallLog = join(dir, 'stalls');
  const startedUs = Number(process.hrtime.bigint() / 1000n);
  // 30 ms of CPU time every 200 ms (as above), nothing else long.
  // Four cycles at least after the probe armed, however long a loaded machine makes them; the
  // probe logs a stall at its timer's next run, which comes before the next cycle's stall.
  const script = `${COUNT_CYCLES}const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };\nsetInterval(() => { const t = cpuMs(); while (cpuMs() - t < 30); cycle(); }, 200);`;
  const { child, out, cycles } = await probeChild(t, script, { splitStalls: true, stallLog });
  await readLoopDelayWindow(child.pid ?? 0, out);
  await cycles.reach(1, 5);
  const stalls = parseStallLog(await readFile(stallLog, 'utf8'));
  const nowUs = Number(process.hrtime.bigint() / 1000n);
  assert.ok(stalls.length >= 4, `stalls logged: ${String(stalls.length)}`);
  for (const [i, stall] of stalls.entries()) {
    assert.ok(stall.gapMs >= 10, `stall ${String(i)}: ${String(stall.gapMs)} ms`);
    assert.ok(stall.endUs > startedUs && stall.endUs <= nowUs, `stall ${String(i)} ends at ${String(stall.endUs)}, outside ${String(startedUs)}–${String(nowUs)}`);
    assert.ok(i === 0 || stall.endUs > (stalls[i - 1]?.endUs ?? 0), 'in order');
    assert.ok(stall.runningMs !== undefined && stall.runnableMs !== undefined && stall.runningMs + stall.runnableMs <= stall.gapMs + 1, JSON.stringify(stall));
  }
});
