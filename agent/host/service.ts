/**
 * @module The management backend over the store: apply (create-or-update with upstream's
 * immutability rules, all documents in one atomic commit; the firmware kinds in
 * service-firmware.ts), delete, user actions mapped onto upstream's spec fields and
 * annotations, and read access. Implements agent/web/backend.ts.
 */
import { ApiErrorCode, ConflictError, isApiError, NotFoundError, ValidationError } from '../errors.js';
import { Mutex } from '../store/mutex.js';
import type { Change, EventFilter, EventLog, ResourceStore, StoredEvent } from '../store/types.js';
import type { AgentInfo, ApplyOutcome, HostAction, ManagementBackend, SecretSummary } from '../web/backend.js';
import { applyChange } from './host-status.js';
import { jsonEqual } from '../json-value.js';
import { checkHostUpdate, decodeManifest, emptyHostStatus, type DecodedManifest } from './validation.js';
import type { HostFirmware } from './firmware-types.js';
import { planFirmwareApply, readHostFirmware } from './service-firmware.js';
import type { BMCEventSubscriptionObject } from './bmc-event-subscription-types.js';
import type { ProbeReport } from '../../drivers/index.js';
import { decodeProbeRequest, runProbe } from './bmc-probe-service.js';
import { getSubscription, listSubscriptions, markSubscriptionDeleted, planSubscriptionApply } from './service-bmc-event-subscription.js';
import type { BareMetalHost, Secret } from './types.js';
import { Annotations, HOST_FINALIZER } from './types.js';

/** How often a read-modify-write is retried when the reconciler wrote in between. */
const CONFLICT_RETRIES = 5;

