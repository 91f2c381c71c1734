// DriverRegistry, the noop fill and the BMC error helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BmcErrorCode, CAPABILITY_NAMES, DriverRegistry, isBmcError, isTransientBmcError, registerBuiltinDrivers, type BmcCapabilitySet, type CapabilityName, type PowerState } from '../../../drivers/index.js';
import { BmcAddressError } from '../../../drivers/bmc-address.js';
import { BmcError, UnsupportedCapabilityError } from '../../../drivers/errors.js';
import { FakeBmcPool, createFakeDriverFactory } from '../../../drivers/fake/fake-driver.js';
import { createNoopCapabilities } from '../../../drivers/noop.js';
import type { DriverImplementation } from '../../../drivers/registry.js';

const creds = { username: 'admin', password: 'secret-pw' };

/** A minimal driver that only implements power. */
function powerOnly(state: { power: PowerState; closed: number }): DriverImplementation {
  return {
    power: {
      getPowerState: () => Promise.resolve(state.power),
      setPower: (action) => { state.power = action === 'on' ? 'on' : 'off'; return Promise.resolve(); },
    },
    close: () => { state.closed += 1; return Promise.resolve(); },
  };
}

test('create picks the factory by address type and lists what it implements', async () => {
  const registry = new DriverRegistry();
  const state = { power: 'off' as PowerState, closed: 0 };
  let seen: unknown[] = [];
  registry.register('ipmi', (address, credentials, options) => {
    seen = [address.hostname, credentials.username, options.timeoutMs];
    return powerOnly(state);
  });
  const driver = registry.create('10.0.0.7:6230', creds, { timeoutMs: 500 });
  assert.deepEqual(seen, ['10.0.0.7', 'admin', 500]);
  assert.equal(driver.type, 'ipmi');
  assert.equal(driver.address.port, 6230);
  assert.deepEqual(driver.supported, ['power']);
  assert.equal(driver.supports('power'), true);
  assert.equal(driver.supports('virtualMedia'), false);
  assert.equal(driver.schemeCapabilities.raidInterface, 'no-raid');
  await driver.power.setPower('on');
  assert.equal(await driver.power.getPowerState(), 'on');
});

test('missing capabilities are filled with a noop that rejects with UnsupportedCapabilityError', async () => {
  const registry = new DriverRegistry();
  registry.register('ipmi', () => powerOnly({ power: 'off', closed: 0 }));
  const driver = registry.create('ipmi://10.0.0.8', creds);
  await assert.rejects(driver.virtualMedia.insertMedia({ imageUrl: 'http://x/boot.iso' }), (err: unknown) => {
    assert.ok(err instanceof UnsupportedCapabilityError);
    assert.equal(err.code, BmcErrorCode.unsupported);
    assert.equal(err.capability, 'virtualMedia');
    assert.equal(err.operation, 'insertMedia');
    assert.match(err.message, /ipmi:\/\/10\.0\.0\.8 \(ipmi driver\) does not support virtualMedia\.insertMedia/);
    assert.ok(!err.message.includes('secret-pw'));
    return true;
  });
  // Every method of every missing capability rejects (never throws synchronously).
  for (const name of CAPABILITY_NAMES.filter((n) => n !== 'power')) {
    const capability = driver[name] as unknown as Record<string, () => Promise<unknown>>;
    for (const [method, fn] of Object.entries(capability)) {
      await assert.rejects(fn(), (err: unknown) => isBmcError(err, BmcErrorCode.unsupported), `${name}.${method}`);
    }
  }
});

test('the noop covers every method of every capability', async () => {
  const noop: BmcCapabilitySet = createNoopCapabilities({ address: 'fake://n', driver: 'fake' });
  let methods = 0;
  for (const name of CAPABILITY_NAMES) {
    for (const fn of Object.values(noop[name] as unknown as Record<string, () => Promise<unknown>>)) {
      methods += 1;
      await assert.rejects(fn(), UnsupportedCapabilityError);
    }
  }
  assert.equal(methods, 21); // 2+2+3+2+2+1+2+3+2+1+1
});

test('close is idempotent and reaches the implementation once', async () => {
  const registry = new DriverRegistry();
  const state = { power: 'off' as PowerState, closed: 0 };
  registry.register('redfish', () => powerOnly(state));
  const driver = registry.create('redfish://bmc.example', creds);
  await driver.close();
  await driver.close();
  assert.equal(state.closed, 1);
  const bare = new DriverRegistry();
  bare.register('redfish', () => ({}));
  await bare.create('redfish://bmc.example', creds).close(); // no close in the implementation: still fine
});

