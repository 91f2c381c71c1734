/**
 * @module What one reconcile of one host works with: the host (a working copy the step
 * mutates), its provisioner, its credentials and the clock (BMO `reconcileInfo`).
 */
import type { HostConfigData, Provisioner } from '../provisioner/index.js';
import type { FirmwareSchema, HostFirmwareComponents, HostFirmwareSettings, HostUpdatePolicy } from './firmware-types.js';
import type { BareMetalHost, CredentialsStatus } from './types.js';

/** Upstream controller delays in milliseconds, before the reconciler's time scale. */
export const DELAYS_MS = {
  /** Missing credentials secret. */
  hostErrorRetry: 10_000,
  /** Unmanaged and detached hosts poll slowly. */
  unmanagedRetry: 600_000,
  /** Waiting for a preprovisioning image. */
  preprovisioningImageRetry: 300_000,
  /** The provisioner is not ready (tryInit false). */
  provisionerNotReady: 30_000,
  /** Steady-state power poll. */
  powerCheck: 60_000,
  /** First retry of a transient error; doubles up to {@link DELAYS_MS.transientMax}. */
  transientBase: 5_000,
  transientMax: 300_000,
  /** HostFirmwareSettings/Components not ready for prepare or service (upstream `subResourceNotReadyRetryDelay`). */
  subResourceNotReady: 60_000,
  /** How often firmware status is re-read from the provisioner (upstream HFS/HFC controllers' requeue). */
  firmwareRefresh: 300_000,
  /** The same while a change is pending (upstream `reconcilerRequeueDelayChangeDetected`). */
  firmwareRefreshChangeDetected: 60_000,
} as const;

/**
 * Working copies of the host's firmware objects for one reconcile: steps mutate them and the
 * reconciler writes the changed ones in the same atomic commit as the host.
 */
export interface FirmwareWorkingSet {
  hfs?: HostFirmwareSettings;
  hfc?: HostFirmwareComponents;
  hup?: HostUpdatePolicy;
  /** The FirmwareSchema `hfs.status.schema` names (a new one is created by the reconciler's save). */
  schema?: FirmwareSchema;
  /** When firmware status was last read from the provisioner by this agent process (ms since the epoch); undefined = not yet. */
  refreshedAtMs?: number;
}

/** A reconcile step's view of the world. */
export interface ReconcileContext {
  /** Working copy: handlers mutate it; the reconciler saves it when the result is dirty. */
  host: BareMetalHost;
  provisioner: Provisioner;
  /** False while deleting a host whose credentials are gone: never register then. */
  haveCreds: boolean;
  /** The credentials secret and its version, compared with status.good/triedCredentials. */
  credentials: CredentialsStatus;
  hostConfig: HostConfigData;
  preprovisioningNetworkData: string;
  /** RFC 3339 time of this reconcile. */
  nowIso: string;
  /** Publishes an event about the host (published after the save, as upstream). */
  publish(reason: string, message: string, type?: 'Normal' | 'Warning'): void;
  /** `--max-provisioning-retries` (0 = unlimited). */
  maxProvisioningRetries: number;
  /** The host's HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy and schema (working copies). */
  firmware: FirmwareWorkingSet;
}

/** True when the credentials status names the same secret and version. */
export function sameCredentials(a: CredentialsStatus, b: CredentialsStatus): boolean {
  return (
    a.credentials?.name === b.credentials?.name &&
    a.credentials?.namespace === b.credentials?.namespace &&
    a.credentialsVersion === b.credentialsVersion
  );
}
