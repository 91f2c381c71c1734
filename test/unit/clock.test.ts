/**
 * The agent's clocks (agent/clock.ts): a steady clock follows the monotonic source from its
 * anchor and reports the wall clock's offset; the process's steady clock is bootsvc's (one
 * anchor: DHCP lease times and agent durations agree); jumps are noticed once each and spelled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { steadyEpochMs } from '../../bootsvc/index.js';
import { createSteadyClock, describeClockJump, steadyClock, steadyNowMs, watchClockJumps } from '../../agent/clock.js';

test('a steady clock advances with the monotonic source, not the wall clock; the offset shows a step', () => {
  let wall = 1_000_000;
  let mono = 50;
  const clock = createSteadyClock(() => wall, () => mono);
  mono += 250;
  wall += 3_600_000 + 250; // a +1 h step during 250 ms
  assert.equal(clock.nowMs(), 1_000_250);
  assert.equal(clock.wallOffsetMs(), 3_600_000);
});

test('the agent\'s steady clock is the boot services\' clock', () => {
  const a = steadyNowMs();
  const b = steadyEpochMs();
  const c = steadyClock.nowMs();
  assert.ok(a <= b && b <= c && c - a < 1000, `${a} ${b} ${c}`);
  assert.ok(Math.abs(steadyClock.wallOffsetMs()) < 60_000, 'no step in a test run');
});

test('watchClockJumps reports a step once, at or over the threshold; smaller drift is ignored', async () => {
  let wall = 0;
  const mono = 0;
  const clock = createSteadyClock(() => wall, () => mono);
  const jumps: number[] = [];
  const stop = watchClockJumps({ clock, onJump: (j) => jumps.push(j.jumpMs), intervalMs: 5, thresholdMs: 1000, wallMs: () => wall });
  const ticks = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 30));
  wall += 999; // under the threshold
  await ticks();
  wall -= 999;
  wall -= 86_400_000; // back a day
  await ticks();
  await ticks();
  stop();
  assert.deepEqual(jumps, [-86_400_000]);
});

test('describeClockJump spells the two largest units and the direction', () => {
  const at = new Date('2026-12-01T00:00:00Z');
  assert.match(describeClockJump({ jumpMs: 93_600_000, wallAfter: at }), /^the wall clock jumped forward by 1 d 2 h \(now 2026-12-01T00:00:00\.000Z\)/);
  assert.match(describeClockJump({ jumpMs: -3_599_000, wallAfter: at }), /jumped back by 59 min 59 s/);
  assert.match(describeClockJump({ jumpMs: 250, wallAfter: at }), /forward by 250 ms/);
});
