/**
 * Manifests and small readers for the firmware tests of the host state machine: the
 * HostFirmwareSettings, HostFirmwareComponents and HostUpdatePolicy documents users write, and
 * the stored objects' conditions.
 */
import type { Condition, HostFirmwareComponents, HostFirmwareSettings } from '../../../agent/host/firmware-types.js';
import type { Harness } from '../../helpers/host-harness.js';

/** A HostFirmwareSettings manifest for host `name` (namespace `metal3`, as hostManifests). */
export function hfsManifest(name: string, settings: Record<string, string | number>): Record<string, unknown> {
  return { apiVersion: 'metal3.io/v1alpha1', kind: 'HostFirmwareSettings', metadata: { name, namespace: 'metal3' }, spec: { settings } };
}

/** A HostFirmwareComponents manifest for host `name`. */
export function hfcManifest(name: string, updates: { component: string; url: string }[]): Record<string, unknown> {
  return { apiVersion: 'metal3.io/v1alpha1', kind: 'HostFirmwareComponents', metadata: { name, namespace: 'metal3' }, spec: { updates } };
}

/** A HostUpdatePolicy manifest for host `name`. */
export function hupManifest(name: string, spec: { firmwareSettings?: string; firmwareUpdates?: string }): Record<string, unknown> {
  return { apiVersion: 'metal3.io/v1alpha1', kind: 'HostUpdatePolicy', metadata: { name, namespace: 'metal3' }, spec };
}

/** The stored HostFirmwareSettings of host `name` (fails when missing). */
export async function storedHfs(bench: Harness, name: string): Promise<HostFirmwareSettings> {
  const hfs = await bench.store.getFirmwareObject('HostFirmwareSettings', 'metal3', name);
  if (hfs === undefined) throw new Error(`no HostFirmwareSettings for ${name}`);
  return hfs;
}

/** The stored HostFirmwareComponents of host `name` (fails when missing). */
export async function storedHfc(bench: Harness, name: string): Promise<HostFirmwareComponents> {
  const hfc = await bench.store.getFirmwareObject('HostFirmwareComponents', 'metal3', name);
  if (hfc === undefined) throw new Error(`no HostFirmwareComponents for ${name}`);
  return hfc;
}

/** `{ChangeDetected: 'True', Valid: 'False'}` of a conditions list. */
export function conditionStates(conditions: readonly Condition[] | undefined): Record<string, string> {
  return Object.fromEntries((conditions ?? []).map((c) => [c.type, c.status]));
}

/** The condition of `type` (fails when missing). */
export function condition(conditions: readonly Condition[] | undefined, type: string): Condition {
  const found = conditions?.find((c) => c.type === type);
  if (found === undefined) throw new Error(`no ${type} condition in ${JSON.stringify(conditions)}`);
  return found;
}
