// Coalescing of host listings (agent/web/host-list.ts): concurrent callers share runs, and every
// caller gets a run that started after its call (so it sees writes acknowledged before it asked).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coalesceAfterArrival } from '../../../agent/web/host-list.js';

/** A build function whose runs finish only when the test says; `started` counts runs. */
function gatedBuild(): { build: () => Promise<number>; started: () => number; finish: (error?: Error) => void } {
  let runs = 0;
  const pending: { resolve: (n: number) => void; reject: (e: Error) => void; n: number }[] = [];
  return {
    build: () => {
      runs += 1;
      const n = runs;
      return new Promise<number>((resolve, reject) => pending.push({ resolve, reject, n }));
    },
    started: () => runs,
    finish: (error) => {
      const run = pending.shift();
      if (run === undefined) throw new Error('no run in progress');
      if (error === undefined) run.resolve(run.n);
      else run.reject(error);
    },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a call with nothing running starts a run of its own', async () => {
  const gate = gatedBuild();
  const list = coalesceAfterArrival(gate.build);
  const first = list();
  assert.equal(gate.started(), 1);
  gate.finish();
  assert.equal(await first, 1);
  const second = list();
  assert.equal(gate.started(), 2);
  gate.finish();
  assert.equal(await second, 2);
});

test('calls made during a run share the one run started after it, never the run in progress', async () => {
  const gate = gatedBuild();
  const list = coalesceAfterArrival(gate.build);
  const first = list();
  const waiting = [list(), list(), list()];
  await tick();
  assert.equal(gate.started(), 1, 'the next run waits for the current one');
  gate.finish();
  assert.equal(await first, 1);
  await tick();
  assert.equal(gate.started(), 2, 'one run for all three waiting calls');
  const late = list(); // arrives while run 2 is in progress: gets run 3
  gate.finish();
  assert.deepEqual(await Promise.all(waiting), [2, 2, 2]);
  await tick();
  assert.equal(gate.started(), 3);
  gate.finish();
  assert.equal(await late, 3);
});

test('a failed run rejects every call that shared it; the next calls run again', async () => {
  const gate = gatedBuild();
  const list = coalesceAfterArrival(gate.build);
  const first = list();
  const shared = [list(), list()];
  gate.finish(new Error('store closed'));
  await assert.rejects(first, /store closed/);
  await tick();
  gate.finish(new Error('still closed'));
  for (const call of shared) await assert.rejects(call, /still closed/);
  const again = list();
  assert.equal(gate.started(), 3);
  gate.finish();
  assert.equal(await again, 3);
});
