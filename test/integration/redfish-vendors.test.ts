// Redfish driver behaviour that depends on the BMC: iDRAC job queue for BIOS, iLO 5 weak ETags and
// BIOS-owned boot mode, System resolution with several systems, events really POSTed to a
// subscriber with its headers, one-time boot overrides consumed at boot, virtual media boots.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import {
  BmcErrorCode, DriverRegistry, isBmcError, registerBuiltinDrivers, waitForPowerState, type BmcDriver,
} from '../../drivers/index.js';
import type { MemoryHostBackend } from '../lab/redfish/backend.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc, type VirtualRedfishBmcOptions } from '../lab/redfish/virtual-bmc.js';

const skip = spawnSync('openssl', ['version']).status === 0 ? undefined : 'openssl CLI not installed (needed for the self-signed certificate)';
if (skip !== undefined && process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') throw new Error(skip);
const CREDS = { username: 'admin', password: 'password' };

async function withBmc(options: VirtualRedfishBmcOptions, address: (bmc: VirtualRedfishBmc) => string, body: (driver: BmcDriver, bmc: VirtualRedfishBmc) => Promise<void>): Promise<void> {
  const bmc = await startVirtualRedfishBmc({ knobs: { taskPolls: 1 }, ...options });
  const registry = new DriverRegistry();
  registerBuiltinDrivers(registry);
  const driver = registry.create(address(bmc), CREDS, { disableCertificateVerification: true, timeoutMs: 3000 });
  try {
    await body(driver, bmc);
  } finally {
    await driver.close();
    await bmc.stop();
  }
}

test('iDRAC: BIOS changes go through a job that stays Scheduled until the host resets', { skip }, () =>
  withBmc({ flavor: 'idrac' }, (b) => `idrac-virtualmedia://${b.host}`, async (driver, bmc) => {
    const staged = await driver.biosSettings.applyBiosSettings({ ProcHyperthreading: 'Disabled', NumaNodesPerSocket: 2 });
    assert.equal(staged.rebootRequired, true);
    assert.match(staged.taskId ?? '', /\/Managers\/iDRAC\.Embedded\.1\/Jobs\/JID_[0-9]+$/);
    assert.equal((await driver.tasks.getTask(staged.taskId ?? '')).state, 'pending');
    const jobId = (staged.taskId ?? '').split('/').pop() ?? '';
    assert.equal((await driver.tasks.getTask(jobId)).state, 'pending', 'a bare JID is accepted too');
    assert.equal(bmc.state.requests.some((q) => q.method === 'PATCH' && q.path.endsWith('/Bios/Settings')), true);
    await driver.power.setPower('on');
    await waitForPowerState(driver.power, 'on', { timeoutMs: 2000, pollMs: 10 });
    assert.equal((await driver.tasks.getTask(staged.taskId ?? '')).state, 'completed');
    const after = await driver.biosSettings.getBiosSettings();
    assert.equal(after.current.ProcHyperthreading, 'Disabled');
    assert.equal(after.current.NumaNodesPerSocket, '2');
    assert.deepEqual(after.pending, {});
    const info = await driver.info.getBmcInfo();
    assert.equal(info.vendor, 'Dell');
    assert.ok(!(await driver.firmware.getFirmwareInventory()).some((c) => c.id.startsWith('Previous-')));
  }));

test('iLO 5: weak ETags are retried in strong form; the boot mode belongs to the BIOS', { skip }, () =>
  withBmc({ flavor: 'ilo5' }, (b) => `ilo5-virtualmedia://${b.host}`, async (driver, bmc) => {
    await driver.secureBoot.setSecureBoot(true);
    const patches = bmc.state.requests.filter((q) => q.method === 'PATCH');
    assert.deepEqual(patches.map((q) => q.ifMatch?.startsWith('W/')), [true, false]);
    assert.equal((await driver.secureBoot.getSecureBoot()).enabled, true);
    await driver.bootDevice.setBootDevice('cdrom', { mode: 'uefi' }); // already UEFI: fine
    await assert.rejects(driver.bootDevice.setBootDevice('pxe', { mode: 'legacy' }), (err: unknown) =>
      isBmcError(err, BmcErrorCode.unsupported) && /BootMode attribute/.test(err.message));
    await driver.virtualMedia.insertMedia({ imageUrl: 'http://images.example/boot.iso' });
    await driver.virtualMedia.ejectMedia(); // iLO refuses EjectMedia without a JSON body
    assert.equal((await driver.info.getBmcInfo()).vendor, 'HPE');
  }));

test('several systems: no path in the address is a clear error; a path selects one', { skip }, async () => {
  await withBmc({ systems: 3 }, (b) => `redfish://${b.host}`, async (driver) => {
    await assert.rejects(driver.power.getPowerState(), (err: unknown) =>
      isBmcError(err, BmcErrorCode.protocol) && /manages 3 systems .*put the system path in the BMC address/.test(err.message));
  });
  await withBmc({ systems: 3 }, (b) => `redfish://${b.host}/redfish/v1/Systems/2`, async (driver, bmc) => {
    await driver.power.setPower('on');
    assert.equal(await bmc.backends.get('2')?.powerState(), 'On');
    assert.equal(await bmc.backends.get('1')?.powerState(), 'Off');
  });
});

test('events: the BMC POSTs to the subscriber with its headers and context', { skip }, async () => {
  const received: { headers: IncomingHttpHeaders; body: unknown }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  try {
    await withBmc({}, (b) => `redfish://${b.host}`, async (driver, bmc) => {
      await driver.eventSubscriptions.createSubscription({ destination: `http://127.0.0.1:${port}/events`, context: 'host-7', httpHeaders: { 'X-Rackside-Token': 'tok-123' } });
      await driver.power.setPower('on');
      // The receiver has the event before the BMC has its answer: wait for both (CI: the
      // delivery's status was read while the BMC still waited for the 204).
      for (let i = 0; i < 300 && (received.length === 0 || bmc.state.deliveries.length === 0); i++) await new Promise((r) => setTimeout(r, 10));
      const [first] = received;
      assert.ok(first, 'an event arrived');
      assert.equal(first.headers['x-rackside-token'], 'tok-123');
      assert.equal((first.body as { Context?: string }).Context, 'host-7');
      assert.match(JSON.stringify(first.body), /ResourcePowerStateChanged/);
      assert.equal(bmc.state.deliveries[0]?.status, 204);
    });
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
  }
});

test('one-time boot override is consumed by the boot; virtual media is what the host boots from CD', { skip }, () =>
  withBmc({}, (b) => `redfish-virtualmedia://${b.host}`, async (driver, bmc) => {
    const backend = bmc.backends.get('1') as MemoryHostBackend;
    await driver.virtualMedia.insertMedia({ imageUrl: 'http://10.0.0.1/host-7.iso' });
    await driver.bootDevice.setBootDevice('cdrom', { mode: 'uefi' });
    await driver.power.setPower('on');
    await waitForPowerState(driver.power, 'on', { timeoutMs: 2000, pollMs: 10 });
    assert.deepEqual(backend.boots, [{ target: 'Cd', media: 'http://10.0.0.1/host-7.iso' }]);
    assert.equal((await driver.bootDevice.getBootDevice()).device, 'none');
    await driver.power.setPower('reset');
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(backend.boots.map((b) => b.target), ['Cd', 'Hdd']);
    await driver.bootDevice.setBootDevice('pxe', { persistent: true });
    await driver.power.setPower('cycle');
    await driver.power.setPower('soft-reset');
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(backend.boots.map((b) => b.target), ['Cd', 'Hdd', 'Pxe', 'Pxe']);
  }));

test('UEFI HTTP boot: UefiHttp with HttpBootUri where the System has the property; iDRAC (no HttpBootUri) gets UefiHttp alone and its firmware asks DHCP', { skip }, async () => {
  const uri = 'http://192.0.2.1:8081/iso/host-7.iso';
  await withBmc({}, (b) => `redfish-uefihttp://${b.host}/redfish/v1/Systems/1`, async (driver, bmc) => {
    await driver.bootDevice.setBootDevice('uefi-http', { mode: 'uefi', httpBootUri: uri });
    assert.deepEqual(bmc.state.systems.get('1')?.boot, { target: 'UefiHttp', enabled: 'Once', mode: 'UEFI' });
    assert.equal(bmc.state.systems.get('1')?.httpBootUri, uri);
    assert.deepEqual(await driver.bootDevice.getBootDevice(), { device: 'uefi-http', persistent: false, mode: 'uefi', httpBootUri: uri });
    const patches = bmc.state.requests.filter((q) => q.method === 'PATCH').length;
    await driver.bootDevice.setBootDevice('uefi-http', { mode: 'uefi', httpBootUri: uri });
    assert.equal(bmc.state.requests.filter((q) => q.method === 'PATCH').length, patches, 'the same override again sends nothing');
    await driver.bootDevice.setBootDevice('uefi-http', { mode: 'uefi', httpBootUri: `${uri}?2` });
    assert.equal(bmc.state.systems.get('1')?.httpBootUri, `${uri}?2`, 'a new URI is sent');
  });
  await withBmc({ flavor: 'idrac' }, (b) => `idrac-redfish://${b.host}`, async (driver, bmc) => {
    await driver.bootDevice.setBootDevice('uefi-http', { mode: 'uefi', httpBootUri: uri });
    assert.deepEqual([...bmc.state.systems.values()][0]?.boot, { target: 'UefiHttp', enabled: 'Once', mode: 'UEFI' });
    assert.equal([...bmc.state.systems.values()][0]?.httpBootUri, null, 'no HttpBootUri sent (the BMC would refuse it)');
    assert.equal((await driver.bootDevice.getBootDevice()).httpBootUri, undefined);
  });
});

test('RAID: named disks, unknown disks and levels the controller lacks', { skip }, () =>
  withBmc({ knobs: { taskPolls: 0, asyncVolumes: false } }, (b) => `redfish://${b.host}`, async (driver) => {
    const staged = await driver.raid.applyRaidConfig([{ level: '0', physicalDisks: ['Disk.3'], name: 'scratch' }, { level: '1', diskCount: 2 }]);
    assert.equal(staged.taskId, undefined, 'synchronous volume creation has no task');
    const { volumes } = await driver.raid.getRaidConfig();
    assert.deepEqual(volumes.map((v) => [v.name, v.level, v.physicalDisks]), [['scratch', '0', ['Disk.3']], ['volume-1', '1', ['Disk.0', 'Disk.1']]]);
    await assert.rejects(driver.raid.applyRaidConfig([{ level: '1', physicalDisks: ['Disk.9', 'Disk.0'] }]), (err: unknown) => isBmcError(err, BmcErrorCode.protocol) && /unknown physical disk Disk\.9/.test(err.message));
    await assert.rejects(driver.raid.applyRaidConfig([{ level: '6' }]), (err: unknown) => isBmcError(err, BmcErrorCode.unsupported));
  }));

test('ResetTypes: from ActionInfo, fallbacks (PowerCycle → ForceRestart) and refusals as unsupported', { skip }, () =>
  withBmc({ knobs: { resetViaActionInfo: true, resetTypes: ['On', 'ForceOff', 'ForceRestart'] } }, (b) => `redfish://${b.host}`, async (driver, bmc) => {
    await driver.power.setPower('on');
    await driver.power.setPower('cycle');
    const sent = bmc.state.requests.filter((q) => q.path.endsWith('/ResetActionInfo')).length;
    assert.ok(sent >= 1, 'the ActionInfo was read');
    await assert.rejects(driver.power.setPower('soft-off'), (err: unknown) =>
      isBmcError(err, BmcErrorCode.unsupported) && /allowed ResetTypes are On, ForceOff, ForceRestart/.test(err.message));
    await assert.rejects(driver.power.setPower('soft-reset'), (err: unknown) => isBmcError(err, BmcErrorCode.unsupported));
    assert.equal(bmc.state.requests.filter((q) => q.path.endsWith('ComputerSystem.Reset')).length, 2, 'On and ForceRestart only');
  }));

test('virtual media: a BMC that wants TransferProtocolType gets a second InsertMedia with it (sushy quirk)', { skip }, () =>
  withBmc({ knobs: { insertNeedsTransferProtocol: true } }, (b) => `redfish://${b.host}`, async (driver, bmc) => {
    await driver.virtualMedia.insertMedia({ imageUrl: 'https://images.example/boot.iso', writeProtected: false });
    const inserts = bmc.state.requests.filter((q) => q.path.endsWith('VirtualMedia.InsertMedia'));
    assert.equal(inserts.length, 2);
    const cd = bmc.state.media.find((m) => m.mediaTypes.includes('CD'));
    assert.deepEqual([cd?.inserted, cd?.image, cd?.writeProtected], [true, 'https://images.example/boot.iso', false]);
  }));
