import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fixture, FIXTURE_DELAYS_MS } from '../../../agent/provisioner/fixture.js';
import { isProvisionerError, ProvisionerErrorCode, TransientProvisionerError, type Provisioner, type Result } from '../../../agent/provisioner/index.js';
import { accessData, eventRecorder, hostData, inspectData, prepareData, provisionData, servicingData } from './host-data.js';

/** `dirty@<ms>`, `complete` or `failed:<message>`: one result in a sequence table. */
function summarize(result: Result): string {
  if (result.errorMessage !== '') return `failed:${result.errorMessage}`;
  return result.dirty ? `dirty@${result.requeueAfterMs}` : 'complete';
}

async function provisionerFor(fixture: Fixture, name = 'node-0', provisionerID = 'fixture-uid-node-0'): Promise<Provisioner> {
  return fixture.newProvisioner(hostData(name, { provisionerID }), () => undefined);
}

type Step = (p: Provisioner) => Promise<Result>;
const steps = {
  adopt: (p) => p.adopt({ state: 'provisioned' }, false),
  provisionA: (p) => p.provision(provisionData('http://images.example/a.qcow2'), false),
  provisionB: (p) => p.provision(provisionData('http://images.example/b.qcow2'), false),
  customDeploy: (p) => p.provision(provisionData('', 'install_coreos'), false),
  deprovision: (p) => p.deprovision(false, 'metadata'),
  delete: (p) => p.delete(),
  detach: (p) => p.detach(false),
  powerOn: (p) => p.powerOn(false),
  powerOff: (p) => p.powerOff('soft', false, 'metadata'),
  prepareUnprepared: async (p) => (await p.prepare(prepareData, true, false)).result,
  serviceUnprepared: async (p) => (await p.service(servicingData, true, false)).result,
  serviceNothing: async (p) => (await p.service(servicingData, false, false)).result,
} satisfies Record<string, Step>;

/** Each case: fixture options, then the sequence of calls and the expected result of each. */
const sequences: Record<string, { options?: ConstructorParameters<typeof Fixture>[0]; calls: [keyof typeof steps, string][] }> = {
  'adopt is dirty once (3 s) then a no-op': {
    calls: [['adopt', 'dirty@3000'], ['adopt', 'complete'], ['adopt', 'complete']],
  },
  'provision records the image, dirty 10 s, then completes': {
    calls: [['provisionA', 'dirty@10000'], ['provisionA', 'complete'], ['provisionA', 'complete']],
  },
  'a new image starts provisioning again': {
    calls: [['provisionA', 'dirty@10000'], ['provisionA', 'complete'], ['provisionB', 'dirty@10000'], ['provisionB', 'complete']],
  },
  'provisionDirtyCalls lengthens provisioning': {
    options: { durations: { provisionDirtyCalls: 3 } },
    calls: [['provisionA', 'dirty@10000'], ['provisionA', 'dirty@10000'], ['provisionA', 'dirty@10000'], ['provisionA', 'complete']],
  },
  'custom deploy provisions like an image': {
    calls: [['customDeploy', 'dirty@10000'], ['customDeploy', 'complete']],
  },
  'deprovision clears the image (dirty) then completes': {
    calls: [['provisionA', 'dirty@10000'], ['provisionA', 'complete'], ['deprovision', 'dirty@10000'], ['deprovision', 'complete'], ['deprovision', 'complete']],
  },
  'deprovision clears image and custom deploy one call each': {
    calls: [['provisionA', 'dirty@10000'], ['customDeploy', 'dirty@10000'], ['deprovision', 'dirty@10000'], ['deprovision', 'dirty@10000'], ['deprovision', 'complete']],
  },
  'deprovision of a never-provisioned host completes at once (upstream)': {
    calls: [['deprovision', 'complete']],
  },
  'deprovisionDirtyCalls adds dirty calls': {
    options: { durations: { deprovisionDirtyCalls: 2 } },
    calls: [['provisionA', 'dirty@10000'], ['deprovision', 'dirty@10000'], ['deprovision', 'dirty@10000'], ['deprovision', 'complete'], ['deprovision', 'complete']],
  },
  'delete is dirty once then complete': {
    calls: [['delete', 'dirty@0'], ['delete', 'complete']],
  },
  'detach is dirty once then complete': {
    calls: [['detach', 'dirty@0'], ['detach', 'complete']],
  },
  'power on and off flip power, dirty once each': {
    calls: [['powerOn', 'dirty@0'], ['powerOn', 'complete'], ['powerOff', 'dirty@0'], ['powerOff', 'complete']],
  },
  'power off of a host already off completes': {
    calls: [['powerOff', 'complete']],
  },
  'disablePowerOff: power off reboots and is always dirty': {
    options: { disablePowerOff: true, initiallyPoweredOn: true },
    calls: [['powerOff', 'dirty@0'], ['powerOff', 'dirty@0'], ['powerOn', 'complete']],
  },
  'prepare completes immediately': {
    calls: [['prepareUnprepared', 'complete']],
  },
  'service with work is dirty, without work complete': {
    calls: [['serviceUnprepared', 'dirty@5000'], ['serviceNothing', 'complete']],
  },
  'delayScale scales every delay': {
    options: { delayScale: 0.001 },
    calls: [['adopt', 'dirty@3'], ['provisionA', 'dirty@10']],
  },
};

