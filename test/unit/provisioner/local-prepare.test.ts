/**
 * The local provisioner's prepare, service, fast inspection, firmware settings and custom
 * deploy against the fake BMC (drivers/fake), driven like the host controller drives them
 * (docs/metal3-mapping.md: "Provisioner contract", "States": `unprepared` until `started`, then called until
 * clean or failed; `restartOnFailure` after a recorded failure). Software RAID goes through the
 * real ramdisk callback router with a simulated ramdisk.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import express from 'express';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { FakeBmcPool } from '../../../drivers/fake/fake-driver.js';
import { fakeMacAddress, type FakeBmc } from '../../../drivers/fake/fake-bmc.js';
import type { PrepareData, Provisioner, ServicingData, StartedResult } from '../../../agent/provisioner/index.js';
import { CustomDeployRegistry, type CustomDeployMethod } from '../../../agent/provisioner/local/custom-deploy.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import type { NodeOperation } from '../../../agent/provisioner/local/node.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import type { RamdiskBuilds } from '../../../agent/provisioner/local/ramdisk-builds.js';
import { operationComplete } from '../../../agent/provisioner/result.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { accessData, eventRecorder, hostData, provisionData } from './host-data.js';
import { listenOnLoopback } from '../../helpers/listen.js';

interface Bench {
  bmc: FakeBmc;
  nodes: NodeTable;
  events: string[];
  uid: string;
  /** The host's provisioner (a fresh one per call, as the controller makes one per reconcile). */
  p(): Promise<Provisioner>;
  /** Simulates an agent restart: a new factory over the same store. */
  restart(): Promise<void>;
  ramdisk(path: string, body: unknown): Promise<string>;
}

