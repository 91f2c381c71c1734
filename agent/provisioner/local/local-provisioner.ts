/**
 * @module The local provisioner: the Provisioner API done by rackside itself — BMC drivers for
 * power and boot devices, the boot intent the boot services are answered from (node-intents.ts
 * over the `nodes` entry: `boot`, `token`, `isoUrl`) for network boots, and the in-ramdisk agent (ramdisk-service.ts) for
 * inspection, deploy and cleaning (provision/deprovision steps in deploy.ts, image and config
 * drive preparation in image-prep.ts). Hosts whose BMC scheme boots by virtual media
 * (`redfish-virtualmedia://` …) get the ramdisk as their per-host rackside ISO (vmedia-iso.ts)
 * through the BMC's InsertMedia and a CD boot, instead of a network boot. A ramdisk that is
 * still running when the next operation starts takes it without a reboot (Ironic's fast
 * track, on in metal3). Every method is re-entrant and level-triggered: it reads
 * the backend record, starts the next step or reports progress, and never blocks on the host.
 *
 * `prepare` and `service` (RAID, BIOS settings, firmware: prepare.ts, service.ts) and fast
 * (out-of-band) inspection (fast-inspect.ts) run through the BMC and, for software RAID, the
 * ramdisk; `spec.customDeploy` runs a registered method (custom-deploy.ts).
 */
import { createHash } from 'node:crypto';
import type { BmcDriver, DriverRegistry, PowerAction } from '../../../drivers/index.js';
import { BmcErrorCode, bmcCapabilities, isBmcError, isPermanentBmcError, parseBmcAddress } from '../../../drivers/index.js';
import { createPowerSweep, type PowerSweep, type PowerSweepEntry } from '../../bmc/power-sweep.js';
import { admitBoot, type BootGovernor, type BootPath } from '../../boot/governor.js';
import { generateRamdiskToken } from '../../boot/ramdisk-token.js';
import type { AutomatedCleaningMode, BareMetalHost, BootMode, FirmwareComponentStatus, ImageFormat, RebootMode } from '../../host/types.js';
import type { EventLog } from '../../store/types.js';
import { recordCalls, type BmcCallRecorder } from '../../bmc/bmc-call-recorder.js';
import { releaseSlot, wrapDriver } from '../../bmc/wrap-driver.js';
import { BusyHosts } from './busy-hosts.js';
import { NeedsRegistrationError } from '../errors.js';
import type {
  AdoptData, BMCEventSubscription, BmcSlotGate, DataImageReadiness, EventPublisher, Factory, FirmwareSettingsResult, HardwareState, HostData,
  HTTPHeaders, InspectData, InspectResult, ManagementAccessData, ManagementAccessResult, PrepareData, ProvisionData, Provisioner, Result,
  ProvisionerStep, ServicingData, StartedResult,
} from '../provisioner.js';
import { operationComplete, operationContinuing, operationFailed, transientError } from '../result.js';
import { bmcFailure, bmcMessage } from './bmc-result.js';
import { deprovisionStep, provisionStep, type DeployContext } from './deploy.js';
import { ImagePreparer, type ImageSource } from './image-prep.js';
import { hardwareDetailsFromInventory } from './inventory.js';
import type { LocalNode, NodeEntry, NodeOperation } from './node.js';
import { RAMDISK_TOKEN_GRACE_MS, timeoutDiagnosis } from './node.js';
import type { NodeTable } from './node-table.js';
import { builtinCustomDeployMethods, customDeployStep, type CustomDeployRegistry } from './custom-deploy.js';
import { fastInspectStep } from './fast-inspect.js';
import { settingSchemasOf } from './firmware-settings.js';
import type { PrepContext } from './prep-steps.js';
import { prepareStep } from './prepare.js';
import { serviceStep } from './service.js';
import { trackFirmwareVersions } from './firmware-versions.js';
import { bootRamdisk, bootsByVirtualMedia, bootsTheIso, FAST_TRACK_WINDOW_MS, ramdiskBootMessage, ramdiskBootPath, ramdiskIsUp, type RamdiskBootPath } from './ramdisk-boot.js';
import type { HostIsoSource } from './vmedia-iso.js';
import { IPMI_CIPHER_SUITE_ANNOTATION } from './bmc-host-options.js';
import { PowerIntents, SOFT_POWER_OFF_TIMEOUT_MS } from './power-intents.js';
import { powerOffStep, powerOnStep, type PowerStepContext } from './power-steps.js';
import type { RamdiskBuildSet } from './ramdisk-build-set.js';
import { ramdiskArchOf, ramdiskArchProblem, RamdiskUnavailableError } from './ramdisk-build-status.js';
import { HEAD_NODE_ARCH, type DebianArch } from '../../../images/index.js';