for (const [name, c] of Object.entries(sequences)) {
  test(`fixture sequence: ${name}`, async () => {
    const fixture = new Fixture(c.options);
    const got: string[] = [];
    for (const [step] of c.calls) got.push(summarize(await steps[step](await provisionerFor(fixture))));
    assert.deepEqual(got, c.calls.map(([, want]) => want));
  });
}

test('register: no provID allocates a unique id, dirty 5 s, event Registered; then a no-op', async () => {
  const fixture = new Fixture();
  const { publish, events } = eventRecorder();
  const first = await (await fixture.newProvisioner(hostData('node-0'), publish)).validateManagementAccess(accessData(), false, false);
  assert.equal(first.provID, 'fixture-uid-node-0');
  assert.equal(summarize(first.result), `dirty@${FIXTURE_DELAYS_MS.register}`);
  assert.deepEqual(events, ['Registered: Registered new host']);
  const other = await (await fixture.newProvisioner(hostData('node-1'), publish)).validateManagementAccess(accessData(), false, false);
  assert.equal(other.provID, 'fixture-uid-node-1');
  const again = await (await fixture.newProvisioner(hostData('node-0', { provisionerID: first.provID }), publish)).validateManagementAccess(accessData({ state: 'available' }), true, false);
  assert.deepEqual({ provID: again.provID, result: summarize(again.result) }, { provID: 'fixture-uid-node-0', result: 'complete' });
  assert.equal(fixture.host('node-0')?.provID, 'fixture-uid-node-0');
  assert.equal(events.length, 2);
});

test('inspect: started + dirty 2 s, then canned details; refresh starts again', async () => {
  const fixture = new Fixture();
  const { publish, events } = eventRecorder();
  const p = await fixture.newProvisioner(hostData('node-0', { provisionerID: 'x' }), publish);
  const first = await p.inspectHardware(inspectData, false, false, false);
  assert.deepEqual({ r: summarize(first.result), started: first.started, details: first.details }, { r: 'dirty@2000', started: true, details: undefined });
  assert.equal(fixture.host('node-0')?.inspectionStarted, true);
  const second = await p.inspectHardware(inspectData, false, false, false);
  assert.deepEqual({ r: summarize(second.result), started: second.started }, { r: 'complete', started: false });
  assert.equal(second.details?.ramMebibytes, 128 * 1024);
  assert.deepEqual(events, ['InspectionComplete: Hardware inspection completed']);
  const third = await p.inspectHardware(inspectData, false, false, false);
  assert.deepEqual(third.details, second.details, 'details are stable');
  const refreshed = await p.inspectHardware(inspectData, false, true, false);
  assert.deepEqual({ r: summarize(refreshed.result), started: refreshed.started }, { r: 'dirty@2000', started: true });
});

