/**
 * @module A BMO-style test bench for the host state machine: a memory store, the fixture
 * provisioner and a reconciler stepped by hand (`tryReconcile` with an iteration cap).
 */
import pino from 'pino';
import { HostService } from '../../agent/host/service.js';
import { Reconciler } from '../../agent/host/reconciler.js';
import type { StateChange } from '../../agent/host/state-machine.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import { Fixture, type FixtureOptions } from '../../agent/provisioner/fixture.js';
import { createMemoryStore } from '../../agent/store/index.js';
import type { Store } from '../../agent/store/types.js';

/** A metal3 manifest pair as users write them: the BMC secret and a BareMetalHost. */
export function hostManifests(name: string, spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}): unknown[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-bmc-secret`, namespace: 'metal3' },
      type: 'Opaque',
      data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') },
    },
    {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name, namespace: 'metal3', annotations },
      spec: {
        online: true,
        bootMACAddress: '00:5c:52:31:3a:9c',
        bmc: { address: `redfish+http://192.168.111.1:8000/redfish/v1/Systems/${name}`, credentialsName: `${name}-bmc-secret` },
        ...spec,
      },
    },
  ];
}

/** The standard image spec used by provisioning tests. */
export const TEST_IMAGE = {
  url: 'http://172.22.0.1/images/CENTOS_9_NODE_IMAGE_K8S_v1.31.0.qcow2',
  checksum: 'http://172.22.0.1/images/CENTOS_9_NODE_IMAGE_K8S_v1.31.0.qcow2.sha256sum',
  checksumType: 'sha256',
  format: 'qcow2',
};

export interface Harness {
  store: Store;
  fixture: Fixture;
  reconciler: Reconciler;
  service: HostService;
  /** Every state change seen, per host, in order. */
  changes: Map<string, StateChange[]>;
  host(name: string): Promise<BareMetalHost>;
  /** Steps the host until `done` holds (checked before each step); fails after `maxSteps`. */
  tryReconcile(name: string, done: (host: BareMetalHost) => boolean, maxSteps?: number): Promise<BareMetalHost>;
  /** Steps until the host is gone. */
  reconcileUntilDeleted(name: string, maxSteps?: number): Promise<void>;
}

/** Builds a bench; the reconciler's timers are never started: tests step hosts explicitly. */
export function newHarness(options: { fixture?: FixtureOptions; maxProvisioningRetries?: number } = {}): Harness {
  const store = createMemoryStore();
  const fixture = new Fixture({ delayScale: 0, ...options.fixture });
  const reconciler = new Reconciler({
    store,
    factory: fixture,
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    timeScale: 0,
    maxProvisioningRetries: options.maxProvisioningRetries ?? 5,
    random: () => 0,
  });
  const service = new HostService({
    store,
    info: { version: 'test', agentId: 'test', provisioner: 'fixture', startedAt: new Date(0).toISOString() },
  });
  const changes = new Map<string, StateChange[]>();
  reconciler.onStep((name, outcome) => {
    if (outcome.change !== undefined) changes.set(name, [...(changes.get(name) ?? []), outcome.change]);
  });
  const host = async (name: string): Promise<BareMetalHost> => {
    const found = await store.getHost(name);
    if (found === undefined) throw new Error(`host ${name} not found`);
    return found;
  };
  return {
    store,
    fixture,
    reconciler,
    service,
    changes,
    host,
    async tryReconcile(name, done, maxSteps = 40) {
      for (let step = 0; step < maxSteps; step += 1) {
        const current = await host(name);
        if (done(current)) return current;
        await reconciler.reconcileOnce(name);
      }
      const last = await host(name);
      throw new Error(
        `host ${name} did not reach the expected condition in ${maxSteps} steps; state=${last.status.provisioning.state} ` +
          `operationalStatus=${last.status.operationalStatus} error=${last.status.errorType ?? ''}: ${last.status.errorMessage}`,
      );
    },
    async reconcileUntilDeleted(name, maxSteps = 40) {
      for (let step = 0; step < maxSteps; step += 1) {
        if ((await store.getHost(name)) === undefined) return;
        await reconciler.reconcileOnce(name);
      }
      throw new Error(`host ${name} still exists after ${maxSteps} steps`);
    },
  };
}
