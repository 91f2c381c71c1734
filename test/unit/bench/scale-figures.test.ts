// The number helpers of the 1000-hosts benchmark (test/bench/scale/figures.ts): nearest-rank
// percentiles and the power-state ages implied by the emulator's read times over a window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percentile, powerAgesOverWindow, summarize } from '../../bench/scale/figures.js';

test('percentile uses the nearest rank and ignores input order', () => {
  const values = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
  assert.equal(percentile(values, 50), 5);
  assert.equal(percentile(values, 99), 10);
  assert.equal(percentile(values, 0), 1);
  assert.ok(Number.isNaN(percentile([], 50)));
});

test('summarize handles more values than a call may take arguments', () => {
  const values = Array.from({ length: 300_000 }, (_, i) => i);
  const summary = summarize(values);
  assert.equal(summary.max, 299_999);
  assert.equal(summary.n, 300_000);
  assert.equal(summary.p50, 149_999);
});

const cases: Record<string, { reads: number[][]; from: number; to: number; step: number; sampled: number[]; oldest: number[]; never: number }> = {
  'one read before the window only: ages grow to the end': {
    reads: [[0]], from: 10, to: 30, step: 10, sampled: [10, 20, 30], oldest: [30], never: 0,
  },
  'a read in the window: the gap before it counts, then the time to the end': {
    reads: [[0, 50]], from: 10, to: 70, step: 20, sampled: [10, 30, 50 - 50, 70 - 50], oldest: [50], never: 0,
  },
  'gaps that end before the window do not count': {
    reads: [[0, 100, 110]], from: 105, to: 120, step: 5, sampled: [5, 0, 5, 10], oldest: [10], never: 0,
  },
  'reads after the window are ignored; BMCs never read are counted apart': {
    reads: [[0, 500], []], from: 0, to: 100, step: 50, sampled: [0, 50, 100], oldest: [100], never: 1,
  },
  'a BMC first read inside the window is sampled from its first read on': {
    reads: [[40]], from: 0, to: 60, step: 20, sampled: [0, 20], oldest: [20], never: 0,
  },
};

for (const [name, c] of Object.entries(cases)) {
  test(`powerAgesOverWindow: ${name}`, () => {
    const ages = powerAgesOverWindow(c.reads, c.from, c.to, c.step);
    assert.deepEqual(ages.sampledAgesMs, c.sampled);
    assert.deepEqual(ages.oldestPerBmcMs, c.oldest);
    assert.equal(ages.neverRead, c.never);
  });
}