test('inspect: inspectDirtyCalls sets how many dirty calls come before details', async () => {
  const fixture = new Fixture({ durations: { inspectDirtyCalls: 3 } });
  const p = await provisionerFor(fixture);
  const got: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await p.inspectHardware(inspectData, false, false, false);
    got.push(`${summarize(r.result)}${r.started ? '+started' : ''}${r.details ? '+details' : ''}`);
  }
  assert.deepEqual(got, ['dirty@2000+started', 'dirty@2000', 'dirty@2000', 'complete+details']);
});

test('canned hardware details look like a real server and carry the boot MAC', async () => {
  const fixture = new Fixture({ durations: { inspectDirtyCalls: 0 } });
  const { details } = await (await provisionerFor(fixture)).inspectHardware(inspectData, false, false, false);
  assert.ok(details);
  assert.equal(details.ramMebibytes, 131072);
  const nics = details.nics ?? [];
  assert.equal(nics.length, 2);
  assert.equal(nics[0]?.mac, '00:5c:52:31:3a:9c');
  assert.equal(nics[0].pxe, true);
  assert.ok(nics.every((n) => n.lldp?.switchID !== undefined && n.lldp.portID !== undefined));
  assert.deepEqual(details.storage?.map((d) => [d.model, d.sizeBytes]), [['Dell CFJ61', 93 * 1024 ** 4], ['Dell CFJ61', 93 * 1024 ** 4]]);
  assert.deepEqual([details.cpu.arch, details.cpu.model, details.cpu.clockMegahertz], ['x86_64', 'FancyPants CPU', 3000]);
  assert.equal(details.systemVendor.manufacturer, 'Dell Inc.');
  assert.equal(details.hostname, 'node-0');
});

test('power state is per host and reported by updateHardwareState', async () => {
  const fixture = new Fixture();
  const a = await provisionerFor(fixture, 'node-a');
  const b = await provisionerFor(fixture, 'node-b');
  await a.powerOn(false);
  assert.deepEqual(await a.updateHardwareState(), { poweredOn: true });
  assert.deepEqual(await b.updateHardwareState(), { poweredOn: false });
  fixture.disablePowerOff = true;
  await a.powerOff('hard', true, 'metadata');
  assert.deepEqual([fixture.host('node-a')?.poweredOn, fixture.host('node-a')?.rebootCalled], [true, true]);
});

test('registration with disablePowerOff makes power off reboot for that host', async () => {
  const fixture = new Fixture({ initiallyPoweredOn: true });
  const p = await provisionerFor(fixture);
  await p.validateManagementAccess(accessData({ disablePowerOff: true }), false, false);
  assert.equal(summarize(await p.powerOff('soft', false, 'metadata')), 'dirty@0');
  assert.equal(fixture.host('node-0')?.rebootCalled, true);
  assert.equal(fixture.host('node-0')?.poweredOn, true);
});

test('prepare and service report started = unprepared', async () => {
  const p = await provisionerFor(new Fixture());
  assert.equal((await p.prepare(prepareData, true, false)).started, true);
  assert.equal((await p.prepare(prepareData, false, false)).started, false);
  assert.equal((await p.service(servicingData, true, false)).started, true);
  assert.equal((await p.service(servicingData, false, false)).started, false);
});

test('re-registering after detach re-attaches and adoption runs again', async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  await p.adopt({ state: 'provisioned' }, false);
  await p.detach(false);
  assert.equal(fixture.host('node-0')?.detached, true);
  await p.validateManagementAccess(accessData({ state: 'provisioned' }), false, false);
  assert.equal(fixture.host('node-0')?.detached, false);
  assert.equal(summarize(await p.adopt({ state: 'provisioned' }, false)), 'dirty@3000');
});

