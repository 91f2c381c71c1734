/**
 * @module Records discovered hosts (docs/discovery.md, "What is stored"). A discovery report that
 * passed its token check becomes a BareMetalHost the metal3 way: `bootMACAddress` the token's MAC,
 * no `bmc`, provisioning state `unmanaged`, operational status `discovered`, hardware details
 * from the inventory (with LLDP neighbours on their NICs), a generated name (host-name.ts),
 * annotation `rackside.io/discovered-at` and a `Discovered` event. With in-band enlistment the
 * BMC user's credentials become a Secret committed with the host in one commit (so the host is
 * never seen with a `credentialsName` whose Secret is missing): `approve: auto` fills
 * `spec.bmc` and leaves the state empty so the reconciler registers it at once; `approve: manual`
 * keeps the host `unmanaged` with the BMC proposed in annotations until {@link enroll}. A MAC
 * that already belongs to a host is never recorded again. Records run one at a time.
 */
import { hardwareDetailsFromInventory, InventoryError } from '../provisioner/local/inventory.js';
import { parseBmcAddress } from '../../drivers/index.js';
import { ApiErrorCode, ConflictError, isApiError, NotFoundError, ValidationError } from '../errors.js';
import type { DiscoveryConfig } from '../config-discovery.js';
import { emptyHostStatus, HOST_API_VERSION } from '../host/validation.js';
import { HOST_FINALIZER, type BareMetalHost, type Secret } from '../host/types.js';
import { hostMacIndex, normalizeBootMac } from '../store/host-mac-index.js';
import { Mutex } from '../store/mutex.js';
import type { Change, EventLog, ResourceStore, StoredEvent } from '../store/types.js';
import { bmcSecret, bmcSecretName, chooseBmcAddress, DiscoveryAnnotations, enrollPlan, EnrollError, type EnrollInput } from './bmc-enrollment.js';
import { discoveredHostName } from './host-name.js';
import { inventorySerial, type DiscoveryReport } from './report.js';
import { nicsWithLldp } from '../provisioner/local/lldp.js';

/** What {@link DiscoveryService} needs of the store. */
export type DiscoveryStore = Pick<ResourceStore, 'commit' | 'hostSnapshot' | 'getHost'> & Pick<EventLog, 'appendEvents'>;

/** Options of {@link DiscoveryService}. */
export interface DiscoveryServiceOptions {
  store: DiscoveryStore;
  config: Pick<DiscoveryConfig, 'approve' | 'enrollBMC' | 'maxHosts' | 'namespace'>;
  /** Wall clock for the annotation and event times. */
  wallNow?: () => Date;
}

/** The outcome of {@link DiscoveryService.record}. */
export type RecordOutcome =
  | { kind: 'recorded'; name: string; bmc: 'enrolled' | 'proposed' | 'none' }
  | { kind: 'exists'; name: string }
  | { kind: 'full'; discovered: number };

/** Counters of the service (metrics `rackside_discovery_*`). */
export interface DiscoveryServiceStats {
  recorded: number;
  alreadyKnown: number;
  refusedFull: number;
  bmcEnrolled: number;
  bmcProposed: number;
  bmcFailed: number;
}

/** True for a host discovery recorded that is still waiting for its BMC (counts against `maxHosts`). */
export function isDiscoveredHost(host: Readonly<BareMetalHost>): boolean {
  return host.metadata.annotations?.[DiscoveryAnnotations.discoveredAt] !== undefined && host.status.provisioning.state === 'unmanaged';
}

const COMMIT_ATTEMPTS = 3;

const countBySnapshot = new WeakMap<readonly Readonly<BareMetalHost>[], number>();

/**
 * Discovered hosts in `hosts` (a store snapshot), counted once per snapshot: a snapshot is the
 * same array until the next host commit (agent/store/host-mac-index.ts relies on the same), so
 * a DHCP storm's admissions do not rescan every host per packet.
 */
export function discoveredHostCount(hosts: readonly Readonly<BareMetalHost>[]): number {
  let n = countBySnapshot.get(hosts);
  if (n === undefined) {
    n = hosts.filter(isDiscoveredHost).length;
    countBySnapshot.set(hosts, n);
  }
  return n;
}

/** Records discovered hosts and enrolls them (see the module comment). */
export class DiscoveryService {
  private readonly writes = new Mutex();
  private readonly counters: DiscoveryServiceStats = { recorded: 0, alreadyKnown: 0, refusedFull: 0, bmcEnrolled: 0, bmcProposed: 0, bmcFailed: 0 };
  private readonly wallNow: () => Date;

