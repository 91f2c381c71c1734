/**
 * @module Admission of the firmware manifests beside a BareMetalHost
 * (docs/metal3-mapping.md, "Firmware objects"): HostFirmwareSettings (`spec.settings`: a map of IntOrString values), HostFirmwareComponents
 * (`spec.updates`: `{component, url}` with upstream's webhook URL check) and HostUpdatePolicy
 * (`spec.firmwareSettings`/`firmwareUpdates`: `onPreparing` | `onReboot`). Unknown fields are
 * refused with their path; `status` and server-owned metadata in the input are ignored. Checks
 * that need the host's schema (upstream's HFS controller validation) run in the service and in
 * firmware-status.ts; a component name outside `bmc`/`bios`/`nic:*` is upstream's `Valid=False`
 * condition, not an admission error.
 * @pure
 */
import type { FirmwareUpdate, DesiredSettingsMap } from './types.js';
import type { HostFirmwareComponents, HostFirmwareSettings, HostUpdatePolicy } from './firmware-types.js';
import { FIRMWARE_API_VERSION, UPDATE_POLICIES } from './firmware-types.js';
import { asObject, fail, fieldPath, indexPath, jsonKind, keyPath, present, readArray, readFields, readObject, rejectUnknown, requireString } from './decode.js';
import { checkTypeMeta, decodeObjectMeta, rootPath } from './validation-meta.js';

/** BIOS attribute names that read well as a dotted path (`spec.settings.ProcVirtualization`). */
const PLAIN_SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The path of one setting: `spec.settings.Name`, or `spec.settings["odd.name"]` for other names. */
export function settingPath(settingsPath: string, name: string): string {
  return PLAIN_SETTING_NAME.test(name) ? `${settingsPath}.${name}` : keyPath(settingsPath, name);
}

/** The object's root, metadata and spec paths, after the common envelope checks. */
function envelope(input: unknown, fieldPrefix: string | undefined, kind: string): { obj: Record<string, unknown>; root: string; spec: Record<string, unknown>; specPath: string } {
  const root = rootPath(fieldPrefix);
  const obj = asObject(input, root);
  rejectUnknown(obj, ['apiVersion', 'kind', 'metadata', 'spec', 'status'], root);
  checkTypeMeta(obj, root, FIRMWARE_API_VERSION, kind);
  if (present(obj, 'metadata') === undefined) fail(fieldPath(root, 'metadata'), 'required field is missing');
  const specPath = fieldPath(root, 'spec');
  const specRaw = present(obj, 'spec');
  const statusRaw = present(obj, 'status');
  if (statusRaw !== undefined) asObject(statusRaw, fieldPath(root, 'status'));
  return { obj, root, spec: specRaw === undefined ? {} : asObject(specRaw, specPath), specPath };
}

/**
 * Decodes a HostFirmwareSettings manifest: `spec.settings` maps BIOS attribute names to a string
 * or an integer (Kubernetes IntOrString); anything else is refused at `spec.settings.<name>`.
 * The result has an empty status and empty server-owned metadata; `fieldPrefix` (e.g.
 * `items[2].`) is prepended to every error path.
 */
export function decodeHostFirmwareSettings(input: unknown, fieldPrefix?: string): HostFirmwareSettings {
  const { obj, root, spec, specPath } = envelope(input, fieldPrefix, 'HostFirmwareSettings');
  const metadata = decodeObjectMeta(obj.metadata, fieldPath(root, 'metadata'));
  rejectUnknown(spec, ['settings'], specPath);
  const settingsPath = fieldPath(specPath, 'settings');
  const settings: DesiredSettingsMap = {};
  for (const [name, value] of Object.entries(readObject(spec, 'settings', specPath) ?? {})) {
    const at = settingPath(settingsPath, name);
    if (name === '') fail(at, 'a setting name must not be empty');
    if (typeof value === 'string') settings[name] = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) settings[name] = value;
    else fail(at, `must be a string or an integer, got ${typeof value === 'number' ? String(value) : jsonKind(value)}`);
  }
  return { apiVersion: FIRMWARE_API_VERSION, kind: 'HostFirmwareSettings', metadata, spec: { settings }, status: { settings: {} } };
}

/** Upstream's webhook `validateURL`: an absolute http(s) URL with a host. */
function checkUpdateUrl(url: string, path: string, component: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    fail(path, `invalid URL "${url}" in FirmwareUpdate in component "${component}": not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    fail(path, `invalid URL "${url}" in FirmwareUpdate in component "${component}": the scheme must be http or https`);
  }
  if (parsed.hostname === '') fail(path, `invalid URL "${url}" in FirmwareUpdate in component "${component}": no host`);
}

/**
 * Decodes a HostFirmwareComponents manifest: `spec.updates` is a list of `{component, url}`,
 * both required; the URL must be an absolute http(s) URL (upstream's webhook). The result has
 * an empty status.
 */
export function decodeHostFirmwareComponents(input: unknown, fieldPrefix?: string): HostFirmwareComponents {
  const { obj, root, spec, specPath } = envelope(input, fieldPrefix, 'HostFirmwareComponents');
  const metadata = decodeObjectMeta(obj.metadata, fieldPath(root, 'metadata'));
  rejectUnknown(spec, ['updates'], specPath);
  const updatesPath = fieldPath(specPath, 'updates');
  const updates: FirmwareUpdate[] = (readArray(spec, 'updates', specPath) ?? []).map((item, i) => {
    const at = indexPath(updatesPath, i);
    const fields = asObject(item, at);
    rejectUnknown(fields, ['component', 'url'], at);
    const component = requireString(fields, 'component', at, true);
    const url = requireString(fields, 'url', at, true);
    checkUpdateUrl(url, fieldPath(at, 'url'), component);
    return { component, url };
  });
  return { apiVersion: FIRMWARE_API_VERSION, kind: 'HostFirmwareComponents', metadata, spec: { updates }, status: {} };
}

/** Decodes a HostUpdatePolicy manifest: `spec.firmwareSettings` and `spec.firmwareUpdates`, each `onPreparing` or `onReboot`. */
export function decodeHostUpdatePolicy(input: unknown, fieldPrefix?: string): HostUpdatePolicy {
  const { obj, root, spec, specPath } = envelope(input, fieldPrefix, 'HostUpdatePolicy');
  const metadata = decodeObjectMeta(obj.metadata, fieldPath(root, 'metadata'));
  const fields = readFields(spec, { firmwareSettings: UPDATE_POLICIES, firmwareUpdates: UPDATE_POLICIES }, specPath);
  return { apiVersion: FIRMWARE_API_VERSION, kind: 'HostUpdatePolicy', metadata, spec: fields };
}
