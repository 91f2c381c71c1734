/**
 * @module Tests of the failed-login rate limit (window, ban, expiry, one drop report per ban,
 * bounded memory) and of the tunnel's backoff with jitter.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeBackoffMs, DEFAULT_BACKOFF } from '../../../agent/ssh/backoff.js';
import { FailureLimiter } from '../../../agent/ssh/rate-limit.js';

test('failures inside the window ban the source; others are unaffected', () => {
  const l = new FailureLimiter({ maxFailures: 3, windowMs: 60_000, banMs: 300_000 });
  assert.equal(l.recordFailure('10.0.0.1', 0), false);
  assert.equal(l.recordFailure('10.0.0.1', 1000), false);
  assert.deepEqual(l.admit('10.0.0.1', 1500), { admitted: true });
  assert.equal(l.recordFailure('10.0.0.1', 2000), true, 'the third failure bans');
  assert.deepEqual(l.admit('10.0.0.1', 3000), { admitted: false, bannedUntilMs: 302_000, firstDrop: true });
  assert.deepEqual(l.admit('10.0.0.1', 4000), { admitted: false, bannedUntilMs: 302_000, firstDrop: false });
  assert.deepEqual(l.admit('10.0.0.2', 4000), { admitted: true });
  assert.deepEqual(l.banned(4000), [{ address: '10.0.0.1', untilMs: 302_000 }]);
  assert.equal(l.recordFailure('10.0.0.1', 5000), false, 'failures during a ban do not extend it');
  assert.deepEqual(l.admit('10.0.0.1', 302_000), { admitted: true }, 'the ban ends');
  assert.deepEqual(l.banned(302_000), []);
});

test('failures older than the window are forgotten', () => {
  const l = new FailureLimiter({ maxFailures: 3, windowMs: 10_000, banMs: 1000 });
  l.recordFailure('a', 0);
  l.recordFailure('a', 5000);
  assert.equal(l.recordFailure('a', 12_000), false, 'the failure at 0 fell out of the window');
  assert.equal(l.recordFailure('a', 13_000), true);
});

test('memory stays bounded by maxTracked', () => {
  const l = new FailureLimiter({ maxFailures: 2, maxTracked: 100 });
  for (let i = 0; i < 1000; i++) l.recordFailure(`10.0.${i >> 8}.${i & 255}`, 0);
  l.recordFailure('10.0.3.231', 1);
  assert.equal(l.banned(2).length, 1, 'the most recent source is still tracked');
  l.recordFailure('10.0.0.0', 1);
  assert.equal(l.banned(2).length, 1, 'the oldest source was forgotten, so one more failure does not ban it');
});

test('backoff grows by the factor, caps at maxMs, and jitter only shortens', () => {
  const p = { initialMs: 1000, maxMs: 8000, factor: 2, jitter: 0.5 };
  assert.deepEqual([0, 1, 2, 3, 4, 10].map((a) => computeBackoffMs(a, p, 0)), [1000, 2000, 4000, 8000, 8000, 8000]);
  assert.equal(computeBackoffMs(2, p, 0.999999), 2000);
  assert.equal(computeBackoffMs(2, p, 0.5), 3000);
  assert.equal(computeBackoffMs(1e9, DEFAULT_BACKOFF, 0), DEFAULT_BACKOFF.maxMs, 'huge attempt counts do not overflow');
  assert.equal(computeBackoffMs(0, { ...p, jitter: 7 }, 2), 0, 'out-of-range inputs are clamped');
});
