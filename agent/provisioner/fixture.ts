/**
 * @module The fixture provisioner: a stateful in-memory fake of a provisioning backend, like
 * upstream's `pkg/provisioner/fixture` (docs/metal3-mapping.md, "Fixture and demo"), for state-machine and
 * controller tests. One {@link Fixture} is the {@link Factory} and keeps per-host state across
 * the short-lived provisioners it hands out, so a test can drive a host through its whole
 * lifecycle and then assert what the backend was asked to do ({@link Fixture.calls}).
 *
 * Knobs beyond upstream: per-method failure injection ({@link Fixture.failNext},
 * {@link Fixture.failAlways}), configurable operation lengths ({@link FixtureDurations}) and a
 * {@link Fixture.delayScale} so requeue delays can be shrunk in tests. Beyond upstream too,
 * prepare and service apply the target BIOS settings to the host's own settings (what
 * `getFirmwareSettings` reports next), as a backend would, so a host controller reading them
 * back sees its changes applied. No timers, no I/O.
 */
import type {
  CustomDeploy,
  FirmwareComponentStatus,
  FirmwareUpdate,
  HardwareDetails,
  Image,
  ImageFormat,
  SettingSchema,
  SettingsMap,
} from '../host/types.js';
import type { EventPublisher, Factory, HostData, Provisioner } from './provisioner.js';
import { transientError } from './result.js';
import { cannedFirmwareComponents, cannedFirmwareSchema, cannedFirmwareSettings, cannedHardwareDetails } from './canned-hardware.js';
import { FixtureProvisioner, settle } from './fixture-provisioner.js';

export { FIXTURE_DELAYS_MS } from './fixture-provisioner.js';

/** A method that can be recorded or made to fail: every {@link Provisioner} method, plus `newProvisioner`. */
export type FixtureMethod = keyof Provisioner | 'newProvisioner';

/** One recorded provisioner call: the host's name, the method and its arguments by name. */
export interface FixtureCall {
  host: string;
  method: FixtureMethod;
  /** Boolean flags and modes by their parameter names (`restartOnFailure`, `force`…), plus `data` when passed. */
  args: Record<string, unknown>;
}

/** How many `dirty` calls each long operation takes before it completes. */
export interface FixtureDurations {
  /** InspectHardware: the first call starts (and is dirty); details come after this many dirty calls. Upstream: 1. */
  inspectDirtyCalls: number;
  /** Provision: the first call records the image (and is dirty); complete after this many dirty calls. Upstream: 1. */
  provisionDirtyCalls: number;
  /**
   * Deprovision: minimum dirty calls. Clearing the image and the custom deploy take one dirty
   * call each (upstream), so the default 0 reproduces upstream exactly.
   */
  deprovisionDirtyCalls: number;
}

/** Upstream-like defaults for {@link FixtureDurations}. */
export const DEFAULT_FIXTURE_DURATIONS: Readonly<FixtureDurations> = { inspectDirtyCalls: 1, provisionDirtyCalls: 1, deprovisionDirtyCalls: 0 };

/** Progress of one long operation for one host. */
export interface FixtureOperation {
  phase: 'idle' | 'running' | 'done';
  /** Dirty calls returned so far in the current run. */
  dirtyCalls: number;
}

/** What the fake backend knows about one host. Tests may read and tweak it. */
export interface FixtureHostState {
  name: string;
  uid: string;
  /** The id handed out by registration (`fixture-<uid>`), empty until registered. */
  provID: string;
  poweredOn: boolean;
  /** Set by PowerOff when power-off is disabled: the fake rebooted instead. */
  rebootCalled: boolean;
  deleted: boolean;
  detached: boolean;
  adopted: boolean;
  inspectionStarted: boolean;
  /** `disablePowerOff` as last passed to registration. */
  disablePowerOff: boolean;
  /** The image written by Provision; cleared by Deprovision. */
  image?: Image;
  /** The custom deploy run by Provision; cleared by Deprovision. */
  customDeploy?: CustomDeploy;
  /** URL of the attached data image, if any. */
  dataImageURL?: string;
  /** Ids of BMC event subscriptions created for this host. */
  subscriptions: string[];
  /**
   * This host's BIOS settings: the fixture's `firmwareSettings` until prepare or service
   * applies target settings (what `getFirmwareSettings` then reports).
   */
  biosSettings?: SettingsMap;
  /** Firmware updates handed over by prepare or service, in order. */
  firmwareUpdates: FirmwareUpdate[];
  /** The servicing started and not yet reported done (its data, as canonical JSON). */
  servicing?: string;
  inspect: FixtureOperation;
  provision: FixtureOperation;
  deprovision: FixtureOperation;
}

/** Construction options of {@link Fixture}; every field is also a public, mutable knob. */
export interface FixtureOptions {
  becomeReadyCounter?: number;
  disablePowerOff?: boolean;
  hasCapacity?: boolean | ((hostName: string) => boolean);
  delayScale?: number;
  durations?: Partial<FixtureDurations>;
  /** Power state of hosts the fixture has not seen yet. Default off. */
  initiallyPoweredOn?: boolean;
  hardwareDetails?: (hostName: string, bootMACAddress: string) => HardwareDetails;
  firmwareSettings?: SettingsMap;
  firmwareSchema?: Record<string, SettingSchema>;
  firmwareComponents?: FirmwareComponentStatus[];
  imageFormats?: ImageFormat[] | null;
}

/** An injected failure: an `errorMessage` result, or `'transient'` for a thrown transient error. */
interface InjectedFailure {
  method: FixtureMethod;
  message: string;
  once: boolean;
  host: string | undefined;
}

