/**
 * The local provisioner's prepare, service and fast inspection through the real Redfish driver
 * against the virtual Redfish BMC (test/lab/redfish, plain HTTP on loopback, in-memory host):
 * a BareMetalHost with `inspectionMode: fast` and hardware RAID goes register → inspecting (no
 * boot) → preparing → available through the real host state machine; prepare applies BIOS
 * settings (PATCH to the settings object, applied by the reset), hardware RAID (Storage
 * volumes, tasks followed) and a firmware update the BMC schedules for the reset; a bad BIOS
 * value fails before anything is written, naming the attribute; servicing resets a provisioned
 * host onto its disk. Through the state machine with the firmware objects: a BareMetalHost with a
 * HostFirmwareSettings reaches available with the BIOS value applied on the BMC and shown in the
 * HFS status; an externally provisioned host with a HostUpdatePolicy is serviced when rebooted.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { createRedfishDriverFactory } from '../../../drivers/redfish/redfish-driver.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { HostService } from '../../../agent/host/service.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import type { HostFirmwareSettings } from '../../../agent/host/firmware-types.js';
import type { PrepareData, Provisioner, ServicingData, StartedResult } from '../../../agent/provisioner/index.js';
import { operationComplete } from '../../../agent/provisioner/result.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import type { MemoryHostBackend } from '../../lab/redfish/backend.js';
import { virtualMac } from '../../lab/redfish/payloads.js';
import type { VirtualBmcKnobs, VirtualSystem } from '../../lab/redfish/state.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';
import { hostManifests } from '../../helpers/host-harness.js';
import { accessData, eventRecorder, hostData } from '../../unit/provisioner/host-data.js';

interface Rig {
  bmc: VirtualRedfishBmc;
  system: VirtualSystem;
  backend: MemoryHostBackend;
  address: string;
  store: ReturnType<typeof createMemoryStore>;
  factory: LocalFactory;
  events: string[];
  /** A registered provisioner for host `name`. */
  provisioner(name: string, state?: 'registering' | 'provisioned'): Promise<Provisioner>;
  /** Requests the BMC received, as `METHOD path`. */
  requests(): string[];
  /** Requests that change something (not GETs, not the session login). */
  writes(): string[];
}

async function rig(t: TestContext, knobs: Partial<VirtualBmcKnobs> = {}): Promise<Rig> {
  const bmc = await startVirtualRedfishBmc({ https: false, knobs });
  t.after(() => bmc.stop());
  const system = bmc.state.systems.get('1');
  const backend = bmc.backends.get('1') as MemoryHostBackend | undefined;
  assert.ok(system !== undefined && backend !== undefined);
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  drivers.register('redfish', createRedfishDriverFactory({ taskPollMs: 1, retryDelayMs: 1 }), { replace: true });
  const store = createMemoryStore();
  let ids = 0;
  const factory = new LocalFactory({ store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now(), newId: () => `id${++ids}-000000000000`, pollMs: 0 });
  t.after(() => factory.close());
  const address = `redfish+http://${bmc.host}/redfish/v1/Systems/1`;
  const { publish, events } = eventRecorder();
  return {
    bmc, system, backend, address, store, factory, events,
    async provisioner(name, state = 'registering') {
      const p = await factory.newProvisioner(hostData(name, { bmcAddress: address, bootMACAddress: virtualMac('1', 1) }), publish);
      assert.equal((await p.validateManagementAccess(accessData({ state }), false, false)).result.errorMessage, '');
      return p;
    },
    requests: () => bmc.state.requests.map((r) => `${r.method} ${r.path}`),
    writes: () => bmc.state.requests.filter((r) => r.method !== 'GET' && !r.path.endsWith('/SessionService/Sessions')).map((r) => `${r.method} ${r.path}`),
  };
}

