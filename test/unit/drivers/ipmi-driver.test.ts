// The IPMI driver's capability semantics against the in-process fake lanplus BMC (boot flags
// read back in full there, unlike ipmi_sim), and its registration as a built-in driver.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseBmcAddress } from '../../../drivers/bmc-address.js';
import { BmcErrorCode, isBmcError, UnsupportedCapabilityError } from '../../../drivers/errors.js';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { ChassisControl } from '../../../drivers/ipmi/commands.js';
import { createIpmiDriver, type IpmiDriverImplementation } from '../../../drivers/ipmi/ipmi-driver.js';
import { FakeLanplusBmc } from '../../lab/ipmi/fake-lanplus-bmc.js';

const PASSWORD = 'pw-for-ipmi-tests';
const cleanups: (() => Promise<void>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

async function setup(): Promise<{ bmc: FakeLanplusBmc; driver: IpmiDriverImplementation }> {
  const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: PASSWORD }] });
  const driver = createIpmiDriver(parseBmcAddress(`ipmi://127.0.0.1:${bmc.port}`), { username: 'admin', password: PASSWORD }, { attemptTimeoutMs: 200, keepaliveMs: 0 });
  cleanups.push(async () => { await driver.close(); await bmc.stop(); });
  return { bmc, driver };
}

test('registerBuiltinDrivers serves ipmi addresses with the native driver', async () => {
  const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: PASSWORD }] });
  const registry = new DriverRegistry();
  registerBuiltinDrivers(registry);
  assert.ok(registry.has('ipmi'));
  const driver = registry.create(`127.0.0.1:${bmc.port}`, { username: 'admin', password: PASSWORD }, { timeoutMs: 600 });
  cleanups.push(async () => { await driver.close(); await bmc.stop(); });
  assert.equal(driver.type, 'ipmi');
  assert.deepEqual(driver.supported, ['power', 'bootDevice', 'inventory', 'info']);
  bmc.power = true;
  assert.equal(await driver.power.getPowerState(), 'on');
  await assert.rejects(driver.virtualMedia.getMediaStatus(), UnsupportedCapabilityError);
});

test('power: no-ops when already there, cycle/reset of an off host power it on, soft-reset is unsupported', async () => {
  const { bmc, driver } = await setup();
  const cases: [boolean, Parameters<typeof driver.power.setPower>[0], number[]][] = [
    [false, 'on', [ChassisControl.powerUp]],
    [true, 'on', []],
    [true, 'off', [ChassisControl.powerDown]],
    [false, 'off', []],
    [true, 'soft-off', [ChassisControl.softShutdown]],
    [false, 'soft-off', []],
    [true, 'reset', [ChassisControl.hardReset]],
    [false, 'reset', [ChassisControl.powerUp]],
    [true, 'cycle', [ChassisControl.powerCycle]],
    [false, 'cycle', [ChassisControl.powerUp]],
  ];
  for (const [initially, action, controls] of cases) {
    bmc.power = initially;
    bmc.controls.length = 0;
    await driver.power.setPower(action);
    assert.deepEqual(bmc.controls, controls, `${initially ? 'on' : 'off'} → ${action}`);
  }
  await assert.rejects(driver.power.setPower('soft-reset'), (err: Error) => err instanceof UnsupportedCapabilityError && /soft-reset/.test(err.message));
  assert.equal(driver.stats().sessionsOpened, 1, 'one session for all of it');
});

test('boot device: flags on the wire and read back, mode kept when not given', async () => {
  const { bmc, driver } = await setup();
  await driver.bootDevice.setBootDevice('pxe', { mode: 'uefi', persistent: true });
  assert.deepEqual([...bmc.bootFlags], [0xe0, 0x04, 0, 0, 0]);
  assert.deepEqual(await driver.bootDevice.getBootDevice(), { device: 'pxe', persistent: true, mode: 'uefi' });
  await driver.bootDevice.setBootDevice('disk');
  assert.deepEqual([...bmc.bootFlags], [0xa0, 0x08, 0, 0, 0], 'EFI kept, next boot only');
  await driver.bootDevice.setBootDevice('cdrom', { mode: 'legacy' });
  assert.deepEqual([...bmc.bootFlags], [0x80, 0x14, 0, 0, 0]);
  await driver.bootDevice.setBootDevice('bios', { mode: 'legacy' });
  assert.deepEqual(await driver.bootDevice.getBootDevice(), { device: 'bios', persistent: false, mode: 'legacy' });
  // After the boot the BMC clears the valid bit: device reported, mode and persistence not.
  bmc.bootFlags = Buffer.from([0x20, 0x04, 0, 0, 0]);
  assert.deepEqual(await driver.bootDevice.getBootDevice(), { device: 'pxe', persistent: false, mode: undefined });
  bmc.bootFlags = Buffer.alloc(5);
  assert.deepEqual(await driver.bootDevice.getBootDevice(), { device: 'none', persistent: false, mode: undefined });
  await assert.rejects(driver.bootDevice.setBootDevice('uefi-http'), UnsupportedCapabilityError);
});

test('info and inventory come from Get Device ID and the FRU', async () => {
  const { driver } = await setup();
  assert.deepEqual(await driver.info.getBmcInfo(), {
    vendor: 'Dell', model: 'Sim Server', firmwareVersion: '2.15', protocolVersion: 'IPMI 2.0', probed: ['power', 'bootDevice', 'inventory', 'info'],
  });
  const inventory = await driver.inventory.getInventory();
  assert.deepEqual(inventory.system, { manufacturer: 'Rackside', model: 'Sim Server', serialNumber: 'SN-12345', uuid: undefined });
  assert.deepEqual(inventory.processors, []);
  assert.equal((await driver.readFru())?.board?.serialNumber, 'BRD-0001');
});

test('errors name the address and never the password; bad privilege levels are refused up front', async () => {
  const { bmc } = await setup();
  const wrong = createIpmiDriver(parseBmcAddress(`ipmi://127.0.0.1:${bmc.port}`), { username: 'admin', password: 'WRONG-secret-123' }, { attemptTimeoutMs: 200 });
  cleanups.push(() => wrong.close());
  await assert.rejects(wrong.power.getPowerState(), (err: Error & { address?: string }) => isBmcError(err, BmcErrorCode.auth)
    && err.address === `ipmi://127.0.0.1:${bmc.port}` && !err.message.includes('WRONG-secret-123') && !JSON.stringify(err).includes('WRONG-secret-123'));
  assert.throws(() => createIpmiDriver(parseBmcAddress('ipmi://10.0.0.1?privilegelevel=ROOT'), { username: 'a', password: 'b' }),
    (err: Error) => isBmcError(err, BmcErrorCode.unsupported) && /ROOT/.test(err.message));
  const operator = createIpmiDriver(parseBmcAddress(`ipmi://127.0.0.1:${bmc.port}?privilegelevel=OPERATOR`), { username: 'admin', password: PASSWORD });
  cleanups.push(() => operator.close());
  assert.equal(typeof (await operator.power.getPowerState()), 'string');
});
