/**
 * The event-loop lag sampler wakes an idle agent a few times a second, not 100 times, and still
 * reads a stall as its length beyond the schedule; the registry serves its numbers under
 * prom-client's names, once each.
 *
 * The sampler's logic runs on a fake loop (its clock, timer and utilization sources injected), so
 * its numbers are exact whatever else the machine runs: a real timer on a preempted process runs
 * late by the preemption, which an idle-loop bound cannot tell from a stall. One test keeps the
 * real sources and asserts only what load cannot break.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { LoopLagSampler, type LoopActivity, type LoopLagSamplerOptions, type LoopLagTimers } from '../../agent/loop-lag.js';
import { registerLoopLagMetrics } from '../../agent/metrics.js';

/**
 * A single-threaded event loop on a fake clock: it idles until the next due timer, or holds for a
 * turn of work during which due timers wait. Each timer run costs {@link RUN_COST_MS} of active
 * time, as the sampler's own run does on a real loop. Times are sums of binary fractions, so exact.
 */
class FakeLoop {
  static readonly RUN_COST_MS = 0.25;
  #t = 0;
  #active = 0;
  #idle = 0;
  #nextId = 0;
  readonly #pending = new Map<number, { at: number; callback: () => void }>();

  readonly now = (): number => this.#t;
  readonly utilization = (): LoopActivity => ({ active: this.#active, idle: this.#idle });
  readonly timers: LoopLagTimers = {
    set: (callback, ms) => {
      this.#nextId += 1;
      this.#pending.set(this.#nextId, { at: this.#t + ms, callback });
      return this.#nextId;
    },
    clear: (handle) => { this.#pending.delete(handle as number); },
  };

  /** The sampler options that put it on this loop. */
  sources(): Pick<LoopLagSamplerOptions, 'now' | 'timers' | 'utilization'> {
    return { now: this.now, timers: this.timers, utilization: this.utilization };
  }

  /** The loop waits `ms` with nothing to do but run timers, each at its due time. */
  idleFor(ms: number): void {
    const end = this.#t + ms;
    for (let next = this.#due(end); next !== undefined; next = this.#due(end)) {
      this.#idle += Math.max(0, next.at - this.#t);
      this.#t = Math.max(this.#t, next.at);
      this.#run(next.id);
    }
    this.#idle += end - this.#t;
    this.#t = end;
  }

  /** One turn of `ms` of work; the timers that fell due meanwhile run after it, late. */
  turn(ms: number): void {
    this.#active += ms;
    this.#t += ms;
    for (let next = this.#due(this.#t); next !== undefined; next = this.#due(this.#t)) this.#run(next.id);
  }

  /** The earliest timer due at or before `end` (ties in the order set). */
  #due(end: number): { id: number; at: number } | undefined {
    let best: { id: number; at: number } | undefined;
    for (const [id, { at }] of this.#pending) if (at <= end && (best === undefined || at < best.at)) best = { id, at };
    return best;
  }

  #run(id: number): void {
    const timer = this.#pending.get(id);
    this.#pending.delete(id);
    timer?.callback();
    this.#active += FakeLoop.RUN_COST_MS;
    this.#t += FakeLoop.RUN_COST_MS;
  }
}

/** `seconds` as the sampler's histogram reads it back: HDR buckets keep 3 significant digits. */
function near(actual: number, seconds: number, what: string): void {
  assert.ok(Math.abs(actual - seconds) <= seconds * 2e-3, `${what}: ${String(actual)} s, expected ${String(seconds)} s`);
}

test('an idle loop is sampled at the idle period and reads no delay', () => {
  const loop = new FakeLoop();
  const sampler = new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 50, idleAfterMs: 100, ...loop.sources() });
  sampler.start();
  loop.idleFor(1000);
  // Runs at 50, 100, …, 1000 ms (a busy sampler would have run 100 times at 10 ms); each costs
  // 0.25 of its 50 ms period, 0.5 %, below the 5 % that counts as work.
  assert.equal(sampler.runs, 20);
  assert.equal(sampler.busy, false);
  const idle = sampler.take();
  assert.equal(idle.samples, 20);
  // Every run on time: the 1 ns floor the histogram records for "not late".
  assert.equal(idle.max, 1e-9);
  assert.equal(idle.p99, 1e-9);
  assert.equal(sampler.take().samples, 0, 'take() forgets what it returned');
  sampler.stop();
  loop.idleFor(1000);
  assert.equal(sampler.runs, 20, 'stop() ends the runs');
});

test('a stall reads as its length beyond the schedule', () => {
  const loop = new FakeLoop();
  const sampler = new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 50, ...loop.sources() });
  sampler.start();
  loop.idleFor(30);
  // A 40 ms turn from 30 ms: the run due at 50 runs at 70, 20 ms late.
  loop.turn(40);
  near(sampler.take().max, 0.02, 'the run due inside the turn');
  // The turn made the period busy: the next run is due 10 ms after that one (80), and a 120 ms
  // turn from 71 holds it until 191: 111 ms late, the part of the turn beyond its schedule.
  loop.idleFor(0.75);
  assert.equal(sampler.busy, true);
  loop.turn(120);
  const snapshot = sampler.take();
  assert.equal(snapshot.samples, 1);
  near(snapshot.max, 0.111, 'one run waiting through a turn');
});

