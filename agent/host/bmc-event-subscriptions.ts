/**
 * @module The BMCEventSubscription reconciler: a small loop beside the host reconciler, driven
 * by the store's change notices. A subscription whose host exists and is registered is created
 * on the BMC through the provisioner's `addBMCEventSubscriptionForNode` (headers from the
 * `httpHeadersRef` Secret, one single-entry map per key as upstream); `status.subscriptionID` or
 * `status.error` records the answer. A subscription marked deleted is removed from the BMC
 * through `removeBMCEventSubscriptionForNode`, and the object goes once that succeeded (at once
 * when none was created or its host is gone) — upstream's finalizer. Failures are retried after
 * `retryMs`; one subscription is worked on at a time.
 */
import type { Logger } from 'pino';
import { ApiErrorCode, isApiError } from '../errors.js';
import type { BMCEventSubscription, Factory, HTTPHeaders } from '../provisioner/index.js';
import { buildHostData } from '../provisioner/index.js';
import type { Change, ResourceStore } from '../store/types.js';
import type { BMCEventSubscriptionObject } from './bmc-event-subscription-types.js';
import { lookupCredentials } from './credentials.js';
import type { BareMetalHost } from './types.js';

/** What the loop reads and writes. */
export type SubscriptionStore = Pick<ResourceStore, 'getHost' | 'getSecret' | 'getFirmwareObject' | 'listFirmwareObjects' | 'commit' | 'onChange'>;

/** Options of {@link BMCEventSubscriptionReconciler}. */
export interface SubscriptionReconcilerOptions {
  store: SubscriptionStore;
  factory: Pick<Factory, 'newProvisioner'>;
  logger?: Logger;
  /** Delay before a failed subscription is tried again (default 30 s). */
  retryMs?: number;
}

/** Provisioning states in which the host's BMC is known to answer (registration done). */
const UNREGISTERED = new Set(['', 'registering', 'unmanaged']);

/** True when the host finished registration and its BMC may be asked for subscriptions. */
export function hostRegistered(host: BareMetalHost): boolean {
  return !UNREGISTERED.has(host.status.provisioning.state) && host.status.errorType !== 'registration error' && host.status.operationalStatus !== 'detached';
}

/** The headers of a Secret's data (base64 values), sorted by key, one single-entry map per header. */
export function headersOf(data: Record<string, string>): HTTPHeaders {
  return Object.keys(data).sort().map((key) => ({ [key]: Buffer.from(data[key] ?? '', 'base64').toString('utf8') }));
}

function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** See the module comment. `start()` subscribes and queues every stored subscription; `stop()` ends it. */
export class BMCEventSubscriptionReconciler {
  readonly #pending = new Set<string>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #unsubscribe: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  /** The subscription this loop is writing: its own change notices are not news. */
  #selfWrite: string | undefined;

  constructor(private readonly options: SubscriptionReconcilerOptions) {}

  /** Starts listening to change notices and queues every stored subscription. */
  async start(): Promise<void> {
    this.#unsubscribe = this.options.store.onChange((notice) => {
      if (notice.kind === 'firmware' && notice.objectKind === 'BMCEventSubscription') {
        const key = keyOf(notice.namespace, notice.name);
        if (key === this.#selfWrite) return;
        clearTimeout(this.#timers.get(key));
        this.#timers.delete(key);
        this.enqueue(key);
      } else if (notice.kind === 'host') {
        void this.enqueueForHost(notice.namespace, notice.name);
      }
    });
    await this.enqueueAll();
  }

  /** Stops the loop; resolves once the subscription in progress (if any) is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#pending.clear();
    await this.#running;
  }

  /** Resolves once nothing is queued or running (tests). */
  async idle(): Promise<void> {
    for (let i = 0; i < 1000 && this.#running !== undefined; i += 1) await this.#running;
  }

  private async enqueueAll(): Promise<void> {
    const all = await this.options.store.listFirmwareObjects('BMCEventSubscription');
    for (const s of all) this.enqueue(keyOf(s.metadata.namespace, s.metadata.name));
  }

  /** Queues the host's subscriptions that are not waiting for a retry. */
  private async enqueueForHost(namespace: string, hostName: string): Promise<void> {
    try {
      const all = await this.options.store.listFirmwareObjects('BMCEventSubscription');
      for (const s of all) {
        const key = keyOf(s.metadata.namespace, s.metadata.name);
        if (s.metadata.namespace === namespace && s.spec.hostName === hostName && !this.#timers.has(key)) this.enqueue(key);
      }
    } catch (error) {
      this.options.logger?.warn({ err: error }, 'listing BMC event subscriptions failed');
    }
  }

  private enqueue(key: string): void {
    if (this.#stopped) return;
    this.#pending.add(key);
    this.#running ??= this.drain().finally(() => {
      this.#running = undefined;
    });
  }

  private async drain(): Promise<void> {
    // Bounded: each pass takes one key; keys come back only through notices or retry timers.
    for (let pass = 0; pass < 10_000 && this.#pending.size > 0 && !this.#stopped; pass += 1) {
      const [key] = this.#pending;
      if (key === undefined) break;
      this.#pending.delete(key);
      const [namespace = '', name = ''] = key.split('/');
      try {
        const retry = await this.reconcile(namespace, name);
        if (retry) this.retryLater(key);
      } catch (error) {
        if (!(isApiError(error) && error.code === ApiErrorCode.conflict)) this.options.logger?.warn({ err: error, subscription: key }, 'BMC event subscription reconcile failed');
        this.retryLater(key);
      }
    }
  }

  private retryLater(key: string): void {
    if (this.#stopped || this.#timers.has(key)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.enqueue(key);
    }, this.options.retryMs ?? 30_000);
    timer.unref();
    this.#timers.set(key, timer);
  }

