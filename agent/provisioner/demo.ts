/**
 * @module The demo provisioner: stateless, behaviour chosen by host name, so a status page or
 * a demo rack shows hosts parked in every state (upstream `pkg/provisioner/demo`,
 * docs/metal3-mapping.md, "Fixture and demo"). Hosts with other names complete every call; whether they stop at
 * `available` or `provisioned` depends on whether their spec has an image.
 * @pure
 */
import type { AutomatedCleaningMode, FirmwareComponentStatus, ImageFormat, RebootMode } from '../host/types.js';
import type {
  AdoptData,
  BMCEventSubscription,
  DataImageReadiness,
  EventPublisher,
  Factory,
  FirmwareSettingsResult,
  HardwareState,
  HostData,
  HTTPHeaders,
  InspectData,
  InspectResult,
  ManagementAccessData,
  ManagementAccessResult,
  PrepareData,
  ProvisionData,
  Provisioner,
  Result,
  ServicingData,
  StartedResult,
} from './provisioner.js';
import { operationComplete, operationContinuing, operationFailed } from './result.js';
import { cannedFirmwareComponents, cannedFirmwareSchema, cannedFirmwareSettings, cannedHardwareDetails } from './canned-hardware.js';

/** The demo host names with special behaviour (upstream's constants). */
export const DemoHost = {
  registrationError: 'demo-registration-error',
  registering: 'demo-registering',
  inspecting: 'demo-inspecting',
  preparing: 'demo-preparing',
  preparingError: 'demo-preparing-error',
  available: 'demo-available',
  validationError: 'demo-validation-error',
  provisioning: 'demo-provisioning',
  provisioned: 'demo-provisioned',
} as const;

/** One host of the demo rack: its name, what it shows, and whether its spec needs an image to get there. */
export interface DemoHostInfo {
  name: string;
  description: string;
  /** Seed the host with `spec.image` (and `online: true`) so it goes on to provisioning. */
  withImage: boolean;
}

/** Every demo host, in lifecycle order, with a one-line description; used to seed the demo rack. */
export const DEMO_HOSTS: readonly DemoHostInfo[] = [
  { name: DemoHost.registrationError, description: 'registration fails: "failed to register new host"', withImage: false },
  { name: DemoHost.registering, description: 'stays in registering forever', withImage: false },
  { name: DemoHost.inspecting, description: 'stays in inspecting forever', withImage: false },
  { name: DemoHost.preparing, description: 'stays in preparing (and servicing) forever', withImage: false },
  { name: DemoHost.preparingError, description: 'preparing fails: "preparing failed" (servicing: "servicing failed")', withImage: false },
  { name: DemoHost.available, description: 'completes everything and rests in available', withImage: false },
  { name: DemoHost.validationError, description: 'provisioning fails: "validation failed", then retries with backoff', withImage: true },
  { name: DemoHost.provisioning, description: 'stays in provisioning forever', withImage: true },
  { name: DemoHost.provisioned, description: 'completes everything and rests in provisioned', withImage: true },
];

/** Requeue delay of the demo's never-ending operations (upstream: 5 s). */
export const DEMO_REQUEUE_MS = 5_000;

/** Options of {@link DemoFactory}. */
export interface DemoFactoryOptions {
  /** Multiplies the requeue delay of never-ending operations. Default 1. */
  delayScale?: number;
}

/** Makes demo provisioners; keeps no state between calls. */
export class DemoFactory implements Factory {
  readonly #delayMs: number;

  constructor(options: DemoFactoryOptions = {}) {
    this.#delayMs = DEMO_REQUEUE_MS * (options.delayScale ?? 1);
  }

