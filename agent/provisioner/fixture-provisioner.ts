/**
 * @module The per-reconcile provisioner of the fixture (fixture.ts): each method records its
 * call, applies any injected failure, then advances the host's state in the shared
 * {@link Fixture} exactly as upstream's `pkg/provisioner/fixture` does
 * (docs/metal3-mapping.md, "Fixture and demo"). Construct it through {@link Fixture.newProvisioner}.
 */
import type {
  AutomatedCleaningMode,
  FirmwareComponentStatus,
  ImageFormat,
  RebootMode,
} from '../host/types.js';
import type {
  AdoptData,
  BMCEventSubscription,
  DataImageReadiness,
  EventPublisher,
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
import { operationComplete, operationContinuing, operationFailed, transientError } from './result.js';
import type { Fixture, FixtureHostState, FixtureMethod } from './fixture.js';

/** Requeue delays of the fixture before {@link Fixture.delayScale}, in ms (upstream's values). */
export const FIXTURE_DELAYS_MS = {
  register: 5_000,
  inspect: 2_000,
  adopt: 3_000,
  provision: 10_000,
  deprovision: 10_000,
  service: 5_000,
} as const;

/** Runs `fn` now and turns its value or its throw into a settled promise (no sync throws leak). */
export function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/** One reconcile's provisioner for one host, backed by the shared {@link Fixture}. */
export class FixtureProvisioner implements Provisioner {
  readonly #fixture: Fixture;
  readonly #hostData: HostData;
  readonly #publish: EventPublisher;
  readonly #state: FixtureHostState;
  #provID: string;

  constructor(fixture: Fixture, hostData: HostData, publish: EventPublisher) {
    this.#fixture = fixture;
    this.#hostData = hostData;
    this.#publish = publish;
    this.#state = fixture.stateFor(hostData);
    this.#provID = hostData.provisionerID;
  }

  /** Records the call; returns an injected failure message, or throws an injected transient error. */
  #enter(method: FixtureMethod, args: Record<string, unknown>): string | undefined {
    const host = this.#hostData.objectMeta.name;
    this.#fixture.calls.push({ host, method, args });
    return this.#fixture.checkFailure(host, method);
  }

  /** For methods without a Result: any injected failure becomes a thrown transient error. */
  #enterThrowing(method: FixtureMethod, args: Record<string, unknown>): void {
    const message = this.#enter(method, args);
    if (message !== undefined) throw transientError(message);
  }

  #continue(delayMs: number): Result {
    return operationContinuing(this.#fixture.delay(delayMs));
  }

  validateManagementAccess(data: ManagementAccessData, credentialsChanged: boolean, restartOnFailure: boolean): Promise<ManagementAccessResult> {
    return settle(() => {
      const failed = this.#enter('validateManagementAccess', { credentialsChanged, restartOnFailure, data });
      if (failed !== undefined) return { result: operationFailed(failed), provID: this.#provID };
      const state = this.#state;
      state.disablePowerOff = data.disablePowerOff;
      if (state.detached) {
        // Re-attach: the backend record is created again and the host adopted again (docs/metal3-mapping.md, "Detach").
        state.detached = false;
        state.adopted = false;
      }
      if (this.#provID === '') {
        const meta = this.#hostData.objectMeta;
        this.#provID = `fixture-${meta.uid !== '' ? meta.uid : meta.name}`;
        state.provID = this.#provID;
        this.#publish('Registered', 'Registered new host');
        return { result: this.#continue(FIXTURE_DELAYS_MS.register), provID: this.#provID };
      }
      state.provID = this.#provID;
      return { result: operationComplete(), provID: this.#provID };
    });
  }

  preprovisioningImageFormats(): Promise<ImageFormat[] | null> {
    return settle(() => {
      this.#enterThrowing('preprovisioningImageFormats', {});
      const formats = this.#fixture.imageFormats;
      return formats === null ? null : [...formats];
    });
  }

  inspectHardware(data: InspectData, restartOnFailure: boolean, refresh: boolean, forceReboot: boolean): Promise<InspectResult> {
    return settle(() => {
      const failed = this.#enter('inspectHardware', { restartOnFailure, refresh, forceReboot, data });
      if (failed !== undefined) return { result: operationFailed(failed), started: false };
      const op = this.#state.inspect;
      let started = false;
      if (op.phase === 'idle' || (op.phase === 'done' && refresh)) {
        op.phase = 'running';
        op.dirtyCalls = 0;
        this.#state.inspectionStarted = true;
        started = true;
      }
      if (op.phase === 'running' && op.dirtyCalls < this.#fixture.durations.inspectDirtyCalls) {
        op.dirtyCalls++;
        return { result: this.#continue(FIXTURE_DELAYS_MS.inspect), started };
      }
      if (op.phase === 'running') this.#publish('InspectionComplete', 'Hardware inspection completed');
      op.phase = 'done';
      const details = this.#fixture.hardwareDetails(this.#hostData.objectMeta.name, this.#hostData.bootMACAddress);
      return { result: operationComplete(), started, details };
    });
  }

  updateHardwareState(): Promise<HardwareState> {
    return settle(() => {
      this.#enterThrowing('updateHardwareState', {});
      return { poweredOn: this.#state.poweredOn };
    });
  }

  adopt(data: AdoptData, restartOnFailure: boolean): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('adopt', { restartOnFailure, data });
      if (failed !== undefined) return operationFailed(failed);
      if (!this.#state.adopted) {
        this.#state.adopted = true;
        return this.#continue(FIXTURE_DELAYS_MS.adopt);
      }
      return operationComplete();
    });
  }

  /** Applies the target BIOS settings and records the firmware updates, as a backend's cleaning/servicing steps would. */
  #applyFirmware(data: PrepareData | ServicingData): void {
    const state = this.#state;
    const targets = Object.entries(data.targetFirmwareSettings);
    if (targets.length > 0) {
      state.biosSettings = { ...(state.biosSettings ?? this.#fixture.firmwareSettings) };
      for (const [name, value] of targets) state.biosSettings[name] = String(value);
    }
    state.firmwareUpdates.push(...data.targetFirmwareComponents.map((u) => ({ ...u })));
  }

  prepare(data: PrepareData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult> {
    return settle(() => {
      const failed = this.#enter('prepare', { unprepared, restartOnFailure, data });
      if (failed !== undefined) return { result: operationFailed(failed), started: false };
      // Upstream: started = unprepared, complete at once.
      if (unprepared) this.#applyFirmware(data);
      return { result: operationComplete(), started: unprepared };
    });
  }

  service(data: ServicingData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult> {
    return settle(() => {
      const failed = this.#enter('service', { unprepared, restartOnFailure, data });
      if (failed !== undefined) return { result: operationFailed(failed), started: false };
      // Upstream: servicing that was kicked off reports dirty once; the next call completes
      // (also when asked again for the same, still unapplied-looking, data: it is running).
      const key = JSON.stringify(data);
      if (unprepared && this.#state.servicing !== key) {
        this.#applyFirmware(data);
        this.#state.servicing = key;
        return { result: this.#continue(FIXTURE_DELAYS_MS.service), started: true };
      }
      delete this.#state.servicing;
      return { result: operationComplete(), started: false };
    });
  }

  provision(data: ProvisionData, forceReboot: boolean): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('provision', { forceReboot, data });
      if (failed !== undefined) return operationFailed(failed);
      const state = this.#state;
      const op = state.provision;
      const method = data.customDeploy?.method ?? '';
      const newDeploy = method !== '' && method !== state.customDeploy?.method;
      const newImage = !newDeploy && data.image.url !== '' && data.image.url !== state.image?.url;
      if (newDeploy || newImage) {
        if (newDeploy) state.customDeploy = { method };
        else state.image = { ...data.image };
        op.phase = 'running';
        op.dirtyCalls = 0;
        state.deprovision.phase = 'idle';
      }
      if (op.phase === 'running' && op.dirtyCalls < this.#fixture.durations.provisionDirtyCalls) {
        op.dirtyCalls++;
        return this.#continue(FIXTURE_DELAYS_MS.provision);
      }
      if (op.phase === 'running') {
        op.phase = 'done';
        this.#publish('ProvisioningComplete', newDeploy || state.customDeploy !== undefined ? 'Custom deploy provisioning completed' : 'Image provisioning completed');
      }
      return operationComplete();
    });
  }

  deprovision(restartOnFailure: boolean, automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('deprovision', { restartOnFailure, automatedCleaningMode });
      if (failed !== undefined) return operationFailed(failed);
      const state = this.#state;
      const op = state.deprovision;
      if (op.phase === 'done' && state.image === undefined && state.customDeploy === undefined) return operationComplete();
      if (op.phase !== 'running') {
        op.phase = 'running';
        op.dirtyCalls = 0;
      }
      const dirty = (): Result => {
        op.dirtyCalls++;
        return this.#continue(FIXTURE_DELAYS_MS.deprovision);
      };
      if (state.image !== undefined) {
        this.#publish('DeprovisionStarted', 'Image deprovisioning started');
        delete state.image;
        state.provision.phase = 'idle';
        return dirty();
      }
      if (state.customDeploy !== undefined) {
        this.#publish('DeprovisionStarted', 'Custom deploy deprovisioning started');
        delete state.customDeploy;
        state.provision.phase = 'idle';
        return dirty();
      }
      if (op.dirtyCalls < this.#fixture.durations.deprovisionDirtyCalls) return dirty();
      op.phase = 'done';
      this.#publish('DeprovisionComplete', 'Image deprovisioning completed');
      return operationComplete();
    });
  }

  delete(): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('delete', {});
      if (failed !== undefined) return operationFailed(failed);
      if (!this.#state.deleted) {
        this.#state.deleted = true;
        return this.#continue(0);
      }
      return operationComplete();
    });
  }

  detach(force: boolean): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('detach', { force });
      if (failed !== undefined) return operationFailed(failed);
      if (!this.#state.detached) {
        this.#state.detached = true;
        return this.#continue(0);
      }
      return operationComplete();
    });
  }

  powerOn(force: boolean): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('powerOn', { force });
      if (failed !== undefined) return operationFailed(failed);
      if (!this.#state.poweredOn) {
        this.#state.poweredOn = true;
        this.#publish('PowerOn', 'Host powered on');
        return this.#continue(0);
      }
      return operationComplete();
    });
  }

  powerOff(rebootMode: RebootMode, force: boolean, automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('powerOff', { rebootMode, force, automatedCleaningMode });
      if (failed !== undefined) return operationFailed(failed);
      if (this.#fixture.disablePowerOff || this.#state.disablePowerOff) {
        // disablePowerOff: the backend reboots instead and never reports the host off (docs/metal3-mapping.md, "Fixture and demo").
        this.#state.rebootCalled = true;
        return this.#continue(0);
      }
      if (this.#state.poweredOn) {
        this.#state.poweredOn = false;
        this.#publish('PowerOff', 'Host powered off');
        return this.#continue(0);
      }
      return operationComplete();
    });
  }

  tryInit(): Promise<boolean> {
    return settle(() => {
      this.#enterThrowing('tryInit', {});
      if (this.#fixture.becomeReadyCounter > 0) this.#fixture.becomeReadyCounter--;
      return this.#fixture.becomeReadyCounter === 0;
    });
  }

  hasCapacity(): Promise<boolean> {
    return settle(() => {
      this.#enterThrowing('hasCapacity', {});
      const knob = this.#fixture.hasCapacity;
      return typeof knob === 'function' ? knob(this.#hostData.objectMeta.name) : knob;
    });
  }

  getFirmwareSettings(includeSchema: boolean): Promise<FirmwareSettingsResult> {
    return settle(() => {
      this.#enterThrowing('getFirmwareSettings', { includeSchema });
      const settings = { ...(this.#state.biosSettings ?? this.#fixture.firmwareSettings) };
      return includeSchema ? { settings, schema: { ...this.#fixture.firmwareSchema } } : { settings };
    });
  }

  addBMCEventSubscriptionForNode(subscription: BMCEventSubscription, httpHeaders: HTTPHeaders): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('addBMCEventSubscriptionForNode', { subscription, httpHeaders });
      if (failed !== undefined) return operationFailed(failed);
      const id = `fixture-sub-${subscription.metadata.namespace}-${subscription.metadata.name}`;
      subscription.status.subscriptionID = id;
      if (!this.#state.subscriptions.includes(id)) this.#state.subscriptions.push(id);
      return operationComplete();
    });
  }

  removeBMCEventSubscriptionForNode(subscription: BMCEventSubscription): Promise<Result> {
    return settle(() => {
      const failed = this.#enter('removeBMCEventSubscriptionForNode', { subscription });
      if (failed !== undefined) return operationFailed(failed);
      const id = subscription.status.subscriptionID;
      this.#state.subscriptions = this.#state.subscriptions.filter((s) => s !== id);
      return operationComplete();
    });
  }

  getFirmwareComponents(): Promise<FirmwareComponentStatus[]> {
    return settle(() => {
      this.#enterThrowing('getFirmwareComponents', {});
      return this.#fixture.firmwareComponents.map((c) => ({ ...c }));
    });
  }

  isDataImageReady(): Promise<DataImageReadiness> {
    return settle(() => {
      const failed = this.#enter('isDataImageReady', {});
      return failed === undefined ? { isNodeBusy: false } : { isNodeBusy: false, nodeError: failed };
    });
  }

  attachDataImage(url: string): Promise<void> {
    return settle(() => {
      this.#enterThrowing('attachDataImage', { url });
      this.#state.dataImageURL = url;
    });
  }

  detachDataImage(): Promise<void> {
    return settle(() => {
      this.#enterThrowing('detachDataImage', {});
      delete this.#state.dataImageURL;
    });
  }
}
