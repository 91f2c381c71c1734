import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_HOSTS, DEMO_REQUEUE_MS, DemoFactory, DemoHost } from '../../../agent/provisioner/demo.js';
import type { Provisioner, Result } from '../../../agent/provisioner/index.js';
import { accessData, hostData, inspectData, prepareData, provisionData, servicingData } from './host-data.js';

function summarize(result: Result): string {
  if (result.errorMessage !== '') return `failed:${result.errorMessage}`;
  return result.dirty ? `dirty@${result.requeueAfterMs}` : 'complete';
}

/** Every Result-bearing call once, summarized, for one host name. */
async function behaviour(p: Provisioner): Promise<Record<string, string>> {
  return {
    register: summarize((await p.validateManagementAccess(accessData(), false, false)).result),
    inspect: summarize((await p.inspectHardware(inspectData, false, false, false)).result),
    prepare: summarize((await p.prepare(prepareData, true, false)).result),
    service: summarize((await p.service(servicingData, true, false)).result),
    provision: summarize(await p.provision(provisionData('http://images.example/a.qcow2'), false)),
    adopt: summarize(await p.adopt({ state: 'provisioned' }, false)),
    deprovision: summarize(await p.deprovision(false, 'metadata')),
    delete: summarize(await p.delete()),
    detach: summarize(await p.detach(false)),
    powerOn: summarize(await p.powerOn(false)),
    powerOff: summarize(await p.powerOff('soft', false, 'metadata')),
  };
}

const allComplete = {
  register: 'complete', inspect: 'complete', prepare: 'complete', service: 'complete', provision: 'complete',
  adopt: 'complete', deprovision: 'complete', delete: 'complete', detach: 'complete', powerOn: 'complete', powerOff: 'complete',
};
const forever = `dirty@${DEMO_REQUEUE_MS}`;

const cases: Record<string, Record<string, string>> = {
  [DemoHost.registrationError]: { ...allComplete, register: 'failed:failed to register new host' },
  [DemoHost.registering]: { ...allComplete, register: forever },
  [DemoHost.inspecting]: { ...allComplete, inspect: forever },
  [DemoHost.preparing]: { ...allComplete, prepare: forever, service: forever },
  [DemoHost.preparingError]: { ...allComplete, prepare: 'failed:preparing failed', service: 'failed:servicing failed' },
  [DemoHost.validationError]: { ...allComplete, provision: 'failed:validation failed' },
  [DemoHost.provisioning]: { ...allComplete, provision: forever },
  [DemoHost.available]: allComplete,
  [DemoHost.provisioned]: allComplete,
  'rack7-node-12': allComplete,
};

for (const [name, want] of Object.entries(cases)) {
  test(`demo behaviour: ${name}`, async () => {
    const p = await new DemoFactory().newProvisioner(hostData(name), () => undefined);
    assert.deepEqual(await behaviour(p), want);
  });
}

test('demo registration hands out the host name as provID and keeps an existing one', async () => {
  const factory = new DemoFactory();
  const fresh = await (await factory.newProvisioner(hostData('demo-available'), () => undefined)).validateManagementAccess(accessData(), false, false);
  assert.equal(fresh.provID, 'demo-available');
  const kept = await (await factory.newProvisioner(hostData('demo-available', { provisionerID: 'older-id' }), () => undefined)).validateManagementAccess(accessData(), false, false);
  assert.equal(kept.provID, 'older-id');
  const failing = await (await factory.newProvisioner(hostData(DemoHost.registrationError), () => undefined)).validateManagementAccess(accessData(), false, false);
  assert.equal(failing.provID, '');
});

test('demo inspection returns canned details; started only when asked to restart', async () => {
  const events: string[] = [];
  const p = await new DemoFactory().newProvisioner(hostData('demo-available'), (reason) => { events.push(reason); });
  const plain = await p.inspectHardware(inspectData, false, false, false);
  assert.equal(plain.started, false);
  assert.equal(plain.details?.cpu.model, 'FancyPants CPU');
  assert.equal((await p.inspectHardware(inspectData, false, true, false)).started, true);
  assert.deepEqual(events, ['InspectionComplete', 'InspectionComplete']);
  const stuck = await (await new DemoFactory().newProvisioner(hostData(DemoHost.inspecting), () => undefined)).inspectHardware(inspectData, false, false, false);
  assert.equal(stuck.details, undefined);
});

test('demo: unknown power, ready, capacity, no image formats, started = unprepared', async () => {
  const p = await new DemoFactory().newProvisioner(hostData('demo-provisioned'), () => undefined);
  assert.deepEqual(await p.updateHardwareState(), {});
  assert.equal(await p.tryInit(), true);
  assert.equal(await p.hasCapacity(), true);
  assert.equal(await p.preprovisioningImageFormats(), null);
  assert.equal((await p.prepare(prepareData, true, false)).started, true);
  assert.equal((await p.prepare(prepareData, false, false)).started, false);
  assert.ok(Object.keys((await p.getFirmwareSettings(true)).schema ?? {}).length > 0);
});

test('demo delayScale scales the never-ending requeue', async () => {
  const p = await new DemoFactory({ delayScale: 0 }).newProvisioner(hostData(DemoHost.provisioning), () => undefined);
  assert.equal(summarize(await p.provision(provisionData('http://images.example/a.qcow2'), false)), 'dirty@0');
});

test('DEMO_HOSTS lists every special host once with a description; image hosts are the provisioning ones', () => {
  const names = DEMO_HOSTS.map((h) => h.name);
  assert.deepEqual([...names].sort(), Object.values(DemoHost).sort());
  assert.ok(DEMO_HOSTS.every((h) => h.description.length > 10));
  assert.deepEqual(DEMO_HOSTS.filter((h) => h.withImage).map((h) => h.name), [DemoHost.validationError, DemoHost.provisioning, DemoHost.provisioned]);
});
