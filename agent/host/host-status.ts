/**
 * @module Small rules over a BareMetalHost's status and annotations (BMO's
 * `baremetalhost_types.go` predicates and the controller's status helpers). Mutating helpers
 * change the host in place and return whether anything changed.
 * @pure
 */
import type {
  BareMetalHost,
  BootMode,
  ErrorType,
  OperationalStatus,
  ProvisioningState,
  RAIDConfig,
  RebootMode,
  RootDeviceHints,
} from './types.js';
import { Annotations } from './types.js';
import { redactUrlSecrets } from '../redact-text.js';
import { jsonEqual } from '../json-value.js';

/** Sets operationalStatus; true when it changed. */
export function setOperationalStatus(host: BareMetalHost, status: OperationalStatus): boolean {
  if (host.status.operationalStatus === status) return false;
  host.status.operationalStatus = status;
  return true;
}

/** Clears errorType/errorMessage and sets operationalStatus (default OK); true when anything changed. Keeps errorCount. */
export function clearError(host: BareMetalHost, status: OperationalStatus = 'OK'): boolean {
  let dirty = setOperationalStatus(host, status);
  if ((host.status.errorType ?? '') !== '') {
    host.status.errorType = '';
    dirty = true;
  }
  if (host.status.errorMessage !== '') {
    host.status.errorMessage = '';
    dirty = true;
  }
  return dirty;
}

/**
 * Records a failure: operationalStatus `error`, errorType, errorMessage (without URL credentials
 * or queries: agent/redact-text.ts) and errorCount + 1.
 */
export function setErrorMessage(host: BareMetalHost, errorType: ErrorType, message: string): void {
  host.status.operationalStatus = 'error';
  host.status.errorType = errorType;
  host.status.errorMessage = redactUrlSecrets(message);
  host.status.errorCount += 1;
}

/** `spec.bootMode`, defaulting to UEFI. */
export function hostBootMode(host: BareMetalHost): BootMode {
  return host.spec.bootMode ?? 'UEFI';
}

/** The host has a BMC address or a credentials secret name. */
export function hasBMCDetails(host: BareMetalHost): boolean {
  return (host.spec.bmc?.address ?? '') !== '' || (host.spec.bmc?.credentialsName ?? '') !== '';
}

/** Inspection is switched off by `spec.inspectionMode: disabled` or the legacy annotation. */
export function inspectionDisabled(host: BareMetalHost): boolean {
  return host.spec.inspectionMode === 'disabled' || host.metadata.annotations?.[Annotations.inspect] === 'disabled';
}

/** An `inspect.metal3.io` annotation requests re-inspection (any value but `disabled`). */
export function hasInspectAnnotation(host: BareMetalHost): boolean {
  const value = host.metadata.annotations?.[Annotations.inspect];
  return value !== undefined && value !== 'disabled';
}

/** Upstream `NeedsProvisioning`: online and a new image URL or custom deploy method to apply. */
export function needsProvisioning(host: BareMetalHost): boolean {
  if (!host.spec.online) return false;
  const specUrl = host.spec.image?.url ?? '';
  if (specUrl !== '' && host.status.provisioning.image.url === '') return true;
  const method = host.spec.customDeploy?.method ?? '';
  return method !== '' && method !== (host.status.provisioning.customDeploy?.method ?? '');
}

/** Upstream `WasProvisioned`. */
export function wasProvisioned(host: BareMetalHost): boolean {
  if (host.spec.externallyProvisioned === true) return false;
  return host.status.provisioning.image.url !== '' || host.status.provisioning.customDeploy !== undefined;
}

/** Upstream `NeedsHardwareInspection`. */
export function needsHardwareInspection(host: BareMetalHost): boolean {
  if (host.spec.externallyProvisioned === true || wasProvisioned(host) || inspectionDisabled(host)) return false;
  return host.status.hardware === undefined;
}

/** Arguments of a reboot annotation (value empty or JSON `{mode, force}`). */
export interface RebootRequest {
  mode: RebootMode;
  force: boolean;
}

/** Parses a reboot annotation value; an unparsable value counts as empty (soft, not forced), as upstream. */
export function parseRebootAnnotation(value: string): RebootRequest {
  if (value.trim() === '') return { mode: 'soft', force: false };
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null) return { mode: 'soft', force: false };
    const record = parsed as Record<string, unknown>;
    return { mode: record.mode === 'hard' ? 'hard' : 'soft', force: record.force === true };
  } catch {
    return { mode: 'soft', force: false };
  }
}

