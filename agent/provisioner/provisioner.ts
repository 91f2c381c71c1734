/**
 * @module The Provisioner API: metal3 baremetal-operator's `pkg/provisioner` in TypeScript
 * idiom (docs/metal3-mapping.md, "Provisioner contract"). Go's multiple returns become one result object; every
 * method is async. Implementations: `local` (drivers + bootsvc + images), `fixture`
 * (stateful in-memory fake) and `demo` (behaviour chosen by host name).
 *
 * Four outcomes, never blurred (docs/metal3-mapping.md, "Provisioner contract"):
 * - still running → `{ dirty: true, requeueAfterMs }` (`operationContinuing` in result.ts);
 * - done → a clean result (`operationComplete`);
 * - failed, the user must act → `errorMessage` (`operationFailed`); the controller
 *   records it, counts it and backs off;
 * - transient (network, BMC busy) → the promise rejects; the controller retries.
 *
 * Every method is re-entrant: the host controller calls it again and again, once per
 * reconcile, until it reports done. It must look at the backend state first and be cheap and
 * idempotent when nothing changed.
 * @pure
 */
import type {
  AutomatedCleaningMode,
  BootMode,
  CustomDeploy,
  DesiredSettingsMap,
  FirmwareComponentStatus,
  FirmwareConfig,
  FirmwareUpdate,
  HardwareDetails,
  Image,
  ImageFormat,
  InspectionMode,
  OperationalStatus,
  ProvisioningState,
  RAIDConfig,
  RebootMode,
  RootDeviceHints,
  SettingSchema,
  SettingsMap,
} from '../host/types.js';

/** What one provisioner call reports back. `requeueAfterMs` is meaningful only when `dirty`. */
export interface Result {
  /** The operation is still running: call again after `requeueAfterMs`. */
  dirty: boolean;
  /** Delay before the next call, in milliseconds (0 = as soon as possible). */
  requeueAfterMs: number;
  /** Non-empty when the operation failed and the user must act; recorded in status. */
  errorMessage: string;
}

/** The host's power as last seen; `poweredOn` undefined means unknown. */
export interface HardwareState {
  poweredOn?: boolean;
}

/** BMC credentials from the host's `spec.bmc.credentialsName` Secret, trimmed. */
export interface Credentials {
  username: string;
  password: string;
}

/** The parts of `metadata` a provisioner may look at. */
export interface HostObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
}

/** Everything a provisioner needs to address one host (metal3 `HostData`). */
export interface HostData {
  objectMeta: HostObjectMeta;
  bmcAddress: string;
  bmcCredentials: Credentials;
  disableCertificateVerification: boolean;
  bootMACAddress: string;
  /** `status.provisioning.ID`: the provisioner's own id for this host, empty until registered. */
  provisionerID: string;
}

/**
 * Publishes a Kubernetes-style event (`reason` in CamelCase, human `message`) for the host;
 * `type` defaults to `Normal` (`Warning`: something the user should look at, e.g. a skipped inventory part).
 */
export type EventPublisher = (reason: string, message: string, type?: 'Normal' | 'Warning') => void;

/** Lazily fetched per-host config-drive data (secrets may be read only when provisioning). */
export interface HostConfigData {
  userData(): Promise<string>;
  networkData(): Promise<string>;
  metaData(): Promise<string>;
}

/** An image built for the host by the image provider. */
export interface GeneratedImage {
  imageURL: string;
  kernelURL?: string;
  extraKernelParams?: string;
}

/** A preprovisioning (ramdisk) image of a given format. */
export interface PreprovisioningImage extends GeneratedImage {
  format: ImageFormat;
}

/** HTTP headers for BMC event subscriptions: one single-entry map per header, as upstream. */
export type HTTPHeaders = Record<string, string>[];

/** Input to {@link Provisioner.validateManagementAccess}. */
export interface ManagementAccessData {
  bootMode: BootMode;
  automatedCleaningMode: AutomatedCleaningMode;
  state: ProvisioningState;
  operationalStatus: OperationalStatus;
  currentImage?: Image;
  preprovisioningImage?: PreprovisioningImage;
  preprovisioningNetworkData: string;
  hasCustomDeploy: boolean;
  disablePowerOff: boolean;
  cpuArchitecture: string;
  hardwareDetails?: HardwareDetails;
  disableInspection: boolean;
  inspectionMode: InspectionMode;
}

/** Input to {@link Provisioner.adopt}. */
export interface AdoptData {
  state: ProvisioningState;
}