  /** Returns a provisioner whose behaviour is chosen by `hostData.objectMeta.name`; never fails. */
  newProvisioner(hostData: HostData, publish: EventPublisher): Promise<Provisioner> {
    return Promise.resolve(new DemoProvisioner(hostData, publish, this.#delayMs));
  }
}

/** One host's demo provisioner: every answer is a function of the host name and the arguments. */
class DemoProvisioner implements Provisioner {
  readonly #hostData: HostData;
  readonly #name: string;
  readonly #publish: EventPublisher;
  readonly #delayMs: number;

  constructor(hostData: HostData, publish: EventPublisher, delayMs: number) {
    this.#hostData = hostData;
    this.#name = hostData.objectMeta.name;
    this.#publish = publish;
    this.#delayMs = delayMs;
  }

  #forever(): Result {
    return operationContinuing(this.#delayMs);
  }

  validateManagementAccess(_data: ManagementAccessData, _credentialsChanged: boolean, _restartOnFailure: boolean): Promise<ManagementAccessResult> {
    const provID = this.#hostData.provisionerID !== '' ? this.#hostData.provisionerID : this.#name;
    switch (this.#name) {
      case DemoHost.registrationError:
        return Promise.resolve({ result: operationFailed('failed to register new host'), provID: this.#hostData.provisionerID });
      case DemoHost.registering:
        return Promise.resolve({ result: this.#forever(), provID: this.#hostData.provisionerID });
      default:
        return Promise.resolve({ result: operationComplete(), provID });
    }
  }

  preprovisioningImageFormats(): Promise<ImageFormat[] | null> {
    return Promise.resolve(null);
  }

  inspectHardware(_data: InspectData, _restartOnFailure: boolean, refresh: boolean, forceReboot: boolean): Promise<InspectResult> {
    if (this.#name === DemoHost.inspecting) return Promise.resolve({ result: this.#forever(), started: false });
    this.#publish('InspectionComplete', 'Hardware inspection completed');
    const details = cannedHardwareDetails({ hostName: this.#name, bootMACAddress: this.#hostData.bootMACAddress });
    // `started` only when asked to (re)start, so the controller clears the inspect/reboot annotations.
    return Promise.resolve({ result: operationComplete(), started: refresh || forceReboot, details });
  }

  updateHardwareState(): Promise<HardwareState> {
    return Promise.resolve({});
  }

  adopt(_data: AdoptData, _restartOnFailure: boolean): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  prepare(_data: PrepareData, unprepared: boolean, _restartOnFailure: boolean): Promise<StartedResult> {
    return Promise.resolve(this.#prepareLike(unprepared, 'preparing failed'));
  }

  service(_data: ServicingData, unprepared: boolean, _restartOnFailure: boolean): Promise<StartedResult> {
    return Promise.resolve(this.#prepareLike(unprepared, 'servicing failed'));
  }

  #prepareLike(unprepared: boolean, failure: string): StartedResult {
    switch (this.#name) {
      case DemoHost.preparing:
        return { result: this.#forever(), started: false };
      case DemoHost.preparingError:
        return { result: operationFailed(failure), started: false };
      default:
        return { result: operationComplete(), started: unprepared };
    }
  }

  provision(_data: ProvisionData, _forceReboot: boolean): Promise<Result> {
    switch (this.#name) {
      case DemoHost.validationError:
        return Promise.resolve(operationFailed('validation failed'));
      case DemoHost.provisioning:
        return Promise.resolve(this.#forever());
      default:
        return Promise.resolve(operationComplete());
    }
  }

  deprovision(_restartOnFailure: boolean, _automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  delete(): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  detach(_force: boolean): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  powerOn(_force: boolean): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  powerOff(_rebootMode: RebootMode, _force: boolean, _automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  tryInit(): Promise<boolean> {
    return Promise.resolve(true);
  }

  hasCapacity(): Promise<boolean> {
    return Promise.resolve(true);
  }

  getFirmwareSettings(includeSchema: boolean): Promise<FirmwareSettingsResult> {
    const settings = cannedFirmwareSettings();
    return Promise.resolve(includeSchema ? { settings, schema: cannedFirmwareSchema() } : { settings });
  }

  addBMCEventSubscriptionForNode(_subscription: BMCEventSubscription, _httpHeaders: HTTPHeaders): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  removeBMCEventSubscriptionForNode(_subscription: BMCEventSubscription): Promise<Result> {
    return Promise.resolve(operationComplete());
  }

  getFirmwareComponents(): Promise<FirmwareComponentStatus[]> {
    return Promise.resolve(cannedFirmwareComponents());
  }

  isDataImageReady(): Promise<DataImageReadiness> {
    return Promise.resolve({ isNodeBusy: false });
  }

  attachDataImage(_url: string): Promise<void> {
    return Promise.resolve();
  }

  detachDataImage(): Promise<void> {
    return Promise.resolve();
  }
}
