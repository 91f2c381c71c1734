// The fake BMC driver: behaviour of each capability and of each knob.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BmcErrorCode, DriverRegistry, isBmcError, type BmcDriver } from '../../../drivers/index.js';
import { FakeBmcPool, createFakeDriverFactory } from '../../../drivers/fake/fake-driver.js';
import { fakeMacAddress, type FakeBmc, type FakeBmcKnobs } from '../../../drivers/fake/fake-bmc.js';
import type { BmcErrorCodeValue } from '../../../drivers/errors.js';

function setup(knobs: Partial<FakeBmcKnobs> = {}, timeoutMs?: number): { driver: BmcDriver; bmc: FakeBmc } {
  const pool = new FakeBmcPool(knobs);
  const registry = new DriverRegistry();
  registry.register('fake', createFakeDriverFactory(pool));
  const driver = registry.create('fake://node-1', { username: 'u', password: 'p' }, timeoutMs === undefined ? {} : { timeoutMs });
  return { driver, bmc: pool.get('node-1') };
}

const failsWith = (code: BmcErrorCodeValue) => (err: unknown): boolean => isBmcError(err, code);

test('power on boots once; repeating on is a no-op', async () => {
  const { driver, bmc } = setup();
  assert.equal(await driver.power.getPowerState(), 'off');
  await driver.power.setPower('on');
  await driver.power.setPower('on');
  assert.equal(await driver.power.getPowerState(), 'on');
  assert.equal(bmc.boots.length, 1);
  await driver.power.setPower('soft-off');
  await driver.power.setPower('off');
  assert.equal(await driver.power.getPowerState(), 'off');
});

test('reset and cycle boot again; from off they power on', async () => {
  const { driver, bmc } = setup();
  await driver.power.setPower('reset');
  assert.equal(bmc.power, 'on');
  await driver.power.setPower('cycle');
  await driver.power.setPower('soft-reset');
  assert.equal(bmc.boots.length, 3);
});

test('powerOnDelayCalls: PowerState changes only after N polls', async () => {
  const { driver } = setup({ powerOnDelayCalls: 2, powerOffDelayCalls: 1 });
  await driver.power.setPower('on');
  assert.deepEqual(
    [await driver.power.getPowerState(), await driver.power.getPowerState(), await driver.power.getPowerState()],
    ['off', 'off', 'on'],
  );
  await driver.power.setPower('off');
  await driver.power.setPower('off'); // re-requesting the pending target does not restart the delay
  assert.deepEqual([await driver.power.getPowerState(), await driver.power.getPowerState()], ['on', 'off']);
});

test('failPowerOn rejects power on with a protocol error and leaves the host off', async () => {
  const { driver, bmc } = setup({ failPowerOn: true });
  await assert.rejects(driver.power.setPower('on'), failsWith(BmcErrorCode.protocol));
  await assert.rejects(driver.power.setPower('reset'), failsWith(BmcErrorCode.protocol));
  assert.equal(bmc.power, 'off');
  bmc.knobs.failPowerOn = false;
  await driver.power.setPower('on');
  assert.equal(bmc.power, 'on');
});

test('unreachable and bad credentials fail every call with their codes', async () => {
  const { driver, bmc } = setup({ unreachable: true });
  await assert.rejects(driver.power.getPowerState(), failsWith(BmcErrorCode.unreachable));
  bmc.knobs.unreachable = false;
  bmc.password = 'other';
  await assert.rejects(driver.inventory.getInventory(), (err: unknown) => {
    assert.ok(isBmcError(err, BmcErrorCode.auth));
    assert.ok(!err.message.includes('other') && !err.message.includes("'p'"));
    return true;
  });
  bmc.password = 'p';
  assert.equal(await driver.power.getPowerState(), 'off');
  bmc.knobs.authFails = true;
  await assert.rejects(driver.power.getPowerState(), failsWith(BmcErrorCode.auth));
});

test('busyCalls: the next N calls are busy, then calls succeed', async () => {
  const { driver } = setup({ busyCalls: 2 });
  await assert.rejects(driver.power.getPowerState(), failsWith(BmcErrorCode.busy));
  await assert.rejects(driver.power.getPowerState(), failsWith(BmcErrorCode.busy));
  assert.equal(await driver.power.getPowerState(), 'off');
});

test('slowMs counts virtual time and times out above the driver timeoutMs', async () => {
  const slow = setup({ slowMs: 300 }, 1000);
  await slow.driver.power.getPowerState();
  await slow.driver.bootDevice.getBootDevice();
  assert.equal(slow.bmc.virtualElapsedMs, 600);
  slow.bmc.knobs.slowMs = 1500;
  await assert.rejects(slow.driver.power.getPowerState(), failsWith(BmcErrorCode.timeout));
});