test('a BareMetalHost with fast inspection and hardware RAID: inspected without a boot, prepared, available', async (t) => {
  const r = await rig(t);
  const reconciler = new Reconciler({ store: r.store, factory: r.factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store: r.store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const raid = { hardwareRAIDVolumes: [{ level: '1' as const, name: 'os' }] };
  const [secret, host] = hostManifests('r0', { inspectionMode: 'fast', raid, bootMACAddress: virtualMac('1', 1) }) as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = r.address;
  await service.apply([secret, host]);
  const step = async (done: (h: BareMetalHost) => boolean): Promise<BareMetalHost> => {
    for (let i = 0; i < 40; i++) {
      const h = await service.getHost('r0');
      if (done(h)) return h;
      await reconciler.reconcileOnce('r0');
    }
    const h = await service.getHost('r0');
    assert.fail(`stuck in ${h.status.provisioning.state}: ${h.status.errorMessage}`);
  };
  let bmh = await step((h) => h.status.provisioning.state === 'preparing');
  assert.deepEqual(r.backend.boots, [], 'fast inspection booted nothing');
  assert.ok(!r.requests().some((q) => q.includes('ComputerSystem.Reset') || (q.startsWith('PATCH') && q.endsWith('/Systems/1'))), 'no power or boot override request');
  const hw = bmh.status.hardware;
  assert.ok(hw !== undefined);
  assert.deepEqual(hw.cpu, { arch: 'x86_64', model: 'Virtual CPU @ 2.40GHz', clockMegahertz: 2400, count: 64 });
  assert.equal(hw.ramMebibytes, 4 * 32768);
  assert.deepEqual(hw.systemVendor, { manufacturer: 'rackside', productName: 'Virtual Server', serialNumber: 'VRT000001' });
  assert.deepEqual(hw.nics?.map((n) => [n.name, n.pxe]), [['NIC.1', true], ['NIC.2', false]]);
  assert.deepEqual(hw.storage?.map((s) => [s.name, s.type, s.sizeBytes]), ['Disk.0', 'Disk.1', 'Disk.2', 'Disk.3'].map((d) => [d, 'SSD', 960_197_124_096]));

  bmh = await step((h) => h.status.provisioning.state === 'available');
  assert.equal(bmh.status.errorMessage, '');
  assert.deepEqual(bmh.status.provisioning.raid, raid, 'the applied RAID is committed to status');
  assert.deepEqual(r.system.volumes.map((v) => [v.name, v.raidType, v.drives.length]), [['os', 'RAID1', 2]]);
});

/** The state machine over the rig: host service, reconciler, and a stepper with an iteration cap. */
function machine(r: Rig): { service: HostService; step: (name: string, done: (h: BareMetalHost) => boolean, max?: number) => Promise<BareMetalHost>; hfs: (name: string) => Promise<HostFirmwareSettings> } {
  const reconciler = new Reconciler({ store: r.store, factory: r.factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store: r.store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  return {
    service,
    async step(name, done, max = 60) {
      for (let i = 0; i < max; i++) {
        const h = await service.getHost(name);
        if (done(h)) return h;
        await reconciler.reconcileOnce(name);
      }
      const h = await service.getHost(name);
      return assert.fail(`${name} stuck in ${h.status.provisioning.state}/${h.status.operationalStatus}: ${h.status.errorMessage}`);
    },
    async hfs(name) {
      const hfs = await r.store.getFirmwareObject('HostFirmwareSettings', 'metal3', name);
      assert.ok(hfs !== undefined, `no HostFirmwareSettings for ${name}`);
      return hfs;
    },
  };
}

const changeDetected = (hfs: HostFirmwareSettings): string | undefined => hfs.status.conditions?.find((c) => c.type === 'ChangeDetected')?.status;

test('a BareMetalHost with HostFirmwareSettings: registered, prepared with the BIOS values applied on the BMC, available', async (t) => {
  const r = await rig(t);
  const m = machine(r);
  const [secret, host] = hostManifests('f0', { inspectionMode: 'fast', bootMACAddress: virtualMac('1', 1) }) as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = r.address;
  const hfsDoc = { apiVersion: 'metal3.io/v1alpha1', kind: 'HostFirmwareSettings', metadata: { name: 'f0', namespace: 'metal3' }, spec: { settings: { ProcVirtualization: 'Disabled', NumaNodesPerSocket: 2 } } };
  await m.service.apply([secret, host, hfsDoc]);
  const bmh = await m.step('f0', (h) => h.status.provisioning.state === 'available');
  assert.equal(bmh.status.errorMessage, '');
  assert.equal(r.system.bios.ProcVirtualization, 'Disabled', 'applied on the virtual BMC');
  assert.equal(r.system.bios.NumaNodesPerSocket, 2);
  assert.deepEqual(r.system.pendingBios, {}, 'applied by the reset, nothing left pending');
  const hfs = await m.hfs('f0');
  assert.equal(hfs.status.settings.ProcVirtualization, 'Disabled');
  assert.equal(hfs.status.settings.NumaNodesPerSocket, '2');
  assert.equal(hfs.status.settings.SetupPassword, undefined, 'Password attributes are not kept');
  assert.equal(changeDetected(hfs), 'False');
  const schema = await r.store.getFirmwareObject('FirmwareSchema', 'metal3', hfs.status.schema?.name ?? '');
  assert.equal(schema?.spec.schema.NumaNodesPerSocket?.upper_bound, 4, "the BMC's attribute registry");
  const reasons = (await r.store.listEvents({ host: 'f0' })).map((e) => e.reason);
  for (const e of ['BIOSSettingsStaged', 'BIOSSettingsApplied', 'PreparationComplete']) assert.ok(reasons.includes(e), `${e} in ${reasons.join(' ')}`);
  // Once the registry is known, a value it refuses is a 400 naming the setting.
  await assert.rejects(
    m.service.apply([{ ...hfsDoc, spec: { settings: { NumaNodesPerSocket: 9 } } }]),
    (err: unknown) => (err as { field?: string }).field === 'spec.settings.NumaNodesPerSocket',
  );
});

test('servicing through the state machine: an externally provisioned host with a HostUpdatePolicy gets its BIOS change on a reboot', async (t) => {
  const r = await rig(t);
  const m = machine(r);
  const [secret, host] = hostManifests('f1', { externallyProvisioned: true, bootMACAddress: virtualMac('1', 1) }) as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = r.address;
  await m.service.apply([secret, host]);
  await m.step('f1', (h) => h.status.provisioning.state === 'externally provisioned' && h.status.poweredOn);
  await m.service.apply([
    { apiVersion: 'metal3.io/v1alpha1', kind: 'HostUpdatePolicy', metadata: { name: 'f1', namespace: 'metal3' }, spec: { firmwareSettings: 'onReboot' } },
    { apiVersion: 'metal3.io/v1alpha1', kind: 'HostFirmwareSettings', metadata: { name: 'f1', namespace: 'metal3' }, spec: { settings: { ProcHyperthreading: 'Disabled' } } },
  ]);
  await m.step('f1', () => true);
  assert.equal(r.system.bios.ProcHyperthreading, 'Enabled', 'nothing happens before the reboot');
  await m.service.hostAction('f1', { action: 'reboot', mode: 'hard' });
  const seen = new Set<string>();
  const done = await m.step('f1', (h) => {
    seen.add(h.status.operationalStatus);
    return seen.has('servicing') && h.status.operationalStatus === 'OK' && h.status.poweredOn;
  });
  assert.equal(done.status.errorType, '');
  assert.equal(r.system.bios.ProcHyperthreading, 'Disabled');
  assert.deepEqual(r.system.boot, { target: 'Hdd', enabled: 'Continuous', mode: 'UEFI' }, 'reset onto its own disk');
  const hfs = await m.hfs('f1');
  assert.equal(hfs.status.settings.ProcHyperthreading, 'Disabled');
  assert.equal(changeDetected(hfs), 'False');
  const reasons = (await r.store.listEvents({ host: 'f1' })).map((e) => e.reason);
  for (const e of ['ServicingRequested', 'ServicingStarted', 'BIOSSettingsApplied', 'ServicingComplete', 'ServicingFinished']) assert.ok(reasons.includes(e), `${e} in ${reasons.join(' ')}`);
});

const noFirmware: PrepareData = { targetFirmwareSettings: {}, actualFirmwareSettings: {}, targetFirmwareComponents: [] };

async function drive(call: (first: boolean) => Promise<StartedResult>, max = 40): Promise<StartedResult[]> {
  const seen: StartedResult[] = [];
  for (let i = 0; i < max; i++) {
    const result = await call(i === 0);
    seen.push(result);
    if (result.result.errorMessage !== '' || !result.result.dirty) return seen;
  }
  assert.fail(`still running after ${max} calls`);
}

test('prepare: BIOS settings staged and applied by the reset, hardware RAID, firmware the BMC applies at the reset', async (t) => {
  const r = await rig(t, { updatesApplyAtReset: true });
  const p = await r.provisioner('r1');
  const data: PrepareData = {
    targetRAIDConfig: { hardwareRAIDVolumes: [{ level: '1+0', name: 'data' }] },
    targetFirmwareSettings: { ProcVirtualization: 'Disabled', NumaNodesPerSocket: 2, PxeEnabled: 'false' },
    actualFirmwareSettings: {},
    targetFirmwareComponents: [{ component: 'bios', url: 'http://fw.example/bios-2.20.0.bin' }],
  };
  const seen = await drive((first) => p.prepare(data, first, false));
  assert.deepEqual(seen.at(-1)?.result, operationComplete(), seen.at(-1)?.result.errorMessage);
  assert.equal(seen[0]?.started, true);
  assert.deepEqual({ ...r.system.bios }, { ...r.system.bios, ProcVirtualization: 'Disabled', NumaNodesPerSocket: 2, PxeEnabled: false });
  assert.deepEqual(r.system.pendingBios, {}, 'the reset applied the settings object');
  assert.deepEqual(r.system.volumes.map((v) => [v.name, v.raidType, v.drives.length]), [['data', 'RAID10', 4]]);
  assert.equal(r.bmc.state.firmware.find((f) => f.id === 'BIOS')?.version, '2.20.0');
  assert.deepEqual(r.backend.boots.map((b) => b.target), ['Hdd'], 'one boot: the reset that applied BIOS and firmware');
  assert.equal(r.backend.power, 'Off', 'powered off again at the end');
  const patch = r.bmc.state.requests.findIndex((q) => q.method === 'PATCH' && q.path.endsWith('/Bios/Settings'));
  const reset = r.bmc.state.requests.findIndex((q) => q.method === 'POST' && q.path.endsWith('/ComputerSystem.Reset'));
  assert.ok(patch >= 0 && reset > patch, 'settings PATCHed before the reset');
  for (const e of ['FirmwareUpdated: bios: 2.19.1 → 2.20.0', 'BIOSSettingsApplied', 'PreparationComplete']) assert.ok(r.events.some((x) => x.startsWith(e)), `${e} in ${r.events.join(' | ')}`);
});

const bad: Record<string, { settings: Record<string, string | number>; want: RegExp }> = {
  'integer above the registry bound': { settings: { NumaNodesPerSocket: 9 }, want: /Setting NumaNodesPerSocket is invalid, integer 9 is above maximum value 4/ },
  'value not in the enumeration': { settings: { BootMode: 'Bios' }, want: /Setting BootMode is invalid, unknown enumeration value - Bios/ },
  'password attribute': { settings: { SetupPassword: 'hunter2' }, want: /Setting SetupPassword is invalid, Password fields can't be set/ },
};
for (const [name, c] of Object.entries(bad)) {
  test(`prepare with a bad BIOS value fails before any write: ${name}`, async (t) => {
    const r = await rig(t);
    const p = await r.provisioner('r2');
    const result = await p.prepare({ ...noFirmware, targetFirmwareSettings: c.settings, targetRAIDConfig: { hardwareRAIDVolumes: [{ level: '1' }] } }, true, false);
    assert.equal(result.started, false);
    assert.match(result.result.errorMessage, c.want);
    assert.doesNotMatch(result.result.errorMessage, /hunter2/);
    assert.deepEqual(r.writes(), [], 'nothing written: no PATCH, no volume, no reset');
  });
}

test('servicing a provisioned host: settings staged, the host reset onto its disk, applied, done', async (t) => {
  const r = await rig(t);
  const p = await r.provisioner('r3', 'provisioned');
  const data: ServicingData = { targetFirmwareSettings: { ProcHyperthreading: 'Disabled' }, actualFirmwareSettings: {}, targetFirmwareComponents: [], hasFirmwareSpec: true };
  const seen = await drive((first) => p.service(data, first, false));
  assert.deepEqual(seen.at(-1)?.result, operationComplete(), seen.at(-1)?.result.errorMessage);
  assert.equal(r.system.bios.ProcHyperthreading, 'Disabled');
  assert.deepEqual(r.system.boot, { target: 'Hdd', enabled: 'Continuous', mode: 'UEFI' }, 'persistent disk boot');
  assert.deepEqual(r.backend.boots.map((b) => b.target), ['Hdd']);
  assert.equal(r.backend.power, 'On', 'left running its OS');
  // Asked again with nothing pending: complete without a BMC write.
  const before = r.writes().length;
  assert.deepEqual(await p.service({ ...data, hasFirmwareSpec: true }, false, false), { result: operationComplete(), started: false });
  assert.equal(r.writes().length, before);
});

test('a Redfish BMC without an UpdateService reports no firmware components instead of failing every refresh', async (t) => {
  const r = await rig(t, { updateService: false });
  const p = await r.provisioner('nofw');
  // Before: the driver's "unsupported" escaped, the refresh never counted as done and every reconcile re-read the BMC.
  assert.deepEqual(await p.getFirmwareComponents(), []);
  assert.ok(!r.requests().some((q) => q.includes('UpdateService')), 'nothing was asked of a service the BMC does not have');
});

test('a Redfish BMC whose power lags 1.5 s: one reset per intent, and the observed power follows within 1 s of the BMC', async (t) => {
  const r = await rig(t, { powerDelayMs: 1_500 });
  const p = await r.provisioner('lag0');
  const resets = (): string[] => r.writes().filter((w) => w.endsWith('/Actions/ComputerSystem.Reset'));
  const measure = async (want: boolean, step: () => Promise<unknown>): Promise<number> => {
    let bmcShowedAt: number | undefined;
    for (let i = 0; i < 100; i += 1) {
      await step(); // the controller re-asks while the BMC still shows the old state
      if (bmcShowedAt === undefined && ((await r.backend.powerState()) === 'On') === want) bmcShowedAt = Date.now();
      if ((await p.updateHardwareState()).poweredOn === want) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(bmcShowedAt !== undefined, 'the BMC changed power');
    return Date.now() - bmcShowedAt;
  };
  const onLag = await measure(true, () => p.powerOn(false));
  assert.equal(resets().length, 1, `one reset for one power-on: ${resets().join(', ')}`);
  assert.ok(onLag < 1_000, `poweredOn followed ${onLag} ms after the BMC showed on`);
  const offLag = await measure(false, () => p.powerOff('hard', false, 'metadata'));
  assert.equal(resets().length, 2, `one reset for one power-off: ${resets().join(', ')}`);
  assert.ok(offLag < 1_000, `poweredOn followed ${offLag} ms after the BMC showed off`);
  t.diagnostic(`power-on shown ${onLag} ms, power-off ${offLag} ms after the BMC; resets: ${resets().length}`);
});