  constructor(private readonly options: DiscoveryServiceOptions) {
    this.wallNow = options.wallNow ?? (() => new Date());
  }

  /** Discovered hosts in the store now (see {@link isDiscoveredHost}). */
  async discoveredCount(): Promise<number> {
    return discoveredHostCount(await this.options.store.hostSnapshot());
  }

  /** Counters since start. */
  stats(): DiscoveryServiceStats {
    return { ...this.counters };
  }

  /**
   * Records the host that booted with `mac` from its validated report. Throws
   * {@link ValidationError} (field `inventory`) for an inventory with no hardware in it.
   */
  record(mac: string, report: DiscoveryReport): Promise<RecordOutcome> {
    return this.writes.run(async () => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await this.recordOnce(normalizeBootMac(mac), report);
        } catch (error) {
          if (!(isApiError(error) && error.code === ApiErrorCode.conflict) || attempt >= COMMIT_ATTEMPTS) throw error;
        }
      }
    });
  }

  private async recordOnce(mac: string, report: DiscoveryReport): Promise<RecordOutcome> {
    const { store, config } = this.options;
    const hosts = await store.hostSnapshot();
    const known = hostMacIndex(hosts).byMac.get(mac);
    if (known !== undefined) {
      this.counters.alreadyKnown += 1;
      return { kind: 'exists', name: known.metadata.name };
    }
    const discovered = discoveredHostCount(hosts);
    const now = this.wallNow().toISOString();
    if (discovered >= config.maxHosts) {
      this.counters.refusedFull += 1;
      await this.event({ type: 'Warning', reason: 'DiscoveryRefused', mac, message: `discovery of ${mac} refused: ${discovered} discovered hosts wait for a BMC (discovery.maxHosts ${config.maxHosts}); enroll or delete some` }, now);
      return { kind: 'full', discovered };
    }
    let hardware;
    try {
      hardware = hardwareDetailsFromInventory(report.inventory);
    } catch (error) {
      if (error instanceof InventoryError) throw new ValidationError('inventory', error.message);
      throw error;
    }
    hardware.nics = nicsWithLldp(hardware.nics ?? [], report.lldp);
    const names = new Set(hosts.map((h) => h.metadata.name));
    const name = discoveredHostName(inventorySerial(report.inventory), mac, (n) => names.has(n));
    if (name === undefined) throw new ConflictError('metadata.name', `no free name for the host with boot MAC ${mac}`);
    const host = this.newHost(name, mac, now);
    host.status.hardware = hardware;
    const changes: Change[] = [];
    const events: Omit<StoredEvent, 'seq'>[] = [];
    const bmc = this.bmcOutcome(host, report, changes, events, now);
    changes.push({ kind: 'host', op: 'put', object: host, ifVersion: 'absent' });
    await store.commit(changes);
    this.counters.recorded += 1;
    const cpus = hardware.cpu.count ?? 0;
    const summary = `${cpus} CPU(s), ${hardware.ramMebibytes ?? 0} MiB, ${hardware.storage?.length ?? 0} disk(s)`;
    const bmcText = bmc === 'enrolled' ? `BMC ${host.spec.bmc?.address ?? ''} enrolled in-band: registering`
      : bmc === 'proposed' ? `BMC ${host.metadata.annotations?.[DiscoveryAnnotations.proposedBmcAddress] ?? ''} proposed: run rackside enroll ${name}`
        : 'no BMC: run rackside enroll to give one';
    await this.appendAll([{ time: now, type: 'Normal', reason: 'Discovered', source: 'discovery', host: name, mac, message: `discovered ${name} (boot MAC ${mac}, ${summary}); ${bmcText}` }, ...events]);
    return { kind: 'recorded', name, bmc };
  }

  private newHost(name: string, mac: string, now: string): BareMetalHost {
    const status = emptyHostStatus();
    status.provisioning.state = 'unmanaged';
    status.operationalStatus = 'discovered';
    return {
      apiVersion: HOST_API_VERSION,
      kind: 'BareMetalHost',
      metadata: {
        name, namespace: this.options.config.namespace, uid: '', resourceVersion: '', generation: 1, creationTimestamp: '',
        annotations: { [DiscoveryAnnotations.discoveredAt]: now }, finalizers: [HOST_FINALIZER],
      },
      spec: { bootMACAddress: mac, online: false },
      status,
    };
  }

  /** Applies the in-band BMC outcome to `host` (Secret into `changes`, events into `events`). */
  private bmcOutcome(host: BareMetalHost, report: DiscoveryReport, changes: Change[], events: Omit<StoredEvent, 'seq'>[], now: string): 'enrolled' | 'proposed' | 'none' {
    const bmc = report.bmc;
    const name = host.metadata.name;
    const mac = host.spec.bootMACAddress ?? '';
    const warn = (reason: string, message: string): void => {
      events.push({ time: now, type: 'Warning', reason, source: 'discovery', host: name, mac, message });
    };
    if (!this.options.config.enrollBMC || bmc.kind === 'none') {
      if (this.options.config.enrollBMC) warn('BMCEnrollmentSkipped', `in-band BMC enlistment did not run: ${bmc.kind === 'none' ? bmc.message : ''}`);
      return 'none';
    }
    if (bmc.kind === 'error') {
      this.counters.bmcFailed += 1;
      warn('BMCEnrollmentFailed', `the BMC refused in-band user creation${bmc.channel === undefined ? '' : ` on LAN channel ${bmc.channel}`}: ${bmc.message}; the host stays unmanaged`);
      return 'none';
    }
    const chosen = chooseBmcAddress(bmc);
    if ('unusable' in chosen) {
      this.counters.bmcFailed += 1;
      warn('BMCAddressUnusable', `in-band enlistment made a BMC user, but ${chosen.unusable} on LAN channel ${bmc.channel}: no spec.bmc filled; give the BMC an address and run rackside enroll ${name} --bmc ADDRESS`);
      return 'none';
    }
    const secret: Secret = bmcSecret(host.metadata.namespace, name, bmc.username, bmc.password);
    changes.push({ kind: 'secret', op: 'put', object: secret, ifVersion: undefined });
    if (this.options.config.approve === 'auto') {
      host.spec.bmc = { address: chosen.url, credentialsName: secret.metadata.name };
      // Registration starts now: the state machine takes a host with BMC details from the empty state.
      host.status.provisioning.state = '';
      host.status.operationalStatus = '';
      this.counters.bmcEnrolled += 1;
      return 'enrolled';
    }
    const annotations = host.metadata.annotations ?? {};
    annotations[DiscoveryAnnotations.proposedBmcAddress] = chosen.url;
    annotations[DiscoveryAnnotations.proposedBmcCredentials] = bmcSecretName(name);
    host.metadata.annotations = annotations;
    this.counters.bmcProposed += 1;
    return 'proposed';
  }

  /**
   * `rackside enroll NAME`: gives host `name` its BMC (the proposed one, or `input`'s), in one
   * commit with its Secret; the reconciler then registers it. Throws 404, 400 (naming the
   * field) or 409 (the host has a BMC, or changed meanwhile).
   */
  enroll(name: string, input: EnrollInput): Promise<BareMetalHost> {
    return this.writes.run(async () => {
      const stored = await this.options.store.getHost(name);
      if (stored === undefined) throw new NotFoundError('BareMetalHost', name);
      if (input.address !== undefined) {
        const address = input.address.includes('://') ? input.address : `ipmi://${input.address}`;
        try {
          parseBmcAddress(address);
        } catch (error) {
          throw new ValidationError('bmcAddress', error instanceof Error ? error.message : String(error));
        }
      }
      let plan;
      try {
        plan = enrollPlan(stored, input);
      } catch (error) {
        if (!(error instanceof EnrollError)) throw error;
        if (error.field === 'spec.bmc') throw new ConflictError(error.field, error.message);
        throw new ValidationError(error.field, error.message);
      }
      const changes: Change[] = [];
      if (plan.secret !== undefined) changes.push({ kind: 'secret', op: 'put', object: plan.secret, ifVersion: undefined });
      changes.push({ kind: 'host', op: 'put', object: plan.host, ifVersion: stored.metadata.resourceVersion });
      const committed = await this.options.store.commit(changes);
      await this.event({ type: 'Normal', reason: 'Enrolled', host: name, message: `BMC ${plan.host.spec.bmc?.address ?? ''} given by rackside enroll: registering` }, this.wallNow().toISOString());
      return committed.hosts[0] ?? plan.host;
    });
  }

  private async event(e: Pick<StoredEvent, 'type' | 'reason' | 'message'> & { host?: string; mac?: string }, time: string): Promise<void> {
    await this.appendAll([{ time, source: 'discovery', ...e }]);
  }

  private async appendAll(events: Omit<StoredEvent, 'seq'>[]): Promise<void> {
    await this.options.store.appendEvents(events);
  }
}
