/**
 * Servicing of provisioned hosts over the fixture provisioner (docs/metal3-mapping.md, "Servicing"):
 * without a HostUpdatePolicy allowing it a reboot only reboots; with `onReboot` pending valid
 * changes are applied while the host is off for the reboot (operationalStatus `servicing`),
 * then the host is powered on again; a failure is a `servicing error` retried with
 * restartOnFailure; a spec cleared after a failure aborts (hasFirmwareSpec false).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServicingData } from '../../../agent/provisioner/index.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { hostManifests, newHarness, TEST_IMAGE, type Harness } from '../../helpers/host-harness.js';
import { conditionStates, hfcManifest, hfsManifest, hupManifest, storedHfc, storedHfs } from './firmware-helpers.js';

const BIOS_UPDATE = { component: 'bios', url: 'http://fw.example/bios-2.0.bin' };

/** A provisioned, powered-on host named `name`. */
async function provisioned(bench: Harness, name: string): Promise<BareMetalHost> {
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  return bench.tryReconcile(name, (h) => h.status.provisioning.state === 'provisioned' && h.status.poweredOn && h.status.operationalStatus === 'OK');
}

function serviceCalls(bench: Harness, name: string): { unprepared: unknown; restartOnFailure: unknown; data: ServicingData }[] {
  return bench.fixture.callsFor(name, 'service').map((c) => ({ unprepared: c.args.unprepared, restartOnFailure: c.args.restartOnFailure, data: c.args.data as ServicingData }));
}

/** Steps until `done`, recording every operationalStatus seen on the way. */
async function stepRecording(bench: Harness, name: string, done: (h: BareMetalHost) => boolean, seen: Set<string>): Promise<BareMetalHost> {
  return bench.tryReconcile(name, (h) => {
    seen.add(h.status.operationalStatus);
    return done(h);
  });
}

const backOn = (h: BareMetalHost): boolean => h.status.poweredOn && h.status.operationalStatus === 'OK' && h.metadata.annotations?.['reboot.metal3.io'] === undefined;

const CASES: Record<string, {
  policy?: { firmwareSettings?: string; firmwareUpdates?: string };
  serviced: boolean;
  settingsApplied: boolean;
  updatesApplied: boolean;
}> = {
  'no HostUpdatePolicy: the reboot only reboots': { serviced: false, settingsApplied: false, updatesApplied: false },
  'a policy without onReboot: the reboot only reboots': { policy: { firmwareSettings: 'onPreparing' }, serviced: false, settingsApplied: false, updatesApplied: false },
  'firmwareSettings and firmwareUpdates onReboot: both applied while the host is off': {
    policy: { firmwareSettings: 'onReboot', firmwareUpdates: 'onReboot' }, serviced: true, settingsApplied: true, updatesApplied: true,
  },
  'firmwareSettings onReboot only: settings applied, updates wait': { policy: { firmwareSettings: 'onReboot' }, serviced: true, settingsApplied: true, updatesApplied: false },
  'firmwareUpdates onReboot only: updates applied, settings wait': { policy: { firmwareUpdates: 'onReboot' }, serviced: true, settingsApplied: false, updatesApplied: true },
};

for (const [title, c] of Object.entries(CASES)) {
  test(`servicing on reboot: ${title}`, async () => {
    const bench = newHarness();
    const name = 'svc-0';
    await provisioned(bench, name);
    const docs = [hfsManifest(name, { ProcVirtualization: 'Disabled' }), hfcManifest(name, [BIOS_UPDATE])];
    if (c.policy !== undefined) docs.push(hupManifest(name, c.policy));
    await bench.service.apply(docs);
    // Pending changes alone do nothing to a running provisioned host.
    for (let i = 0; i < 3; i++) await bench.reconciler.reconcileOnce(name);
    assert.equal(serviceCalls(bench, name).length, 0);
    assert.deepEqual(conditionStates((await storedHfs(bench, name)).status.conditions), { ChangeDetected: 'True', Valid: 'True' });
    assert.equal((await bench.host(name)).status.poweredOn, true);

    await bench.service.hostAction(name, { action: 'reboot', mode: 'soft' });
    const seen = new Set<string>();
    await stepRecording(bench, name, (h) => !h.status.poweredOn, seen);
    const host = await stepRecording(bench, name, backOn, seen);
    assert.equal(host.status.provisioning.state, 'provisioned', 'never left provisioned');
    assert.equal(host.status.errorType, '');
    assert.equal(seen.has('servicing'), c.serviced);
    const calls = serviceCalls(bench, name);
    assert.equal(calls.length > 0, c.serviced);
    if (c.serviced) {
      assert.equal(calls[0]?.unprepared, true);
      assert.equal(calls[0].restartOnFailure, false);
      assert.equal(calls[0].data.hasFirmwareSpec, true);
      assert.deepEqual(calls[0].data.targetFirmwareSettings, c.settingsApplied ? { ProcVirtualization: 'Disabled' } : {});
      assert.deepEqual(calls[0].data.targetFirmwareComponents, c.updatesApplied ? [BIOS_UPDATE] : []);
    }
    const hfs = await storedHfs(bench, name);
    assert.equal(hfs.status.settings.ProcVirtualization, c.settingsApplied ? 'Disabled' : 'Enabled');
    assert.equal(conditionStates(hfs.status.conditions).ChangeDetected, c.settingsApplied ? 'False' : 'True');
    const hfc = await storedHfc(bench, name);
    assert.deepEqual(hfc.status.updates, c.updatesApplied ? [BIOS_UPDATE] : undefined);
    // The prepare path is never taken on a provisioned host.
    assert.ok(!bench.fixture.callsFor(name, 'prepare').some((p) => p.args.unprepared === true && Object.keys((p.args.data as ServicingData).targetFirmwareSettings).length > 0));
  });
}

