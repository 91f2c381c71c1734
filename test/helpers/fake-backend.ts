/**
 * @module An in-memory {@link ManagementBackend} for API and CLI tests, plus `startFakeApi`,
 * which serves it through the real management app on 127.0.0.1 with an ephemeral port.
 * It applies a small subset of the real rules: kinds, DNS-1123 names, resourceVersion
 * preconditions and `spec.bootMACAddress` immutability, each failing with the real errors.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ConflictError, NotFoundError, ValidationError } from '../../agent/errors.js';
import type { BareMetalHost, BareMetalHostSpec, BareMetalHostStatus } from '../../agent/host/types.js';
import type { EventFilter, StoredEvent } from '../../agent/store/types.js';
import type { AgentInfo, ApplyOutcome, HostAction, ManagementBackend, SecretSummary } from '../../agent/web/backend.js';
import { createManagementApp, type ManagementAppOptions } from '../../agent/web/api.js';
import { isJsonObject } from '../../agent/json-value.js';

const EMPTY_METRIC = { start: '', end: '' };

/** A complete host with upstream-shaped defaults; `status` and `spec` fields may be overridden. */
export function sampleHost(
  name: string,
  overrides: { spec?: Partial<BareMetalHostSpec>; status?: Partial<BareMetalHostStatus>; created?: string; resourceVersion?: string } = {},
): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name, namespace: 'default', uid: `uid-${name}`, resourceVersion: overrides.resourceVersion ?? '1', generation: 1,
      creationTimestamp: overrides.created ?? '2026-01-01T00:00:00Z',
    },
    spec: { online: true, bmc: { address: `ipmi://10.0.0.${name.length}`, credentialsName: `${name}-bmc` }, bootMACAddress: '52:54:00:00:00:01', ...overrides.spec },
    status: {
      operationalStatus: 'OK', errorType: '', errorMessage: '', errorCount: 0, hardwareProfile: '', poweredOn: false,
      goodCredentials: {}, triedCredentials: {},
      operationHistory: { register: EMPTY_METRIC, inspect: EMPTY_METRIC, provision: EMPTY_METRIC, deprovision: EMPTY_METRIC },
      provisioning: { state: 'available', ID: '', image: { url: '' } },
      ...overrides.status,
    },
  };
}

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;


/** The fake backend; its fields are public so tests can arrange and inspect state. */
export class FakeBackend implements ManagementBackend {
  readonly hosts = new Map<string, BareMetalHost>();
  readonly secrets = new Map<string, SecretSummary>();
  readonly events: StoredEvent[] = [];
  readonly actions: { name: string; action: HostAction }[] = [];
  readonly applied: unknown[][] = [];
  /** After deleteHost, the host disappears on the Nth following getHost (0 = immediately). */
  deleteAfterGets = 1;
  /** When set, deleted hosts never disappear (for --wait timeouts). */
  deleteNeverCompletes = false;
  /** When set, every call throws it (for 500 tests). */
  failWith: Error | undefined;

  /** Back to an empty backend with default knobs (between tests). */
  reset(): void {
    this.hosts.clear();
    this.secrets.clear();
    this.events.length = 0;
    this.actions.length = 0;
    this.failWith = undefined;
    this.deleteAfterGets = 1;
    this.deleteNeverCompletes = false;
  }
  private revision = 10;
  private readonly listeners = new Set<(e: StoredEvent) => void>();
  private readonly pendingDeletes = new Map<string, number>();

  info(): AgentInfo {
    return { version: '9.8.7', agentId: 'rack-test', provisioner: 'fixture', startedAt: '2026-01-01T00:00:00.000Z' };
  }

  private check(): void {
    if (this.failWith !== undefined) throw this.failWith;
  }