/** Settings shared by every host's local provisioner. */
export interface LocalProvisionerOptions {
  /** Where image preparation publishes its events. */
  store: Pick<EventLog, 'appendEvents'>;
  nodes: NodeTable;
  drivers: DriverRegistry;
  /** Reports every BMC call (`rackside_bmc_call_duration_seconds`); none: calls are not recorded. */
  bmcCalls?: BmcCallRecorder;
  nowMs: () => number;
  newId: () => string;
  /** Time a ramdisk operation may take before it fails with a diagnosis; `prepareMs`: a whole prepare/service job. */
  timeouts?: { inspectMs?: number; deployMs?: number; cleanMs?: number; prepareMs?: number };
  /** Methods `spec.customDeploy.method` may name; default the built-in set (custom-deploy.ts). */
  customDeploy?: CustomDeployRegistry;
  /** Hosts allowed in inspecting/provisioning/deprovisioning at once. */
  maxBusyHosts?: number;
  /** How often a running operation is re-checked. */
  pollMs?: number;
  /** The power sweep (config `bmc.powerPollSeconds`, `bmc.concurrency`); without it every read asks the BMC. */
  powerSweep?: { intervalMs: number; concurrency: number };
  /**
   * OS images for `provision`: the cache, boot HTTP's base URL as hosts reach it, and the
   * directory of config drives (served under image-prep.ts's mounts). Without it provision fails clearly.
   */
  images?: { source: ImageSource; httpBaseUrl: string; configDriveDir: string; configDriveFormat?: 'iso' | 'vfat'; progressIntervalMs?: number; retryDelayMs?: number; defaultNetworkData?: (bootMac: string) => unknown };
  /** Per-host ISOs for virtual-media hosts; without it they fail clearly when they need the ramdisk. */
  hostIso?: HostIsoSource;
  /** Paces power-ons into network boots and image streams (config `governor`, agent/boot/governor.ts); none: no pacing. */
  governor?: BootGovernor;
  /**
   * The agent's background ramdisk build (ramdisk-builds.ts): a host whose ramdisk is not built
   * yet waits instead of booting into a 404; none (RACKSIDE_RAMDISK_BUILD=off): hosts boot what is on disk.
   */
  ramdisk?: Pick<RamdiskBuildSet, 'gate' | 'forget'>;
  /**
   * The CPU architecture of host `name` as known now (`spec.architecture`, else what its
   * firmware last told DHCP, else inspection's `cpu.arch`; metal3's spelling), to wait for the
   * ramdisk of that architecture; absent or empty: the head node's.
   */
  hostArchitecture?: (name: string) => Promise<string>;
  /** Asks for a reconcile of a host soon: when its BMC shows a power state rackside asked for. */
  wake?: (name: string) => void;
  /**
   * Power changes (power-intents.ts): `changeTimeoutMs` how long a BMC may take to show one
   * (config `bmc.powerStateChangeTimeoutSeconds`, default 60 s), `softOffTimeoutMs` a soft
   * power-off (180 s), `pollMs` how often the BMC is read meanwhile (500 ms).
   */
  power?: { changeTimeoutMs?: number; softOffTimeoutMs?: number; pollMs?: number };
}

/** Whether a ramdisk operation started, or waits in the boot governor's line (its host is woken when its turn comes). */
export type OperationStart = 'started' | 'queued';

export { SOFT_POWER_OFF_TIMEOUT_MS };

/** Code outside any reconcile step: requests just run. */
const NO_SLOT: BmcSlotGate = { outside: (request) => request() };

/**
 * One BMC driver per host, rebuilt when its address or credentials change, its calls recorded
 * and, for the host's reconcile steps, made outside the step's slot (wrap-driver.ts).
 */
class DriverPool {
  /** `recorded`: the power sweep's (no step to release); `driver`: the steps'. */
  readonly #drivers = new Map<string, { key: string; recorded: BmcDriver; driver: BmcDriver }>();
  /** The slot of each host's current reconcile step (a host's steps never overlap). */
  readonly #slots = new Map<string, BmcSlotGate>();
  /** When rackside last changed each host's power: older sweep results no longer count. */
  readonly powerChangedAtMs = new Map<string, number>();
  constructor(private readonly registry: DriverRegistry, private readonly recorder: BmcCallRecorder | undefined, readonly intents: PowerIntents) {}

  /** Host `uid`'s requests from now on go through `slot` (a new step began). */
  enterStep(uid: string, slot: BmcSlotGate): void {
    this.#slots.set(uid, slot);
  }

  /** Identity of a host's BMC access: address, credentials, TLS setting and IPMI cipher suite pin (hashed). */
  static keyOf(host: HostData): string {
    const suite = host.objectMeta.annotations[IPMI_CIPHER_SUITE_ANNOTATION];
    return createHash('sha256')
      .update(JSON.stringify([host.bmcAddress, host.bmcCredentials.username, host.bmcCredentials.password, host.disableCertificateVerification, ...(suite === undefined ? [] : [suite])]))
      .digest('hex');
  }

