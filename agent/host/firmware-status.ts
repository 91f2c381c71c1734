/**
 * @module The status rules of HostFirmwareSettings and HostFirmwareComponents (upstream's
 * `hostfirmwaresettings_controller.go`, `hostfirmwarecomponents_controller.go` and the host
 * controller's `getHostFirmwareSettings`/`getHostFirmwareComponents`, docs/metal3-mapping.md "Firmware objects"):
 * conditions `ChangeDetected` and `Valid` computed from spec, status and schema; whether there
 * are valid pending changes for prepare/service; the update difference; the FirmwareSchema name.
 * Time comes in as `nowIso`.
 * @pure
 */
import { createHash } from 'node:crypto';
import type { FirmwareComponentStatus, FirmwareUpdate, SettingSchema, SettingsMap } from './types.js';
import type { Condition, FirmwareSchema, HostFirmwareComponents, HostFirmwareSettings } from './firmware-types.js';
import { FIRMWARE_API_VERSION, FirmwareCondition } from './firmware-types.js';
import { validateFirmwareSetting } from './validation-firmware.js';

/** Condition reasons, as upstream names them. */
export const FirmwareReason = {
  /** HFS: the spec was evaluated (either way). */
  success: 'Success',
  /** HFS: some setting cannot be applied. */
  configurationError: 'ConfigurationError',
  /** HFC: the updates name known components. */
  validComponent: 'OK',
  /** HFC: an update names an unknown component. */
  invalidComponent: 'InvalidComponent',
} as const;

/** The condition of `type`, if any. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` is present with status `True`. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * `meta.SetStatusCondition`: adds or updates the condition of `next.type` in place;
 * `lastTransitionTime` moves to `nowIso` only when the status changes. True when anything changed.
 */
export function setCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, nowIso: string): boolean {
  const current = conditions.find((c) => c.type === next.type);
  if (current === undefined) {
    conditions.push({ ...next, lastTransitionTime: nowIso });
    return true;
  }
  const changed =
    current.status !== next.status || current.reason !== next.reason || current.message !== next.message || current.observedGeneration !== next.observedGeneration;
  if (current.status !== next.status) current.lastTransitionTime = nowIso;
  Object.assign(current, next);
  return changed;
}

/**
 * Upstream `GetSchemaName`: `schema-` and the first 8 hex digits of the SHA-256 of the sorted
 * tokens (names, types, allowable values, bounds, lengths, read-only flags) in Go's `%v` form.
 */
export function firmwareSchemaName(schema: Readonly<Record<string, SettingSchema>>): string {
  const tokens: string[] = [];
  for (const [name, s] of Object.entries(schema)) {
    tokens.push(name, s.attribute_type ?? '', ...(s.allowable_values ?? []));
    for (const n of [s.lower_bound, s.upper_bound, s.min_length, s.max_length]) if (n !== undefined) tokens.push(String(n));
    if (s.read_only !== undefined) tokens.push(String(s.read_only));
  }
  tokens.sort();
  return `schema-${createHash('sha256').update(`[${tokens.join(' ')}]`).digest('hex').slice(0, 8)}`;
}

/** Settings as the HFS status keeps them: names containing "Password" left out (vendors report encrypted ones). */
export function statusSettingsOf(settings: Readonly<SettingsMap>): SettingsMap {
  return Object.fromEntries(Object.entries(settings).filter(([name]) => !name.includes('Password')));
}

/** A FirmwareSchema object for `schema` (Password attributes left out, as upstream stores none). */
export function firmwareSchemaObject(
  namespace: string,
  schema: Readonly<Record<string, SettingSchema>>,
  vendor: { manufacturer?: string; productName?: string } | undefined,
): FirmwareSchema {
  const kept = Object.fromEntries(Object.entries(schema).filter(([name, s]) => !name.includes('Password') && s.attribute_type !== 'Password'));
  const spec: FirmwareSchema['spec'] = { schema: kept };
  if (vendor?.manufacturer !== undefined) spec.hardwareVendor = vendor.manufacturer;
  if (vendor?.productName !== undefined) spec.hardwareModel = vendor.productName;
  return {
    apiVersion: FIRMWARE_API_VERSION,
    kind: 'FirmwareSchema',
    metadata: { name: firmwareSchemaName(schema), namespace, uid: '', resourceVersion: '', generation: 1, creationTimestamp: '' },
    spec,
  };
}

