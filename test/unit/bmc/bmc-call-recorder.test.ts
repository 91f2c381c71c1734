/** Instrumented BMC drivers report each call with driver, operation, outcome and duration, and change nothing else. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DriverRegistry, isBmcError, type BmcCredentials, type BmcDriver } from '../../../drivers/index.js';
import { createFakeDriverFactory, FakeBmcPool } from '../../../drivers/fake/fake-driver.js';
import { BmcCallRecorder, recordCalls, type BmcCall } from '../../../agent/bmc/bmc-call-recorder.js';
import { wrapDriver } from '../../../agent/bmc/wrap-driver.js';

/** Drivers made as the local provisioner makes them: built, then wrapped with the call recorder. */
function instrumentedRegistry(recorder: BmcCallRecorder, nowMs?: () => number): { register: DriverRegistry['register']; create(address: string, credentials: BmcCredentials): BmcDriver } {
  const registry = new DriverRegistry();
  return {
    register: (...args) => { registry.register(...args); },
    create: (address, credentials) => wrapDriver(registry.create(address, credentials), [recordCalls(recorder, nowMs)]),
  };
}

function setup(): { registry: ReturnType<typeof instrumentedRegistry>; pool: FakeBmcPool; calls: BmcCall[]; clock: { ms: number } } {
  const recorder = new BmcCallRecorder();
  const calls: BmcCall[] = [];
  recorder.onCall((c) => { calls.push(c); });
  const clock = { ms: 1000 };
  const registry = instrumentedRegistry(recorder, () => (clock.ms += 7));
  const pool = new FakeBmcPool();
  registry.register('fake', createFakeDriverFactory(pool));
  return { registry, pool, calls, clock };
}

const credentials = { username: 'admin', password: 'password' };

test('a successful call is reported as ok with its operation and duration; its result passes through', async () => {
  const { registry, calls } = setup();
  const driver = registry.create('fake://bmc-1', credentials);
  await driver.power.setPower('on');
  assert.equal(await driver.power.getPowerState(), 'on');
  assert.deepEqual(calls.map((c) => [c.driver, c.operation, c.outcome, c.durationMs]), [
    ['fake', 'power.setPower', 'ok', 7],
    ['fake', 'power.getPowerState', 'ok', 7],
  ]);
  assert.equal(driver.supports('power'), true);
});

test('a failed call is reported with the BmcError code and the error still reaches the caller', async () => {
  const { registry, pool, calls } = setup();
  const driver = registry.create('fake://bmc-2', credentials);
  pool.get('bmc-2').knobs.unreachable = true;
  await assert.rejects(driver.power.getPowerState(), (e: unknown) => isBmcError(e, 'RACKSIDE_ERR_BMC_UNREACHABLE'));
  pool.get('bmc-2').knobs.unreachable = false;
  pool.get('bmc-2').knobs.busyCalls = 1;
  await assert.rejects(driver.bootDevice.setBootDevice('pxe'));
  assert.deepEqual(calls.map((c) => `${c.operation} ${c.outcome}`), [
    'power.getPowerState RACKSIDE_ERR_BMC_UNREACHABLE',
    'bootDevice.setBootDevice RACKSIDE_ERR_BMC_BUSY',
  ]);
});

test('a throwing listener never fails the BMC call, and a removed listener hears nothing', async () => {
  const recorder = new BmcCallRecorder();
  const heard: string[] = [];
  recorder.onCall(() => { throw new Error('metrics bug'); });
  const stop = recorder.onCall((c) => { heard.push(c.operation); });
  const registry = instrumentedRegistry(recorder);
  registry.register('fake', createFakeDriverFactory(new FakeBmcPool()));
  const driver = registry.create('fake://bmc-3', credentials);
  assert.equal(await driver.power.getPowerState(), 'off');
  stop();
  await driver.power.getPowerState();
  assert.deepEqual(heard, ['power.getPowerState']);
});
