// Driver-agnostic power helpers (drivers/power-helpers.ts) over the fake driver and a
// scripted PowerControl: waitForPowerState, softPowerOff's fallback, the bounded sweep.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BmcErrorCode, DriverRegistry, isBmcError, waitForPowerState, type PowerControl, type PowerState } from '../../../drivers/index.js';
import { BmcError } from '../../../drivers/errors.js';
import { FakeBmcPool, createFakeDriverFactory } from '../../../drivers/fake/fake-driver.js';
import { softPowerOff, sweepPowerStates } from '../../../drivers/power-helpers.js';

/** A clock that advances only when slept on. */
function virtualClock(): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return { now: () => t, sleep: (ms) => { slept.push(ms); t += ms; return Promise.resolve(); }, slept };
}

function scripted(states: PowerState[], onSet?: (action: string) => void): PowerControl {
  let i = 0;
  return {
    getPowerState: () => Promise.resolve(states[Math.min(i++, states.length - 1)] ?? 'unknown'),
    setPower: (action) => { onSet?.(action); return Promise.resolve(); },
  };
}

test('waitForPowerState polls past transitional states until the target', async () => {
  const clock = virtualClock();
  await waitForPowerState(scripted(['off', 'powering-on', 'on']), 'on', { pollMs: 500, timeoutMs: 10_000, ...clock });
  assert.deepEqual(clock.slept, [500, 500]);
});

test('waitForPowerState times out with the last state and the address', async () => {
  const clock = virtualClock();
  await assert.rejects(waitForPowerState(scripted(['powering-off']), 'off', { pollMs: 400, timeoutMs: 1000, address: 'redfish://bmc-9', ...clock }), (err: unknown) => {
    assert.ok(isBmcError(err, BmcErrorCode.timeout));
    assert.equal(err.message, 'BMC redfish://bmc-9: power state is still powering-off after 1000 ms waiting for off');
    return true;
  });
  assert.deepEqual(clock.slept, [400, 400, 200], 'the last sleep is cut to the deadline');
});

test('softPowerOff: graceful works on a cooperative host', async () => {
  const pool = new FakeBmcPool({ powerOffDelayCalls: 2 });
  const registry = new DriverRegistry();
  registry.register('fake', createFakeDriverFactory(pool));
  const driver = registry.create('fake://n1', { username: 'u', password: 'p' });
  await driver.power.setPower('on');
  assert.equal(await softPowerOff(driver.power, { pollMs: 0, graceMs: 1000, timeoutMs: 1000 }), 'soft');
  assert.deepEqual(pool.get('n1').calls.filter((c) => c.operation === 'setPower').map((c) => c.args[0]), ['on', 'soft-off']);
});

test('softPowerOff: falls back to a hard off when the host ignores it, or when soft-off is unsupported', async () => {
  const clock = virtualClock();
  const actions: string[] = [];
  let state: PowerState = 'on';
  const stubborn: PowerControl = {
    getPowerState: () => Promise.resolve(state),
    setPower: (action) => { actions.push(action); if (action === 'off') state = 'off'; return Promise.resolve(); },
  };
  assert.equal(await softPowerOff(stubborn, { pollMs: 100, graceMs: 300, ...clock }), 'hard');
  assert.deepEqual(actions, ['soft-off', 'off']);
  state = 'on';
  actions.length = 0;
  const noSoft: PowerControl = {
    ...stubborn,
    setPower: (action) => action === 'soft-off' ? Promise.reject(new BmcError(BmcErrorCode.unsupported, 'no soft off')) : stubborn.setPower(action),
  };
  assert.equal(await softPowerOff(noSoft, { pollMs: 100, ...clock }), 'hard');
  assert.deepEqual(actions, ['off']);
  const broken: PowerControl = { ...stubborn, setPower: () => Promise.reject(new BmcError(BmcErrorCode.auth, 'bad password')) };
  await assert.rejects(softPowerOff(broken, clock), (err: unknown) => isBmcError(err, BmcErrorCode.auth), 'other errors are not hidden');
});

test('sweepPowerStates keeps order, reports failures per target and never exceeds the concurrency', async () => {
  let inFlight = 0;
  let max = 0;
  const target = (i: number): PowerControl => ({
    getPowerState: async () => {
      inFlight += 1;
      max = Math.max(max, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight -= 1;
      if (i % 7 === 3) throw new BmcError(BmcErrorCode.unreachable, `bmc ${i} down`);
      return i % 2 === 0 ? 'on' : 'off';
    },
    setPower: () => Promise.resolve(),
  });
  const results = await sweepPowerStates(Array.from({ length: 40 }, (_, i) => ({ key: `bmc-${i}`, power: target(i) })), 5);
  assert.equal(results.length, 40);
  assert.ok(max <= 5 && max >= 2, `max in flight ${max}`);
  assert.deepEqual(results.map((r) => r.key), Array.from({ length: 40 }, (_, i) => `bmc-${i}`));
  assert.equal(results.filter((r) => !r.ok).length, 6);
  const first = results[0];
  assert.ok(first?.ok === true && first.state === 'on');
  assert.deepEqual(await sweepPowerStates([], 5), []);
});