/** One desired setting that cannot be applied, and why ("Setting X is invalid, …"). */
export interface SettingProblem {
  name: string;
  message: string;
}

/**
 * Upstream `validateHostFirmwareSettings`: why each desired setting cannot be applied, sorted
 * by name — a "Password" name, a name the host does not report, or a value the schema refuses.
 * Empty when every setting is valid.
 */
export function firmwareSettingProblems(hfs: HostFirmwareSettings, schema: Readonly<Record<string, SettingSchema>> | undefined): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const name of Object.keys(hfs.spec.settings).sort()) {
    const value = hfs.spec.settings[name];
    if (value === undefined) continue;
    let message: string | undefined;
    if (name.includes('Password')) message = `Setting ${name} is invalid, Password fields can't be set`;
    else if (!Object.hasOwn(hfs.status.settings, name)) message = `Setting ${name} is invalid, it is not in the Status field (the host does not report it)`;
    else if (schema !== undefined) {
      const entry = Object.hasOwn(schema, name) ? schema[name] : undefined;
      message = entry === undefined ? `Setting ${name} is invalid, it is not in the associated schema` : validateFirmwareSetting(name, value, entry);
    }
    if (message !== undefined) problems.push({ name, message });
  }
  return problems;
}

/** {@link firmwareSettingProblems} as messages. */
export function firmwareSettingsErrors(hfs: HostFirmwareSettings, schema: Readonly<Record<string, SettingSchema>> | undefined): string[] {
  return firmwareSettingProblems(hfs, schema).map((p) => p.message);
}

/** What evaluating a status did: whether it changed, and the validation errors to publish (new ones only). */
export interface Evaluation {
  changed: boolean;
  /** Set when the `Valid` condition just became (or stays, with a new message) False: one message per problem. */
  newErrors: string[];
}

/**
 * Upstream HFS `updateStatus` (conditions part): a spec setting absent from status or with a
 * different value is a change (`ChangeDetected=True`), then validated (`Valid=True`, or False
 * with reason ConfigurationError and the problems in the message); no change gives
 * `Valid=True`, `ChangeDetected=False`. Conditions carry the object's generation.
 */
export function evaluateFirmwareSettings(hfs: HostFirmwareSettings, schema: Readonly<Record<string, SettingSchema>> | undefined, nowIso: string): Evaluation {
  const conditions = hfs.status.conditions ?? [];
  const generation = hfs.metadata.generation;
  const mismatch = Object.entries(hfs.spec.settings).some(([name, value]) => hfs.status.settings[name] !== String(value));
  let changed = false;
  let newErrors: string[] = [];
  const set = (type: string, status: Condition['status'], reason: string, message: string): boolean => {
    const did = setCondition(conditions, { type, status, observedGeneration: generation, reason, message }, nowIso);
    if (did) changed = true;
    return did;
  };
  if (mismatch) {
    set(FirmwareCondition.changeDetected, 'True', FirmwareReason.success, '');
    const errors = firmwareSettingsErrors(hfs, schema);
    if (errors.length === 0) set(FirmwareCondition.valid, 'True', FirmwareReason.success, '');
    else if (set(FirmwareCondition.valid, 'False', FirmwareReason.configurationError, `Invalid BIOS setting: ${errors.join('; ')}`)) {
      // Upstream publishes no events while the host's settings are still unknown.
      if (Object.keys(hfs.status.settings).length > 0) newErrors = errors;
    }
  } else {
    set(FirmwareCondition.valid, 'True', FirmwareReason.success, '');
    set(FirmwareCondition.changeDetected, 'False', FirmwareReason.success, '');
  }
  if (hfs.status.conditions === undefined && conditions.length > 0) hfs.status.conditions = conditions;
  return { changed, newErrors };
}

/** The component names a firmware update may target (docs/metal3-mapping.md, "Firmware objects"). */
export function isKnownFirmwareComponent(component: string): boolean {
  return component === 'bmc' || component === 'bios' || (component.startsWith('nic:') && component.length > 'nic:'.length);
}

/**
 * Upstream HFC `updateHostFirmware` (conditions part): `spec.updates` different from
 * `status.updates` is a change; it is Valid when every component is `bmc`, `bios` or `nic:<id>`
 * (else reason InvalidComponent). Also stores `components` when given.
 */
