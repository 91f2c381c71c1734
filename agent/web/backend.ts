/**
 * @module The seam between the management API (agent/web) and the rest of the agent: what
 * the HTTP layer may ask. Implemented by agent/host/service.ts; faked in API tests.
 * @pure
 */
import type { HostFirmware } from '../host/firmware-types.js';
import type { BMCEventSubscriptionObject } from '../host/bmc-event-subscription-types.js';
import type { ProbeReport } from '../../drivers/index.js';
import type { BareMetalHost, RebootMode } from '../host/types.js';
import type { EventFilter, StoredEvent } from '../store/types.js';

/** What applying one manifest did. */
export interface ApplyOutcome {
  kind: 'BareMetalHost' | 'Secret' | 'HostFirmwareSettings' | 'HostFirmwareComponents' | 'HostUpdatePolicy' | 'BMCEventSubscription';
  namespace: string;
  name: string;
  action: 'created' | 'configured' | 'unchanged';
  resourceVersion: string;
}

/** A user action on a host, mapped onto upstream's spec fields and annotations. */
export type HostAction =
  | { action: 'power-on' }
  | { action: 'power-off' }
  | { action: 'reboot'; mode: RebootMode }
  | { action: 'inspect' }
  | { action: 'detach'; deleteAction?: 'delay' | 'delete'; force?: boolean }
  | { action: 'attach' };

/** A secret as the API lists it: never its values. */
export interface SecretSummary {
  namespace: string;
  name: string;
  type?: string;
  keys: string[];
  resourceVersion: string;
}

/** Facts about the running agent. */
export interface AgentInfo {
  version: string;
  agentId: string;
  provisioner: string;
  startedAt: string;
}

/**
 * Everything the management API can do. Methods throw ApiError subclasses (agent/errors.ts)
 * for bad input, conflicts and missing objects; anything else is a 500.
 */
export interface ManagementBackend {
  info(): AgentInfo;
  listHosts(): Promise<BareMetalHost[]>;
  /**
   * Optional: the hosts of {@link ManagementBackend.listHosts} as one JSON array text (equal to
   * `JSON.stringify(await listHosts())`), so `GET /hosts` sends a 1000-host list without decoding
   * and encoding it again (HostReader.listHostsJson); without it the route serializes listHosts.
   */
  listHostsJson?(): Promise<string>;
  getHost(name: string): Promise<BareMetalHost>;
  /**
   * The host's firmware objects (HostFirmwareSettings, HostFirmwareComponents,
   * HostUpdatePolicy and the FirmwareSchema in use; null where there is none); NotFoundError
   * without the host. Optional: a backend without it answers 404 on the route.
   */
  getHostFirmware?(name: string): Promise<HostFirmware>;
  /**
   * Creates or updates every manifest (BareMetalHost, Secret, HostFirmwareSettings,
   * HostFirmwareComponents and HostUpdatePolicy documents, already parsed from YAML/JSON) in
   * one atomic write. Field paths in errors are prefixed `items[i].`
   * when more than one document was given.
   */
  apply(manifests: unknown[]): Promise<ApplyOutcome[]>;
  /** Optional: every BMCEventSubscription, by namespace then name (a backend without it answers 404). */
  listBMCEventSubscriptions?(): Promise<BMCEventSubscriptionObject[]>;
  /** Optional: one BMCEventSubscription (NotFoundError when absent). */
  getBMCEventSubscription?(namespace: string, name: string): Promise<BMCEventSubscriptionObject>;
  /**
   * Optional: starts deleting a BMCEventSubscription (sets deletionTimestamp); it disappears once
   * the BMC's subscription is removed (at once when none was created).
   */
  deleteBMCEventSubscription?(namespace: string, name: string): Promise<BMCEventSubscriptionObject>;
  /**
   * Optional: runs the BMC capability probe for a `POST /bmc/probe` body (`address`, and
   * `credentials` or `credentialsName`); ValidationError for a bad body or address.
   */
  probeBmc?(body: unknown): Promise<ProbeReport>;
  /** Starts deletion (sets deletionTimestamp); the host disappears when its delete flow ends. */
  deleteHost(name: string): Promise<BareMetalHost>;
  hostAction(name: string, action: HostAction): Promise<BareMetalHost>;
  listSecrets(): Promise<SecretSummary[]>;
  deleteSecret(namespace: string, name: string): Promise<void>;
  listEvents(filter: EventFilter): Promise<StoredEvent[]>;
  /** Subscribes to new events (for Server-Sent Events); returns the unsubscribe function. */
  onEvent(listener: (event: StoredEvent) => void): () => void;
}