test('work switches the sampler to the busy period, and idleAfterMs of quiet back', () => {
  const loop = new FakeLoop();
  const sampler = new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 50, idleAfterMs: 200, ...loop.sources() });
  sampler.start();
  loop.idleFor(60);
  assert.equal(sampler.take().samples, 1, 'one idle run, at 50');
  // 30 ms turns back to back for 300 ms: every due run waits for part of one.
  for (let i = 0; i < 10; i++) loop.turn(30);
  assert.equal(sampler.busy, true, 'the loop had work');
  const busy = sampler.take();
  // The first run (due at 100) ran at 120; from then on each is due 10 ms after a turn's end and
  // runs at the next one's, 20.25 ms late: never less than 20, never a whole 30 ms turn.
  assert.equal(busy.samples, 9);
  near(busy.min, 0.02, 'the first run');
  near(busy.max, 0.02025, 'the others');
  assert.ok(busy.p99 >= 0.02, `p99 ${String(busy.p99)} s`);
  const runsBefore = sampler.runs;
  loop.idleFor(500);
  assert.equal(sampler.busy, false, 'idle again after idleAfterMs');
  // From the last turn's run: 20 runs at 10 ms (2.5 % each, quiet) until 200 ms have passed,
  // then the idle period: 250, 300, …, 500 — 26 in all (10 ms throughout: 50).
  assert.equal(sampler.runs - runsBefore, 26);
  assert.equal(sampler.take().max, 1e-9, 'the quiet runs were on time');
});

test('the registry serves the lag percentiles once each, under prom-client\'s names, from the sampler', async () => {
  const loop = new FakeLoop();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 2_147_483_647 });
  const sampler = registerLoopLagMetrics(registry, new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 20, ...loop.sources() }));
  loop.idleFor(30); // a run at 20; the next due at 40
  loop.turn(40); // it runs at 70, 30 ms late
  loop.idleFor(30);
  const text = await registry.metrics();
  for (const name of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
    assert.equal(text.match(new RegExp(`^# TYPE nodejs_eventloop_lag_${name}_seconds gauge$`, 'gm'))?.length, 1, name);
  }
  const max = Number(/^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(text)?.[1]);
  near(max, 0.03, 'the 40 ms turn in max');
  const again = await registry.metrics();
  const maxAfter = Number(/^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(again)?.[1]);
  assert.equal(maxAfter, 0, 'the next scrape starts over: nothing ran since');
  sampler.stop();
});

test('on the real clock and timers, a 40 ms stall reads at least 20 ms', async (t) => {
  // Load can only make a run later, never earlier: whatever else the machine runs, the timer
  // pending when the stall began was due within one 20 ms period of it and ran after its 40 ms.
  const sampler = new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 20 });
  t.after(() => { sampler.stop(); });
  sampler.start();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const until = performance.now() + 40;
  while (performance.now() < until) { /* the stall */ }
  // The overdue sampler run comes before this later-due timer.
  await new Promise((resolve) => setTimeout(resolve, 1));
  const snapshot = sampler.take();
  assert.ok(snapshot.samples >= 1 && snapshot.max >= 0.02, `the 40 ms stall in max (${JSON.stringify(snapshot)})`);
});

test('sampling periods must be positive', () => {
  assert.throws(() => new LoopLagSampler({ busyPeriodMs: 0 }), RangeError);
  assert.throws(() => new LoopLagSampler({ idlePeriodMs: Number.NaN }), RangeError);
});