export function evaluateFirmwareComponents(hfc: HostFirmwareComponents, components: FirmwareComponentStatus[] | undefined, nowIso: string): Evaluation {
  const conditions = hfc.status.conditions ?? [];
  const generation = hfc.metadata.generation;
  const statusUpdates = hfc.status.updates ?? [];
  const mismatch = !(hfc.spec.updates.length === 0 && statusUpdates.length === 0) && JSON.stringify(hfc.spec.updates) !== JSON.stringify(statusUpdates);
  let changed = false;
  let newErrors: string[] = [];
  const set = (type: string, status: Condition['status'], reason: string, message: string): boolean => {
    const did = setCondition(conditions, { type, status, observedGeneration: generation, reason, message }, nowIso);
    if (did) changed = true;
    return did;
  };
  if (mismatch) {
    set(FirmwareCondition.changeDetected, 'True', FirmwareReason.validComponent, '');
    const bad = hfc.spec.updates.filter((u) => !isKnownFirmwareComponent(u.component));
    if (bad.length === 0) set(FirmwareCondition.valid, 'True', FirmwareReason.validComponent, '');
    else {
      const errors = bad.map((u) => `component ${u.component} is invalid, only 'bmc', 'bios' or 'nic:<id>' are allowed as update names`);
      if (set(FirmwareCondition.valid, 'False', FirmwareReason.invalidComponent, `Invalid Firmware Components: ${errors.join('; ')}`)) newErrors = errors;
    }
  } else {
    set(FirmwareCondition.valid, 'True', FirmwareReason.validComponent, '');
    set(FirmwareCondition.changeDetected, 'False', FirmwareReason.validComponent, '');
  }
  if (hfc.status.conditions === undefined && conditions.length > 0) hfc.status.conditions = conditions;
  if (components !== undefined && JSON.stringify(hfc.status.components ?? []) !== JSON.stringify(components)) {
    hfc.status.components = structuredClone(components);
    changed = true;
  }
  return { changed, newErrors };
}

/** Whether an HFS or HFC has valid pending changes for prepare/service; `notReady` says why it must be waited for. */
export interface PendingChanges {
  dirty: boolean;
  notReady?: string;
}

/**
 * Upstream `hostObjectHasChanges`: pending when `ChangeDetected` is True for the current
 * generation and `Valid` is True; not ready when the conditions are for another generation.
 */
function pendingFromConditions(conditions: readonly Condition[] | undefined, generation: number, what: string): PendingChanges {
  const change = findCondition(conditions, FirmwareCondition.changeDetected);
  if (change === undefined) return { dirty: false };
  if (change.observedGeneration !== generation) {
    return { dirty: false, notReady: `${what} not ready yet: generation ${generation} != observed generation ${change.observedGeneration}` };
  }
  if (!isConditionTrue(conditions, FirmwareCondition.valid)) return { dirty: false };
  return { dirty: change.status === 'True' };
}

/** Upstream `getHostFirmwareSettings`: valid pending BIOS changes; not ready while status has no settings yet. */
export function firmwareSettingsPending(hfs: HostFirmwareSettings | undefined): PendingChanges {
  if (hfs === undefined) return { dirty: false };
  const pending = pendingFromConditions(hfs.status.conditions, hfs.metadata.generation, 'hostFirmwareSettings');
  if (pending.dirty && Object.keys(hfs.status.settings).length === 0) return { dirty: false, notReady: 'host firmware status settings not available' };
  return pending;
}

/** Upstream `getHostFirmwareComponents`: valid pending firmware updates. */
export function firmwareComponentsPending(hfc: HostFirmwareComponents | undefined): PendingChanges {
  if (hfc === undefined) return { dirty: false };
  return pendingFromConditions(hfc.status.conditions, hfc.metadata.generation, 'hostFirmwareComponents');
}

/** Upstream `getUpdatesDifference`: the spec updates whose component is not in status with the same URL. */
export function updatesDifference(specUpdates: readonly FirmwareUpdate[], statusUpdates: readonly FirmwareUpdate[] | undefined): FirmwareUpdate[] {
  if (statusUpdates === undefined) return structuredClone([...specUpdates]);
  const applied = new Map(statusUpdates.map((u) => [u.component, u.url]));
  return specUpdates.filter((u) => applied.get(u.component) !== u.url).map((u) => ({ ...u }));
}
