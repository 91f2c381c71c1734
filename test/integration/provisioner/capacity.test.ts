/**
 * Provisioner capacity (`hasCapacity`, metal3's `Delayed` operational status) through the real
 * host state machine: the local provisioner built in-process with `maxBusyHosts: 1` (agent
 * config has no key for it yet: LocalFactory's default is 20), the real Redfish driver and one
 * virtual Redfish BMC (test/lab/redfish, plain HTTP on loopback) with two in-memory systems. Both
 * hosts use fast (out-of-band) inspection, so `inspecting` is a busy state without a boot: while
 * the first host inspects, the second is `delayed` and stays where it is; once the first leaves
 * the busy states the second inspects and both end available.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { createRedfishDriverFactory } from '../../../drivers/redfish/redfish-driver.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { HostService } from '../../../agent/host/service.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { virtualMac } from '../../lab/redfish/payloads.js';
import { startVirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';
import { hostManifests } from '../../helpers/host-harness.js';
import { hostData } from '../../unit/provisioner/host-data.js';

test('maxBusyHosts 1: the second host is delayed while the first inspects, then proceeds', async (t) => {
  const bmc = await startVirtualRedfishBmc({ https: false, systems: 2 });
  t.after(() => bmc.stop());
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  drivers.register('redfish', createRedfishDriverFactory({ taskPollMs: 1, retryDelayMs: 1 }), { replace: true });
  const store = createMemoryStore();
  let ids = 0;
  const factory = new LocalFactory({ store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now(), newId: () => `id${++ids}-000000000000`, pollMs: 0, maxBusyHosts: 1 });
  t.after(() => factory.close());
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  for (const [name, system] of [['cap-a', '1'], ['cap-b', '2']] as const) {
    const [secret, host] = hostManifests(name, { inspectionMode: 'fast', online: false, bootMACAddress: virtualMac(system, 1) }) as [unknown, { spec: { bmc: { address: string } } }];
    host.spec.bmc.address = `redfish+http://${bmc.host}/redfish/v1/Systems/${system}`;
    await service.apply([secret, host]);
  }
  const seen: Record<string, string[]> = { 'cap-a': [], 'cap-b': [] };
  const step = async (name: string, done: (h: BareMetalHost) => boolean, max = 40): Promise<BareMetalHost> => {
    for (let i = 0; i < max; i++) {
      const h = await service.getHost(name);
      const mark = `${h.status.provisioning.state}/${h.status.operationalStatus}`;
      if (seen[name]?.at(-1) !== mark) seen[name]?.push(mark);
      if (done(h)) return h;
      await reconciler.reconcileOnce(name);
    }
    const h = await service.getHost(name);
    return assert.fail(`${name} stuck in ${h.status.provisioning.state}/${h.status.operationalStatus}: ${h.status.errorMessage}; seen ${seen[name]?.join(' → ') ?? ''}`);
  };

  await step('cap-a', (h) => h.status.provisioning.state === 'inspecting');
  const delayed = await step('cap-b', (h) => h.status.operationalStatus === 'delayed');
  const heldAt = delayed.status.provisioning.state;
  assert.ok(heldAt === 'registering' || heldAt === 'inspecting', `held before or at the gate: ${heldAt}`);
  // It stays delayed, however often it is reconciled, while the first host is busy.
  for (let i = 0; i < 5; i++) await reconciler.reconcileOnce('cap-b');
  const still = await service.getHost('cap-b');
  assert.deepEqual([still.status.provisioning.state, still.status.operationalStatus], [heldAt, 'delayed']);
  assert.equal(still.status.hardware, undefined, 'not inspected while delayed');
  assert.equal((await service.getHost('cap-a')).status.provisioning.state, 'inspecting', 'the first host still holds the slot');

  const a = await step('cap-a', (h) => h.status.provisioning.state === 'available');
  assert.equal(a.status.errorMessage, '');
  const b = await step('cap-b', (h) => h.status.provisioning.state === 'available');
  assert.equal(b.status.errorMessage, '');
  assert.equal(b.status.operationalStatus, 'OK', 'no longer delayed');
  assert.ok(b.status.hardware !== undefined, 'inspected once the slot was free');
  assert.ok(seen['cap-b']?.some((m) => m.startsWith('inspecting/') && !m.endsWith('/delayed')), `cap-b inspected: ${seen['cap-b']?.join(' → ') ?? ''}`);
  const reasons = (await store.listEvents({ host: 'cap-b' })).map((e) => e.reason);
  assert.ok(reasons.includes('Delayed'), `a Delayed event for cap-b: ${reasons.join(' ')}`);
  assert.ok(!(await store.listEvents({ host: 'cap-a' })).some((e) => e.reason === 'Delayed'), 'the first host was never delayed');
});

test('virtual-media hosts are not limited and not counted (metal3 HasCapacity)', async (t) => {
  const bmc = await startVirtualRedfishBmc({ https: false, systems: 3 });
  t.after(() => bmc.stop());
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  const store = createMemoryStore();
  let ids = 0;
  const factory = new LocalFactory({ store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now(), newId: () => `id${++ids}-000000000000`, pollMs: 0, maxBusyHosts: 1 });
  t.after(() => factory.close());
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const scheme = { pxe: 'redfish+http', vmedia: 'redfish-virtualmedia+http' } as const;
  const hosts = [['busy-pxe', '1', 'pxe'], ['busy-vmedia', '2', 'vmedia'], ['next', '3', 'pxe']] as const;
  for (const [name, system, kind] of hosts) {
    const [secret, host] = hostManifests(name, { online: false, bootMACAddress: virtualMac(system, 1) }) as [unknown, { spec: { bmc: { address: string } } }];
    host.spec.bmc.address = `${scheme[kind]}://${bmc.host}/redfish/v1/Systems/${system}`;
    await service.apply([secret, host]);
  }
  // Each call is a reconcile step of the host: the provisioner counts busy hosts from what its steps tell it.
  const provisionerFor = async (name: string): Promise<Awaited<ReturnType<LocalFactory['newProvisioner']>>> => {
    const h = await service.getHost(name);
    const step = { bmcSlot: { outside: <T>(request: () => Promise<T>): Promise<T> => request() }, provisioningState: h.status.provisioning.state, wake: () => undefined };
    return factory.newProvisioner(hostData(name, { uid: h.metadata.uid, bmcAddress: h.spec.bmc?.address ?? '' }), () => undefined, step);
  };
  // One virtual-media host busy: it does not use up the limit of 1.
  const vmediaBusy = await service.getHost('busy-vmedia');
  vmediaBusy.status.provisioning.state = 'provisioning';
  await store.commit([{ kind: 'host', op: 'put', object: vmediaBusy }]);
  await provisionerFor('busy-vmedia');
  assert.equal(await (await provisionerFor('next')).hasCapacity(), true, 'a busy virtual-media host is not counted');
  const pxeBusy = await service.getHost('busy-pxe');
  pxeBusy.status.provisioning.state = 'inspecting';
  await store.commit([{ kind: 'host', op: 'put', object: pxeBusy }]);
  await provisionerFor('busy-pxe');
  assert.equal(await (await provisionerFor('next')).hasCapacity(), false, 'a busy network-booting host uses up the limit');
  assert.equal(await (await provisionerFor('busy-vmedia')).hasCapacity(), true, 'a virtual-media host is never limited');
  // Over the limit, a host already busy keeps its place (upstream "already counted"): no deadlock.
  const next = await service.getHost('next');
  next.status.provisioning.state = 'inspecting';
  await store.commit([{ kind: 'host', op: 'put', object: next }]);
  assert.equal(await (await provisionerFor('next')).hasCapacity(), true, 'a busy host is not delayed by the others');
});
