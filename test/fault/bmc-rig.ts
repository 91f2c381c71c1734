/**
 * @module The fault-injection rig for BMC faults: the virtual Redfish BMC (test/lab/redfish),
 * the real Redfish driver, the local provisioner and the real host state machine over a memory
 * store, with one host `f0` brought to `available` and powered off, stepped by hand.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../drivers/index.js';
import { createRedfishDriverFactory } from '../../drivers/redfish/redfish-driver.js';
import { Reconciler } from '../../agent/host/reconciler.js';
import { HostService } from '../../agent/host/service.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import { LocalFactory } from '../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../agent/store/index.js';
import { virtualMac } from '../lab/redfish/payloads.js';
import type { LabCertificate } from '../lab/redfish/tls.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc } from '../lab/redfish/virtual-bmc.js';
import { hostManifests } from '../helpers/host-harness.js';

/** How the rig's BMC and driver are set up. */
export interface RigOptions {
  /** Serve HTTPS (default plain HTTP). */
  readonly https?: boolean;
  /** HTTPS: the BMC's certificate (default the lab's self-signed one). */
  readonly certificate?: LabCertificate;
  /** PEM CA bundle the driver trusts; without it the host sets `disableCertificateVerification`. */
  readonly ca?: string;
  /** The host's `disableCertificateVerification` (default: true over HTTPS without `ca`). */
  readonly disableCertificateVerification?: boolean;
  /** Request timeout of the driver (default 300 ms, so a hanging BMC is noticed quickly). */
  readonly timeoutMs?: number;
  /** The reconciler's time scale (default 0: every controller delay is zero). */
  readonly timeScale?: number;
}

/** A running rig. */
export interface Rig {
  bmc: VirtualRedfishBmc;
  /** Reasons and messages of the host's events, oldest first, as `Reason: message`. */
  events(): Promise<string[]>;
  service: HostService;
  reconciler: Reconciler;
  host(): Promise<BareMetalHost>;
  /** Reconciles until `done` holds; fails naming the state after `max` steps. */
  until(what: string, done: (h: BareMetalHost) => boolean, max?: number): Promise<BareMetalHost>;
  /** Sets `spec.online` through the host service, as a user's apply does. */
  setOnline(online: boolean): Promise<void>;
}

/** Starts the rig and brings host `f0` to `available`, powered off; everything stops in `t.after`. */
export async function availableHost(t: TestContext, options: RigOptions = {}): Promise<Rig> {
  const https = options.https === true;
  const bmc = await startVirtualRedfishBmc({ https, ...(options.certificate === undefined ? {} : { certificate: options.certificate }) });
  t.after(() => bmc.stop());
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  const redfish = createRedfishDriverFactory({ taskPollMs: 1, retryDelayMs: 1, ...(options.ca === undefined ? {} : { ca: options.ca }) });
  const timeoutMs = options.timeoutMs ?? 300;
  drivers.register('redfish', (address, credentials, driverOptions) => redfish(address, credentials, { ...driverOptions, timeoutMs }), { replace: true });
  const store = createMemoryStore();
  let ids = 0;
  const factory = new LocalFactory({ store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now(), newId: () => `id${++ids}-000000000000`, pollMs: 0 });
  t.after(() => factory.close());
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: options.timeScale ?? 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const [secret, manifest] = hostManifests('f0', { inspectionMode: 'fast', bootMACAddress: virtualMac('1', 1) }) as [unknown, { spec: { bmc: { address: string; disableCertificateVerification?: boolean } } }];
  manifest.spec.bmc.address = `redfish${https ? '' : '+http'}://${bmc.host}/redfish/v1/Systems/1`;
  const insecure = options.disableCertificateVerification ?? (https && options.ca === undefined);
  if (insecure) manifest.spec.bmc.disableCertificateVerification = true;
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
  const setOnline = async (online: boolean): Promise<void> => {
    const current = await host();
    await service.apply([{ ...structuredClone(current), spec: { ...current.spec, online } }]);
  };
  const rig = { bmc, service, reconciler, host, until, events, setOnline };
  await until('reaching available', (h) => h.status.provisioning.state === 'available' && !h.status.poweredOn);
  return rig;
}
