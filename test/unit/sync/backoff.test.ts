import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelayMs, parseRetryAfterMs } from '../../../agent/sync/index.js';

const policy = { baseMs: 1000, capMs: 300_000 };
const cases: Record<string, [failures: number, random: number, retryAfterMs: number | undefined, expected: number]> = {
  'first failure, top of range': [1, 0.999, undefined, 999],
  'first failure, bottom of range': [1, 0, undefined, 0],
  'third failure doubles twice': [3, 0.5, undefined, 2000],
  'capped at 5 minutes': [30, 0.5, undefined, 150_000],
  'huge failure count does not overflow': [10_000, 0.999, undefined, 299_700],
  'Retry-After raises the delay': [1, 0.1, 20_000, 20_000],
  'Retry-After is capped': [1, 0.1, 3_600_000, 300_000],
  'random out of range is clamped': [2, 7, undefined, 2000],
  'NaN random uses the middle': [2, Number.NaN, undefined, 1000],
  'zero failures behaves like the first': [0, 0.5, undefined, 500],
};
for (const [name, [failures, random, retryAfter, expected]] of Object.entries(cases)) {
  test(`backoffDelayMs: ${name}`, () => {
    assert.equal(backoffDelayMs(failures, policy, random, retryAfter), expected);
  });
}

test('backoffDelayMs never exceeds min(cap, base·2^(n−1))', () => {
  for (let n = 1; n <= 40; n++) {
    for (const r of [0, 0.25, 0.5, 0.75, 0.999999]) {
      const d = backoffDelayMs(n, policy, r);
      assert.ok(d >= 0 && d < Math.min(policy.capMs, policy.baseMs * 2 ** (n - 1)), `n=${n} r=${r} d=${d}`);
    }
  }
});

const retryAfter: Record<string, [string | undefined, number | undefined]> = {
  'delay-seconds': ['120', 120_000],
  'HTTP-date': ['Fri, 02 Jan 2026 03:05:05 GMT', 60_000],
  'date in the past': ['Fri, 02 Jan 2026 03:00:00 GMT', 0],
  'absent': [undefined, undefined],
  'garbage': ['soon', undefined],
};
for (const [name, [value, expected]] of Object.entries(retryAfter)) {
  test(`parseRetryAfterMs: ${name}`, () => {
    assert.equal(parseRetryAfterMs(value, Date.UTC(2026, 0, 2, 3, 4, 5)), expected);
  });
}
