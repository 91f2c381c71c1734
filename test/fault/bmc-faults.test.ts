/**
 * Fault injection at the BMC, through the real host state machine, the local provisioner and the
 * real Redfish driver against the virtual Redfish BMC: the BMC goes down, answers 5xx storms,
 * hangs, flaps, and changes its TLS certificate. Each fault ends in a defined state with a clear
 * error on the host (never a crash or a stuck reconcile), and the host recovers by itself once
 * the fault clears.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import pino from 'pino';
import { createRedfishDriverFactory, DriverRegistry, registerBuiltinDrivers } from '../../drivers/index.js';
import { Reconciler } from '../../agent/host/reconciler.js';
import { HostService } from '../../agent/host/service.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import { LocalFactory } from '../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../agent/store/index.js';
import { virtualMac } from '../lab/redfish/payloads.js';
import type { VirtualBmcFault } from '../lab/redfish/state.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc } from '../lab/redfish/virtual-bmc.js';
import { hostManifests } from '../helpers/host-harness.js';

interface Rig {
  bmc: VirtualRedfishBmc;
  /** Reasons and messages of the host's events, oldest first. */
  events(): Promise<string[]>;
  service: HostService;
  reconciler: Reconciler;
  host(): Promise<BareMetalHost>;
  /** Reconciles until `done` holds; fails naming the state after `max` steps. */
  until(what: string, done: (h: BareMetalHost) => boolean, max?: number): Promise<BareMetalHost>;
}

async function availableHost(t: TestContext, https = false): Promise<Rig> {
  const bmc = await startVirtualRedfishBmc({ https });
  t.after(() => bmc.stop());
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  const redfish = createRedfishDriverFactory({ taskPollMs: 1, retryDelayMs: 1 });
  // A short request timeout so a hanging BMC is noticed within the test (the default is tens of seconds).
  drivers.register('redfish', (address, credentials, options) => redfish(address, credentials, { ...options, timeoutMs: 300 }), { replace: true });
  const store = createMemoryStore();
  let ids = 0;
  const factory = new LocalFactory({ store, nodes: new NodeTable(store.nodes), drivers, nowMs: () => Date.now(), newId: () => `id${++ids}-000000000000`, pollMs: 0 });
  t.after(() => factory.close());
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const [secret, manifest] = hostManifests('f0', { inspectionMode: 'fast', bootMACAddress: virtualMac('1', 1) }) as [unknown, { spec: { bmc: { address: string; disableCertificateVerification?: boolean } } }];
  manifest.spec.bmc.address = `redfish${https ? '' : '+http'}://${bmc.host}/redfish/v1/Systems/1`;
  if (https) manifest.spec.bmc.disableCertificateVerification = true;
  await service.apply([secret, manifest]);
  const host = (): Promise<BareMetalHost> => service.getHost('f0');
  const until = async (what: string, done: (h: BareMetalHost) => boolean, max = 40): Promise<BareMetalHost> => {
    for (let i = 0; i < max; i++) {
      const h = await host();
      if (done(h)) return h;
      await reconciler.reconcileOnce('f0');
    }
    const h = await host();
    assert.fail(`${what}: stuck in ${h.status.provisioning.state}/${h.status.operationalStatus}: ${h.status.errorType} ${h.status.errorMessage}`);
  };
  const events = async (): Promise<string[]> => (await store.listEvents({ host: 'f0' })).map((e) => `${e.reason}: ${e.message}`);
  const rig = { bmc, service, reconciler, host, until, events };
  await until('reaching available', (h) => h.status.provisioning.state === 'available' && !h.status.poweredOn);
  return rig;
}

const faults: Record<string, VirtualBmcFault[]> = {
  'a 503 storm': [{ kind: 'status', status: 503, retryAfterSeconds: 0 }],
  'a 500 storm': [{ kind: 'status', status: 500 }],
  'connection resets (BMC down)': [{ kind: 'reset' }],
  'a hanging BMC': [{ kind: 'hang' }],
  'HTML error pages': [{ kind: 'html', status: 502 }],
};

for (const [name, injected] of Object.entries(faults)) {
  test(`${name}: the host holds its state with a Warning event naming the fault, and powers on by itself once the fault clears`, async (t) => {
    const r = await availableHost(t);
    for (const f of injected) r.bmc.state.inject({ ...f });
    const current = await r.host();
    await r.service.apply([{ ...structuredClone(current), spec: { ...current.spec, online: true } }]);
    for (let i = 0; i < 8; i++) await r.reconciler.reconcileOnce('f0');
    const during = await r.host();
    assert.equal(during.status.provisioning.state, 'available', 'the host stays where it was');
    assert.equal(during.status.poweredOn, false);
    const warning = (await r.events()).find((e) => e.startsWith('TransientFailure: ') || e.startsWith('PowerManagementError'));
    assert.ok(warning !== undefined, `a Warning event tells the operator: ${(await r.events()).join(' | ')}`);
    assert.match(warning, /BMC|Redfish|HTTP|timed out|reset|reach/i);
    assert.match(warning, /attempts in a row/);
    t.diagnostic(warning);
    r.bmc.state.clearFaults();
    const healed = await r.until('recovering', (h) => h.status.poweredOn && h.status.errorMessage === '' && h.status.operationalStatus === 'OK');
    assert.equal(healed.status.provisioning.state, 'available');
    assert.ok((await r.events()).some((e) => e.startsWith('Recovered: ')), 'recovery is recorded too');
  });
}

test('a flapping BMC (every other answer a reset or a 503): the host still gets powered on, with no error left behind', async (t) => {
  const r = await availableHost(t);
  const current = await r.host();
  await r.service.apply([{ ...structuredClone(current), spec: { ...current.spec, online: true } }]);
  for (let i = 0; i < 30; i++) {
    const h = await r.host();
    if (h.status.poweredOn) break;
    r.bmc.state.clearFaults();
    if (i % 2 === 0) r.bmc.state.inject(i % 4 === 0 ? { kind: 'reset', times: 1 } : { kind: 'status', status: 503, times: 1 });
    await r.reconciler.reconcileOnce('f0');
  }
  r.bmc.state.clearFaults();
  const healed = await r.until('settling', (h) => h.status.poweredOn && h.status.operationalStatus === 'OK');
  assert.equal(healed.status.errorMessage, '');
  assert.equal(healed.status.errorType, '');
  assert.equal(healed.status.provisioning.state, 'available');
});
