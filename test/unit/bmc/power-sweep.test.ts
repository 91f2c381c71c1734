// The power-state sweep (agent/bmc/power-sweep.ts) over the fake driver: caching, errors,
// bounded concurrency, at most one query per BMC across overlapping sweeps, the sweep period
// (interval minus margin), staleness, pruning and stop. Time is a manual clock and timers fire
// only when the test says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createPowerSweep, poweredOnOf, type PowerSource, type PowerSweepEntry, type PowerSweepTarget, type SweepTimers,
} from '../../../agent/bmc/power-sweep.js';
import { DriverRegistry, registerBuiltinDrivers, type BmcDriver, type PowerControl, type PowerState } from '../../../drivers/index.js';
import { FakeBmcPool } from '../../../drivers/fake/fake-driver.js';

const INTERVAL = 60_000;

function manualClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

/** Timers that fire only through `fire()`. */
function manualTimers(): SweepTimers & { pending: () => number; fire: () => void } {
  const queue = new Map<number, () => void>();
  let id = 0;
  return {
    setTimeout: (callback) => { queue.set(++id, callback); return id; },
    clearTimeout: (handle) => { queue.delete(handle as number); },
    pending: () => queue.size,
    fire: () => {
      const due = [...queue.entries()];
      queue.clear();
      for (const [, callback] of due) callback();
    },
  };
}

function fakeRack(names: readonly string[]): { pool: FakeBmcPool; drivers: Map<string, BmcDriver> } {
  const pool = new FakeBmcPool();
  const registry = new DriverRegistry();
  registerBuiltinDrivers(registry, { fakePool: pool });
  const drivers = new Map(names.map((n) => [n, registry.create(`fake://${n}`, { username: 'u', password: 'p' })]));
  return { pool, drivers };
}

/** Wraps a PowerControl so each query waits until released; counts queries in flight. */
class Gate {
  inFlight = 0;
  maxInFlight = 0;
  calls = 0;
  readonly #waiting: (() => void)[] = [];