test('a one-time boot override is consumed by the next boot', async () => {
  const { driver, bmc } = setup();
  await driver.bootDevice.setBootDevice('pxe', { mode: 'uefi' });
  assert.deepEqual(await driver.bootDevice.getBootDevice(), { device: 'pxe', persistent: false, mode: 'uefi' });
  await driver.power.setPower('on');
  await driver.power.setPower('reset');
  assert.deepEqual(bmc.boots.map((b) => [b.device, b.mode]), [['pxe', 'uefi'], ['disk', undefined]]);
  assert.equal((await driver.bootDevice.getBootDevice()).device, 'none');
});

test('persistent overrides and bootDeviceSticky keep the device', async () => {
  const persistent = setup();
  await persistent.driver.bootDevice.setBootDevice('disk', { persistent: true });
  await persistent.driver.power.setPower('cycle');
  await persistent.driver.power.setPower('cycle');
  assert.deepEqual(persistent.bmc.boots.map((b) => b.device), ['disk', 'disk']);
  const sticky = setup({ bootDeviceSticky: true });
  await sticky.driver.bootDevice.setBootDevice('pxe');
  await sticky.driver.power.setPower('cycle');
  await sticky.driver.power.setPower('cycle');
  assert.deepEqual(sticky.bmc.boots.map((b) => b.device), ['pxe', 'pxe']);
});

test('virtual media: insert, boot from cdrom with the image, eject twice', async () => {
  const { driver, bmc } = setup();
  await driver.virtualMedia.insertMedia({ imageUrl: 'http://10.0.0.1:8080/images/node-1.iso' });
  await driver.virtualMedia.insertMedia({ imageUrl: 'http://10.0.0.1:8080/images/node-1.iso' });
  assert.deepEqual(await driver.virtualMedia.getMediaStatus(), [
    { device: 'cd', inserted: true, imageUrl: 'http://10.0.0.1:8080/images/node-1.iso' },
    { device: 'usb', inserted: false, imageUrl: undefined },
  ]);
  await driver.bootDevice.setBootDevice('cdrom');
  await driver.power.setPower('on');
  assert.equal(bmc.boots[0]?.mediaUrl, 'http://10.0.0.1:8080/images/node-1.iso');
  await driver.virtualMedia.ejectMedia();
  await driver.virtualMedia.ejectMedia();
  assert.equal((await driver.virtualMedia.getMediaStatus())[0]?.inserted, false);
  await assert.rejects(driver.virtualMedia.insertMedia({ imageUrl: 'nfs://x/y.iso' }), failsWith(BmcErrorCode.protocol));
  await assert.rejects(driver.virtualMedia.insertMedia({ imageUrl: 'http://x/y.img', device: 'floppy' }), failsWith(BmcErrorCode.unsupported));
});

test('BIOS: changes are validated against the schema, pending until the next boot', async () => {
  const { driver } = setup();
  const before = await driver.biosSettings.getBiosSettings();
  assert.equal(before.current.ProcVirtualization, 'Enabled');
  assert.equal(before.schema.NumaNodesPerSocket?.attributeType, 'Integer');
  const staged = await driver.biosSettings.applyBiosSettings({ ProcVirtualization: 'Disabled', NumaNodesPerSocket: 2, ProcHyperthreading: 'Enabled' });
  assert.deepEqual(staged, { rebootRequired: true, taskId: undefined });
  const pending = await driver.biosSettings.getBiosSettings();
  assert.deepEqual(pending.pending, { ProcVirtualization: 'Disabled', NumaNodesPerSocket: '2' }, 'unchanged values are not staged');
  await driver.power.setPower('on');
  const after = await driver.biosSettings.getBiosSettings();
  assert.deepEqual([after.current.ProcVirtualization, after.current.NumaNodesPerSocket, after.pending], ['Disabled', '2', {}]);
});

const badBios: Record<string, Record<string, string | number>> = {
  'unknown attribute': { NoSuchThing: 'x' },
  'read-only attribute': { SystemSerial: 'X' },
  'password attribute': { SetupPassword: 'x' },
  'enumeration value': { ProcVirtualization: 'Maybe' },
  'integer above bound': { NumaNodesPerSocket: 9 },
  'integer not a number': { NumaNodesPerSocket: 'two' },
  'string too long': { AssetTag: 'x'.repeat(33) },
};
for (const [name, changes] of Object.entries(badBios)) {
  test(`BIOS rejects: ${name}`, async () => {
    const { driver } = setup();
    await assert.rejects(driver.biosSettings.applyBiosSettings(changes), failsWith(BmcErrorCode.protocol));
    assert.deepEqual((await driver.biosSettings.getBiosSettings()).pending, {});
  });
}