test('no factory for the type → RACKSIDE_ERR_BMC_NO_DRIVER naming registered types', () => {
  const registry = new DriverRegistry();
  registry.register('fake', () => ({}));
  assert.throws(() => registry.create('redfish-virtualmedia+https://10.0.0.1/redfish/v1/Systems/1', creds), (err: unknown) => {
    assert.ok(err instanceof BmcError);
    assert.equal(err.code, BmcErrorCode.noDriver);
    assert.match(err.message, /type 'redfish' \(scheme redfish-virtualmedia\+https\); registered: fake/);
    assert.equal(err.address, 'redfish-virtualmedia+https://10.0.0.1/redfish/v1/Systems/1');
    return true;
  });
});

test('a bad address string → BmcAddressError from create', () => {
  const registry = new DriverRegistry();
  assert.throws(() => registry.create('foo://10.0.0.1', creds), BmcAddressError);
});

test('register twice throws unless replace is set', () => {
  const registry = new DriverRegistry();
  registry.register('ipmi', () => ({}));
  assert.throws(() => { registry.register('ipmi', () => ({})); }, /already registered/);
  registry.register('ipmi', () => powerOnly({ power: 'on', closed: 0 }), { replace: true });
  assert.deepEqual(registry.create('ipmi://h', creds).supported, ['power']);
});

test('nothing is registered until registerBuiltinDrivers is called', async () => {
  const registry = new DriverRegistry();
  assert.deepEqual(registry.types(), []);
  const { fakePool } = registerBuiltinDrivers(registry);
  assert.ok(registry.types().includes('fake') && registry.types().includes('redfish'), registry.types().join());
  const driver = registry.create('fake://node-1', creds);
  assert.deepEqual(driver.supported, [...CAPABILITY_NAMES]);
  await driver.power.setPower('on');
  assert.equal(fakePool.get('node-1').power, 'on');
});

test('the fake factory can stand in for redfish and ipmi addresses', async () => {
  const registry = new DriverRegistry();
  const pool = new FakeBmcPool();
  registry.register('redfish', createFakeDriverFactory(pool));
  registry.register('ipmi', createFakeDriverFactory(pool));
  await registry.create('redfish-virtualmedia://10.0.0.1', creds).power.setPower('on');
  await registry.create('10.0.0.2:623', creds).power.setPower('on');
  assert.deepEqual(pool.list().map((b) => [b.name, b.power]), [['10.0.0.1', 'on'], ['10.0.0.2:623', 'on']]);
});

test('omitted fake capabilities become noops', async () => {
  const registry = new DriverRegistry();
  const pool = new FakeBmcPool({ omit: ['virtualMedia', 'raid'] });
  registry.register('fake', createFakeDriverFactory(pool));
  const driver = registry.create('fake://n', creds);
  const expected: CapabilityName[] = CAPABILITY_NAMES.filter((n) => n !== 'virtualMedia' && n !== 'raid');
  assert.deepEqual(driver.supported, expected);
  await assert.rejects(driver.raid.getRaidConfig(), UnsupportedCapabilityError);
  assert.deepEqual((await driver.info.getBmcInfo()).probed, expected);
});

const transient: Record<string, [string, boolean]> = {
  unreachable: [BmcErrorCode.unreachable, true],
  timeout: [BmcErrorCode.timeout, true],
  busy: [BmcErrorCode.busy, true],
  auth: [BmcErrorCode.auth, false],
  protocol: [BmcErrorCode.protocol, false],
  unsupported: [BmcErrorCode.unsupported, false],
  noDriver: [BmcErrorCode.noDriver, false],
};
for (const [name, [code, expected]] of Object.entries(transient)) {
  test(`isTransientBmcError: ${name}`, () => {
    assert.equal(isTransientBmcError({ code, message: 'x' }), expected);
  });
}

test('isBmcError matches by code, structurally', () => {
  const err = new BmcError(BmcErrorCode.busy, 'busy', { address: 'ipmi://h', cause: new Error('503') });
  assert.equal(isBmcError(err), true);
  assert.equal(isBmcError(err, BmcErrorCode.busy), true);
  assert.equal(isBmcError(err, BmcErrorCode.auth), false);
  assert.equal(isBmcError({ code: 'RACKSIDE_ERR_BMC_AUTH' }), true);
  assert.equal(isBmcError({ code: 'RACKSIDE_ERR_API_INVALID' }), false);
  assert.equal(isBmcError(new Error('plain')), false);
  assert.equal(isBmcError(null), false);
  assert.equal(err.address, 'ipmi://h');
  assert.ok(err.cause instanceof Error);
  assert.equal(err.name, 'BmcError');
});
