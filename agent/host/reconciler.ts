/**
 * @module The host reconciler: runs each host's state machine serially, with requeue timers,
 * a global concurrency limit — on steps working, not on steps waiting for their BMC
 * (reconcile-slot.ts) — and a time scale applied to every controller delay (so tests run
 * fast). It writes a host only when a step says so, and only if nobody changed it meanwhile
 * (resourceVersion precondition); on a conflict it simply runs again on the fresh copy.
 * This file owns the timers.
 */
import type { Logger } from 'pino';
import { ApiErrorCode, isApiError } from '../errors.js';
import type { Factory, Provisioner, ProvisionerStep } from '../provisioner/index.js';
import { buildHostData, buildHostDataNoBMC } from '../provisioner/index.js';
import type { Change, EventLog, ResourceStore, StoredEvent } from '../store/types.js';
import type { ActionResult } from './action-result.js';
import { isDirty, requeueDelayMs } from './action-result.js';
import { hostConfigData, lookupCredentials, preprovisioningNetworkData } from './credentials.js';
import { firmwareChanges, firmwareDeletions, loadFirmware } from './firmware-store.js';
import { inspectionDisabled, removeAnnotation, setErrorMessage } from './host-status.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS } from './reconcile-context.js';
import type { ReconcileOutcome } from './state-machine.js';
import { reconcileState } from './state-machine.js';
import type { FirmwareSchema } from './firmware-types.js';
import type { BareMetalHost, HardwareDetails } from './types.js';
import { Annotations, HOST_FINALIZER } from './types.js';
import { NO_SLOT, runInSlot, type BmcSlotGate, type SlotPool } from './reconcile-slot.js';
import type { HostWakeups } from './host-wakeups.js';

/** Reconciler settings. */
export interface ReconcilerOptions {
  store: ResourceStore & Pick<EventLog, 'appendEvents'>;
  factory: Factory;
  logger: Logger;
  /** How many host steps work at once (a step waiting on its BMC gives its slot up meanwhile). */
  concurrency: number;
  /** Multiplies every delay (1 in production; e.g. 0.001 in tests). */
  timeScale: number;
  /** `--max-provisioning-retries` (0 = unlimited). */
  maxProvisioningRetries: number;
  /** Wake-ups made before the reconciler (the provisioner backend's), delivered while it runs. */
  wakeups?: HostWakeups;
  now?: () => Date;
  random?: () => number;
}

/** How long {@link Reconciler.stop} waits for reconciles in flight. */
const STOP_GRACE_MS = 10_000;

/** Consecutive transient failures before the streak is reported as an event. */
const TRANSIENT_REPORT_AFTER = 3;

interface Worker {
  timer?: NodeJS.Timeout;
  running: boolean;
  /** A wake-up arrived while running: run again right after. */
  rerun: boolean;
  transientFailures: number;
  /** The transient failure last reported as an event (reported once per streak and per new message). */
  reportedTransient?: string;
  /** Revision of our own last write, so its change notice does not wake us. */
  ownRevision?: number;
  /** Set while our own write is in flight: notices then are sorted out when it returns. */
  saving: boolean;
  /** Revisions noticed while saving. */
  noticedWhileSaving: number[];
  /** When this host's firmware status was last read from the provisioner (ms), once stored. */
  firmwareRefreshedAtMs?: number;
  /** Successful saves so far (to tell whether a step's writes landed). */
  saves: number;
}

/** Whether a wake-up arrived while the worker ran (read through a call: it changes across awaits). */
function wakeRequested(worker: Worker): boolean {
  return worker.rerun;
}

/** Observes reconcile steps (tests, metrics): the host, what the state machine did, and how long the step took. */
export type StepListener = (name: string, outcome: ReconcileOutcome, durationMs: number) => void;