async function bench(
  t: TestContext, name: string,
  options: { registry?: CustomDeployRegistry; state?: 'registering' | 'provisioned'; omit?: FakeBmc['knobs']['omit']; ramdisk?: Pick<RamdiskBuilds, 'gate' | 'forget'> } = {},
): Promise<Bench> {
  const store = createMemoryStore();
  const pool = new FakeBmcPool();
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers, { fakePool: pool });
  const nodes = new NodeTable(store.nodes, store.inventories);
  const bmc = pool.get(`${name}-bmc`);
  bmc.knobs.omit = options.omit ?? [];
  let ids = 0;
  const make = (): LocalFactory => new LocalFactory({
    store, nodes, drivers, nowMs: () => Date.parse('2026-12-01T08:00:00Z'), newId: () => `id${++ids}-000000000000`, pollMs: 0,
    ...(options.registry !== undefined ? { customDeploy: options.registry } : {}),
    ...(options.ramdisk !== undefined ? { ramdisk: options.ramdisk } : {}),
  });
  let factory = make();
  t.after(() => factory.close());
  const { publish, events } = eventRecorder();
  const host = hostData(name, { bmcAddress: `fake://${name}-bmc`, bootMACAddress: fakeMacAddress(`${name}-bmc`, 0) });
  const registered = await (await factory.newProvisioner(host, publish)).validateManagementAccess(accessData({ state: options.state ?? 'registering' }), false, false);
  assert.equal(registered.result.errorMessage, '');
  const app = express();
  app.use(createRamdiskRouter({ store, nodes, nowMs: () => Date.parse('2026-12-01T08:00:00Z') }));
  const url = await listenOnLoopback(t, app);
  return {
    bmc, nodes, events, uid: host.objectMeta.uid,
    p: () => factory.newProvisioner(host, publish),
    async restart() {
      await factory.close();
      factory = make();
    },
    async ramdisk(path, body) {
      const token = (await nodes.get(host.objectMeta.uid)).token ?? '';
      const res = await fetch(`${url}/ramdisk/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(res.status, 200, `ramdisk ${path} answered ${res.status}`);
      return res.text();
    },
  };
}

/** The host's current ramdisk operation (fails when there is none). */
async function currentOp(b: Bench): Promise<NodeOperation> {
  const op = (await b.nodes.get(b.uid)).local?.op;
  assert.ok(op !== undefined, 'a ramdisk operation is recorded');
  return op;
}

const noFirmware: PrepareData = { targetFirmwareSettings: {}, actualFirmwareSettings: {}, targetFirmwareComponents: [] };

/** Calls prepare as the host controller does until it is done or failed; returns every result. */
async function drivePrepare(b: Bench, data: PrepareData, max = 40, restartOnFailure = false): Promise<StartedResult[]> {
  const seen: StartedResult[] = [];
  let unprepared = true;
  for (let i = 0; i < max; i++) {
    const r = await (await b.p()).prepare(data, unprepared, restartOnFailure);
    seen.push(r);
    if (r.started) unprepared = false; // the controller commits the settings: no longer unprepared
    if (r.result.errorMessage !== '' || !r.result.dirty) return seen;
  }
  assert.fail(`prepare still running after ${max} calls`);
}

function last(results: StartedResult[]): StartedResult {
  const r = results.at(-1);
  assert.ok(r !== undefined);
  return r;
}

test('prepare applies hardware RAID, BIOS settings and a firmware update, resets once, and reports started once', async (t) => {
  const b = await bench(t, 'p0');
  const before = (await (await b.p()).getFirmwareComponents()).find((c) => c.component === 'bios');
  assert.deepEqual(before, { component: 'bios', initialVersion: '2.1.0', currentVersion: '2.1.0' });
  const results = await drivePrepare(b, {
    targetRAIDConfig: { hardwareRAIDVolumes: [{ level: '1', name: 'os' }] },
    targetFirmwareSettings: { ProcVirtualization: 'Disabled', NumaNodesPerSocket: 2, ProcHyperthreading: 'Enabled' },
    actualFirmwareSettings: {},
    targetFirmwareComponents: [{ component: 'bios', url: 'http://fw.example/bios-2.3.0.bin' }],
  });
  assert.deepEqual(last(results).result, operationComplete());
  assert.deepEqual(results.map((r) => r.started), [true, ...results.slice(1).map(() => false)], 'started exactly on the first call');
  assert.ok(results.length > 3 && results.slice(0, -1).every((r) => r.result.dirty), 'dirty while the job ran');
  assert.equal(b.bmc.bios.get('ProcVirtualization'), 'Disabled');
  assert.equal(b.bmc.bios.get('NumaNodesPerSocket'), '2');
  assert.equal(b.bmc.pendingBios.size, 0, 'the reset applied the staged settings');
  assert.deepEqual(b.bmc.volumes.map((v) => [v.name, v.level]), [['os', '1']]);
  assert.equal(b.bmc.firmware.find((c) => c.component === 'bios')?.version, '2.3.0');
  assert.equal(b.bmc.boots.length, 1, 'one boot applied everything');
  assert.equal(b.bmc.power, 'off', 'left off, as after inspection');
  const node = (await b.nodes.get(b.uid)).local;
  assert.equal(node?.prep, undefined);
  assert.equal(node?.state, 'manageable');
  for (const reason of ['PreparationStarted', 'RAIDConfigured', 'BIOSSettingsStaged', 'FirmwareUpdated: bios: 2.1.0 → 2.3.0', 'HostReset', 'BIOSSettingsApplied', 'PreparationComplete']) {
    assert.ok(b.events.some((e) => e.startsWith(reason)), `event ${reason} in ${b.events.join(' | ')}`);
  }
  assert.ok(!b.events.some((e) => e.startsWith('BIOSSettingsStaged') && e.includes('ProcHyperthreading')), 'a value already current is not staged');
  // HostFirmwareComponents as Ironic reports them: the initial version stays, the flashed one is named.
  const after = (await (await b.p()).getFirmwareComponents()).find((c) => c.component === 'bios');
  assert.equal(after?.initialVersion, '2.1.0');
  assert.equal(after.currentVersion, '2.3.0');
  assert.equal(after.lastVersionFlashed, '2.3.0');
  assert.match(after.updatedAt ?? '', /^\d{4}-\d{2}-\d{2}T/);

  // Called again with nothing new: cheap and complete, no BMC write.
  const writes = b.bmc.calls.length;
  assert.deepEqual(await (await b.p()).prepare(noFirmware, false, false), { result: operationComplete(), started: false });
  assert.equal(b.bmc.calls.length, writes);
});

const badBios: Record<string, { settings: Record<string, string | number>; want: RegExp }> = {
  'enumeration value': { settings: { ProcVirtualization: 'Sometimes' }, want: /Setting ProcVirtualization is invalid, unknown enumeration value - Sometimes/ },
  'integer above the bound': { settings: { NumaNodesPerSocket: 9 }, want: /Setting NumaNodesPerSocket is invalid, integer 9 is above maximum value 4/ },
  'read-only attribute': { settings: { SystemSerial: 'X' }, want: /Setting SystemSerial is invalid, it is ReadOnly/ },
  'unknown attribute': { settings: { TurboBoost: 'Enabled' }, want: /Setting TurboBoost is invalid, it is not in the associated schema/ },
};
for (const [name, c] of Object.entries(badBios)) {
  test(`a bad BIOS value fails at once, naming the attribute: ${name}`, async (t) => {
    const b = await bench(t, 'p1');
    const r = await (await b.p()).prepare({ ...noFirmware, targetFirmwareSettings: { AssetTag: 'rack-7', ...c.settings } }, true, false);
    assert.equal(r.started, false);
    assert.match(r.result.errorMessage, c.want);
    assert.doesNotMatch(r.result.errorMessage, /AssetTag/, 'only the bad attribute is named');
    assert.equal(b.bmc.pendingBios.size, 0, 'nothing staged');
    assert.equal((await b.nodes.get(b.uid)).local?.prep, undefined, 'no job');
  });
}

test('a job survives an agent restart; a failed one is reported until restartOnFailure replans it', async (t) => {
  const b = await bench(t, 'p2');
  const data: PrepareData = { ...noFirmware, targetFirmwareSettings: { SriovGlobalEnable: 'Enabled' }, targetFirmwareComponents: [{ component: 'bmc', url: 'http://fw.example/bmc-1.2.0.bin' }] };
  assert.equal((await (await b.p()).prepare(data, true, false)).started, true);
  assert.equal((await (await b.p()).prepare(data, false, false)).result.dirty, true);
  assert.equal((await b.nodes.get(b.uid)).local?.prep?.state, 'running', 'stored mid-job');
  await b.restart();
  const rest = await drivePrepare(b, data, 20);
  assert.deepEqual(last(rest).result, operationComplete());
  assert.equal(b.bmc.bios.get('SriovGlobalEnable'), 'Enabled');
  assert.equal(b.bmc.firmware.find((c) => c.component === 'bmc')?.version, '1.2.0');

  const bad: PrepareData = { ...noFirmware, targetFirmwareComponents: [{ component: 'nic:NIC.9', url: 'http://fw.example/nic-3.0.bin' }] };
  const failed = last(await drivePrepare(b, bad));
  assert.match(failed.result.errorMessage, /Preparation failed in firmware updates \(nic:NIC\.9\): firmware component nic:NIC\.9 is not in the BMC's firmware inventory \(it has bmc, bios, nic:NIC\.1\)/);
  const again = await (await b.p()).prepare(bad, true, false);
  assert.equal(again.result.errorMessage, failed.result.errorMessage, 'reported again until the controller backs off and restarts');
  const fixed = await drivePrepare(b, { ...bad, targetFirmwareComponents: [{ component: 'nic:NIC.1', url: 'http://fw.example/nic-21.0.1.bin' }] }, 20, true);
  assert.equal(fixed[0]?.started, true);
  assert.deepEqual(last(fixed).result, operationComplete());
  assert.equal(b.bmc.firmware.find((c) => c.component === 'nic:NIC.1')?.version, '21.0.1');
});

test('a target changed while a job runs is applied by a new job after it', async (t) => {
  const b = await bench(t, 'p3');
  const one: PrepareData = { ...noFirmware, targetFirmwareSettings: { AssetTag: 'one' } };
  assert.equal((await (await b.p()).prepare(one, true, false)).started, true);
  const two: PrepareData = { ...noFirmware, targetFirmwareSettings: { AssetTag: 'two' } };
  let started = 0;
  for (let i = 0; i < 20; i++) {
    const r = await (await b.p()).prepare(two, started === 0, false);
    if (r.started) started += 1;
    if (!r.result.dirty) break;
  }
  assert.equal(started, 1, 'the second target started once, after the first job');
  assert.equal(b.bmc.bios.get('AssetTag'), 'two');
});

test('software RAID: the ramdisk cleans the disks, then builds the md volumes without another reboot', async (t) => {
  const b = await bench(t, 'p4');
  const volumes = [{ level: '1' as const, physicalDisks: [{ serialNumber: 'S0' }, { serialNumber: 'S1' }] }];
  const data: PrepareData = { ...noFirmware, targetRAIDConfig: { softwareRAIDVolumes: volumes } };
  const p = async (): Promise<StartedResult> => (await b.p()).prepare(data, false, false);
  assert.equal((await (await b.p()).prepare(data, true, false)).started, true);
  assert.equal((await p()).result.dirty, true);
  const clean = await currentOp(b);
  assert.equal(clean.kind, 'clean');
  assert.deepEqual(b.bmc.boots.map((boot) => boot.device), ['pxe'], 'the ramdisk was network-booted');
  const cleanId = clean.commandId;
  assert.match(await b.ramdisk('heartbeat', { version: '1', boot_mac: null, ip: '192.0.2.9', uptime_seconds: 5, last_command_id: null }), /^command=clean$/m);
  await b.ramdisk('result', { command_id: cleanId, command: 'clean', status: 'ok', message: '', details: null, log: ['clean: done'] });

  assert.equal((await p()).result.dirty, true);
  const raid = await currentOp(b);
  assert.equal(raid.kind, 'raid');
  assert.notEqual(raid.commandId, cleanId);
  assert.equal(b.bmc.boots.length, 1, 'the running ramdisk takes raid: no second boot');
  // The heartbeat answer carries the raid command with its volumes.
  const text = await b.ramdisk('heartbeat', { version: '1', boot_mac: null, ip: '192.0.2.9', uptime_seconds: 9, last_command_id: cleanId });
  assert.match(text, /^command=raid$/m);
  assert.match(text, /^raid_volumes=1$/m);
  assert.match(text, /^raid_0_level=1$/m);
  assert.match(text, /^raid_0_disk_1_serial=S1$/m);
  await b.ramdisk('result', {
    command_id: raid.commandId, command: 'raid', status: 'ok', message: '', log: ['raid: done'],
    details: { volumes: [{ device: '/dev/md0', level: '1', members: ['/dev/vda1', '/dev/vdb1'], size: 1_073_741_824 }] },
  });

  assert.deepEqual((await p()).result, operationComplete());
  const entry = await b.nodes.get(b.uid);
  assert.equal(entry.boot, 'none');
  assert.equal(entry.local?.op, undefined);
  assert.equal(b.bmc.power, 'off');
  assert.ok(b.events.some((e) => e === 'RAIDConfigured: software RAID: 1 md volume(s) built in the ramdisk'), b.events.join(' | '));
});

test('software RAID that the ramdisk refuses fails preparation with its message', async (t) => {
  const b = await bench(t, 'p5');
  const data: PrepareData = { ...noFirmware, targetRAIDConfig: { softwareRAIDVolumes: [] }, actualRAIDConfig: { softwareRAIDVolumes: [{ level: '1' }] } };
  assert.equal((await (await b.p()).prepare(data, true, false)).started, true);
  await (await b.p()).prepare(data, false, false);
  const op = await currentOp(b);
  assert.equal(op.kind, 'clean', 'deleting software RAID is a metadata clean');
  await b.ramdisk('result', { command_id: op.commandId, command: 'clean', status: 'error', message: '1 disk(s) could not be erased', details: null, log: [] });
  const r = await (await b.p()).prepare(data, false, false);
  assert.equal(r.result.errorMessage, 'Preparation failed in deleting software RAID: removing the old software RAID: 1 disk(s) could not be erased');
});

test('software RAID whose ramdisk build failed fails preparation with the build\'s reason and fix (not a thrown error)', async (t) => {
  const failed = 'the amd64 ramdisk build failed: kernel image /nonexistent/vmlinuz does not exist — fix: point images.ramdisk.kernel at an existing /boot/vmlinuz-*';
  const b = await bench(t, 'p6', { ramdisk: { gate: () => ({ kind: 'failed', message: failed, changed: true }), forget: () => undefined } });
  const data: PrepareData = { ...noFirmware, targetRAIDConfig: { softwareRAIDVolumes: [{ level: '1', physicalDisks: [{ serialNumber: 'S0' }, { serialNumber: 'S1' }] }] } };
  let r = await (await b.p()).prepare(data, true, false);
  for (let i = 0; i < 5 && r.result.errorMessage === ''; i++) r = await (await b.p()).prepare(data, false, false);
  assert.match(r.result.errorMessage, /^Preparation failed in .*software RAID.*: the amd64 ramdisk build failed: kernel image \/nonexistent\/vmlinuz does not exist — fix: point images\.ramdisk\.kernel/);
  assert.deepEqual(b.bmc.boots, [], 'nothing was booted');
});

test('servicing stages BIOS settings, updates firmware, resets the host onto its disk and completes', async (t) => {
  const b = await bench(t, 's0', { state: 'provisioned' });
  const data: ServicingData = {
    targetFirmwareSettings: { ProcHyperthreading: 'Disabled' }, actualFirmwareSettings: {},
    targetFirmwareComponents: [{ component: 'bios', url: 'http://fw.example/bios-2.4.1.bin' }], hasFirmwareSpec: true,
  };
  const seen: StartedResult[] = [];
  for (let i = 0; i < 20 && (seen.at(-1)?.result.dirty ?? true); i++) seen.push(await (await b.p()).service(data, i === 0, false));
  assert.deepEqual(last(seen).result, operationComplete());
  assert.equal(seen[0]?.started, true);
  assert.equal(b.bmc.bios.get('ProcHyperthreading'), 'Disabled');
  assert.equal(b.bmc.firmware.find((c) => c.component === 'bios')?.version, '2.4.1');
  assert.deepEqual(b.bmc.bootOverride, { device: 'disk', persistent: true, mode: 'uefi' });
  assert.deepEqual(b.bmc.boots.map((boot) => boot.device), ['disk'], 'the reset booted the host disk');
  const entry = await b.nodes.get(b.uid);
  assert.equal(entry.boot, 'local-disk');
  assert.equal(entry.local?.state, 'active');
  assert.ok(b.events.some((e) => e.startsWith('ServicingComplete')));

  // A failed servicing whose firmware spec was cleared is aborted, not reported forever.
  const bad: ServicingData = { ...data, targetFirmwareSettings: {}, targetFirmwareComponents: [{ component: 'nic:NIC.7', url: 'http://fw.example/x-1.0.bin' }] };
  let r = await (await b.p()).service(bad, true, false);
  for (let i = 0; i < 5 && r.result.errorMessage === ''; i++) r = await (await b.p()).service(bad, false, false);
  assert.match(r.result.errorMessage, /^Servicing failed in firmware updates/);
  const cleared = await (await b.p()).service({ ...bad, targetFirmwareComponents: [], hasFirmwareSpec: false }, false, true);
  assert.deepEqual(cleared, { result: operationComplete(), started: false });
  assert.equal((await b.nodes.get(b.uid)).local?.prep, undefined);
  assert.ok(b.events.some((e) => e.startsWith('ServicingAborted')));
});

test('servicing a host that is not provisioned is a transient error', async (t) => {
  const b = await bench(t, 's1');
  await assert.rejects((await b.p()).service({ targetFirmwareSettings: { AssetTag: 'x' }, actualFirmwareSettings: {}, targetFirmwareComponents: [], hasFirmwareSpec: true }, true, false), /servicing needs a provisioned host/);
});

test('fast inspection reads the hardware from the BMC without any boot or power change', async (t) => {
  const b = await bench(t, 'f0');
  const fast = { bootMode: 'UEFI' as const, cpuArchitecture: 'x86_64', inspectionMode: 'fast' as const };
  const refresh = await (await b.p()).inspectHardware(fast, false, true, false);
  assert.deepEqual({ started: refresh.started, dirty: refresh.result.dirty, details: refresh.details }, { started: true, dirty: true, details: undefined });
  const r = await (await b.p()).inspectHardware(fast, false, false, false);
  assert.deepEqual(r.result, operationComplete());
  const d = r.details;
  assert.ok(d !== undefined);
  assert.deepEqual(d.cpu, { arch: 'x86_64', model: 'Fake CPU @ 2.40GHz', clockMegahertz: 2400, count: 64 });
  assert.equal(d.ramMebibytes, 128 * 1024);
  assert.deepEqual(d.nics?.map((n) => [n.name, n.speedGbps, n.pxe]), [['NIC.1', 25, true], ['NIC.2', 25, false]]);
  assert.deepEqual(d.storage?.map((s) => [s.name, s.type, s.rotational, s.serialNumber]), [0, 1, 2, 3].map((i) => [`Disk.${i}`, 'SSD', false, `f0-bmc-D${i}`]));
  assert.equal(d.systemVendor.productName, 'Fake Server');
  assert.deepEqual(b.bmc.boots, []);
  assert.deepEqual(b.bmc.calls.filter((c) => c.operation === 'setPower' || c.operation === 'setBootDevice'), []);
  assert.equal((await b.nodes.get(b.uid)).boot, undefined, 'no boot intent');
});

test('fast inspection on a BMC without out-of-band inventory fails clearly', async (t) => {
  const b = await bench(t, 'f1', { omit: ['inventory'] });
  const r = await (await b.p()).inspectHardware({ bootMode: 'UEFI', cpuArchitecture: 'x86_64', inspectionMode: 'fast' }, false, false, false);
  assert.match(r.result.errorMessage, /inspectionMode fast needs out-of-band inspection, which fake:\/\/ BMCs do not offer: use inspectionMode agent/);
});

test('getFirmwareSettings returns the schema in metal3 form only when asked', async (t) => {
  const b = await bench(t, 'g0');
  const p = await b.p();
  assert.equal((await p.getFirmwareSettings(false)).schema, undefined);
  const withSchema = await p.getFirmwareSettings(true);
  assert.equal(withSchema.settings.ProcVirtualization, 'Enabled');
  const schema = withSchema.schema;
  assert.ok(schema !== undefined);
  assert.deepEqual(schema.ProcVirtualization, { attribute_type: 'Enumeration', allowable_values: ['Enabled', 'Disabled'] });
  assert.deepEqual(schema.NumaNodesPerSocket, { attribute_type: 'Integer', lower_bound: 1, upper_bound: 4 });
  assert.deepEqual(schema.SystemSerial, { attribute_type: 'String', read_only: true });
});

test('custom deploy: a registered method runs; an unknown one fails naming the known ones; local_disk_boot boots the disk', async (t) => {
  const calls: string[] = [];
  const testMethod: CustomDeployMethod = {
    name: 'test_write_marker',
    description: 'marks the node active after two calls',
    async step(ctx, data) {
      calls.push(data.customDeploy?.method ?? '');
      if (calls.length < 2) return { dirty: true, requeueAfterMs: 0, errorMessage: '' };
      await ctx.update((n) => { n.state = 'active'; });
      return operationComplete();
    },
  };
  const registry = new CustomDeployRegistry().register(testMethod);
  assert.throws(() => registry.register(testMethod), /already registered/);
  assert.throws(() => registry.register({ ...testMethod, name: 'bad name' }), /must be 1-64 characters/);
  const b = await bench(t, 'c0', { registry });
  const data = provisionData('', 'test_write_marker');
  assert.equal((await (await b.p()).provision(data, false)).dirty, true);
  assert.deepEqual(await (await b.p()).provision(data, false), operationComplete());
  assert.deepEqual(await (await b.p()).provision(data, false), operationComplete(), 'an active node completes without the method');
  assert.deepEqual(calls, ['test_write_marker', 'test_write_marker']);

  const unknown = await bench(t, 'c1', { registry });
  const failed = await (await unknown.p()).provision(provisionData('', 'install_coreos'), false);
  assert.equal(failed.errorMessage, 'custom deploy method "install_coreos" is not available: known methods are test_write_marker; provision with spec.image instead');

  const builtin = await bench(t, 'c2');
  assert.deepEqual(await (await builtin.p()).provision(provisionData('', 'local_disk_boot'), false), operationComplete());
  assert.deepEqual(builtin.bmc.bootOverride, { device: 'disk', persistent: true, mode: 'uefi' });
  assert.deepEqual(builtin.bmc.boots.map((boot) => boot.device), ['disk']);
  const entry = await builtin.nodes.get(builtin.uid);
  assert.deepEqual([entry.boot, entry.local?.state], ['local-disk', 'active']);
});

/** Drives prepare until the stored job has sent its firmware update (state `running`), then rewrites it as a crash mid-send would leave it. */
async function crashWhileSending(b: Bench, data: PrepareData): Promise<void> {
  let unprepared = true;
  for (let i = 0; i < 20; i++) {
    const r = await (await b.p()).prepare(data, unprepared, false);
    if (r.started) unprepared = false;
    const sent = await b.nodes.update(b.uid, (entry) => {
      const step = entry.local?.prep?.steps.find((s) => s.kind === 'firmware');
      const update = step?.kind === 'firmware' ? step.updates[0] : undefined;
      if (update?.state !== 'running') return { entry, write: false, value: false };
      // What a SIGKILL between sending SimpleUpdate and storing its answer leaves behind.
      update.state = 'sending';
      delete update.taskId;
      return { entry, write: true, value: true };
    });
    if (sent) {
      await b.restart();
      return;
    }
  }
  assert.fail('the firmware update was never sent');
}

const simpleUpdates = (b: Bench): number => b.bmc.calls.filter((c) => c.operation === 'simpleUpdate').length;

test('a crash while SimpleUpdate was being sent never sends it again: the part not yet changed fails clearly', async (t) => {
  const b = await bench(t, 'p9');
  const data: PrepareData = { ...noFirmware, targetFirmwareComponents: [{ component: 'bmc', url: 'http://fw.example/bmc-1.2.0.bin' }] };
  b.bmc.knobs.taskCalls = 50; // the update is still running when the agent comes back
  await crashWhileSending(b, data);
  assert.equal(simpleUpdates(b), 1);
  const failed = last(await drivePrepare(b, data, 10));
  assert.match(failed.result.errorMessage, /the agent stopped while asking the BMC to update bmc from http:\/\/fw\.example\/bmc-1\.2\.0\.bin, so the update may have started; it is not sent again/);
  assert.equal(simpleUpdates(b), 1, 'not sent twice');
});

test('a crash while SimpleUpdate was being sent: a part already at a new version counts as updated', async (t) => {
  const b = await bench(t, 'p10');
  const data: PrepareData = { ...noFirmware, targetFirmwareComponents: [{ component: 'bmc', url: 'http://fw.example/bmc-1.2.0.bin' }] };
  b.bmc.knobs.taskCalls = 0;
  await crashWhileSending(b, data);
  const at = b.bmc.firmware.findIndex((c) => c.component === 'bmc');
  const part = b.bmc.firmware[at];
  assert.ok(part);
  b.bmc.firmware[at] = { ...part, version: '1.2.0' }; // the BMC finished the update while the agent was down
  assert.deepEqual(last(await drivePrepare(b, data, 20)).result, operationComplete());
  assert.equal(simpleUpdates(b), 1, 'not sent twice');
  assert.ok(b.events.some((e) => e.startsWith('FirmwareUpdated') && e.includes('sent just before the agent stopped')), b.events.join(' | '));
});