  listHosts(): Promise<BareMetalHost[]> {
    this.check();
    return Promise.resolve([...this.hosts.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)));
  }

  getHost(name: string): Promise<BareMetalHost> {
    this.check();
    const pending = this.pendingDeletes.get(name);
    if (pending !== undefined && !this.deleteNeverCompletes) {
      if (pending <= 0) {
        this.hosts.delete(name);
        this.pendingDeletes.delete(name);
      } else this.pendingDeletes.set(name, pending - 1);
    }
    const host = this.hosts.get(name);
    if (host === undefined) return Promise.reject(new NotFoundError('BareMetalHost', name));
    return Promise.resolve(host);
  }

  apply(manifests: unknown[]): Promise<ApplyOutcome[]> {
    this.check();
    this.applied.push(manifests);
    const prefix = (i: number): string => (manifests.length > 1 ? `items[${i}].` : '');
    const outcomes: ApplyOutcome[] = [];
    const revision = String(++this.revision);
    manifests.forEach((m, i) => {
      if (!isJsonObject(m)) throw new ValidationError(prefix(i).replace(/\.$/, ''), 'not a mapping');
      const meta = isJsonObject(m.metadata) ? m.metadata : {};
      const name = meta.name;
      if (typeof name !== 'string' || !DNS1123.test(name)) {
        throw new ValidationError(`${prefix(i)}metadata.name`, 'must be a DNS-1123 subdomain');
      }
      const namespace = typeof meta.namespace === 'string' ? meta.namespace : 'default';
      if (m.kind === 'Secret') {
        const key = `${namespace}/${name}`;
        const existing = this.secrets.get(key);
        const keys = isJsonObject(m.data) ? Object.keys(m.data).sort() : [];
        const same = existing !== undefined && existing.keys.join() === keys.join();
        this.secrets.set(key, { namespace, name, ...(typeof m.type === 'string' ? { type: m.type } : {}), keys, resourceVersion: same ? existing.resourceVersion : revision });
        outcomes.push({ kind: 'Secret', namespace, name, action: existing === undefined ? 'created' : same ? 'unchanged' : 'configured', resourceVersion: revision });
        return;
      }
      if (m.kind !== 'BareMetalHost') throw new ValidationError(`${prefix(i)}kind`, `unsupported kind ${JSON.stringify(m.kind)}`);
      const spec = (isJsonObject(m.spec) ? m.spec : {}) as Partial<BareMetalHostSpec>;
      const existing = this.hosts.get(name);
      if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== (existing?.metadata.resourceVersion ?? '')) {
        throw new ConflictError(`${prefix(i)}metadata.resourceVersion`, `stale: stored is ${existing?.metadata.resourceVersion ?? 'absent'}`);
      }
      if (existing?.spec.bootMACAddress !== undefined && spec.bootMACAddress !== undefined && spec.bootMACAddress !== existing.spec.bootMACAddress) {
        throw new ConflictError(`${prefix(i)}spec.bootMACAddress`, 'is immutable');
      }
      const newSpec: BareMetalHostSpec = { online: false, ...spec };
      const same = existing !== undefined && JSON.stringify(existing.spec) === JSON.stringify(newSpec);
      const host = existing === undefined
        ? { ...sampleHost(name, { status: { provisioning: { state: 'registering', ID: '', image: { url: '' } } }, resourceVersion: revision }), spec: newSpec }
        : { ...existing, spec: newSpec, metadata: { ...existing.metadata, resourceVersion: same ? existing.metadata.resourceVersion : revision } };
      this.hosts.set(name, host);
      outcomes.push({ kind: 'BareMetalHost', namespace, name, action: existing === undefined ? 'created' : same ? 'unchanged' : 'configured', resourceVersion: revision });
    });
    return Promise.resolve(outcomes);
  }

  async deleteHost(name: string): Promise<BareMetalHost> {
    const host = await this.getHost(name);
    const deleting = { ...host, metadata: { ...host.metadata, deletionTimestamp: '2026-01-01T01:00:00Z' } };
    this.hosts.set(name, deleting);
    this.pendingDeletes.set(name, this.deleteAfterGets);
    return deleting;
  }

  async hostAction(name: string, action: HostAction): Promise<BareMetalHost> {
    const host = await this.getHost(name);
    this.actions.push({ name, action });
    return host;
  }

  listSecrets(): Promise<SecretSummary[]> {
    this.check();
    return Promise.resolve([...this.secrets.values()]);
  }

  deleteSecret(namespace: string, name: string): Promise<void> {
    this.check();
    if (!this.secrets.delete(`${namespace}/${name}`)) return Promise.reject(new NotFoundError('Secret', `${namespace}/${name}`));
    return Promise.resolve();
  }

  listEvents(filter: EventFilter): Promise<StoredEvent[]> {
    this.check();
    const matching = this.events.filter((e) =>
      (filter.host === undefined || e.host === filter.host) && (filter.mac === undefined || e.mac === filter.mac) &&
      (filter.afterSeq === undefined || e.seq > filter.afterSeq));
    return Promise.resolve(matching.slice(-(filter.limit ?? 200)));
  }

  onEvent(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Number of live event subscribers (SSE connections). */
  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** Records an event and delivers it to subscribers. */
  emit(event: Partial<StoredEvent> & { reason: string }): StoredEvent {
    const stored: StoredEvent = {
      seq: (this.events.at(-1)?.seq ?? 0) + 1, time: '2026-01-01T00:00:00.000Z', type: 'Normal', message: '', source: 'test', ...event,
    };
    this.events.push(stored);
    for (const l of this.listeners) l(stored);
    return stored;
  }
}

/** A running management app over a backend. */
export interface FakeApi {
  baseUrl: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves `createManagementApp(backend, options)` on 127.0.0.1:0. */
export async function startFakeApi(backend: ManagementBackend, options: Partial<ManagementAppOptions> = {}): Promise<FakeApi> {
  const app = createManagementApp(backend, { requireTokenForMutations: false, ...options });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => {
      resolve(s);
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    }),
  };
}