  wrap(power: PowerControl): PowerSource {
    return {
      power: {
        setPower: (a) => power.setPower(a),
        getPowerState: async (): Promise<PowerState> => {
          this.calls += 1;
          this.inFlight += 1;
          this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
          await new Promise<void>((resolve) => this.#waiting.push(resolve));
          this.inFlight -= 1;
          return power.getPowerState();
        },
      },
    };
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  releaseAll(): void {
    for (const r of this.#waiting.splice(0)) r();
  }
}

/** Lets queued promise callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
}

test('a sweep caches each BMC power state from the fake driver', async () => {
  const { pool, drivers } = fakeRack(['node-0', 'node-1']);
  pool.get('node-0').power = 'on';
  const clock = manualClock();
  const results: [string, PowerSweepEntry][] = [];
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 4, now: clock.now, timers: manualTimers(),
    listTargets: () => Promise.resolve([...drivers].map(([key, driver]) => ({ key, driver }))),
    onResult: (key, entry) => results.push([key, entry]),
  });
  const summary = await sweep.sweepNow();
  assert.deepEqual({ ...summary, startedAt: 0 }, { startedAt: 0, durationMs: 0, targets: 2, queried: 2, skipped: 0, errors: 0, listError: undefined });
  assert.deepEqual(sweep.get('node-0'), { poweredOn: true, state: 'on', checkedAt: clock.now(), durationMs: 0, error: undefined });
  assert.equal(sweep.get('node-1')?.poweredOn, false);
  assert.equal(sweep.get('node-2'), undefined);
  assert.deepEqual(results.map(([k]) => k).sort(), ['node-0', 'node-1']);
  assert.deepEqual(sweep.stats().lastSweep, summary);
  assert.equal(sweep.stats().cached, 2);
});

test('a factory target is called when its query starts, once per query', async () => {
  const { drivers } = fakeRack(['node-0']);
  let made = 0;
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 1, timers: manualTimers(),
    listTargets: () => Promise.resolve([{ key: 'k', driver: () => { made += 1; return Promise.resolve(drivers.get('node-0') as BmcDriver); } }]),
  });
  assert.equal(made, 0);
  await sweep.sweepNow();
  await sweep.sweepNow();
  assert.equal(made, 2);
  assert.equal(sweep.get('k')?.state, 'off');
});

test('failures are cached per BMC with their BmcError code and never escape', async () => {
  const { pool, drivers } = fakeRack(['down', 'badpass', 'ok']);
  pool.get('down').knobs.unreachable = true;
  pool.get('badpass').knobs.authFails = true;
  const targets: PowerSweepTarget[] = [
    ...[...drivers].map(([key, driver]) => ({ key, driver })),
    { key: 'no-secret', driver: () => { throw new Error('secret node-9-bmc not found'); } },
  ];
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 2, timers: manualTimers(),
    listTargets: () => Promise.resolve(targets),
    onResult: () => { throw new Error('observer bug'); },
  });
  const summary = await sweep.sweepNow();
  assert.equal(summary.errors, 3);
  assert.equal(summary.queried, 4);
  assert.equal(sweep.get('down')?.error?.code, 'RACKSIDE_ERR_BMC_UNREACHABLE');
  assert.equal(sweep.get('down')?.poweredOn, undefined);
  assert.equal(sweep.get('badpass')?.error?.code, 'RACKSIDE_ERR_BMC_AUTH');
  assert.deepEqual(sweep.get('no-secret')?.error, { code: undefined, message: 'secret node-9-bmc not found' });
  assert.equal(sweep.get('ok')?.poweredOn, false);
  assert.equal(sweep.stats().errors, 3);
});

test('a failing listTargets is counted and keeps the cache', async () => {
  const { drivers } = fakeRack(['node-0']);
  let fail = false;
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 1, timers: manualTimers(),
    listTargets: () => (fail ? Promise.reject(new Error('store closed')) : Promise.resolve([{ key: 'node-0', driver: drivers.get('node-0') as BmcDriver }])),
  });
  await sweep.sweepNow();
  fail = true;
  const summary = await sweep.sweepNow();
  assert.equal(summary.listError, 'store closed');
  assert.equal(sweep.stats().listErrors, 1);
  assert.equal(sweep.get('node-0')?.state, 'off');
});

test('no more than `concurrency` queries run at once', async () => {
  const names = Array.from({ length: 10 }, (_, i) => `node-${i}`);
  const { drivers } = fakeRack(names);
  const gate = new Gate();
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 3, timers: manualTimers(),
    listTargets: () => Promise.resolve([...drivers].map(([key, d]) => ({ key, driver: gate.wrap(d.power) }))),
  });
  const done = sweep.sweepNow();
  await settle();
  assert.equal(gate.inFlight, 3);
  assert.equal(sweep.stats().queued, 7);
  while (gate.waiting > 0) {
    gate.releaseAll();
    await settle();
  }
  const summary = await done;
  assert.equal(gate.maxInFlight, 3);
  assert.equal(summary.queried, 10);
  assert.ok(names.every((n) => sweep.get(n)?.state === 'off'));
});

test('a BMC whose previous query still runs is skipped by the next sweep; the others are swept', async () => {
  const { pool, drivers } = fakeRack(['slow', 'fast']);
  const gate = new Gate();
  const fast = drivers.get('fast') as BmcDriver;
  const slow = gate.wrap((drivers.get('slow') as BmcDriver).power);
  const timers = manualTimers();
  const clock = manualClock();
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 4, now: clock.now, timers,
    listTargets: () => Promise.resolve([{ key: 'slow', driver: slow }, { key: 'fast', driver: fast }]),
  });
  sweep.start();
  sweep.start(); // idempotent
  await settle();
  assert.equal(timers.pending(), 1);
  assert.equal(gate.calls, 1);
  assert.equal(sweep.get('fast')?.state, 'off');
  pool.get('fast').power = 'on';
  clock.advance(INTERVAL);
  timers.fire();
  await settle();
  assert.equal(gate.calls, 1, 'the slow BMC got no second query');
  assert.equal(sweep.get('fast')?.state, 'on');
  assert.equal(sweep.stats().lastSweep?.skipped, 1);
  assert.equal(sweep.stats().running, 1, 'the first sweep still waits for the slow BMC');
  gate.releaseAll();
  await settle();
  assert.equal(sweep.get('slow')?.state, 'off');
  assert.equal(sweep.stats().running, 0);
  await sweep.stop();
  assert.equal(timers.pending(), 0);
});

test('entries go stale after staleAfterIntervals intervals; peek still shows them', async () => {
  const { drivers } = fakeRack(['node-0']);
  const clock = manualClock();
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 1, now: clock.now, timers: manualTimers(), staleAfterIntervals: 2,
    listTargets: () => Promise.resolve([{ key: 'node-0', driver: drivers.get('node-0') as BmcDriver }]),
  });
  await sweep.sweepNow();
  clock.advance(2 * INTERVAL);
  assert.equal(sweep.get('node-0')?.state, 'off');
  clock.advance(1);
  assert.equal(sweep.get('node-0'), undefined);
  assert.equal(sweep.peek('node-0')?.state, 'off');
});

test('keys no longer listed are dropped from the cache', async () => {
  const { drivers } = fakeRack(['a', 'b']);
  let keys = ['a', 'b'];
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 2, timers: manualTimers(),
    listTargets: () => Promise.resolve(keys.map((key) => ({ key, driver: drivers.get(key) as BmcDriver }))),
  });
  await sweep.sweepNow();
  keys = ['a'];
  await sweep.sweepNow();
  assert.equal(sweep.peek('b'), undefined);
  assert.equal(sweep.stats().cached, 1);
});

test('stop drops queued queries and waits for the running ones', async () => {
  const { drivers } = fakeRack(['a', 'b', 'c']);
  const gate = new Gate();
  const timers = manualTimers();
  const sweep = createPowerSweep({
    intervalMs: INTERVAL, concurrency: 1, timers,
    listTargets: () => Promise.resolve([...drivers].map(([key, d]) => ({ key, driver: gate.wrap(d.power) }))),
  });
  sweep.start();
  await settle();
  let stopped = false;
  const stopping = sweep.stop().then(() => { stopped = true; });
  await settle();
  assert.equal(stopped, false, 'stop waits for the query in flight');
  gate.releaseAll();
  await stopping;
  await settle();
  assert.equal(gate.calls, 1);
  assert.equal(timers.pending(), 0);
  const last = sweep.stats().lastSweep;
  assert.deepEqual({ queried: last?.queried, skipped: last?.skipped }, { queried: 1, skipped: 2 });
});

/** Timers that record the delays asked for and never fire. */
function recordingTimers(): SweepTimers & { delays: number[] } {
  const delays: number[] = [];
  return { delays, setTimeout: (_callback, ms) => { delays.push(ms); return delays.length; }, clearTimeout: () => undefined };
}

const margins: Record<string, { intervalMs: number; marginMs?: number; periodMs: number }> = {
  'a minute: sweeps every 55 s (the margin is capped at 5 s)': { intervalMs: 60_000, periodMs: 55_000 },
  '10 s: sweeps every 9 s (a tenth of the interval)': { intervalMs: 10_000, periodMs: 9_000 },
  'an explicit margin of 0: sweeps every interval': { intervalMs: 60_000, marginMs: 0, periodMs: 60_000 },
  'an explicit margin of 12 s': { intervalMs: 60_000, marginMs: 12_000, periodMs: 48_000 },
};
for (const [name, c] of Object.entries(margins)) {
  test(`sweeps start a margin early so no answer gets older than the interval — ${name}`, async () => {
    const timers = recordingTimers();
    const sweep = createPowerSweep({
      intervalMs: c.intervalMs, concurrency: 1, timers, ...(c.marginMs === undefined ? {} : { marginMs: c.marginMs }),
      listTargets: () => Promise.resolve([]),
    });
    sweep.start();
    await settle();
    assert.deepEqual(timers.delays, [c.periodMs]);
    assert.equal(sweep.stats().sweeps, 1);
    await sweep.stop();
  });
}

test('bad options are refused', () => {
  const listTargets = (): Promise<PowerSweepTarget[]> => Promise.resolve([]);
  assert.throws(() => createPowerSweep({ intervalMs: 1000, marginMs: -1, concurrency: 1, listTargets }), /marginMs/);
  assert.throws(() => createPowerSweep({ intervalMs: 1000, marginMs: 501, concurrency: 1, listTargets }), /marginMs/);
  assert.throws(() => createPowerSweep({ intervalMs: 1000, marginMs: Number.NaN, concurrency: 1, listTargets }), /marginMs/);
  assert.throws(() => createPowerSweep({ intervalMs: 0, concurrency: 1, listTargets }), /intervalMs/);
  assert.throws(() => createPowerSweep({ intervalMs: 1000, concurrency: 0, listTargets }), /concurrency/);
  assert.throws(() => createPowerSweep({ intervalMs: 1000, concurrency: 1.5, listTargets }), /concurrency/);
});

const POWERED: Record<PowerState, boolean | undefined> = {
  on: true, 'powering-on': true, off: false, 'powering-off': false, unknown: undefined,
};
for (const [state, expected] of Object.entries(POWERED)) {
  test(`poweredOnOf(${state}) is ${String(expected)} (Ironic's Redfish mapping)`, () => {
    assert.equal(poweredOnOf(state as PowerState), expected);
  });
}