/** Runs the state machine of every stored host. */
export class Reconciler {
  private readonly workers = new Map<string, Worker>();
  private readonly stepListeners = new Set<StepListener>();
  /** Slots held (by steps working); waiters are handed a slot directly, so this never exceeds the limit. */
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Steps whose BMC request is in, waiting for a slot to go on: served before new steps. */
  private readonly resuming: (() => void)[] = [];
  private readonly slots: SlotPool = {
    release: () => { this.release(); },
    resume: () => this.acquire(this.resuming),
  };
  private stopped = true;
  private unsubscribe?: () => void;
  private detachWakeups?: () => void;
  private readonly inFlight = new Set<Promise<void>>();
  /** FirmwareSchemas by `namespace/name` (a content hash: entries never go stale). */
  private readonly schemaCache = new Map<string, FirmwareSchema>();

  constructor(private readonly options: ReconcilerOptions) {}

  /** Starts reconciling every stored host and follows store changes. */
  async start(): Promise<void> {
    this.stopped = false;
    this.detachWakeups = this.options.wakeups?.attach((name) => { this.wake(name); });
    this.unsubscribe = this.options.store.onChange((notice) => {
      // HostFirmwareSettings/Components and HostUpdatePolicy are named after their host.
      if (notice.kind === 'host' || (notice.kind === 'firmware' && notice.objectKind !== 'FirmwareSchema')) {
        const worker = this.workers.get(notice.name);
        if (worker?.saving === true) {
          worker.noticedWhileSaving.push(notice.revision);
          return;
        }
        if (worker?.ownRevision === notice.revision) return;
        this.wake(notice.name);
      } else if (notice.kind === 'secret') {
        void this.wakeHostsUsingSecret(notice.namespace, notice.name);
      }
    });
    for (const host of await this.options.store.listHosts()) this.wake(host.metadata.name);
  }