/** The client-supplied `metadata.resourceVersion` of a raw manifest, if any. */
function requestedVersion(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const metadata = (input as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const version = (metadata as { resourceVersion?: unknown }).resourceVersion;
  return typeof version === 'string' && version !== '' ? version : undefined;
}

function isConflict(error: unknown): boolean {
  return isApiError(error) && error.code === ApiErrorCode.conflict;
}

/**
 * What the backend reads and writes: the resources (hosts, secrets, firmware objects; written
 * only by commits) and the event log's reads. Two owners: the API serves both.
 */
export type HostServiceStore = Pick<
  ResourceStore,
  'getHost' | 'listHosts' | 'listHostsJson' | 'getSecret' | 'listSecrets' | 'getFirmwareObject' | 'listFirmwareObjects' | 'commit'
> &
  Pick<EventLog, 'listEvents' | 'onEvent'>;

/** Backend options. */
export interface HostServiceOptions {
  store: HostServiceStore;
  info: AgentInfo;
  now?: () => Date;
}

/** {@link ManagementBackend} over the store's resources and event log ({@link HostServiceStore}). */
export class HostService implements ManagementBackend {
  private readonly store: HostServiceStore;
  /**
   * API writes (applies, actions) run one at a time: two clients applying the same host at once
   * would otherwise race each other's read-modify-write into 409s, and store commits serialize
   * anyway. Only the reconciler's status writes can still come in between (retried).
   */
  private readonly writes = new Mutex();

  constructor(private readonly options: HostServiceOptions) {
    this.store = options.store;
  }

  info(): AgentInfo {
    return this.options.info;
  }

  private nowIso(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }

  listHosts(): Promise<BareMetalHost[]> {
    return this.store.listHosts();
  }

  /** Every host's stored JSON, joined (GET /hosts sends it as is; the store keeps it until the next commit). */
  listHostsJson(): Promise<string> {
    return this.store.listHostsJson();
  }

  async getHost(name: string): Promise<BareMetalHost> {
    const host = await this.store.getHost(name);
    if (host === undefined) throw new NotFoundError('BareMetalHost', name);
    return host;
  }

  /** The host's HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy and FirmwareSchema (404 without the host). */
  getHostFirmware(name: string): Promise<HostFirmware> {
    return readHostFirmware(this.store, name);
  }

  async apply(manifests: unknown[]): Promise<ApplyOutcome[]> {
    if (manifests.length === 0) throw new ValidationError('items', 'no manifests given');
    const decoded = manifests.map((input, i) => {
      const prefix = manifests.length > 1 ? `items[${i}].` : '';
      return { prefix, version: requestedVersion(input), manifest: decodeManifest(input, prefix) };
    });
    const seen = new Set<string>();
    for (const { prefix, manifest } of decoded) {
      const key =
        manifest.kind === 'BareMetalHost'
          ? `host/${manifest.host.metadata.name}`
          : manifest.kind === 'Secret'
            ? `secret/${manifest.secret.metadata.namespace}/${manifest.secret.metadata.name}`
            : manifest.kind === 'BMCEventSubscription'
              ? `${manifest.kind}/${manifest.subscription.metadata.namespace}/${manifest.subscription.metadata.name}`
              : `${manifest.kind}/${manifest.firmware.metadata.namespace}/${manifest.firmware.metadata.name}`;
      if (seen.has(key)) throw new ValidationError(`${prefix}metadata.name`, `${key} appears twice in one apply`);
      seen.add(key);
    }
    return this.writes.run(async () => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await this.applyOnce(decoded);
        } catch (error) {
          // Our own read-modify-write raced the reconciler; a client-named version is final.
          const clientPinned = decoded.some((d) => d.version !== undefined);
          if (!isConflict(error) || clientPinned || attempt >= CONFLICT_RETRIES) throw error;
        }
      }
    });
  }

  private async applyOnce(
    decoded: { prefix: string; version: string | undefined; manifest: DecodedManifest }[],
  ): Promise<ApplyOutcome[]> {
    const changes: Change[] = [];
    const outcomes: ApplyOutcome[] = [];
    for (const { prefix, version, manifest } of decoded) {
      if (manifest.kind === 'Secret') {
        const secret = manifest.secret;
        const existing = await this.store.getSecret(secret.metadata.namespace, secret.metadata.name);
        const outcome: ApplyOutcome = {
          kind: 'Secret',
          namespace: secret.metadata.namespace,
          name: secret.metadata.name,
          action: existing === undefined ? 'created' : 'configured',
          resourceVersion: existing?.metadata.resourceVersion ?? '',
        };
        if (existing !== undefined && jsonEqual(existing.data, secret.data) && (existing.type ?? '') === (secret.type ?? '')) {
          outcomes.push({ ...outcome, action: 'unchanged' });
          continue;
        }
        const object: Secret = existing === undefined ? secret : { ...existing, type: secret.type ?? '', data: secret.data, metadata: { ...existing.metadata, labels: secret.metadata.labels ?? {}, annotations: secret.metadata.annotations ?? {} } };
        if (secret.type === undefined) delete object.type;
        changes.push({ kind: 'secret', op: 'put', object, ifVersion: version ?? existing?.metadata.resourceVersion ?? 'absent' });
        outcomes.push(outcome);
        continue;
      }
      if (manifest.kind === 'BMCEventSubscription') {
        const planned = await planSubscriptionApply(this.store, manifest.subscription, prefix, version);
        if (planned.change !== undefined) changes.push(planned.change);
        outcomes.push(planned.outcome);
        continue;
      }
      if (manifest.kind !== 'BareMetalHost') {
        const planned = await planFirmwareApply(this.store, manifest.firmware, prefix, version);
        if (planned.change !== undefined) changes.push(planned.change);
        outcomes.push(planned.outcome);
        continue;
      }
      const incoming = manifest.host;
      const existing = await this.store.getHost(incoming.metadata.name);
      if (existing === undefined) {
        if (version !== undefined) {
          throw new ConflictError(`${prefix}metadata.resourceVersion`, `BareMetalHost "${incoming.metadata.name}" does not exist`);
        }
        const host: BareMetalHost = {
          ...incoming,
          metadata: { ...incoming.metadata, generation: 1, finalizers: [HOST_FINALIZER] },
          status: emptyHostStatus(),
        };
        changes.push({ kind: 'host', op: 'put', object: host, ifVersion: 'absent' });
        outcomes.push({ kind: 'BareMetalHost', namespace: host.metadata.namespace, name: host.metadata.name, action: 'created', resourceVersion: '' });
        continue;
      }
      if (existing.metadata.namespace !== incoming.metadata.namespace) {
        throw new ConflictError(`${prefix}metadata.namespace`, `BareMetalHost "${incoming.metadata.name}" already exists in namespace "${existing.metadata.namespace}"`);
      }
      if (existing.metadata.deletionTimestamp !== undefined) {
        throw new ConflictError(`${prefix}metadata.deletionTimestamp`, `BareMetalHost "${incoming.metadata.name}" is being deleted`);
      }
      const { specChanged, metaChanged, metadata } = applyChange(existing, incoming);
      const outcome: ApplyOutcome = {
        kind: 'BareMetalHost',
        namespace: existing.metadata.namespace,
        name: existing.metadata.name,
        action: specChanged || metaChanged ? 'configured' : 'unchanged',
        resourceVersion: existing.metadata.resourceVersion,
      };
      if (version !== undefined && version !== existing.metadata.resourceVersion) {
        throw new ConflictError(`${prefix}metadata.resourceVersion`, `stale resourceVersion ${version} (current ${existing.metadata.resourceVersion}): re-read the host and apply again`);
      }
      if (!specChanged && !metaChanged) {
        outcomes.push(outcome);
        continue;
      }
      const updated: BareMetalHost = { ...existing, metadata, spec: incoming.spec };
      try {
        checkHostUpdate(existing, updated);
      } catch (error) {
        if (isApiError(error) && prefix !== '') throw new ConflictError(`${prefix}${error.field}`, error.message);
        throw error;
      }
      changes.push({ kind: 'host', op: 'put', object: updated, ifVersion: existing.metadata.resourceVersion });
      outcomes.push(outcome);
    }
    if (changes.length === 0) return outcomes;
    const committed = await this.store.commit(changes);
    const version = String(committed.revision);
    return outcomes.map((o) => (o.action === 'unchanged' ? o : { ...o, resourceVersion: version }));
  }

  async deleteHost(name: string): Promise<BareMetalHost> {
    return this.mutateHost(name, (host) => {
      if (host.metadata.deletionTimestamp !== undefined) return false;
      host.metadata.deletionTimestamp = this.nowIso();
      return true;
    });
  }

  async hostAction(name: string, action: HostAction): Promise<BareMetalHost> {
    return this.mutateHost(name, (host) => {
      if (host.metadata.deletionTimestamp !== undefined) {
        throw new ConflictError('metadata.deletionTimestamp', `BareMetalHost "${name}" is being deleted`);
      }
      const annotations = { ...(host.metadata.annotations ?? {}) };
      switch (action.action) {
        case 'power-on':
        case 'power-off': {
          const online = action.action === 'power-on';
          if (!online && host.spec.disablePowerOff === true) {
            throw new ValidationError('spec.online', 'the host has spec.disablePowerOff: it cannot be powered off (reboot it instead)');
          }
          if (host.spec.online === online) return false;
          host.spec.online = online;
          host.metadata.generation += 1;
          return true;
        }
        case 'reboot':
          annotations[Annotations.reboot] = action.mode === 'hard' ? JSON.stringify({ mode: 'hard' }) : '';
          break;
        case 'inspect':
          annotations[Annotations.inspect] = '';
          break;
        case 'detach': {
          const args: Record<string, unknown> = {};
          if (action.deleteAction !== undefined) args.deleteAction = action.deleteAction;
          if (action.force === true) args.force = true;
          annotations[Annotations.detached] = Object.keys(args).length === 0 ? '' : JSON.stringify(args);
          break;
        }
        case 'attach':
          if (annotations[Annotations.detached] === undefined) return false;
          Reflect.deleteProperty(annotations, Annotations.detached);
          break;
      }
      host.metadata.annotations = annotations;
      return true;
    });
  }

  /** Read-modify-write of one host, retried when the reconciler wrote in between. */
  private mutateHost(name: string, mutate: (host: BareMetalHost) => boolean): Promise<BareMetalHost> {
    return this.writes.run(async () => {
      for (let attempt = 1; ; attempt += 1) {
        const host = structuredClone(await this.getHost(name));
        const version = host.metadata.resourceVersion;
        if (!mutate(host)) return host;
        try {
          const committed = await this.store.commit([{ kind: 'host', op: 'put', object: host, ifVersion: version }]);
          const written = committed.hosts[0];
          if (written === undefined) throw new Error('store commit returned no host');
          return written;
        } catch (error) {
          if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw error;
        }
      }
    });
  }

  listBMCEventSubscriptions(): Promise<BMCEventSubscriptionObject[]> {
    return listSubscriptions(this.store);
  }

  getBMCEventSubscription(namespace: string, name: string): Promise<BMCEventSubscriptionObject> {
    return getSubscription(this.store, namespace, name);
  }

  deleteBMCEventSubscription(namespace: string, name: string): Promise<BMCEventSubscriptionObject> {
    return this.writes.run(() => markSubscriptionDeleted(this.store, namespace, name, this.nowIso()));
  }

  /** `POST /bmc/probe`: the capability probe, run from the agent (nothing is written). */
  probeBmc(body: unknown): Promise<ProbeReport> {
    return runProbe(this.store, decodeProbeRequest(body));
  }

  async listSecrets(): Promise<SecretSummary[]> {
    const secrets = await this.store.listSecrets();
    return secrets.map((s) => ({
      namespace: s.metadata.namespace,
      name: s.metadata.name,
      ...(s.type !== undefined ? { type: s.type } : {}),
      keys: s.keys,
      resourceVersion: s.metadata.resourceVersion,
    }));
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    const secret = await this.store.getSecret(namespace, name);
    if (secret === undefined) throw new NotFoundError('Secret', `${namespace}/${name}`);
    await this.store.commit([{ kind: 'secret', op: 'delete', namespace, name, ifVersion: secret.metadata.resourceVersion }]);
  }

  listEvents(filter: EventFilter): Promise<StoredEvent[]> {
    return this.store.listEvents(filter);
  }

  onEvent(listener: (event: StoredEvent) => void): () => void {
    return this.store.onEvent(listener);
  }
}