test('firmware: simpleUpdate returns a task that runs, completes and changes the version', async () => {
  const { driver } = setup({ taskCalls: 2 });
  const { taskId } = await driver.firmware.simpleUpdate({ imageUrl: 'https://fw.example/bios-2.3.1.bin', targets: ['BIOS'] });
  assert.deepEqual([(await driver.tasks.getTask(taskId)).state, (await driver.tasks.getTask(taskId)).state], ['running', 'running']);
  const done = await driver.tasks.getTask(taskId);
  assert.equal(done.state, 'completed');
  const bios = (await driver.firmware.getFirmwareInventory()).find((c) => c.component === 'bios');
  assert.equal(bios?.version, '2.3.1');
  await assert.rejects(driver.tasks.getTask('task-404'), failsWith(BmcErrorCode.protocol));
  await assert.rejects(driver.firmware.simpleUpdate({ imageUrl: 'https://fw/x.bin', targets: ['GPU'] }), failsWith(BmcErrorCode.protocol));
});

test('RAID: apply replaces volumes through a task; the same set again is a no-op', async () => {
  const { driver } = setup({ taskCalls: 0 });
  const staged = await driver.raid.applyRaidConfig([{ name: 'os', level: '1', physicalDisks: ['Disk.0', 'Disk.1'] }]);
  assert.ok(staged.taskId !== undefined);
  assert.equal((await driver.tasks.getTask(staged.taskId)).state, 'completed');
  const config = await driver.raid.getRaidConfig();
  assert.deepEqual(config.volumes.map((v) => [v.name, v.level, v.physicalDisks]), [['os', '1', ['Disk.0', 'Disk.1']]]);
  assert.deepEqual(await driver.raid.applyRaidConfig([{ name: 'os', level: '1', physicalDisks: ['Disk.0', 'Disk.1'] }]), { rebootRequired: false, taskId: undefined });
  await assert.rejects(driver.raid.applyRaidConfig([{ level: '0', physicalDisks: ['Disk.9'] }]), failsWith(BmcErrorCode.protocol));
});

test('event subscriptions: create, list, delete (twice)', async () => {
  const { driver, bmc } = setup();
  const { id } = await driver.eventSubscriptions.createSubscription({ destination: 'https://hooks.example/bmc', context: 'node-1', httpHeaders: { Authorization: 'Bearer t0k' } });
  assert.deepEqual(await driver.eventSubscriptions.listSubscriptions(), [{ id, destination: 'https://hooks.example/bmc', context: 'node-1' }]);
  assert.ok(!JSON.stringify(bmc.calls).includes('t0k'), 'headers (secrets) are not recorded');
  await driver.eventSubscriptions.deleteSubscription(id);
  await driver.eventSubscriptions.deleteSubscription(id);
  assert.deepEqual(await driver.eventSubscriptions.listSubscriptions(), []);
});

test('secure boot needs UEFI boot mode', async () => {
  const { driver } = setup();
  await driver.secureBoot.setSecureBoot(true);
  assert.equal((await driver.secureBoot.getSecureBoot()).enabled, true);
  await driver.secureBoot.setSecureBoot(false);
  await driver.biosSettings.applyBiosSettings({ BootMode: 'Bios' });
  await assert.rejects(driver.secureBoot.setSecureBoot(true), failsWith(BmcErrorCode.protocol));
});

test('inventory is deterministic per host name', async () => {
  const a = await setup().driver.inventory.getInventory();
  const b = await setup().driver.inventory.getInventory();
  assert.deepEqual(a, b);
  assert.equal(a.nics[0]?.macAddress, fakeMacAddress('node-1', 0));
  assert.match(fakeMacAddress('node-1', 0), /^52:54:00(:[0-9a-f]{2}){3}$/);
  assert.notEqual(fakeMacAddress('node-1', 0), fakeMacAddress('node-2', 0));
  assert.equal(a.drives.length, 4);
  assert.equal(a.memoryMebibytes, 131072);
});

test('info reports the fake identity and every call is recorded in order', async () => {
  const { driver, bmc } = setup();
  const info = await driver.info.getBmcInfo();
  assert.deepEqual([info.vendor, info.firmwareVersion, info.probed.length], ['rackside', '1.0.0', 11]);
  await driver.power.setPower('on');
  assert.deepEqual(bmc.calls.map((c) => `${c.capability}.${c.operation}`), ['info.getBmcInfo', 'power.setPower']);
  assert.deepEqual(bmc.calls[1]?.args, ['on']);
  await driver.close();
  assert.equal(bmc.closeCount, 1);
});
