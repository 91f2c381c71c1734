/**
 * State-machine table tests over the fixture provisioner: every path of
 * docs/metal3-mapping.md, "States" to "Power", asserting states, operationalStatus, errors, operation history and the
 * provisioner calls with their flags.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAllowedTransition } from '../../../agent/host/states.js';
import type { BareMetalHost, ProvisioningState } from '../../../agent/host/types.js';
import { hostManifests, newHarness, TEST_IMAGE, type Harness } from '../../helpers/host-harness.js';

const inState = (state: ProvisioningState) => (h: BareMetalHost) => h.status.provisioning.state === state;

function states(bench: Harness, name: string): string[] {
  return (bench.changes.get(name) ?? []).map((c) => c.to);
}

function assertTransitionsAllowed(bench: Harness): void {
  for (const [name, changes] of bench.changes) {
    for (const c of changes) assert.ok(isAllowedTransition(c.from, c.to), `${name}: ${c.from} → ${c.to} is not in the table`);
  }
}

function methods(bench: Harness, name: string): string[] {
  return bench.fixture.callsFor(name).map((c) => c.method);
}

async function registerAvailable(bench: Harness, name: string, spec: Record<string, unknown> = {}): Promise<BareMetalHost> {
  await bench.service.apply(hostManifests(name, spec));
  return bench.tryReconcile(name, inState('available'));
}

test('register → inspect → prepare → available → provision → provisioned → deprovision → available → delete', async () => {
  const bench = newHarness();
  const name = 'worker-0';
  await bench.service.apply(hostManifests(name));
  let host = await bench.tryReconcile(name, inState('available'));
  assert.deepEqual(states(bench, name), ['registering', 'inspecting', 'preparing', 'available']);
  assert.equal(host.status.operationalStatus, 'OK');
  assert.equal(host.status.errorCount, 0);
  assert.match(host.status.provisioning.ID, /^fixture-/);
  assert.equal(host.status.goodCredentials.credentials?.name, `${name}-bmc-secret`);
  assert.equal(host.status.hardware?.cpu.arch, 'x86_64');
  assert.equal(host.status.hardwareProfile, 'unknown');
  for (const op of ['register', 'inspect'] as const) {
    assert.notEqual(host.status.operationHistory[op].start, '', `${op} started`);
    assert.notEqual(host.status.operationHistory[op].end, '', `${op} ended`);
  }
  assert.ok(host.metadata.finalizers?.includes('baremetalhost.metal3.io'));
  // The first registration pushes credentials; later ones do not.
  const registrations = bench.fixture.callsFor(name, 'validateManagementAccess');
  assert.equal(registrations[0]?.args.credentialsChanged, true);
  assert.equal(registrations.at(-1)?.args.credentialsChanged, false);
  const inspect = bench.fixture.callsFor(name, 'inspectHardware')[0];
  assert.deepEqual([inspect?.args.restartOnFailure, inspect?.args.refresh, inspect?.args.forceReboot], [false, false, false]);
  // Nothing to apply at first prepare but the default root hints: prepare runs with unprepared=true once.
  assert.equal(bench.fixture.callsFor(name, 'prepare')[0]?.args.unprepared, true);
  assert.deepEqual(host.status.provisioning.rootDeviceHints, { deviceName: '/dev/sda' });

  // Power follows spec.online in available.
  host = await bench.tryReconcile(name, (h) => h.status.poweredOn);

  // Provision.
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  host = await bench.tryReconcile(name, inState('provisioned'));
  assert.equal(host.status.provisioning.image.url, TEST_IMAGE.url);
  assert.equal(host.status.errorCount, 0);
  assert.notEqual(host.status.operationHistory.provision.end, '');
  assert.equal(bench.fixture.callsFor(name, 'provision')[0]?.args.forceReboot, false);

  // Steady state: adopt is called, no transition.
  bench.fixture.clearCalls();
  await bench.reconciler.reconcileOnce(name);
  assert.ok(methods(bench, name).includes('adopt'));
  assert.equal((await bench.host(name)).status.provisioning.state, 'provisioned');

  // Remove the image: deprovision back to available.
  await bench.service.apply(hostManifests(name));
  host = await bench.tryReconcile(name, inState('available'));
  assert.equal(host.status.provisioning.image.url, '');
  assert.equal(host.status.provisioning.rootDeviceHints, undefined, 'hints are re-applied by the next prepare');
  assert.notEqual(host.status.operationHistory.deprovision.end, '');
  const deprovision = bench.fixture.callsFor(name, 'deprovision')[0];
  assert.deepEqual([deprovision?.args.restartOnFailure, deprovision?.args.automatedCleaningMode], [false, 'metadata']);

  // Delete: power off first, then the provisioner forgets the host.
  await bench.service.deleteHost(name);
  await bench.reconcileUntilDeleted(name);
  assert.deepEqual(states(bench, name).slice(-2), ['powering off before delete', 'deleting']);
  assert.ok(bench.fixture.host(name)?.deleted);
  assertTransitionsAllowed(bench);
});

test('externally provisioned hosts are adopted, not provisioned; clearing the flag makes them provisioned', async () => {
  const bench = newHarness();
  const name = 'ext-0';
  await bench.service.apply(hostManifests(name, { externallyProvisioned: true, image: TEST_IMAGE }));
  const host = await bench.tryReconcile(name, inState('externally provisioned'));
  assert.deepEqual(states(bench, name), ['registering', 'externally provisioned']);
  await bench.reconciler.reconcileOnce(name);
  await bench.reconciler.reconcileOnce(name);
  assert.ok(methods(bench, name).includes('adopt'));
  assert.ok(!methods(bench, name).includes('inspectHardware'));
  assert.ok(!methods(bench, name).includes('provision'));
  assert.equal(host.status.hardware, undefined);
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  const after = await bench.tryReconcile(name, inState('provisioned'));
  assert.equal(after.status.provisioning.image.url, TEST_IMAGE.url);
  assert.ok(!methods(bench, name).includes('provision'), 'no reprovisioning');
  assertTransitionsAllowed(bench);
});

test('a provisioning error goes to deprovisioning with the error kept, then retries until the limit', async () => {
  const bench = newHarness({ maxProvisioningRetries: 2 });
  const name = 'fail-0';
  await registerAvailable(bench, name);
  bench.fixture.failAlways('provision', 'image write failed: no space left on device', name);
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  let host = await bench.tryReconcile(name, (h) => h.status.errorType === 'provisioning error');
  assert.equal(host.status.provisioning.state, 'provisioning');
  assert.equal(host.status.operationalStatus, 'error');
  assert.equal(host.status.errorCount, 1);
  assert.match(host.status.errorMessage, /no space left/);
  host = await bench.tryReconcile(name, inState('deprovisioning'));
  assert.equal(host.status.errorType, 'provisioning error', 'error kept on entering deprovisioning');
  assert.equal(host.status.provisioningFailCount, 1);
  host = await bench.tryReconcile(name, inState('available'));
  assert.equal(bench.fixture.callsFor(name, 'deprovision')[0]?.args.restartOnFailure, true);
  // Retries with the same image stop at the limit with a clear error.
  host = await bench.tryReconcile(name, (h) => h.status.provisioningFailCount === 2 && h.status.provisioning.state === 'available');
  host = await bench.tryReconcile(name, (h) => h.status.errorType === 'provisioning error' && h.status.provisioning.state === 'available');
  assert.match(host.status.errorMessage, /failed 2 times/);
  const provisionCalls = bench.fixture.callsFor(name, 'provision').length;
  await bench.reconciler.reconcileOnce(name);
  await bench.reconciler.reconcileOnce(name);
  assert.equal(bench.fixture.callsFor(name, 'provision').length, provisionCalls, 'no more attempts');
  assertTransitionsAllowed(bench);
});

test('no capacity: the host stays put as delayed, then resumes', async () => {
  const bench = newHarness();
  const name = 'busy-0';
  await registerAvailable(bench, name);
  bench.fixture.hasCapacity = false;
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  let host = await bench.tryReconcile(name, (h) => h.status.operationalStatus === 'delayed');
  assert.equal(host.status.provisioning.state, 'available', 'transition not applied');
  await bench.reconciler.reconcileOnce(name);
  host = await bench.host(name);
  assert.equal(host.status.operationalStatus, 'delayed');
  assert.ok(!methods(bench, name).includes('provision'));
  bench.fixture.hasCapacity = true;
  host = await bench.tryReconcile(name, inState('provisioned'));
  assert.equal(host.status.operationalStatus, 'OK');
  assertTransitionsAllowed(bench);
});

test('detach stops management without changing the host; re-attach resumes with adopt', async () => {
  const bench = newHarness();
  const name = 'detach-0';
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  await bench.tryReconcile(name, inState('provisioned'));
  await bench.service.hostAction(name, { action: 'detach' });
  let host = await bench.tryReconcile(name, (h) => h.status.operationalStatus === 'detached');
  assert.equal(host.status.provisioning.state, 'provisioned');
  assert.equal(bench.fixture.callsFor(name, 'detach')[0]?.args.force, false);
  bench.fixture.clearCalls();
  await bench.reconciler.reconcileOnce(name);
  assert.deepEqual([...new Set(methods(bench, name))].filter((m) => m !== 'newProvisioner' && m !== 'tryInit'), ['detach'], 'only Detach while detached');
  await bench.service.hostAction(name, { action: 'attach' });
  host = await bench.tryReconcile(name, (h) => h.status.operationalStatus === 'OK');
  host = await bench.tryReconcile(name, () => methods(bench, name).includes('adopt'));
  assert.equal(host.status.provisioning.state, 'provisioned');
  assert.ok(!methods(bench, name).includes('provision'), 'no reprovisioning after re-attach');
  assertTransitionsAllowed(bench);
});

test('a detach error is recorded and cleared by re-attaching', async () => {
  const bench = newHarness();
  const name = 'detach-err';
  await registerAvailable(bench, name);
  bench.fixture.failNext('detach', 'node is locked', name);
  await bench.service.hostAction(name, { action: 'detach' });
  let host = await bench.tryReconcile(name, (h) => h.status.errorType === 'detach error');
  assert.equal(host.status.errorCount, 1);
  await bench.service.hostAction(name, { action: 'attach' });
  host = await bench.tryReconcile(name, (h) => h.status.errorType === '');
  assert.equal(host.status.errorCount, 0);
});

const DELETE_FROM: { state: ProvisioningState; spec?: Record<string, unknown>; path: ProvisioningState[] }[] = [
  { state: 'registering', path: ['deleting'] },
  { state: 'inspecting', path: ['powering off before delete', 'deleting'] },
  { state: 'preparing', path: ['powering off before delete', 'deleting'] },
  { state: 'available', path: ['powering off before delete', 'deleting'] },
  { state: 'provisioning', spec: { image: TEST_IMAGE }, path: ['deprovisioning', 'powering off before delete', 'deleting'] },
  { state: 'provisioned', spec: { image: TEST_IMAGE }, path: ['deprovisioning', 'powering off before delete', 'deleting'] },
  { state: 'externally provisioned', spec: { externallyProvisioned: true }, path: ['powering off before delete', 'deleting'] },
];

for (const c of DELETE_FROM) {
  test(`delete from ${c.state}`, async () => {
    const bench = newHarness({ fixture: { durations: { inspectDirtyCalls: 3, provisionDirtyCalls: 3 } } });
    const name = `del-${c.state.replaceAll(' ', '-')}`;
    await bench.service.apply(hostManifests(name, c.spec ?? {}));
    await bench.tryReconcile(name, inState(c.state));
    const before = states(bench, name).length;
    await bench.service.deleteHost(name);
    await bench.reconcileUntilDeleted(name);
    assert.deepEqual(states(bench, name).slice(before), c.path);
    assertTransitionsAllowed(bench);
  });
}

test('delete from unmanaged (no BMC details) goes straight to deleting without the provisioner', async () => {
  const bench = newHarness();
  await bench.service.apply([
    { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: 'bare', namespace: 'metal3' }, spec: { online: false } },
  ]);
  const host = await bench.tryReconcile('bare', inState('unmanaged'));
  assert.equal(host.status.operationalStatus, 'discovered');
  await bench.service.deleteHost('bare');
  await bench.reconcileUntilDeleted('bare');
  assert.deepEqual(states(bench, 'bare'), ['unmanaged', 'deleting']);
  assert.ok(!methods(bench, 'bare').includes('validateManagementAccess'));
});

test('delete gives up on power-off after repeated failures', async () => {
  const bench = newHarness();
  const name = 'stuck-0';
  await registerAvailable(bench, name);
  bench.fixture.failAlways('powerOff', 'BMC returned 500', name);
  await bench.service.deleteHost(name);
  await bench.reconcileUntilDeleted(name, 60);
  assert.ok(bench.fixture.callsFor(name, 'powerOff').length >= 4);
  assert.ok(bench.fixture.callsFor(name, 'powerOff').slice(1).every((c) => c.args.force === true), 'retries are forced');
});

test('a reboot annotation power-cycles a provisioned host and is removed once off', async () => {
  const bench = newHarness();
  const name = 'reboot-0';
  await bench.service.apply(hostManifests(name, { image: TEST_IMAGE }));
  await bench.tryReconcile(name, (h) => h.status.provisioning.state === 'provisioned' && h.status.poweredOn);
  bench.fixture.clearCalls();
  await bench.service.hostAction(name, { action: 'reboot', mode: 'hard' });
  let host = await bench.tryReconcile(name, (h) => !h.status.poweredOn);
  const off = bench.fixture.callsFor(name, 'powerOff')[0];
  assert.equal(off?.args.rebootMode, 'hard');
  host = await bench.tryReconcile(name, (h) => h.metadata.annotations?.['reboot.metal3.io'] === undefined);
  host = await bench.tryReconcile(name, (h) => h.status.poweredOn);
  assert.equal(bench.fixture.callsFor(name, 'powerOn').length, 1);
  assert.equal(host.status.provisioning.state, 'provisioned');
});

test('power follows spec.online only in steady states', async () => {
  const bench = newHarness();
  const name = 'power-0';
  await registerAvailable(bench, name);
  let host = await bench.tryReconcile(name, (h) => h.status.poweredOn);
  await bench.service.hostAction(name, { action: 'power-off' });
  host = await bench.tryReconcile(name, (h) => !h.status.poweredOn);
  assert.equal(host.spec.online, false);
  assert.equal(bench.fixture.callsFor(name, 'powerOff')[0]?.args.rebootMode, 'soft');
});

test('a power failure is recorded, then retried hard and forced', async () => {
  const bench = newHarness();
  const name = 'power-err';
  await registerAvailable(bench, name);
  await bench.tryReconcile(name, (h) => h.status.poweredOn);
  bench.fixture.failNext('powerOff', 'soft off timed out', name);
  await bench.service.hostAction(name, { action: 'power-off' });
  let host = await bench.tryReconcile(name, (h) => h.status.errorType === 'power management error');
  assert.match(host.status.errorMessage, /^Continuing with hard poweroff after soft poweroff fails/);
  host = await bench.tryReconcile(name, (h) => !h.status.poweredOn && h.status.errorType === '' && h.status.errorCount === 0);
  const retry = bench.fixture.callsFor(name, 'powerOff')[1];
  assert.deepEqual([retry?.args.rebootMode, retry?.args.force], ['hard', true]);
  assert.equal(host.status.operationalStatus, 'OK');
});

test('an inspection failure is retried with restartOnFailure; the inspect annotation re-inspects', async () => {
  const bench = newHarness();
  const name = 'insp-0';
  bench.fixture.failNext('inspectHardware', 'ramdisk did not call back', name);
  await bench.service.apply(hostManifests(name));
  let host = await bench.tryReconcile(name, (h) => h.status.errorType === 'inspection error');
  assert.equal(host.status.provisioning.state, 'inspecting');
  host = await bench.tryReconcile(name, inState('available'));
  const calls = bench.fixture.callsFor(name, 'inspectHardware');
  assert.equal(calls[1]?.args.restartOnFailure, true);
  await bench.service.hostAction(name, { action: 'inspect' });
  host = await bench.tryReconcile(name, inState('inspecting'));
  host = await bench.tryReconcile(name, inState('available'));
  assert.equal(host.metadata.annotations?.['inspect.metal3.io'], undefined, 'annotation consumed');
  assert.ok(bench.fixture.callsFor(name, 'inspectHardware').some((c) => c.args.refresh === true));
  assertTransitionsAllowed(bench);
});

test('changed credentials are pushed again (credentialsChanged) without leaving the state', async () => {
  const bench = newHarness();
  const name = 'creds-0';
  await registerAvailable(bench, name);
  bench.fixture.clearCalls();
  const [secret] = hostManifests(name) as [Record<string, unknown>];
  await bench.service.apply([{ ...secret, data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('n3w').toString('base64') } }]);
  await bench.reconciler.reconcileOnce(name);
  const call = bench.fixture.callsFor(name, 'validateManagementAccess')[0];
  assert.equal(call?.args.credentialsChanged, true);
  assert.equal((await bench.host(name)).status.provisioning.state, 'available');
});

test('a missing credentials secret is a registration error that clears when the secret appears', async () => {
  const bench = newHarness();
  const name = 'nosecret-0';
  const [secret, host] = hostManifests(name);
  await bench.service.apply([host]);
  let current = await bench.tryReconcile(name, (h) => h.status.errorType === 'registration error');
  assert.match(current.status.errorMessage, /not found/);
  assert.equal(current.status.provisioning.state, 'registering');
  await bench.service.apply([secret]);
  current = await bench.tryReconcile(name, inState('available'));
  assert.equal(current.status.errorType, '');
});

test('a registration error from the provisioner is retried with restartOnFailure', async () => {
  const bench = newHarness();
  const name = 'regerr-0';
  bench.fixture.failNext('validateManagementAccess', 'BMC refused the credentials', name);
  await bench.service.apply(hostManifests(name));
  const host = await bench.tryReconcile(name, (h) => h.status.errorType === 'registration error');
  assert.equal(host.status.operationalStatus, 'error');
  await bench.tryReconcile(name, inState('available'));
  assert.equal(bench.fixture.callsFor(name, 'validateManagementAccess')[1]?.args.restartOnFailure, true);
});

test('transient provisioner errors change nothing in status', async () => {
  const bench = newHarness();
  const name = 'transient-0';
  await registerAvailable(bench, name);
  const before = await bench.host(name);
  bench.fixture.failNext('updateHardwareState', 'transient', name);
  const delay = await bench.reconciler.reconcileOnce(name);
  const after = await bench.host(name);
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'no write');
  assert.equal(after.status.errorCount, 0);
  assert.equal(delay, 0, 'time scale 0 in the bench: retried at once');
});

test('a paused host is not reconciled', async () => {
  const bench = newHarness();
  await bench.service.apply(hostManifests('paused-0', {}, { 'baremetalhost.metal3.io/paused': '' }));
  await bench.reconciler.reconcileOnce('paused-0');
  const host = await bench.host('paused-0');
  assert.equal(host.status.provisioning.state, '');
  assert.equal(bench.fixture.calls.length, 0);
});

test('inspection disabled skips inspecting; hardwaredetails annotation fills status.hardware', async () => {
  const bench = newHarness();
  const details = { systemVendor: { manufacturer: 'Acme' }, firmware: { bios: {} }, cpu: { arch: 'aarch64', count: 80 }, ramMebibytes: 65536 };
  await bench.service.apply(
    hostManifests('noinsp-0', {}, { 'inspect.metal3.io': 'disabled', 'inspect.metal3.io/hardwaredetails': JSON.stringify(details) }),
  );
  const host = await bench.tryReconcile('noinsp-0', inState('available'));
  assert.deepEqual(states(bench, 'noinsp-0'), ['registering', 'preparing', 'available']);
  assert.equal(host.status.hardware?.cpu.arch, 'aarch64');
  assert.equal(host.metadata.annotations?.['inspect.metal3.io/hardwaredetails'], undefined);
  assert.ok(!methods(bench, 'noinsp-0').includes('inspectHardware'));
});
