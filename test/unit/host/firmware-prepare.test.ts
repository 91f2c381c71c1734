/**
 * HostFirmwareSettings and HostFirmwareComponents through registration and preparing, over the
 * fixture provisioner (docs/metal3-mapping.md: "Registration", "States"): the
 * objects are created with the host's settings, schema and components; valid pending settings
 * and updates go to prepare (unprepared) and show as applied afterwards; invalid ones get
 * Valid=False with the reason and are not passed; an available host goes back to preparing
 * when they change; deleting the host removes them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PrepareData } from '../../../agent/provisioner/index.js';
import type { BareMetalHost, ProvisioningState } from '../../../agent/host/types.js';
import { hostManifests, newHarness, type Harness } from '../../helpers/host-harness.js';
import { condition, conditionStates, hfcManifest, hfsManifest, storedHfc, storedHfs } from './firmware-helpers.js';

const inState = (state: ProvisioningState) => (h: BareMetalHost) => h.status.provisioning.state === state;

function prepareCalls(bench: Harness, name: string): { unprepared: unknown; data: PrepareData }[] {
  return bench.fixture.callsFor(name, 'prepare').map((c) => ({ unprepared: c.args.unprepared, data: c.args.data as PrepareData }));
}

test('registration creates HostFirmwareSettings (settings, schema) and HostFirmwareComponents, nothing pending', async () => {
  const bench = newHarness();
  await bench.service.apply(hostManifests('fw-0'));
  await bench.tryReconcile('fw-0', inState('available'));
  const hfs = await storedHfs(bench, 'fw-0');
  assert.equal(hfs.status.settings.ProcVirtualization, 'Enabled');
  assert.equal(hfs.status.settings.SysPassword, undefined, 'Password settings are never kept');
  assert.match(hfs.status.schema?.name ?? '', /^schema-[0-9a-f]{8}$/);
  const schema = await bench.store.getFirmwareObject('FirmwareSchema', 'metal3', hfs.status.schema?.name ?? '');
  assert.equal(schema?.spec.schema.ProcVirtualization?.attribute_type, 'Enumeration');
  assert.equal(schema.spec.schema.SysPassword, undefined);
  assert.equal(schema.spec.hardwareModel, undefined, 'read at registration, before inspection');
  assert.deepEqual(conditionStates(hfs.status.conditions), { Valid: 'True', ChangeDetected: 'False' });
  const hfc = await storedHfc(bench, 'fw-0');
  assert.deepEqual(hfc.status.components?.map((c) => c.component), ['bios', 'bmc']);
  assert.deepEqual(conditionStates(hfc.status.conditions), { Valid: 'True', ChangeDetected: 'False' });
  assert.ok(prepareCalls(bench, 'fw-0').every((c) => Object.keys(c.data.targetFirmwareSettings).length === 0 && c.data.targetFirmwareComponents.length === 0));
  // Cheap when nothing changed: no re-read on the next reconciles.
  const reads = bench.fixture.callsFor('fw-0', 'getFirmwareSettings').length;
  await bench.reconciler.reconcileOnce('fw-0');
  await bench.reconciler.reconcileOnce('fw-0');
  assert.equal(bench.fixture.callsFor('fw-0', 'getFirmwareSettings').length, reads);
  assert.equal(bench.fixture.callsFor('fw-0', 'getFirmwareSettings')[0]?.args.includeSchema, true);
});

test('no HostFirmwareComponents when the provisioner reports no components', async () => {
  const bench = newHarness({ fixture: { firmwareComponents: [] } });
  await bench.service.apply(hostManifests('fw-1'));
  await bench.tryReconcile('fw-1', inState('available'));
  assert.equal(await bench.store.getFirmwareObject('HostFirmwareComponents', 'metal3', 'fw-1'), undefined);
  assert.ok(await bench.store.getFirmwareObject('HostFirmwareSettings', 'metal3', 'fw-1'));
});

test('preparing with HostFirmwareSettings passes them (unprepared) and marks them applied', async () => {
  const bench = newHarness();
  const wanted = { ProcVirtualization: 'Disabled', NetworkBootRetryCount: 5 };
  await bench.service.apply([...hostManifests('bios-0'), hfsManifest('bios-0', wanted)]);
  await bench.tryReconcile('bios-0', inState('available'));
  const calls = prepareCalls(bench, 'bios-0');
  const withSettings = calls.filter((c) => Object.keys(c.data.targetFirmwareSettings).length > 0);
  assert.equal(withSettings.length, 1, 'handed over once');
  assert.equal(withSettings[0]?.unprepared, true);
  assert.deepEqual(withSettings[0].data.targetFirmwareSettings, wanted);
  assert.equal(withSettings[0].data.actualFirmwareSettings.ProcVirtualization, 'Enabled', 'actual = status settings');
  const hfs = await storedHfs(bench, 'bios-0');
  assert.equal(hfs.status.settings.ProcVirtualization, 'Disabled');
  assert.equal(hfs.status.settings.NetworkBootRetryCount, '5');
  assert.deepEqual(conditionStates(hfs.status.conditions), { ChangeDetected: 'False', Valid: 'True' });
  assert.equal(condition(hfs.status.conditions, 'ChangeDetected').observedGeneration, hfs.metadata.generation);
  assert.equal(bench.fixture.host('bios-0')?.biosSettings?.ProcVirtualization, 'Disabled');
  // Applied: the available host stays available.
  await bench.reconciler.reconcileOnce('bios-0');
  assert.equal((await bench.host('bios-0')).status.provisioning.state, 'available');
});

test('an available host goes back to preparing when its settings change, and returns', async () => {
  const bench = newHarness();
  await bench.service.apply(hostManifests('bios-1'));
  await bench.tryReconcile('bios-1', inState('available'));
  const outcome = await bench.service.apply([hfsManifest('bios-1', { SriovGlobalEnable: 'Enabled' })]);
  assert.deepEqual(outcome.map((o) => [o.kind, o.action]), [['HostFirmwareSettings', 'configured']]);
  assert.equal((await storedHfs(bench, 'bios-1')).metadata.generation, 2);
  await bench.tryReconcile('bios-1', inState('preparing'));
  await bench.tryReconcile('bios-1', inState('available'));
  const last = prepareCalls(bench, 'bios-1').at(-1);
  assert.deepEqual(last?.data.targetFirmwareSettings, { SriovGlobalEnable: 'Enabled' });
  assert.equal((await storedHfs(bench, 'bios-1')).status.settings.SriovGlobalEnable, 'Enabled');
  const states = (bench.changes.get('bios-1') ?? []).map((c) => c.to);
  assert.deepEqual(states.slice(-2), ['preparing', 'available']);
});

const INVALID: Record<string, { settings: Record<string, string | number>; want: RegExp }> = {
  'unknown attribute': { settings: { Foo: 'bar' }, want: /Setting Foo is invalid, it is not in the Status field/ },
  'read-only attribute': { settings: { AssetTag: 'rack-7' }, want: /Setting AssetTag is invalid, it is ReadOnly/ },
  'integer above the bound': { settings: { NetworkBootRetryCount: 99 }, want: /Setting NetworkBootRetryCount is invalid, integer 99 is above maximum value 20/ },
  'integer given as a word': { settings: { NetworkBootRetryCount: 'three' }, want: /String three entered while integer expected/ },
  'value outside the enumeration': { settings: { ProcVirtualization: 'Maybe' }, want: /Setting ProcVirtualization is invalid, unknown enumeration value - Maybe/ },
  'password attribute': { settings: { SysPassword: 'hunter2' }, want: /Setting SysPassword is invalid, Password fields can't be set/ },
  'one bad setting spoils the valid ones': { settings: { LogicalProc: 'Disabled', ProcVirtualization: 'Maybe' }, want: /unknown enumeration value - Maybe/ },
};

for (const [name, c] of Object.entries(INVALID)) {
  test(`invalid HostFirmwareSettings → Valid=False with the reason, not passed to prepare: ${name}`, async () => {
    const bench = newHarness();
    await bench.service.apply([...hostManifests('bad-0'), hfsManifest('bad-0', c.settings)]);
    await bench.tryReconcile('bad-0', inState('available'));
    const hfs = await storedHfs(bench, 'bad-0');
    assert.deepEqual(conditionStates(hfs.status.conditions), { ChangeDetected: 'True', Valid: 'False' });
    const valid = condition(hfs.status.conditions, 'Valid');
    assert.equal(valid.reason, 'ConfigurationError');
    assert.match(valid.message, c.want);
    assert.doesNotMatch(valid.message, /hunter2/);
    for (const call of prepareCalls(bench, 'bad-0')) assert.deepEqual(call.data.targetFirmwareSettings, {}, 'nothing handed over');
    assert.equal(bench.fixture.host('bad-0')?.biosSettings, undefined, 'the BIOS is untouched');
    const events = await bench.store.listEvents({ host: 'bad-0' });
    assert.ok(events.some((e) => e.reason === 'ValidationFailed' && c.want.test(e.message)), 'ValidationFailed event');
    // Not pending: the available host does not go back to preparing.
    await bench.reconciler.reconcileOnce('bad-0');
    assert.equal((await bench.host('bad-0')).status.provisioning.state, 'available');
  });
}

test('HostFirmwareComponents updates go to prepare once and are recorded as handed over', async () => {
  const bench = newHarness();
  const updates = [{ component: 'bios', url: 'http://fw.example/bios-2.0.bin' }, { component: 'nic:NIC.1', url: 'http://fw.example/nic.bin' }];
  await bench.service.apply([...hostManifests('upd-0'), hfcManifest('upd-0', updates)]);
  await bench.tryReconcile('upd-0', inState('available'));
  const withUpdates = prepareCalls(bench, 'upd-0').filter((c) => c.data.targetFirmwareComponents.length > 0);
  assert.equal(withUpdates.length, 1);
  assert.deepEqual(withUpdates[0]?.data.targetFirmwareComponents, updates);
  assert.equal(withUpdates[0].unprepared, true);
  const hfc = await storedHfc(bench, 'upd-0');
  assert.deepEqual(hfc.status.updates, updates);
  assert.deepEqual(conditionStates(hfc.status.conditions), { ChangeDetected: 'False', Valid: 'True' });
  assert.deepEqual(bench.fixture.host('upd-0')?.firmwareUpdates, updates);
  // A changed URL for one component hands over only that one.
  const next = [updates[0]!, { component: 'nic:NIC.1', url: 'http://fw.example/nic-2.bin' }];
  await bench.service.apply([hfcManifest('upd-0', next)]);
  await bench.tryReconcile('upd-0', inState('preparing'));
  await bench.tryReconcile('upd-0', inState('available'));
  assert.deepEqual(prepareCalls(bench, 'upd-0').at(-1)?.data.targetFirmwareComponents, [next[1]]);
});

test('an unknown firmware component → Valid=False (InvalidComponent), nothing handed over', async () => {
  const bench = newHarness();
  await bench.service.apply([...hostManifests('upd-1'), hfcManifest('upd-1', [{ component: 'gpu', url: 'http://fw.example/gpu.bin' }])]);
  await bench.tryReconcile('upd-1', inState('available'));
  const hfc = await storedHfc(bench, 'upd-1');
  const valid = condition(hfc.status.conditions, 'Valid');
  assert.deepEqual([valid.status, valid.reason], ['False', 'InvalidComponent']);
  assert.match(valid.message, /component gpu is invalid/);
  assert.ok(prepareCalls(bench, 'upd-1').every((c) => c.data.targetFirmwareComponents.length === 0));
  assert.equal(hfc.status.updates, undefined);
});

test('a failed prepare forgets the handed-over updates and hands them over again on the retry', async () => {
  const bench = newHarness();
  const updates = [{ component: 'bmc', url: 'http://fw.example/bmc.bin' }];
  await bench.service.apply([...hostManifests('upd-2'), hfcManifest('upd-2', updates)]);
  bench.fixture.failNext('prepare', 'firmware update task failed', 'upd-2');
  let host = await bench.tryReconcile('upd-2', (h) => h.status.errorType === 'preparation error');
  assert.equal((await storedHfc(bench, 'upd-2')).status.updates, undefined);
  host = await bench.tryReconcile('upd-2', inState('available'));
  assert.equal(host.status.errorType, '');
  const last = bench.fixture.callsFor('upd-2', 'prepare').filter((c) => (c.args.data as PrepareData).targetFirmwareComponents.length > 0).at(-1);
  assert.equal(last?.args.restartOnFailure, true);
  assert.deepEqual((await storedHfc(bench, 'upd-2')).status.updates, updates);
});

test('deleting the host removes its firmware objects and the schema nobody else uses', async () => {
  const bench = newHarness();
  await bench.service.apply([...hostManifests('gone-0'), hfsManifest('gone-0', { LogicalProc: 'Disabled' })]);
  await bench.service.apply([...hostManifests('keep-0')]);
  await bench.tryReconcile('gone-0', inState('available'));
  await bench.tryReconcile('keep-0', inState('available'));
  const schemaName = (await storedHfs(bench, 'gone-0')).status.schema?.name ?? '';
  assert.equal((await storedHfs(bench, 'keep-0')).status.schema?.name, schemaName, 'same hardware, one shared schema');
  await bench.service.deleteHost('gone-0');
  await bench.reconcileUntilDeleted('gone-0');
  assert.equal(await bench.store.getFirmwareObject('HostFirmwareSettings', 'metal3', 'gone-0'), undefined);
  assert.equal(await bench.store.getFirmwareObject('HostFirmwareComponents', 'metal3', 'gone-0'), undefined);
  assert.ok(await bench.store.getFirmwareObject('FirmwareSchema', 'metal3', schemaName), 'still used by keep-0');
  await bench.service.deleteHost('keep-0');
  await bench.reconcileUntilDeleted('keep-0');
  assert.deepEqual(await bench.store.listFirmwareObjects('FirmwareSchema'), []);
});