/** Input to {@link Provisioner.inspectHardware}. */
export interface InspectData {
  bootMode: BootMode;
  cpuArchitecture: string;
  inspectionMode: InspectionMode;
}

/** Input to {@link Provisioner.prepare}. */
export interface PrepareData {
  targetRAIDConfig?: RAIDConfig;
  actualRAIDConfig?: RAIDConfig;
  rootDeviceHints?: RootDeviceHints;
  /** Legacy `spec.firmware`; dropped upstream on main, kept for old manifests. */
  firmwareConfig?: FirmwareConfig;
  targetFirmwareSettings: DesiredSettingsMap;
  actualFirmwareSettings: SettingsMap;
  targetFirmwareComponents: FirmwareUpdate[];
}

/** Input to {@link Provisioner.service}. */
export interface ServicingData {
  firmwareConfig?: FirmwareConfig;
  targetFirmwareSettings: DesiredSettingsMap;
  actualFirmwareSettings: SettingsMap;
  targetFirmwareComponents: FirmwareUpdate[];
  /** True when any firmware setting or update is specified: separates "nothing to do" from "spec cleared". */
  hasFirmwareSpec: boolean;
}

/** Input to {@link Provisioner.provision}. */
export interface ProvisionData {
  image: Image;
  hostConfig: HostConfigData;
  bootMode: BootMode;
  hardwareProfile: string;
  rootDeviceHints?: RootDeviceHints;
  customDeploy?: CustomDeploy;
  cpuArchitecture: string;
  /** `user:password` for `oci://` images. */
  imagePullSecret?: string;
}

/** A BMCEventSubscription resource, as much as the provisioner reads and writes of it. */
export interface BMCEventSubscription {
  metadata: { name: string; namespace: string };
  spec: { hostName: string; destination: string; context: string; httpHeadersRef?: { name: string; namespace?: string } };
  status: { subscriptionID?: string; error?: string };
}

/** Result of {@link Provisioner.validateManagementAccess}. */
export interface ManagementAccessResult {
  result: Result;
  /** The provisioner's id for the host; empty when none was allocated. */
  provID: string;
}

/** Result of {@link Provisioner.inspectHardware}. */
export interface InspectResult {
  result: Result;
  /** Inspection was actually (re)started in the backend by this call. */
  started: boolean;
  /** Set, with a clean result, when inspection is complete. */
  details?: HardwareDetails;
}

/** Result of {@link Provisioner.prepare} and {@link Provisioner.service}. */
export interface StartedResult {
  result: Result;
  /** The work was actually kicked off: the controller commits the new settings to status. */
  started: boolean;
}

/** Result of {@link Provisioner.getFirmwareSettings}. */
export interface FirmwareSettingsResult {
  settings: SettingsMap;
  /** Present when the schema was asked for and is known. */
  schema?: Record<string, SettingSchema>;
}

/** Result of {@link Provisioner.isDataImageReady}. */
export interface DataImageReadiness {
  /** The backend is busy with the host; try again later. */
  isNodeBusy: boolean;
  /** The last attach/detach failure, if any. */
  nodeError?: string;
}

/**
 * Drives one host's backend. Every method is re-entrant (see the module docs): called once
 * per reconcile until done, cheap and idempotent when nothing changed.
 */
export interface Provisioner {
  /**
   * Checks the BMC address and credentials, creates or updates the backend record for the
   * host and returns its id. Called on *every* reconcile of a registered host, so it must be
   * a no-op when nothing changed. `credentialsChanged`: push credentials again.
   * `restartOnFailure`: the controller already recorded a registration error and waited; retry.
   * Throws {@link NeedsPreprovisioningImageError} when a ramdisk/ISO is needed and none was supplied.
   * `dirty` stays true while registration is in progress.
   */
  validateManagementAccess(
    data: ManagementAccessData,
    credentialsChanged: boolean,
    restartOnFailure: boolean,
  ): Promise<ManagementAccessResult>;

  /** The preprovisioning image formats this host can boot, best first; `null` = none wanted. An empty list is an error. */
  preprovisioningImageFormats(): Promise<ImageFormat[] | null>;

  /**
   * Runs hardware inspection. Returns `started` when inspection was kicked off, `dirty` while
   * it runs, and `details` with a clean result when it is done. `refresh` re-inspects even
   * if data exists; `forceReboot` aborts a wait state so the host reboots into a new ramdisk.
   */
  inspectHardware(
    data: InspectData,
    restartOnFailure: boolean,
    refresh: boolean,
    forceReboot: boolean,
  ): Promise<InspectResult>;