test('servicing waits for the reboot, sets operationalStatus servicing before calling the provisioner', async () => {
  const bench = newHarness();
  const name = 'svc-1';
  await provisioned(bench, name);
  await bench.service.apply([hfsManifest(name, { LogicalProc: 'Disabled' }), hupManifest(name, { firmwareSettings: 'onReboot' })]);
  await bench.service.hostAction(name, { action: 'reboot', mode: 'hard' });
  let host = await bench.tryReconcile(name, (h) => h.status.operationalStatus === 'servicing');
  assert.equal(host.status.poweredOn, false);
  assert.equal(serviceCalls(bench, name).length, 0, 'yields once before the first Service call');
  assert.equal(bench.fixture.callsFor(name, 'powerOff').at(-1)?.args.rebootMode, 'hard');
  host = await bench.tryReconcile(name, backOn);
  const events = (await bench.store.listEvents({ host: name })).map((e) => e.reason);
  assert.ok(events.includes('ServicingRequested') && events.includes('ServicingFinished'), events.join(' '));
  assert.ok(events.indexOf('ServicingFinished') < events.lastIndexOf('PowerOn'), 'powered on after servicing');
});

test('a servicing failure is a servicing error, retried with restartOnFailure, then OK', async () => {
  const bench = newHarness();
  const name = 'svc-2';
  await provisioned(bench, name);
  await bench.service.apply([hfsManifest(name, { SriovGlobalEnable: 'Enabled' }), hupManifest(name, { firmwareSettings: 'onReboot' })]);
  bench.fixture.failNext('service', 'BIOS settings job failed on the BMC', name);
  await bench.service.hostAction(name, { action: 'reboot', mode: 'soft' });
  let host = await bench.tryReconcile(name, (h) => h.status.errorType === 'servicing error');
  assert.equal(host.status.operationalStatus, 'error');
  assert.equal(host.status.errorCount, 1);
  assert.match(host.status.errorMessage, /BIOS settings job failed/);
  assert.equal(host.status.poweredOn, false, 'stays off while servicing failed');
  host = await bench.tryReconcile(name, backOn);
  const calls = serviceCalls(bench, name);
  assert.equal(calls.at(-2)?.restartOnFailure, true, 'the retry restarts the failed servicing');
  assert.equal(calls.at(-2)?.unprepared, true);
  assert.equal(host.status.errorType, '');
  assert.equal((await storedHfs(bench, name)).status.settings.SriovGlobalEnable, 'Enabled');
});

test('clearing the spec after a servicing failure aborts it (hasFirmwareSpec false) and the host comes back', async () => {
  const bench = newHarness();
  const name = 'svc-3';
  await provisioned(bench, name);
  await bench.service.apply([
    hfsManifest(name, { ProcVirtualization: 'Disabled' }), hfcManifest(name, [BIOS_UPDATE]),
    hupManifest(name, { firmwareSettings: 'onReboot', firmwareUpdates: 'onReboot' }),
  ]);
  bench.fixture.failNext('service', 'firmware image rejected', name);
  await bench.service.hostAction(name, { action: 'reboot', mode: 'soft' });
  await bench.tryReconcile(name, (h) => h.status.errorType === 'servicing error');
  assert.equal((await storedHfc(bench, name)).status.updates, undefined, 'failed updates are not recorded as handed over');
  await bench.service.apply([hfsManifest(name, {}), hfcManifest(name, [])]);
  const host = await bench.tryReconcile(name, backOn);
  const aborting = serviceCalls(bench, name).slice(1);
  assert.ok(aborting.length > 0);
  for (const call of aborting) {
    assert.equal(call.data.hasFirmwareSpec, false);
    assert.equal(call.unprepared, false);
    assert.deepEqual(call.data.targetFirmwareSettings, {});
  }
  assert.equal(aborting[0]?.restartOnFailure, true);
  assert.equal(host.status.errorType, '');
  assert.equal(bench.fixture.host(name)?.biosSettings, undefined, 'nothing was applied');
});

test('a servicing error keeps the host in the servicing check even though it is not mid-reboot any more', async () => {
  const bench = newHarness();
  const name = 'svc-4';
  await provisioned(bench, name);
  await bench.service.apply([hfsManifest(name, { LogicalProc: 'Disabled' }), hupManifest(name, { firmwareSettings: 'onReboot' })]);
  bench.fixture.failAlways('service', 'BMC refuses', name);
  await bench.service.hostAction(name, { action: 'reboot', mode: 'soft' });
  await bench.tryReconcile(name, (h) => h.status.errorType === 'servicing error');
  for (let i = 0; i < 4; i++) await bench.reconciler.reconcileOnce(name);
  const host = await bench.host(name);
  assert.equal(host.status.poweredOn, false, 'not powered on while servicing keeps failing');
  assert.ok(host.status.errorCount >= 2, 'retried after each backoff');
  assert.ok(serviceCalls(bench, name).slice(1).every((c) => c.restartOnFailure === true));
});
