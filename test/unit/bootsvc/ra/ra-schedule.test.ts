/** When advertisements go out (RFC 4861 §6.2.4, §6.2.6). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RA_INTERVALS, nextUnsolicitedDelayMs, solicitedDelayMs } from '../../../../bootsvc/ra/ra-schedule.js';

test('unsolicited advertisements: uniform between min and max, the first three at most 16 s apart', () => {
  const i = DEFAULT_RA_INTERVALS;
  assert.equal(nextUnsolicitedDelayMs(5, i, () => 0), 198_000);
  assert.equal(nextUnsolicitedDelayMs(5, i, () => 0.5), 399_000);
  assert.equal(nextUnsolicitedDelayMs(0, i, () => 0.5), 16_000);
  assert.equal(nextUnsolicitedDelayMs(2, i, () => 0.99), 16_000);
  assert.equal(nextUnsolicitedDelayMs(3, { minMs: 3000, maxMs: 4000 }, () => 0.25), 3250);
  assert.equal(nextUnsolicitedDelayMs(0, { minMs: 3000, maxMs: 4000 }, () => 0.25), 3250);
});

test('answers to solicitations: up to 500 ms, never within 3 s of the previous advertisement', () => {
  assert.equal(solicitedDelayMs(10_000, undefined, () => 0.5), 250);
  assert.equal(solicitedDelayMs(10_000, 1_000, () => 0.5), 250);
  assert.equal(solicitedDelayMs(10_000, 9_000, () => 0.5), 2_000);
  assert.equal(solicitedDelayMs(10_000, 10_000, () => 0), 3_000);
});