  /** The host's power as last observed (cheap: may be a cached sweep result). */
  updateHardwareState(): Promise<HardwareState>;

  /** Brings an already-provisioned host under management without touching its disk. No-op for an active host; `dirty` while adopting. */
  adopt(data: AdoptData, restartOnFailure: boolean): Promise<Result>;

  /**
   * Applies RAID, BIOS settings and firmware updates before the host becomes available.
   * `unprepared`: there is new work to apply; when false only confirm the resting state.
   * `started` tells the controller to commit the new settings to status.
   */
  prepare(data: PrepareData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult>;

  /** Like {@link prepare} on a provisioned host during a reboot (servicing). */
  service(data: ServicingData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult>;

  /** Writes the image (or runs the custom deploy) and boots the host from disk. `dirty` until active. */
  provision(data: ProvisionData, forceReboot: boolean): Promise<Result>;

  /** Removes the image and cleans the disks per `automatedCleaningMode`. `dirty` until the host is available again. */
  deprovision(restartOnFailure: boolean, automatedCleaningMode: AutomatedCleaningMode): Promise<Result>;

  /** Forgets the host in the backend. `dirty` until gone; a host already gone completes. */
  delete(): Promise<Result>;

  /** Stops managing the host without changing it. `force` may interrupt in-flight operations. */
  detach(force: boolean): Promise<Result>;

  /** Powers the host on. `force` ignores a recorded power error. `dirty` until the change is seen. */
  powerOn(force: boolean): Promise<Result>;

  /**
   * Powers the host off (`soft` falls back to `hard` on a retry). `force` ignores a recorded
   * power error and goes straight to hard off. `dirty` until the change is seen.
   */
  powerOff(rebootMode: RebootMode, force: boolean, automatedCleaningMode: AutomatedCleaningMode): Promise<Result>;

  /** Whether the backend is ready for work (metal3 v0.9 `TryInit`; `false` → requeue 30 s). */
  tryInit(): Promise<boolean>;

  /** Whether another host may enter inspecting, provisioning or deprovisioning now. */
  hasCapacity(): Promise<boolean>;

  /** The host's actual BIOS settings, with the schema when `includeSchema`. */
  getFirmwareSettings(includeSchema: boolean): Promise<FirmwareSettingsResult>;

  /** Creates a BMC event subscription; sets `subscription.status.subscriptionID`. */
  addBMCEventSubscriptionForNode(subscription: BMCEventSubscription, httpHeaders: HTTPHeaders): Promise<Result>;

  /** Removes a BMC event subscription; a missing one completes. */
  removeBMCEventSubscriptionForNode(subscription: BMCEventSubscription): Promise<Result>;

  /** Firmware component versions; empty when unsupported or not known yet. */
  getFirmwareComponents(): Promise<FirmwareComponentStatus[]>;

  /** Whether a data image can be attached now, and the last attach/detach error. */
  isDataImageReady(): Promise<DataImageReadiness>;

  /** Inserts a data image (virtual media) from `url`. */
  attachDataImage(url: string): Promise<void>;

  /** Ejects the data image; a host without one completes. */
  detachDataImage(): Promise<void>;
}

/**
 * The reconcile slot of the step a provisioner works for (agent/host/reconcile-slot.ts): BMC
 * requests run through {@link BmcSlotGate.outside}, so a step waiting on its BMC lends its slot
 * to another step and takes it back (before steps not yet started) when the answer is in.
 */
export interface BmcSlotGate {
  /** Runs `request` (BMC I/O) without holding the slot; results and errors pass through. */
  outside<T>(request: () => Promise<T>): Promise<T>;
}

/** What the reconciler hands {@link Factory.newProvisioner} about the step the provisioner serves. */
export interface ProvisionerStep {
  /** The step's reconcile slot: BMC requests go through it. */
  bmcSlot: BmcSlotGate;
  /** The host's stored provisioning state at the start of the step (capacity counting). */
  provisioningState: ProvisioningState;
  /** Asks for another reconcile of this host soon (the reconciler's `wake`). */
  wake(): void;
}

/** Makes provisioners. May throw a transient error while the backend starts. */
export interface Factory {
  /**
   * A provisioner for one reconcile step of the host. `step` comes from the reconciler; callers
   * outside a step (tests, tools) may omit it: requests then hold no slot.
   */
  newProvisioner(hostData: HostData, publish: EventPublisher, step?: ProvisionerStep): Promise<Provisioner>;
}