  /** Stops timers and waits for in-flight reconciles to finish (their writes complete). */
  /**
   * Stops scheduling and waits for the reconciles in flight — at most `graceMs` (default 10 s):
   * a provisioner call stuck on an unresponsive BMC or image server must not hold the agent's
   * shutdown (systemd would kill it anyway). A reconcile still running then finds the store
   * closed, fails and is logged; every write is one atomic commit, so nothing half-written stays.
   */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.detachWakeups?.();
    for (const worker of this.workers.values()) clearTimeout(worker.timer);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => { resolve('expired'); }, graceMs);
    });
    const outcome = await Promise.race([Promise.allSettled([...this.inFlight]).then(() => 'done' as const), expired]);
    clearTimeout(timer);
    if (outcome === 'expired') this.options.logger.warn({ inFlight: this.inFlight.size, graceMs }, 'reconciles still running at shutdown; not waiting for them');
  }

  /** Subscribes to reconcile steps; returns the unsubscribe function. */
  onStep(listener: StepListener): () => void {
    this.stepListeners.add(listener);
    return () => this.stepListeners.delete(listener);
  }

  /** Runs the host as soon as a slot is free. */
  wake(name: string): void {
    this.schedule(name, 0);
  }

  /**
   * Runs one reconcile of the host now, outside the timers (tests step hosts with it).
   * Returns the next delay in ms, `undefined` (wait for a change) or `null` (the host is gone).
   */
  reconcileOnce(name: string): Promise<number | undefined | null> {
    return this.reconcileHost(name, this.worker(name), NO_SLOT);
  }

  private worker(name: string): Worker {
    let worker = this.workers.get(name);
    if (worker === undefined) {
      worker = { running: false, rerun: false, transientFailures: 0, saving: false, noticedWhileSaving: [], saves: 0 };
      this.workers.set(name, worker);
    }
    return worker;
  }

  private schedule(name: string, delayMs: number): void {
    if (this.stopped) return;
    const worker = this.worker(name);
    if (worker.running) {
      if (delayMs === 0) worker.rerun = true;
      return;
    }
    clearTimeout(worker.timer);
    worker.timer = setTimeout(() => {
      const run = this.runWorker(name, worker);
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
    }, Math.max(0, Math.round(delayMs)));
  }

  private async wakeHostsUsingSecret(namespace: string, secretName: string): Promise<void> {
    for (const host of await this.options.store.hostSnapshot()) {
      if (host.metadata.namespace !== namespace) continue;
      const refs = [host.spec.bmc?.credentialsName, host.spec.userData?.name, host.spec.networkData?.name, host.spec.preprovisioningNetworkDataName];
      if (refs.includes(secretName)) this.wake(host.metadata.name);
    }
  }

  /** Takes a slot, or waits in `queue` to be handed one. */
  private async acquire(queue: (() => void)[]): Promise<void> {
    if (this.running < Math.max(1, this.options.concurrency)) {
      this.running += 1;
      return;
    }
    await new Promise<void>((resolve) => queue.push(resolve));
  }

  /** Hands the slot to a resuming step, else to the next new one, else frees it. */
  private release(): void {
    const next = this.resuming.shift() ?? this.waiting.shift();
    if (next === undefined) this.running -= 1;
    else next();
  }

  private async runWorker(name: string, worker: Worker): Promise<void> {
    worker.running = true;
    worker.rerun = false;
    await this.acquire(this.waiting);
    let nextDelayMs: number | undefined | null;
    try {
      // The slot is given back when the step settles (runInSlot), and lent out while it waits on its BMC.
      nextDelayMs = await runInSlot(this.slots, async (slot) => {
        try {
          return await this.reconcileHost(name, worker, slot);
        } catch (error) {
          worker.transientFailures += 1;
          this.options.logger.warn({ host: name, err: error }, 'reconcile failed; retrying');
          await this.reportTransient(name, worker, error);
          return this.transientDelayMs(worker);
        }
      });
    } finally {
      worker.running = false;
    }
    if (nextDelayMs === null) {
      this.workers.delete(name);
      return;
    }
    if (wakeRequested(worker)) nextDelayMs = 0;
    if (nextDelayMs !== undefined) this.schedule(name, nextDelayMs);
  }

  /**
   * Transient failures are retried with backoff and not written to the host's status (upstream
   * semantics), so the operator sees them as events: a `TransientFailure` Warning once a streak
   * reaches {@link TRANSIENT_REPORT_AFTER} attempts and whenever its message changes, and a
   * `Recovered` event when a step succeeds again.
   */
  private async reportTransient(name: string, worker: Worker, error: unknown): Promise<void> {
    if (worker.transientFailures < TRANSIENT_REPORT_AFTER) return;
    const message = error instanceof Error ? error.message : String(error);
    if (worker.reportedTransient === message) return;
    worker.reportedTransient = message;
    const nowIso = (this.options.now?.() ?? new Date()).toISOString();
    try {
      await this.options.store.appendEvents([{
        time: nowIso, type: 'Warning', reason: 'TransientFailure', host: name, source: 'host-controller',
        message: `${message} (${worker.transientFailures} attempts in a row; retrying with backoff)`,
      }]);
    } catch (err) {
      this.options.logger.warn({ host: name, err }, 'recording a transient failure event failed');
    }
  }

  private transientDelayMs(worker: Worker): number {
    const base = DELAYS_MS.transientBase * 2 ** Math.min(worker.transientFailures - 1, 10);
    return Math.min(base, DELAYS_MS.transientMax) * this.options.timeScale;
  }

  private scaled(ms: number): number {
    return ms * this.options.timeScale;
  }

  /** One reconcile. Returns the next delay, `undefined` (wait for a change) or `null` (host gone). */
  private async reconcileHost(name: string, worker: Worker, bmcSlot: BmcSlotGate): Promise<number | undefined | null> {
    const { store } = this.options;
    const stored = await store.getHost(name);
    if (stored === undefined) return null;
    const host = structuredClone(stored);
    const nowIso = (this.options.now?.() ?? new Date()).toISOString();
    const events: Omit<StoredEvent, 'seq'>[] = [];
    const publish = (reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): void => {
      events.push({ time: nowIso, type, reason, message, host: name, source: 'host-controller' });
    };

    if (host.metadata.annotations?.[Annotations.paused] !== undefined) return undefined;
    if (this.prepareMetadata(host)) {
      await this.save(worker, stored, host, [], events, nowIso);
      return 0;
    }

    // Credentials (upstream: none needed before registering; while deleting, go on without).
    let haveCreds = false;
    let provisioner: Provisioner;
    const state = host.status.provisioning.state;
    let credentialsStatus = {};
    const step: ProvisionerStep = { bmcSlot, provisioningState: state, wake: () => { this.wake(name); } };
    if (state === '' || state === 'unmanaged') {
      provisioner = await this.options.factory.newProvisioner(buildHostDataNoBMC(host), publish, step);
    } else {
      const lookup = await lookupCredentials(store, host);
      if (lookup.ok) {
        haveCreds = true;
        credentialsStatus = lookup.status;
        provisioner = await this.options.factory.newProvisioner(buildHostData(host, lookup.credentials), publish, step);
      } else if (host.metadata.deletionTimestamp !== undefined) {
        provisioner = await this.options.factory.newProvisioner(buildHostDataNoBMC(host), publish, step);
      } else {
        if (host.status.errorMessage !== lookup.message || host.status.errorType !== 'registration error') {
          setErrorMessage(host, 'registration error', lookup.message);
          publish('BMCCredentialError', lookup.message, 'Warning');
          await this.save(worker, stored, host, [], events, nowIso);
        }
        return lookup.retry ? this.scaled(DELAYS_MS.hostErrorRetry) : undefined;
      }
    }
    if (!(await provisioner.tryInit())) return this.scaled(DELAYS_MS.provisionerNotReady);

    const firmware = await loadFirmware(store, host, this.schemaCache);
    if (worker.firmwareRefreshedAtMs !== undefined) firmware.working.refreshedAtMs = worker.firmwareRefreshedAtMs;
    const ctx: ReconcileContext = {
      host,
      provisioner,
      haveCreds,
      credentials: credentialsStatus,
      hostConfig: hostConfigData(store, host),
      preprovisioningNetworkData: haveCreds ? await preprovisioningNetworkData(store, host) : '',
      nowIso,
      publish,
      maxProvisioningRetries: this.options.maxProvisioningRetries,
      firmware: firmware.working,
    };
    const startedMs = performance.now();
    const outcome = await reconcileState(ctx);
    const durationMs = performance.now() - startedMs;
    if (outcome.change !== undefined) {
      const from = outcome.change.from === '' ? 'none' : outcome.change.from;
      publish('ProvisioningStateChanged', `${from} → ${outcome.change.to}`);
    }
    for (const listener of this.stepListeners) listener(name, outcome, durationMs);
    const extra = outcome.result.kind === 'deleteComplete'
      ? await firmwareDeletions(store, host, firmware.stored)
      : await firmwareChanges(store, firmware.stored, ctx.firmware);
    const refreshedAtMs = ctx.firmware.refreshedAtMs;
    const savesBefore = worker.saves;
    const next = await this.finish({ name, worker, stored, host, result: outcome.result, events, nowIso, extra });
    // A refresh counts once its result is stored (a lost write is refreshed again).
    if (extra.length === 0 || worker.saves > savesBefore) worker.firmwareRefreshedAtMs = refreshedAtMs;
    return next;
  }

  private async finish(step: {
    name: string;
    worker: Worker;
    stored: BareMetalHost;
    host: BareMetalHost;
    result: ActionResult;
    events: Omit<StoredEvent, 'seq'>[];
    nowIso: string;
    /** Firmware object changes to commit with the host (or alone when the host is not saved). */
    extra: Change[];
  }): Promise<number | undefined | null> {
    const { name, worker, stored, host, result, events, nowIso, extra } = step;
    const { store } = this.options;
    if (result.kind === 'deleteComplete') {
      try {
        await store.commit([{ kind: 'host', op: 'delete', name, ifVersion: stored.metadata.resourceVersion }, ...extra]);
      } catch (error) {
        if (isApiError(error) && error.code === ApiErrorCode.conflict) return 0;
        throw error;
      }
      events.push({ time: nowIso, type: 'Normal', reason: 'Deleted', message: 'Host deleted', host: name, source: 'host-controller' });
      await store.appendEvents(events);
      return null;
    }
    if (result.kind === 'error') {
      worker.transientFailures += 1;
      this.options.logger.warn({ host: name, err: result.error }, 'provisioner call failed; retrying');
      // Firmware status read before the failure is still worth keeping.
      if (extra.length > 0 && !(await this.save(worker, stored, undefined, extra, events, nowIso))) return 0;
      else if (extra.length === 0 && events.length > 0) await store.appendEvents(events);
      await this.reportTransient(name, worker, result.error);
      return this.transientDelayMs(worker);
    }
    if (worker.reportedTransient !== undefined) {
      events.push({ time: nowIso, type: 'Normal', reason: 'Recovered', message: `calls succeed again after ${worker.transientFailures} failed attempts`, host: name, source: 'host-controller' });
      delete worker.reportedTransient;
    }
    worker.transientFailures = 0;
    const saveHost = isDirty(result);
    if ((saveHost || extra.length > 0) && !(await this.save(worker, stored, saveHost ? host : undefined, extra, events, nowIso))) return 0;
    if (!saveHost && extra.length === 0 && events.length > 0) await store.appendEvents(events);
    const delay = requeueDelayMs(result, (this.options.random ?? Math.random)());
    return delay === undefined ? undefined : this.scaled(delay);
  }

  /**
   * Writes the host (when given) and `extra` if the host is unchanged since read; publishes the
   * step's events after. False on conflict.
   */
  private async save(
    worker: Worker,
    stored: BareMetalHost,
    host: BareMetalHost | undefined,
    extra: Change[],
    events: Omit<StoredEvent, 'seq'>[],
    nowIso: string,
  ): Promise<boolean> {
    const changes: Change[] = [...extra];
    if (host !== undefined) {
      host.status.lastUpdated = nowIso;
      changes.unshift({ kind: 'host', op: 'put', object: host, ifVersion: stored.metadata.resourceVersion });
    }
    worker.saving = true;
    worker.noticedWhileSaving = [];
    try {
      const written = await this.options.store.commit(changes);
      worker.ownRevision = written.revision;
      worker.saves += 1;
    } catch (error) {
      if (isApiError(error) && error.code === ApiErrorCode.conflict) return false;
      throw error;
    } finally {
      worker.saving = false;
      // Someone else's write landed around ours: look again right after this step.
      if (worker.noticedWhileSaving.some((revision) => revision !== worker.ownRevision)) worker.rerun = true;
    }
    if (events.length > 0) await this.options.store.appendEvents(events);
    return true;
  }

  /**
   * Upstream's pre-state-machine housekeeping: restore status from the `status` annotation,
   * take HardwareDetails from the `hardwaredetails` annotation, ensure the finalizer.
   * Returns true when the host changed and must be saved first.
   */
  private prepareMetadata(host: BareMetalHost): boolean {
    let changed = false;
    const annotations = host.metadata.annotations ?? {};
    const savedStatus = annotations[Annotations.status];
    if (savedStatus !== undefined) {
      if (host.status.provisioning.state === '' && host.status.operationalStatus === '') {
        try {
          host.status = { ...host.status, ...(JSON.parse(savedStatus) as Partial<BareMetalHost['status']>) };
        } catch {
          this.options.logger.warn({ host: host.metadata.name }, 'ignoring unparsable status annotation');
        }
      }
      removeAnnotation(host, Annotations.status);
      changed = true;
    }
    const details = annotations[Annotations.hardwareDetails];
    if (details !== undefined) {
      if (host.status.hardware === undefined || inspectionDisabled(host)) {
        try {
          host.status.hardware = JSON.parse(details) as HardwareDetails;
        } catch {
          this.options.logger.warn({ host: host.metadata.name }, 'ignoring unparsable hardwaredetails annotation');
        }
      }
      removeAnnotation(host, Annotations.hardwareDetails);
      changed = true;
    }
    if (host.metadata.deletionTimestamp === undefined && !(host.metadata.finalizers ?? []).includes(HOST_FINALIZER)) {
      host.metadata.finalizers = [...(host.metadata.finalizers ?? []), HOST_FINALIZER];
      changed = true;
    }
    return changed;
  }
}
