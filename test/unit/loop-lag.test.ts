/**
 * The event-loop lag sampler wakes an idle agent a few times a second, not 100 times, and still
 * reads a stall as its length beyond the schedule; the registry serves its numbers under
 * prom-client's names, once each.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { LoopLagSampler } from '../../agent/loop-lag.js';
import { registerLoopLagMetrics } from '../../agent/metrics.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Holds the event loop for `ms` (the work of one long turn). */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* busy */ }
}

test('an idle loop is sampled at the idle period and reads no delay', async (t) => {
  // A high busy threshold: on a loaded CI machine a preempted timer run alone can read 5 % of a
  // 50 ms period; this test is about the idle period, the next about the switch.
  const sampler = new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 50, idleAfterMs: 100, busyUtilization: 0.5 });
  t.after(() => { sampler.stop(); });
  sampler.start();
  await sleep(300); // the test's own start-up may count as work for a moment
  sampler.take();
  const runsBefore = sampler.runs;
  await sleep(520);
  const runs = sampler.runs - runsBefore;
  // 10 runs at 50 ms (a busy sampler would have run ≈ 50 times at 10 ms).
  assert.ok(runs >= 6 && runs <= 14, `runs ${String(runs)}`);
  assert.equal(sampler.busy, false);
  const idle = sampler.take();
  assert.equal(idle.samples, runs);
  assert.ok(idle.p99 < 0.015, `an idle loop's p99 ${String(idle.p99)} s`);
  assert.equal(sampler.take().samples, 0, 'take() forgets what it returned');
});

test('a stall reads as its length beyond the schedule; work switches to the busy period and an idle second back', async (t) => {
  const sampler = new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 50, idleAfterMs: 200, busyUtilization: 0.5 });
  t.after(() => { sampler.stop(); });
  sampler.start();
  await sleep(60);
  // 30 ms turns back to back for 300 ms: every due run waits for one.
  for (let i = 0; i < 10; i++) {
    stall(30);
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(sampler.busy, true, 'the loop had work');
  const busy = sampler.take();
  assert.ok(busy.max >= 0.02 && busy.max < 0.2, `max ${String(busy.max)} s`);
  assert.ok(busy.p99 >= 0.02, `p99 ${String(busy.p99)} s`);
  const runsBefore = sampler.runs;
  await sleep(500);
  assert.equal(sampler.busy, false, 'idle again after idleAfterMs');
  assert.ok(sampler.runs - runsBefore < 35, `an idle half second woke it ${String(sampler.runs - runsBefore)} times (10 ms throughout: 50)`);
});

test('the registry serves the lag percentiles once each, under prom-client\'s names, from the sampler', async (t) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 2_147_483_647 });
  const sampler = registerLoopLagMetrics(registry, new LoopLagSampler({ busyPeriodMs: 10, idlePeriodMs: 20 }));
  t.after(() => { sampler.stop(); });
  await sleep(30);
  stall(40);
  await sleep(30);
  const text = await registry.metrics();
  for (const name of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
    assert.equal(text.match(new RegExp(`^# TYPE nodejs_eventloop_lag_${name}_seconds gauge$`, 'gm'))?.length, 1, name);
  }
  const max = Number(/^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(text)?.[1]);
  assert.ok(max >= 0.02, `the 40 ms stall is in max (${String(max)} s)`);
  const again = await registry.metrics();
  const maxAfter = Number(/^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(again)?.[1]);
  assert.ok(maxAfter < 0.02, `the next scrape starts over (${String(maxAfter)} s)`);
});

test('sampling periods must be positive', () => {
  assert.throws(() => new LoopLagSampler({ busyPeriodMs: 0 }), RangeError);
  assert.throws(() => new LoopLagSampler({ idlePeriodMs: Number.NaN }), RangeError);
});