test('tryInit counts becomeReadyCounter down across hosts', async () => {
  const fixture = new Fixture({ becomeReadyCounter: 3 });
  const got = [];
  for (const name of ['a', 'b', 'c', 'd']) got.push(await (await provisionerFor(fixture, name)).tryInit());
  assert.deepEqual(got, [false, false, true, true]);
});

test('hasCapacity: boolean or function of the host name', async () => {
  const fixture = new Fixture({ hasCapacity: false });
  assert.equal(await (await provisionerFor(fixture)).hasCapacity(), false);
  fixture.hasCapacity = (name) => name === 'lucky';
  assert.equal(await (await provisionerFor(fixture, 'lucky')).hasCapacity(), true);
  assert.equal(await (await provisionerFor(fixture, 'other')).hasCapacity(), false);
});

test('formats, firmware, subscriptions and data images', async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  assert.equal(await p.preprovisioningImageFormats(), null);
  fixture.imageFormats = ['iso', 'initrd'];
  assert.deepEqual(await p.preprovisioningImageFormats(), ['iso', 'initrd']);
  const withSchema = await p.getFirmwareSettings(true);
  assert.equal(withSchema.settings.ProcVirtualization, 'Enabled');
  assert.equal(withSchema.schema?.ProcVirtualization?.attribute_type, 'Enumeration');
  assert.equal((await p.getFirmwareSettings(false)).schema, undefined);
  fixture.firmwareComponents = [{ component: 'bmc', initialVersion: '1.0' }];
  assert.deepEqual(await p.getFirmwareComponents(), [{ component: 'bmc', initialVersion: '1.0' }]);
  const sub = { metadata: { name: 'events', namespace: 'metal3' }, spec: { hostName: 'node-0', destination: 'https://hooks.example/', context: '' }, status: {} as { subscriptionID?: string } };
  assert.equal(summarize(await p.addBMCEventSubscriptionForNode(sub, [])), 'complete');
  assert.equal(sub.status.subscriptionID, 'fixture-sub-metal3-events');
  assert.deepEqual(fixture.host('node-0')?.subscriptions, ['fixture-sub-metal3-events']);
  await p.removeBMCEventSubscriptionForNode(sub);
  assert.deepEqual(fixture.host('node-0')?.subscriptions, []);
  assert.deepEqual(await p.isDataImageReady(), { isNodeBusy: false });
  await p.attachDataImage('http://images.example/data.iso');
  assert.equal(fixture.host('node-0')?.dataImageURL, 'http://images.example/data.iso');
  await p.detachDataImage();
  assert.equal(fixture.host('node-0')?.dataImageURL, undefined);
});

test('every call is recorded with its flags by name', async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  await p.validateManagementAccess(accessData(), true, false);
  await p.inspectHardware(inspectData, true, true, false);
  await p.prepare(prepareData, true, true);
  await p.provision(provisionData('http://images.example/a.qcow2'), true);
  await p.deprovision(false, 'disabled');
  await p.powerOff('hard', true, 'metadata');
  await p.detach(true);
  await (await provisionerFor(fixture, 'node-1')).powerOn(false);
  const flags = fixture.calls.map(({ host, method, args }) => {
    const { data: _data, ...rest } = args;
    return { host, method, args: rest };
  });
  assert.deepEqual(flags, [
    { host: 'node-0', method: 'validateManagementAccess', args: { credentialsChanged: true, restartOnFailure: false } },
    { host: 'node-0', method: 'inspectHardware', args: { restartOnFailure: true, refresh: true, forceReboot: false } },
    { host: 'node-0', method: 'prepare', args: { unprepared: true, restartOnFailure: true } },
    { host: 'node-0', method: 'provision', args: { forceReboot: true } },
    { host: 'node-0', method: 'deprovision', args: { restartOnFailure: false, automatedCleaningMode: 'disabled' } },
    { host: 'node-0', method: 'powerOff', args: { rebootMode: 'hard', force: true, automatedCleaningMode: 'metadata' } },
    { host: 'node-0', method: 'detach', args: { force: true } },
    { host: 'node-1', method: 'powerOn', args: { force: false } },
  ]);
  assert.equal(fixture.calls[1]?.args.data, inspectData);
  assert.deepEqual(fixture.callsFor('node-0', 'detach').length, 1);
  assert.equal(fixture.callsFor('node-1').length, 1);
  fixture.clearCalls();
  assert.equal(fixture.calls.length, 0);
});