  get(host: HostData): BmcDriver {
    const key = DriverPool.keyOf(host);
    const cached = this.#drivers.get(host.objectMeta.uid);
    if (cached?.key === key) return cached.driver;
    if (cached !== undefined) void cached.driver.close();
    const uid = host.objectMeta.uid;
    const suite = host.objectMeta.annotations[IPMI_CIPHER_SUITE_ANNOTATION];
    const made = this.registry.create(host.bmcAddress, host.bmcCredentials, {
      disableCertificateVerification: host.disableCertificateVerification, ...(suite === undefined ? {} : { ipmiCipherSuite: suite }),
    });
    const recorded = wrapDriver(made, this.recorder === undefined ? [] : [recordCalls(this.recorder)]);
    // Requests go out without holding the reconcile slot of the step that makes them.
    const driver = wrapDriver(recorded, [releaseSlot(() => this.#slots.get(uid) ?? NO_SLOT)]);
    this.#drivers.set(uid, { key, recorded, driver });
    return driver;
  }

  /** Host `uid`'s driver as the power sweep uses it (outside any step), once {@link get} made it. */
  recorded(uid: string): BmcDriver | undefined {
    return this.#drivers.get(uid)?.recorded;
  }

  /** Hosts whose current BMC access was checked against the BMC (uid → access key). */
  readonly validated = new Map<string, string>();

  async release(uid: string): Promise<void> {
    this.powerChangedAtMs.delete(uid);
    this.intents.forget(uid);
    this.validated.delete(uid);
    this.#slots.delete(uid);
    const cached = this.#drivers.get(uid);
    this.#drivers.delete(uid);
    await cached?.driver.close();
  }

  /** Every host's driver, for the power sweep. */
  entries(): { uid: string; driver: BmcDriver }[] {
    return [...this.#drivers.entries()].map(([uid, cached]) => ({ uid, driver: cached.recorded }));
  }

  async closeAll(): Promise<void> {
    const drivers = [...this.#drivers.values()];
    this.#drivers.clear();
    await Promise.allSettled(drivers.map((d) => d.driver.close()));
  }
}

/**
 * A driver with a capability may still talk to a BMC without it (Redfish with no UpdateService):
 * that answer means "nothing to report", as for a driver without the capability — not a failure
 * that leaves the firmware refresh undone, so every reconcile re-read the BMC (found by the
 * 1000-host benchmark: 2 of 3 BMC requests in steady state).
 */
async function nothingIfUnsupported<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (isBmcError(error, BmcErrorCode.unsupported)) return undefined;
    throw error;
  }
}

/** The Factory of local provisioners; owns the BMC sessions and the power sweep. */
export class LocalFactory implements Factory {
  readonly #pool: DriverPool;
  readonly #sweep: PowerSweep | undefined;
  readonly #preparer: ImagePreparer | undefined;
  readonly #busy: BusyHosts;
  constructor(private readonly options: LocalProvisionerOptions) {
    const power = options.power ?? {};
    const intents = new PowerIntents({ nowMs: options.nowMs, timeoutMs: power.changeTimeoutMs, softOffTimeoutMs: power.softOffTimeoutMs, pollMs: power.pollMs, wake: options.wake });
    this.#pool = new DriverPool(options.drivers, options.bmcCalls, intents);
    this.#busy = new BusyHosts(options.maxBusyHosts ?? 20);
    this.#preparer = options.images === undefined ? undefined : new ImagePreparer({ ...options.images, store: options.store, nowMs: options.nowMs });
    const sweep = options.powerSweep;
    if (sweep !== undefined) {
      // One query per known BMC per interval, bounded in concurrency; updateHardwareState reads the cache.
      this.#sweep = createPowerSweep({
        intervalMs: sweep.intervalMs,
        concurrency: sweep.concurrency,
        listTargets: () => Promise.resolve(this.#pool.entries().map((e) => ({ key: e.uid, driver: e.driver }))),
        // The provisioner's clock: sweep ages are compared with its power-change times.
        now: options.nowMs,
      });
      this.#sweep.start();
    }
  }

  /**
   * Counts the hosts already busy when the agent starts (their stored provisioning state), so
   * `hasCapacity` holds the limit from the first step on; steps keep the count current after.
   */
  countBusyHosts(hosts: readonly Readonly<BareMetalHost>[]): void {
    for (const host of hosts) {
      const address = host.spec.bmc?.address;
      if (address !== undefined && address !== '') this.#busy.note(host.metadata.uid, host.status.provisioning.state, bootsByVirtualMedia(address));
    }
  }

  /** {@inheritDoc Factory.newProvisioner} The step's state is counted for `hasCapacity` (busy-hosts.ts). */
  newProvisioner(hostData: HostData, publish: EventPublisher, step?: ProvisionerStep): Promise<Provisioner> {
    if (step !== undefined) {
      const uid = hostData.objectMeta.uid;
      this.#pool.enterStep(uid, step.bmcSlot);
      // Without BMC details (no credentials) a host's boot path is unknown: its count stays as it was.
      if (hostData.bmcAddress !== '') this.#busy.note(uid, step.provisioningState, bootsByVirtualMedia(hostData.bmcAddress));
      else if (step.provisioningState === '' || step.provisioningState === 'unmanaged') this.#busy.forget(uid);
    }
    return Promise.resolve(new LocalProvisioner(hostData, publish, this.options, this.#pool, this.#sweep, this.#preparer, this.#busy));
  }

  /** Image preparations in progress, ready or failed (status page: image downloads). */
  imageDownloads(): { url: string; phase: 'queued' | 'download' | 'convert' | 'hash' | 'done' | 'failed'; bytes: number; totalBytes: number | null; error?: string }[] {
    return (this.#preparer?.downloads() ?? []).map(({ url, status }) => {
      switch (status.state) {
        case 'running':
          return {
            url, phase: status.progress?.phase ?? 'queued', bytes: status.progress?.bytes ?? 0, totalBytes: status.progress?.totalBytes ?? null,
            ...(status.waiting === undefined ? {} : { error: status.waiting.message }),
          };
        case 'ready':
          return { url, phase: 'done', bytes: status.prepared.image.sizeBytes, totalBytes: status.prepared.image.sizeBytes };
        case 'failed':
          return { url, phase: 'failed', bytes: 0, totalBytes: null, error: status.message };
      }
    });
  }

  /** The power sweep's last reading of host `uid`, however old (status page: BMC reachability). */
  powerEntry(uid: string): PowerSweepEntry | undefined {
    return this.#sweep?.peek(uid);
  }

  /** Stops the sweep and closes every BMC session (agent shutdown). */
  async close(): Promise<void> {
    this.#pool.intents.close();
    await this.#sweep?.stop();
    await this.#pool.closeAll();
  }
}

class LocalProvisioner implements Provisioner {
  constructor(
    private readonly host: HostData,
    private readonly publish: EventPublisher,
    private readonly options: LocalProvisionerOptions,
    private readonly pool: DriverPool,
    private readonly sweep: PowerSweep | undefined,
    private readonly preparer: ImagePreparer | undefined,
    private readonly busy: BusyHosts,
  ) {}

  /** What deploy.ts's provision and deprovision steps use of this provisioner. */
  private context(): DeployContext {
    return {
      host: this.host,
      publish: this.publish,
      pollMs: this.pollMs,
      timeouts: { deployMs: this.options.timeouts?.deployMs ?? 120 * 60_000, cleanMs: this.options.timeouts?.cleanMs ?? 60 * 60_000 },
      preparer: this.preparer,
      node: () => this.node(),
      update: (change) => this.update(change),
      startOperation: (kind, timeoutMs, bootMode, params, options) => this.startOperation(kind, timeoutMs, bootMode, params, options),
      governBoot: (path, imageBytes) => this.governBoot(path, imageBytes),
      checkOperation: (kind) => this.checkOperation(kind),
      driver: () => this.driver(),
      setPower: (action) => this.setPower(action),
      releaseRamdiskMedia: () => this.releaseRamdiskMedia(),
    };
  }

  /** Ejects the ramdisk ISO of a virtual-media host (best effort: the media URL stops working anyway). */
  private async releaseRamdiskMedia(): Promise<void> {
    if (bootsByVirtualMedia(this.host.bmcAddress)) await this.driver().virtualMedia.ejectMedia().catch(() => undefined);
  }

  /** Boots the ramdisk by network or virtual media (ramdisk-boot.ts). */
  private async bootRamdisk(bootMode: BootMode, token: string): Promise<void> {
    const target = { driver: this.driver(), setPower: (a: PowerAction) => this.setPower(a), path: this.ramdiskPath, hostIso: this.options.hostIso, arch: await this.ramdiskArch() };
    // The BMC's URI stands for this boot only (node.ts decodeRamdiskIntent: DHCP then names no boot file).
    await this.setHttpBootUri(undefined);
    const outcome = await bootRamdisk(target, bootMode, token);
    if (outcome.httpBootUri !== undefined) await this.setHttpBootUri(outcome.httpBootUri);
  }

  /** Records (or clears) the URI the BMC holds for the current ramdisk boot. */
  private async setHttpBootUri(uri: string | undefined): Promise<void> {
    await this.options.nodes.update(this.uid, (entry) => {
      if (entry.httpBootUri === uri) return { entry, write: false, value: undefined };
      if (uri === undefined) delete entry.httpBootUri;
      else entry.httpBootUri = uri;
      return { entry, write: true, value: undefined };
    });
  }

  private get uid(): string {
    return this.host.objectMeta.uid;
  }

  private driver(): BmcDriver {
    return this.pool.get(this.host);
  }

  private async node(): Promise<{ entry: NodeEntry; node: LocalNode }> {
    const entry = await this.options.nodes.get(this.uid);
    if (entry.local === undefined) throw new NeedsRegistrationError(`host ${this.host.objectMeta.name} is not registered with the local provisioner`);
    return { entry, node: entry.local };
  }

  private update(change: (node: LocalNode, entry: NodeEntry) => void): Promise<void> {
    return this.options.nodes.update(this.uid, (entry) => {
      if (entry.local === undefined) return { entry, write: false, value: undefined };
      change(entry.local, entry);
      return { entry, write: true, value: undefined };
    });
  }

  /**
   * Changes power through the driver (one request; power-intents.ts then watches the BMC until it
   * shows the new state) and notes when, so the sweep's older readings are ignored.
   */
  private async setPower(action: PowerAction): Promise<void> {
    this.pool.powerChangedAtMs.set(this.uid, this.options.nowMs());
    const driver = this.driver();
    const watched = this.pool.recorded(this.uid) ?? driver;
    await this.pool.intents.request(this.uid, this.host.objectMeta.name, action, watched, () => driver.power.setPower(action));
  }

  /** What powerOn and powerOff (power-steps.ts) use of this provisioner. */
  private powerContext(): PowerStepContext {
    return {
      uid: this.uid, intents: this.pool.intents, nowMs: this.options.nowMs, requeueMs: Math.min(this.pollMs, 5_000),
      getPowerState: () => this.driver().power.getPowerState(), setPower: (action) => this.setPower(action),
    };
  }

  private get pollMs(): number {
    return this.options.pollMs ?? 10_000;
  }

  /** How this host boots the ramdisk: network (PXE), virtual media, or UEFI HTTP boot. */
  private get ramdiskPath(): RamdiskBootPath {
    return ramdiskBootPath(this.host.bmcAddress);
  }

  /** The governor's view of the boot (a UEFI HTTP boot streams from this agent, like a network boot). */
  private get bootPath(): Exclude<BootPath, 'none'> {
    return this.ramdiskPath === 'virtual-media' ? 'virtual-media' : 'network';
  }

  /** Whether this host may boot by `path` (streaming `imageBytes` after it) now: governor.ts `admitBoot`. */
  private governBoot(path: BootPath, imageBytes: number): Promise<boolean> {
    return admitBoot(this.options.governor, { uid: this.uid, name: this.host.objectMeta.name, path, imageBytes }, this.publish);
  }

  /**
   * Starts a ramdisk operation: token, boot intent, record, then boot the host — unless
   * `fastTrack` is asked and the ramdisk is still heartbeating, which then gets the command
   * without a reboot (ramdisk-boot.ts `ramdiskIsUp`). With a boot governor, the power-on (or
   * the fast-tracked deploy's image stream) waits for its turn first: `queued`, nothing written.
   */
  private async startOperation(
    kind: NodeOperation['kind'], timeoutMs: number, bootMode: BootMode, params: Pick<NodeOperation, 'deploy' | 'clean'> = {}, options: { fastTrack?: boolean } = {},
  ): Promise<OperationStart> {
    if (!(await this.ramdiskReady(kind, options.fastTrack === true))) return 'queued';
    if (this.options.governor !== undefined) {
      const fastTrack = options.fastTrack === true && ramdiskIsUp(await this.options.nodes.get(this.uid), this.options.nowMs());
      if (!(await this.governBoot(fastTrack ? 'none' : this.bootPath, params.deploy?.imageSizeBytes ?? 0))) return 'queued';
    }
    const now = this.options.nowMs();
    const started = await this.options.nodes.update(this.uid, (entry) => {
      const node = entry.local;
      if (node === undefined) return { entry, write: false, value: undefined };
      const fastTrack = options.fastTrack === true && ramdiskIsUp(entry, now);
      entry.boot = 'ramdisk';
      // A fresh token per ramdisk boot; a fast-track handoff talks to the ramdisk already running with the old one.
      if (!fastTrack || entry.token === undefined) entry.token = generateRamdiskToken();
      entry.tokenExpiresAtMs = now + timeoutMs + RAMDISK_TOKEN_GRACE_MS;
      const token = entry.token;
      node.op = { kind, commandId: `${kind}-${this.options.newId().slice(0, 12)}`, startedAtMs: now, deadlineMs: now + timeoutMs, phase: 'booting', ...params };
      if (fastTrack) node.op.fastTrack = true;
      node.bootMode = bootMode;
      node.state = kind === 'inspect' ? 'inspecting' : kind === 'deploy' ? 'deploying' : 'cleaning';
      return { entry, write: true, value: { fastTrack, token, commandId: node.op.commandId } };
    });
    if (started === undefined) throw new NeedsRegistrationError(`host ${this.host.objectMeta.name} is not registered with the local provisioner`);
    const { fastTrack, token, commandId } = started;
    const reason = `${kind === 'inspect' ? 'Inspection' : kind === 'deploy' ? 'Deploy' : 'Cleaning'}Started`;
    if (!fastTrack) {
      try {
        await this.bootRamdisk(bootMode, token);
      } catch (error) {
        // Nothing booted (e.g. a reset of a host that powered itself off meanwhile): no operation
        // runs, so the retry starts one afresh instead of waiting for a ramdisk until the deadline.
        await this.update((n) => { if (n.op?.commandId === commandId) delete n.op; });
        throw error;
      }
    }
    this.publish(reason, ramdiskBootMessage(kind, fastTrack ? 'fast-track' : this.ramdiskPath));
    return 'started';
  }

  /**
   * Whether the ramdisk this host boots is built (ramdisk-builds.ts `gate`): true, or false and a
   * `WaitingForRamdisk` event when what it waits for changed (it is woken when the build ends);
   * throws {@link RamdiskUnavailableError} when the build failed. A fast-track handoff to a
   * ramdisk still running needs no boot, so no build.
   */
  private async ramdiskReady(kind: NodeOperation['kind'], fastTrack: boolean): Promise<boolean> {
    const builds = this.options.ramdisk;
    if (builds === undefined) return true;
    if (fastTrack && ramdiskIsUp(await this.options.nodes.get(this.uid), this.options.nowMs())) return true;
    const arch = await this.ramdiskArch();
    const gate = builds.gate(this.host.objectMeta.name, bootsTheIso(this.host.bmcAddress) && this.options.hostIso !== undefined ? 'iso' : 'initrd', arch);
    switch (gate.kind) {
      case 'ready':
        if (gate.waited) this.publish('RamdiskReady', `the ${arch} ramdisk is built: booting it to ${kind}`);
        return true;
      case 'wait':
        if (gate.changed) this.publish('WaitingForRamdisk', gate.message);
        return false;
      case 'failed':
        throw new RamdiskUnavailableError(gate.message);
    }
  }

  /** The architecture of the ramdisk this host boots (see `hostArchitecture`); the head node's when unknown. */
  private async ramdiskArch(): Promise<DebianArch> {
    const spelled = (await this.options.hostArchitecture?.(this.host.objectMeta.name)) ?? '';
    return spelled === '' ? HEAD_NODE_ARCH : ramdiskArchOf(spelled) ?? HEAD_NODE_ARCH;
  }

  /**
   * Why a network boot under way cannot load its ramdisk, or undefined: the host was powered on
   * for the ramdisk of the architecture known then (none: the head node's), and its firmware's
   * DHCP request has since named another architecture whose ramdisk is not built — the boot
   * lookup sends it there, to a 404. Failing now, not at the operation's timeout, lets the retry
   * wait for that build (ramdiskReady) with the host powered off.
   */
  private async unbuiltRamdiskBooted(): Promise<string | undefined> {
    const builds = this.options.ramdisk;
    if (builds === undefined || (bootsTheIso(this.host.bmcAddress) && this.options.hostIso !== undefined)) return undefined;
    const arch = await this.ramdiskArch();
    const name = this.host.objectMeta.name;
    const gate = builds.gate(name, 'initrd', arch);
    if (gate.kind === 'ready') return undefined;
    builds.forget(name); // the retry tells the host what it waits for (WaitingForRamdisk)
    return `the host network-booted as ${arch} (its firmware's DHCP client architecture) and the ${arch} ramdisk is not built: ${gate.message}; the retry waits for it (set spec.architecture to boot it only once it is built)`;
  }

  /** Checks a running operation: done, failed (with its message), timed out, or still running. */
  private async checkOperation(kind: NodeOperation['kind']): Promise<'none' | 'done' | 'running' | { failed: string }> {
    const { node, entry } = await this.node();
    const op = node.op;
    if (op?.kind !== kind) return 'none';
    if (op.phase === 'done') return 'done';
    if (op.phase === 'failed') return { failed: op.message ?? `${kind} failed` };
    const now = this.options.nowMs();
    if (op.phase === 'booting' && op.fastTrack === true && now - op.startedAtMs >= FAST_TRACK_WINDOW_MS) {
      // The ramdisk we counted on went quiet: boot it after all (the deadline still counts from the start).
      if (!(await this.governBoot(this.bootPath, 0))) return 'running';
      await this.update((n) => {
        if (n.op?.commandId === op.commandId) delete n.op.fastTrack;
      });
      await this.bootRamdisk(node.bootMode ?? 'UEFI', entry.token ?? '');
      this.publish('FastTrackFallback', `no heartbeat took ${kind} within ${FAST_TRACK_WINDOW_MS / 1000} s: booting the ramdisk`);
      return 'running';
    }
    const lostBoot = op.phase === 'booting' && op.fastTrack !== true ? await this.unbuiltRamdiskBooted() : undefined;
    if (lostBoot !== undefined) {
      await this.update((n) => {
        if (n.op !== undefined) {
          n.op.phase = 'failed';
          n.op.message = lostBoot;
        }
      });
      await this.setPower('off').catch(() => undefined); // best effort: it sits in a boot that cannot load
      return { failed: lostBoot };
    }
    if (now > op.deadlineMs) {
      const message = timeoutDiagnosis(op, node.ramdisk, now, bootsByVirtualMedia(this.host.bmcAddress) ? 'virtual-media' : 'network');
      await this.update((n) => {
        if (n.op !== undefined) {
          n.op.phase = 'failed';
          n.op.message = message;
        }
      });
      return { failed: message };
    }
    return 'running';
  }

  async validateManagementAccess(data: ManagementAccessData, credentialsChanged: boolean, restartOnFailure: boolean): Promise<ManagementAccessResult> {
    let address;
    try {
      address = parseBmcAddress(this.host.bmcAddress);
    } catch (error) {
      return { result: operationFailed(bmcMessage(error)), provID: '' };
    }
    const capabilities = bmcCapabilities(address);
    if (capabilities.needsMac && this.host.bootMACAddress === '') {
      return { result: operationFailed(`bootMACAddress is required for ${address.scheme}:// BMC addresses (the host network-boots)`), provID: '' };
    }
    // Called on every reconcile: once this BMC access was checked, a registered host with the
    // same address and credentials costs no BMC request (upstream's contract: cheap when unchanged).
    const accessKey = DriverPool.keyOf(this.host);
    const known = (await this.options.nodes.get(this.uid)).local;
    // Like Ironic's configureNode PATCHing automated_clean: provision cleans a manageable node first when on.
    const automatedClean = data.automatedCleaningMode !== 'disabled';
    if (known !== undefined && known.automatedClean !== automatedClean) {
      await this.update((n) => {
        n.automatedClean = automatedClean;
      });
    }
    if (known !== undefined && !credentialsChanged && !restartOnFailure && this.pool.validated.get(this.uid) === accessKey && known.name === this.host.objectMeta.name && known.bootMACAddress === this.host.bootMACAddress.toLowerCase()) {
      return { result: operationComplete(), provID: known.provID };
    }
    try {
      await this.driver().power.getPowerState();
    } catch (error) {
      // A name that does not resolve, no common cipher suite (and refused credentials, in bmcFailure): the user must act (registration error).
      if (isPermanentBmcError(error) && !isBmcError(error, BmcErrorCode.auth)) return { result: operationFailed(`BMC ${address.hostname}: ${bmcMessage(error)}`), provID: '' };
      if (known !== undefined && !credentialsChanged && (isBmcError(error, BmcErrorCode.unreachable) || isBmcError(error, BmcErrorCode.timeout))) {
        // A registered host whose BMC is briefly unreachable is a transient problem, not a registration error.
        throw transientError(`BMC ${address.hostname}: ${bmcMessage(error)}`, error);
      }
      const result = bmcFailure(`BMC ${address.hostname}`, error);
      return { result, provID: '' };
    }
    this.pool.validated.set(this.uid, accessKey);
    const provID = known?.provID ?? this.options.newId();
    const adopted = data.state === 'provisioned' || data.state === 'externally provisioned';
    await this.options.nodes.update(this.uid, (entry) => {
      const local: LocalNode = entry.local ?? { provID, name: '', bootMACAddress: '', state: adopted ? 'active' : 'manageable' };
      local.name = this.host.objectMeta.name;
      local.bootMACAddress = this.host.bootMACAddress.toLowerCase();
      local.automatedClean = automatedClean;
      entry.local = local;
      // The ramdisk token is made here, with the record, so the boot lookup (which would make one
      // for a ramdisk boot it serves) never races us writing this entry.
      entry.token ??= generateRamdiskToken();
      return { entry, write: true, value: undefined };
    });
    if (known === undefined) this.publish('Registered', `Registered with the local provisioner (BMC ${address.scheme}://${address.host})`);
    return { result: operationComplete(), provID };
  }

  preprovisioningImageFormats(): Promise<ImageFormat[] | null> {
    // rackside builds and serves its own ramdisk: no external preprovisioning image is wanted.
    return Promise.resolve(null);
  }

  /** What prepare, service and fast inspection (prepare.ts, service.ts, fast-inspect.ts) use of this provisioner. */
  private prepContext(): PrepContext {
    return {
      host: this.host,
      publish: this.publish,
      pollMs: this.pollMs,
      nowMs: this.options.nowMs,
      newId: this.options.newId,
      ramdiskTimeoutMs: this.options.timeouts?.cleanMs ?? 60 * 60_000,
      jobTimeoutMs: this.options.timeouts?.prepareMs ?? 3 * 60 * 60_000,
      startRamdiskOperation: (kind, timeoutMs, bootMode, params) => this.startOperation(kind, timeoutMs, bootMode, params),
      node: () => this.node(),
      inventory: () => this.options.nodes.inventory(this.uid),
      update: (change) => this.update(change),
      driver: () => this.driver(),
      setPower: (action) => this.setPower(action),
    };
  }

  async inspectHardware(data: InspectData, restartOnFailure: boolean, refresh: boolean, forceReboot: boolean): Promise<InspectResult> {
    if (data.inspectionMode === 'fast') return fastInspectStep(this.prepContext(), data, refresh);
    const status = await this.checkOperation('inspect');
    if (status === 'done') {
      const details = hardwareDetailsFromInventory(await this.options.nodes.inventory(this.uid));
      await this.update((n, entry) => {
        delete n.op;
        n.state = 'manageable';
        entry.boot = 'none';
      });
      await this.setPower('off').catch(() => undefined); // best effort: the next step powers as needed
      return { result: operationComplete(), started: false, details };
    }
    // No operation yet (or a refresh, which the controller only asks for while inspecting) starts one.
    const restart = (typeof status === 'object' && restartOnFailure) || (status === 'running' && forceReboot) || status === 'none';
    if (typeof status === 'object' && !restart) return { result: operationFailed(status.failed), started: false };
    if (status === 'running' && !restart) return { result: operationContinuing(this.pollMs), started: false };
    const archProblem = this.ramdiskArchProblem(data.cpuArchitecture);
    if (archProblem !== undefined) return { result: operationFailed(`starting inspection: ${archProblem}`), started: false };
    try {
      const start = await this.startOperation('inspect', this.options.timeouts?.inspectMs ?? 30 * 60_000, data.bootMode);
      if (start === 'queued') return { result: operationContinuing(this.pollMs), started: false };
    } catch (error) {
      return { result: bmcFailure('starting inspection', error), started: false };
    }
    return { result: operationContinuing(this.pollMs), started: true };
  }

  async updateHardwareState(): Promise<HardwareState> {
    const cached = this.sweep?.get(this.uid);
    const changedAtMs = this.pool.powerChangedAtMs.get(this.uid) ?? 0;
    // The BMC showed the state rackside last asked for (power-intents.ts): no older reading counts.
    const reached = this.pool.intents.reached(this.uid, changedAtMs);
    if (reached !== undefined) return { poweredOn: reached };
    if (cached !== undefined && cached.error === undefined && cached.checkedAt > changedAtMs) return cached.poweredOn === undefined ? {} : { poweredOn: cached.poweredOn };
    try {
      const power = await this.driver().power.getPowerState();
      this.pool.intents.observe(this.uid, power);
      return power === 'on' ? { poweredOn: true } : power === 'off' ? { poweredOn: false } : {};
    } catch (error) {
      throw transientError(`reading power state: ${bmcMessage(error)}`, error);
    }
  }

  async adopt(data: AdoptData, _restartOnFailure: boolean): Promise<Result> {
    const { node } = await this.node();
    if (node.state === 'active') return operationComplete();
    // Like Ironic (docs/metal3-mapping.md, "Ironic mapping", Adopt): during deprovisioning, or with an operation of ours in
    // flight (cleaning), there is nothing to adopt; deprovision handles the node.
    if (data.state === 'deprovisioning' || node.op !== undefined) return operationComplete();
    await this.update((n, entry) => {
      n.state = 'active';
      delete n.op;
      entry.boot = 'local-disk';
    });
    this.publish('Adopted', 'Host adopted as provisioned: booting from its local disk');
    return operationComplete();
  }

  prepare(data: PrepareData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult> {
    return prepareStep(this.prepContext(), data, unprepared, restartOnFailure);
  }

  service(data: ServicingData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult> {
    return serviceStep(this.prepContext(), data, unprepared, restartOnFailure);
  }

  provision(data: ProvisionData, forceReboot: boolean): Promise<Result> {
    if ((data.customDeploy?.method ?? '') !== '') return customDeployStep(this.options.customDeploy ?? builtinCustomDeployMethods(), this.context(), data, forceReboot);
    const archProblem = data.image.format === 'live-iso' ? undefined : this.ramdiskArchProblem(data.cpuArchitecture);
    if (archProblem !== undefined) return Promise.resolve(operationFailed(`Image provisioning failed (url: ${data.image.url}): ${archProblem}`));
    return provisionStep(this.context(), data, forceReboot);
  }

  /**
   * Why this host cannot boot a ramdisk the agent builds (a CPU architecture none is built for),
   * when the agent builds them; a ramdisk put in place by hand (RACKSIDE_RAMDISK_BUILD=off) is not judged.
   */
  private ramdiskArchProblem(cpuArchitecture: string): string | undefined {
    return this.options.ramdisk === undefined ? undefined : ramdiskArchProblem(cpuArchitecture);
  }

  deprovision(restartOnFailure: boolean, automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
    return deprovisionStep(this.context(), restartOnFailure, automatedCleaningMode);
  }

  async delete(): Promise<Result> {
    this.options.governor?.forget(this.uid);
    this.options.ramdisk?.forget(this.host.objectMeta.name);
    await this.preparer?.forget(this.uid);
    await this.options.nodes.remove(this.uid);
    await this.pool.release(this.uid);
    this.busy.forget(this.uid);
    return operationComplete();
  }

  async detach(_force: boolean): Promise<Result> {
    // Like upstream: the backend forgets the host; re-attaching registers and adopts it again.
    return this.delete();
  }

  /** {@inheritDoc Provisioner.powerOn} One request, then waits for the BMC (power-steps.ts). */
  powerOn(_force: boolean): Promise<Result> {
    return powerOnStep(this.powerContext());
  }

  /** {@inheritDoc Provisioner.powerOff} One request, then waits for the BMC; soft power-off up to 180 s (power-steps.ts). */
  powerOff(rebootMode: RebootMode, force: boolean, _automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
    return powerOffStep(this.powerContext(), rebootMode, force);
  }

  tryInit(): Promise<boolean> {
    return Promise.resolve(true);
  }

  /**
   * Upstream (docs/metal3-mapping.md, "Ironic mapping", HasCapacity): virtual-media hosts are unlimited and never counted;
   * otherwise the network-booting hosts busy inspecting, provisioning or deprovisioning (this one
   * excluded) must stay below the provisioning limit; a host already busy always has its place.
   */
  hasCapacity(): Promise<boolean> {
    // The counter the factory keeps (busy-hosts.ts), not a scan of the hosts.
    return Promise.resolve(this.busy.admit(this.uid, bootsByVirtualMedia(this.host.bmcAddress)));
  }

  async getFirmwareSettings(includeSchema: boolean): Promise<FirmwareSettingsResult> {
    const driver = this.driver();
    if (!driver.supports('biosSettings')) return { settings: {} };
    const bios = await driver.biosSettings.getBiosSettings();
    return includeSchema ? { settings: { ...bios.current }, schema: settingSchemasOf(bios.schema) } : { settings: { ...bios.current } };
  }

  async addBMCEventSubscriptionForNode(subscription: BMCEventSubscription, httpHeaders: HTTPHeaders): Promise<Result> {
    try {
      const created = await this.driver().eventSubscriptions.createSubscription({
        destination: subscription.spec.destination,
        context: subscription.spec.context,
        httpHeaders: Object.assign({}, ...httpHeaders) as Record<string, string>,
      });
      subscription.status.subscriptionID = created.id;
      return operationComplete();
    } catch (error) {
      return bmcFailure('creating the BMC event subscription', error);
    }
  }

  async removeBMCEventSubscriptionForNode(subscription: BMCEventSubscription): Promise<Result> {
    const id = subscription.status.subscriptionID ?? '';
    if (id === '') return operationComplete();
    try {
      await this.driver().eventSubscriptions.deleteSubscription(id);
      return operationComplete();
    } catch (error) {
      return bmcFailure('removing the BMC event subscription', error);
    }
  }

  async getFirmwareComponents(): Promise<FirmwareComponentStatus[]> {
    const driver = this.driver();
    if (!driver.supports('firmware')) return [];
    const inventory = (await nothingIfUnsupported(driver.firmware.getFirmwareInventory())) ?? [];
    const reading = inventory.map((c) => ({ component: c.component, version: c.version }));
    const nowIso = new Date(this.options.nowMs()).toISOString();
    // The initial and last-flashed versions are what was seen before: kept with the node record.
    return this.options.nodes.update(this.uid, (entry) => {
      const tracked = trackFirmwareVersions(entry.local?.firmware, reading, nowIso);
      if (entry.local === undefined || !tracked.changed) return { entry, write: false, value: tracked.components };
      entry.local.firmware = tracked.seen;
      return { entry, write: true, value: tracked.components };
    });
  }

  isDataImageReady(): Promise<DataImageReadiness> {
    return Promise.resolve({ isNodeBusy: false });
  }

  async attachDataImage(url: string): Promise<void> {
    await this.driver().virtualMedia.insertMedia({ imageUrl: url });
  }

  async detachDataImage(): Promise<void> {
    await this.driver().virtualMedia.ejectMedia();
  }
}