  /** One subscription; true when it should be tried again later. */
  private async reconcile(namespace: string, name: string): Promise<boolean> {
    const { store } = this.options;
    const sub = await store.getFirmwareObject('BMCEventSubscription', namespace, name);
    if (sub === undefined) return false;
    const host = await store.getHost(sub.spec.hostName);
    const ownHost = host !== undefined && host.metadata.namespace === namespace ? host : undefined;
    if (sub.metadata.deletionTimestamp !== undefined) return this.remove(sub, ownHost);
    if ((sub.status.subscriptionID ?? '') !== '') return false;
    if (ownHost === undefined) return this.record(sub, { error: `BareMetalHost "${sub.spec.hostName}" not found in namespace "${namespace}"` }, true);
    if (!hostRegistered(ownHost) || ownHost.metadata.deletionTimestamp !== undefined) return false;
    return this.add(sub, ownHost);
  }

  private async provisionerFor(host: BareMetalHost): Promise<{ error: string } | { provisioner: Awaited<ReturnType<Factory['newProvisioner']>> }> {
    const lookup = await lookupCredentials(this.options.store, host);
    if (!lookup.ok) return { error: lookup.message };
    const provisioner = await this.options.factory.newProvisioner(buildHostData(host, lookup.credentials), () => undefined);
    return { provisioner };
  }

  private async add(sub: BMCEventSubscriptionObject, host: BareMetalHost): Promise<boolean> {
    let headers: HTTPHeaders = [];
    const ref = sub.spec.httpHeadersRef;
    if (ref !== undefined) {
      const secret = await this.options.store.getSecret(ref.namespace ?? sub.metadata.namespace, ref.name);
      if (secret === undefined) return this.record(sub, { error: `failed to get the HTTP headers secret ${ref.namespace ?? sub.metadata.namespace}/${ref.name}: not found` }, true);
      headers = headersOf(secret.data);
    }
    const got = await this.provisionerFor(host);
    if ('error' in got) return this.record(sub, { error: got.error }, true);
    const call: BMCEventSubscription = { metadata: { name: sub.metadata.name, namespace: sub.metadata.namespace }, spec: { ...sub.spec, context: sub.spec.context ?? '' }, status: {} };
    const result = await got.provisioner.addBMCEventSubscriptionForNode(call, headers);
    if (result.errorMessage !== '') return this.record(sub, { error: result.errorMessage }, true);
    return this.record(sub, { subscriptionID: call.status.subscriptionID ?? '', error: '' }, false);
  }

  private async remove(sub: BMCEventSubscriptionObject, host: BareMetalHost | undefined): Promise<boolean> {
    if ((sub.status.subscriptionID ?? '') !== '' && host !== undefined) {
      const got = await this.provisionerFor(host);
      if ('error' in got) return this.record(sub, { ...sub.status, error: got.error }, true);
      const call: BMCEventSubscription = { metadata: { name: sub.metadata.name, namespace: sub.metadata.namespace }, spec: { ...sub.spec, context: sub.spec.context ?? '' }, status: { ...sub.status } };
      const result = await got.provisioner.removeBMCEventSubscriptionForNode(call);
      if (result.errorMessage !== '') return this.record(sub, { ...sub.status, error: result.errorMessage }, true);
    }
    const { namespace, name, resourceVersion } = sub.metadata;
    await this.selfCommit(sub, [{ kind: 'firmware', op: 'delete', objectKind: 'BMCEventSubscription', namespace, name, ifVersion: resourceVersion }]);
    return false;
  }

  /** Writes `status` when it changed; returns `retry`. */
  private async record(sub: BMCEventSubscriptionObject, status: BMCEventSubscriptionObject['status'], retry: boolean): Promise<boolean> {
    const next = { ...status };
    if (next.subscriptionID === '' || next.subscriptionID === undefined) delete next.subscriptionID;
    if (next.error === '' || next.error === undefined) delete next.error;
    let current: BMCEventSubscriptionObject | undefined = sub;
    // A user write in between (a delete mark, a label) must not lose a subscription id the BMC
    // just gave: re-read and write the status onto the newer version (bounded).
    for (let attempt = 1; current !== undefined && JSON.stringify(next) !== JSON.stringify(current.status); attempt += 1) {
      try {
        await this.selfCommit(current, [{ kind: 'firmware', op: 'put', object: { ...current, status: next }, ifVersion: current.metadata.resourceVersion }]);
        break;
      } catch (error) {
        if (!(isApiError(error) && error.code === ApiErrorCode.conflict) || attempt >= 3) throw error;
        current = await this.options.store.getFirmwareObject('BMCEventSubscription', sub.metadata.namespace, sub.metadata.name);
      }
    }
    return retry;
  }

  private async selfCommit(sub: BMCEventSubscriptionObject, changes: Change[]): Promise<void> {
    this.#selfWrite = keyOf(sub.metadata.namespace, sub.metadata.name);
    try {
      await this.options.store.commit(changes);
    } finally {
      this.#selfWrite = undefined;
    }
  }
}