test('failNext fails one call with errorMessage and leaves state alone', async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  fixture.failNext('provision', 'image checksum mismatch');
  assert.equal(summarize(await steps.provisionA(p)), 'failed:image checksum mismatch');
  assert.equal(fixture.host('node-0')?.image, undefined);
  assert.equal(summarize(await steps.provisionA(p)), 'dirty@10000');
  assert.equal(fixture.callsFor('node-0', 'provision').length, 2, 'failed calls are recorded too');
});

test('failure knobs per result type', async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  fixture.failNext('validateManagementAccess', 'bad credentials');
  const reg = await p.validateManagementAccess(accessData(), false, false);
  assert.deepEqual([summarize(reg.result), reg.provID], ['failed:bad credentials', 'fixture-uid-node-0']);
  fixture.failNext('inspectHardware', 'inspection failed');
  const insp = await p.inspectHardware(inspectData, false, false, false);
  assert.deepEqual([summarize(insp.result), insp.started, insp.details], ['failed:inspection failed', false, undefined]);
  fixture.failNext('prepare', 'RAID failed');
  assert.deepEqual(await p.prepare(prepareData, true, false).then((r) => [summarize(r.result), r.started]), ['failed:RAID failed', false]);
  fixture.failNext('isDataImageReady', 'attach failed');
  assert.deepEqual(await p.isDataImageReady(), { isNodeBusy: false, nodeError: 'attach failed' });
  fixture.failNext('updateHardwareState', 'BMC unreachable');
  await assert.rejects(p.updateHardwareState(), (err) => err instanceof TransientProvisionerError && err.message === 'BMC unreachable');
});

test('failAlways keeps failing until clearFailures; failNext takes precedence once', async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  fixture.failAlways('powerOn', 'power failure');
  fixture.failNext('powerOn', 'first');
  const got = [];
  for (let i = 0; i < 3; i++) got.push(summarize(await p.powerOn(false)));
  assert.deepEqual(got, ['failed:first', 'failed:power failure', 'failed:power failure']);
  fixture.clearFailures();
  assert.equal(summarize(await p.powerOn(false)), 'dirty@0');
});

test("'transient' throws a TransientProvisionerError, as a rejected promise", async () => {
  const fixture = new Fixture();
  const p = await provisionerFor(fixture);
  fixture.failNext('deprovision', 'transient');
  const pending = p.deprovision(false, 'metadata');
  await assert.rejects(pending, (err) => isProvisionerError(err, ProvisionerErrorCode.transient));
  assert.equal(summarize(await p.deprovision(false, 'metadata')), 'complete');
  fixture.failNext('newProvisioner', 'transient');
  await assert.rejects(fixture.newProvisioner(hostData('node-0'), () => undefined), TransientProvisionerError);
});

test('failures can be limited to one host', async () => {
  const fixture = new Fixture();
  fixture.failAlways('adopt', 'adoption failed', 'node-b');
  assert.equal(summarize(await steps.adopt(await provisionerFor(fixture, 'node-a'))), 'dirty@3000');
  assert.equal(summarize(await steps.adopt(await provisionerFor(fixture, 'node-b'))), 'failed:adoption failed');
});

test('state is keyed by uid: a recreated host with a new uid starts fresh', async () => {
  const fixture = new Fixture();
  await (await fixture.newProvisioner(hostData('node-0', { uid: 'u1' }), () => undefined)).powerOn(false);
  assert.equal(fixture.host('u1')?.poweredOn, true);
  await (await fixture.newProvisioner(hostData('node-0', { uid: 'u2' }), () => undefined)).updateHardwareState();
  assert.equal(fixture.host('u2')?.poweredOn, false);
  assert.equal(fixture.hosts().length, 2);
});