/** True for `reboot.metal3.io` and `reboot.metal3.io/<suffix>`. */
export function isRebootAnnotation(key: string): boolean {
  return key === Annotations.reboot || key.startsWith(Annotations.rebootPrefix);
}

/**
 * Upstream `hasRebootAnnotation`: whether any reboot annotation asks for a reboot (only
 * `force: true` ones when `expectForce`), and the mode (`hard` in any of them wins).
 */
export function rebootRequested(host: BareMetalHost, expectForce: boolean): { requested: boolean; mode: RebootMode } {
  let requested = false;
  let mode: RebootMode = 'soft';
  for (const [key, value] of Object.entries(host.metadata.annotations ?? {})) {
    if (!isRebootAnnotation(key)) continue;
    const request = parseRebootAnnotation(value);
    if (expectForce && !request.force) continue;
    requested = true;
    if (request.mode === 'hard') mode = 'hard';
  }
  return { requested, mode };
}

/** Removes every reboot annotation; true when any was removed. */
export function clearRebootAnnotations(host: BareMetalHost): boolean {
  const annotations = host.metadata.annotations ?? {};
  let removed = false;
  for (const key of Object.keys(annotations)) {
    if (isRebootAnnotation(key)) {
      Reflect.deleteProperty(annotations, key);
      removed = true;
    }
  }
  return removed;
}

/** Removes one annotation; true when it was there. */
export function removeAnnotation(host: BareMetalHost, key: string): boolean {
  const annotations = host.metadata.annotations;
  if (annotations?.[key] === undefined) return false;
  Reflect.deleteProperty(annotations, key);
  return true;
}

/** The detached annotation's arguments, or undefined when the host is not asked to detach. */
export interface DetachRequest {
  deleteAction: 'delay' | 'delete';
  force: boolean;
}

/** Parses `baremetalhost.metal3.io/detached`; an unparsable value counts as empty, as upstream. */
export function detachRequest(host: BareMetalHost): DetachRequest | undefined {
  const value = host.metadata.annotations?.[Annotations.detached];
  if (value === undefined) return undefined;
  const request: DetachRequest = { deleteAction: 'delete', force: false };
  try {
    const parsed: unknown = value.trim() === '' ? {} : JSON.parse(value);
    if (typeof parsed === 'object' && parsed !== null) {
      const record = parsed as Record<string, unknown>;
      if (record.deleteAction === 'delay') request.deleteAction = 'delay';
      request.force = record.force === true;
    }
  } catch {
    // upstream logs and treats the value as empty
  }
  return request;
}

/** The hardware profile's root device hints (deprecated profiles, kept for old manifests). */
const PROFILE_HINTS: Record<string, RootDeviceHints | undefined> = {
  unknown: { deviceName: '/dev/sda' },
  libvirt: { deviceName: '/dev/vda' },
  dell: { hctl: '0:0:0:0' },
  'dell-raid': { hctl: '0:2:0:0' },
  openstack: { deviceName: '/dev/vdb' },
  empty: undefined,
};

/** Upstream `matchProfile`: the spec's profile, else `libvirt` for libvirt BMC addresses, else `unknown`. */
export function hardwareProfileFor(host: BareMetalHost): string {
  if (host.spec.hardwareProfile !== undefined && host.spec.hardwareProfile !== '') return host.spec.hardwareProfile;
  return (host.spec.bmc?.address ?? '').startsWith('libvirt') ? 'libvirt' : 'unknown';
}

/** The applied settings that preparing compares against: root hints, RAID, legacy firmware. */
export interface ProvisioningSettings {
  rootDeviceHints?: RootDeviceHints;
  raid?: RAIDConfig;
}

/**
 * Upstream `getHostProvisioningSettings`: the root device hints and RAID target that the
 * spec asks for (docs/metal3-mapping.md: "Image and root device hints", "States"),
 * and whether they differ from what status says was applied.
 */