/**
 * The fixture factory and its shared state. `newProvisioner` never fails unless told to;
 * the provisioners it returns read and write this object's per-host state.
 */
export class Fixture implements Factory {
  /** `tryInit` returns false, counting down, until this reaches 0 (v0.9 `TryInit` semantics). */
  becomeReadyCounter: number;
  /** PowerOff reboots instead (sets `rebootCalled`, always dirty), for every host. */
  disablePowerOff: boolean;
  /** Whether a host may start inspecting/provisioning/deprovisioning now. */
  hasCapacity: boolean | ((hostName: string) => boolean);
  /** Multiplies every requeue delay; 0 makes the fixture requeue immediately. */
  delayScale: number;
  durations: FixtureDurations;
  initiallyPoweredOn: boolean;
  hardwareDetails: (hostName: string, bootMACAddress: string) => HardwareDetails;
  firmwareSettings: SettingsMap;
  firmwareSchema: Record<string, SettingSchema>;
  firmwareComponents: FirmwareComponentStatus[];
  imageFormats: ImageFormat[] | null;
  /** Every provisioner call, in order, with its flags by name. */
  readonly calls: FixtureCall[] = [];
  readonly #hosts = new Map<string, FixtureHostState>();
  #failures: InjectedFailure[] = [];

  constructor(options: FixtureOptions = {}) {
    this.becomeReadyCounter = options.becomeReadyCounter ?? 0;
    this.disablePowerOff = options.disablePowerOff ?? false;
    this.hasCapacity = options.hasCapacity ?? true;
    this.delayScale = options.delayScale ?? 1;
    this.durations = { ...DEFAULT_FIXTURE_DURATIONS, ...options.durations };
    this.initiallyPoweredOn = options.initiallyPoweredOn ?? false;
    this.hardwareDetails = options.hardwareDetails ?? ((hostName, bootMACAddress) => cannedHardwareDetails({ hostName, bootMACAddress }));
    this.firmwareSettings = options.firmwareSettings ?? cannedFirmwareSettings();
    this.firmwareSchema = options.firmwareSchema ?? cannedFirmwareSchema();
    this.firmwareComponents = options.firmwareComponents ?? cannedFirmwareComponents();
    this.imageFormats = options.imageFormats ?? null;
  }

  /** Returns a provisioner for the host; throws when a `newProvisioner` failure was injected. */
  newProvisioner(hostData: HostData, publish: EventPublisher): Promise<Provisioner> {
    return settle(() => {
      const message = this.checkFailure(hostData.objectMeta.name, 'newProvisioner');
      if (message !== undefined) throw transientError(message);
      return new FixtureProvisioner(this, hostData, publish);
    });
  }

  /** Makes the next call of `method` fail with `operationFailed(message)`, or throw when `message` is `'transient'`. `host` limits it to one host name. */
  failNext(method: FixtureMethod, message: string, host?: string): void {
    this.#failures.push({ method, message, once: true, host });
  }

  /** Makes every call of `method` fail (see {@link failNext}) until {@link clearFailures}. */
  failAlways(method: FixtureMethod, message: string, host?: string): void {
    this.#failures.push({ method, message, once: false, host });
  }

  /** Removes every injected failure. */
  clearFailures(): void {
    this.#failures = [];
  }

  /** Forgets recorded calls (state is kept). */
  clearCalls(): void {
    this.calls.length = 0;
  }

  /** The calls made for one host name, optionally only of one method. */
  callsFor(host: string, method?: FixtureMethod): FixtureCall[] {
    return this.calls.filter((c) => c.host === host && (method === undefined || c.method === method));
  }

  /** The state of a host by uid or by name; undefined until the host's first provisioner call. */
  host(uidOrName: string): FixtureHostState | undefined {
    return this.#hosts.get(uidOrName) ?? [...this.#hosts.values()].find((h) => h.name === uidOrName);
  }

  /** Every host the fixture has seen. */
  hosts(): FixtureHostState[] {
    return [...this.#hosts.values()];
  }

  /** Internal: the state for `hostData`, created on first use (keyed by uid, else namespace/name). */
  stateFor(hostData: HostData): FixtureHostState {
    const meta = hostData.objectMeta;
    const key = meta.uid !== '' ? meta.uid : `${meta.namespace}/${meta.name}`;
    let state = this.#hosts.get(key);
    if (state === undefined) {
      const idle = (): FixtureOperation => ({ phase: 'idle', dirtyCalls: 0 });
      state = {
        name: meta.name,
        uid: meta.uid,
        provID: '',
        poweredOn: this.initiallyPoweredOn,
        rebootCalled: false,
        deleted: false,
        detached: false,
        adopted: false,
        inspectionStarted: false,
        disablePowerOff: false,
        subscriptions: [],
        firmwareUpdates: [],
        inspect: idle(),
        provision: idle(),
        deprovision: idle(),
      };
      this.#hosts.set(key, state);
    }
    return state;
  }

  /** Internal: a scaled requeue delay. */
  delay(ms: number): number {
    return ms * this.delayScale;
  }

  /**
   * Internal: consumes a matching injected failure. Returns its message (for an
   * `errorMessage` result) or throws a transient error; undefined when none applies.
   */
  checkFailure(host: string, method: FixtureMethod): string | undefined {
    const matches = (f: InjectedFailure): boolean => f.method === method && (f.host === undefined || f.host === host);
    const index = this.#failures.findIndex((f) => f.once && matches(f));
    const failure = index >= 0 ? this.#failures[index] : this.#failures.find(matches);
    if (failure === undefined) return undefined;
    if (index >= 0) this.#failures.splice(index, 1);
    if (failure.message === 'transient') throw transientError(`fixture: injected transient failure in ${method}`);
    return failure.message;
  }
}