export function desiredProvisioningSettings(host: BareMetalHost): { dirty: boolean; settings: ProvisioningSettings } {
  const settings: ProvisioningSettings = {};
  const softwareVolumes = host.spec.raid?.softwareRAIDVolumes ?? undefined;
  const softwareRoot = softwareVolumes?.some((v) => v.rootVolume === true) ?? false;
  if (!softwareRoot) {
    const hints = host.spec.rootDeviceHints ?? PROFILE_HINTS[host.status.hardwareProfile || hardwareProfileFor(host)];
    if (hints !== undefined && Object.keys(hints).length > 0) settings.rootDeviceHints = structuredClone(hints);
  }
  const specRaid = host.spec.raid;
  const statusRaid = host.status.provisioning.raid;
  const specRaidEmpty =
    specRaid === undefined ||
    specRaid === null ||
    ((specRaid.hardwareRAIDVolumes ?? undefined) === undefined && (specRaid.softwareRAIDVolumes ?? undefined) === undefined);
  if (specRaidEmpty) {
    if (statusRaid !== undefined) {
      // Spec RAID removed: keep hardware volumes as they are, delete software RAID.
      settings.raid = { hardwareRAIDVolumes: structuredClone(statusRaid.hardwareRAIDVolumes ?? null), softwareRAIDVolumes: [] };
    }
  } else {
    settings.raid = structuredClone(specRaid);
  }
  const applied: ProvisioningSettings = {};
  if (host.status.provisioning.rootDeviceHints !== undefined) applied.rootDeviceHints = host.status.provisioning.rootDeviceHints;
  if (statusRaid !== undefined) applied.raid = statusRaid;
  return { dirty: !jsonEqual(settings, applied), settings };
}

/** Upstream `clearHostProvisioningSettings`: forget applied hints and RAID so the next prepare reapplies them. */
export function clearProvisioningSettings(host: BareMetalHost): void {
  delete host.status.provisioning.rootDeviceHints;
  delete host.status.provisioning.raid;
  delete host.status.provisioning.firmware;
}

/** Stores applied settings in `status.provisioning`. */
export function saveProvisioningSettings(host: BareMetalHost, settings: ProvisioningSettings): void {
  clearProvisioningSettings(host);
  if (settings.rootDeviceHints !== undefined) host.status.provisioning.rootDeviceHints = structuredClone(settings.rootDeviceHints);
  if (settings.raid !== undefined) host.status.provisioning.raid = structuredClone(settings.raid);
}

/** The operation a state belongs to in `status.operationHistory`. */
export function operationOfState(state: ProvisioningState): 'register' | 'inspect' | 'provision' | 'deprovision' | undefined {
  switch (state) {
    case 'registering':
      return 'register';
    case 'inspecting':
      return 'inspect';
    case 'provisioning':
      return 'provision';
    case 'deprovisioning':
      return 'deprovision';
    default:
      return undefined;
  }
}

/** Upstream `recordStateBegin`: opens the state's operation-history entry (start = now, end cleared). */
export function recordStateBegin(host: BareMetalHost, state: ProvisioningState, nowIso: string): void {
  const op = operationOfState(state);
  if (op !== undefined) host.status.operationHistory[op] = { start: nowIso, end: '' };
}

/** Upstream `recordStateEnd`: closes the state's entry if open. */
export function recordStateEnd(host: BareMetalHost, state: ProvisioningState, nowIso: string): void {
  const op = operationOfState(state);
  if (op !== undefined && host.status.operationHistory[op].start !== '' && host.status.operationHistory[op].end === '') {
    host.status.operationHistory[op].end = nowIso;
  }
}

/** The metadata fields an apply may change (ObjectMeta's shape, for hosts and the firmware kinds alike). */
interface AppliedMetadata {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  generation: number;
}

/**
 * How an applied object differs from the stored one, and the metadata to store: the incoming
 * annotations and labels, `generation` bumped when the spec changed (Kubernetes semantics).
 */
export function applyChange<M extends AppliedMetadata>(
  existing: { metadata: M; spec: unknown },
  incoming: { metadata: { annotations?: Record<string, string>; labels?: Record<string, string> }; spec: unknown },
): { specChanged: boolean; metaChanged: boolean; metadata: M } {
  const specChanged = !jsonEqual(existing.spec, incoming.spec);
  const metaChanged =
    !jsonEqual(existing.metadata.annotations ?? {}, incoming.metadata.annotations ?? {}) || !jsonEqual(existing.metadata.labels ?? {}, incoming.metadata.labels ?? {});
  const metadata: M = {
    ...existing.metadata,
    annotations: incoming.metadata.annotations ?? {},
    labels: incoming.metadata.labels ?? {},
    generation: existing.metadata.generation + (specChanged ? 1 : 0),
  };
  return { specChanged, metaChanged, metadata };
}
