/**
 * @module The management backend's part for the firmware kinds: applying HostFirmwareSettings,
 * HostFirmwareComponents and HostUpdatePolicy manifests (create-or-update of the spec, status
 * kept, generation bumped on a spec change, optimistic versions) and reading a host's firmware
 * objects. A HostFirmwareSettings whose host already reported its BIOS schema is checked against
 * it at once — what upstream's controller would mark `Valid=False` is a 400 naming the setting
 * (`spec.settings.ProcVirtualization`); before that the controller's condition says it.
 */
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Change, FirmwareReader, HostReader } from '../store/types.js';
import type { ApplyOutcome } from '../web/backend.js';
import type { HostFirmware, HostFirmwareComponents, HostFirmwareSettings, HostUpdatePolicy } from './firmware-types.js';
import { firmwareSettingProblems } from './firmware-status.js';
import { applyChange } from './host-status.js';
import { settingPath } from './validation-firmware-objects.js';

/** What applying and reading firmware objects reads: the host they belong to, and the firmware objects. */
export type HostFirmwareReader = Pick<HostReader, 'getHost'> & Pick<FirmwareReader, 'getFirmwareObject'>;

/** A decoded firmware manifest users apply. */
export type AppliedFirmware = HostFirmwareSettings | HostFirmwareComponents | HostUpdatePolicy;

/** Refuses settings the host's known schema (or its reported settings) rule out, naming the first. */
async function checkAgainstSchema(store: Pick<FirmwareReader, 'getFirmwareObject'>, incoming: HostFirmwareSettings, existing: HostFirmwareSettings | undefined, prefix: string): Promise<void> {
  const ref = existing?.status.schema;
  if (existing === undefined || ref === undefined) return;
  const schema = await store.getFirmwareObject('FirmwareSchema', ref.namespace, ref.name);
  if (schema === undefined) return;
  const [problem] = firmwareSettingProblems({ ...incoming, status: existing.status }, schema.spec.schema);
  if (problem !== undefined) throw new ValidationError(settingPath(`${prefix}spec.settings`, problem.name), problem.message);
}

/**
 * Plans one firmware manifest of an apply: the store change (none when unchanged) and the
 * outcome. The object must live in its host's namespace; a host being deleted takes no new
 * firmware objects. `version` is a client-named resourceVersion (stale → 409).
 */
export async function planFirmwareApply(
  store: HostFirmwareReader,
  incoming: AppliedFirmware,
  prefix: string,
  version: string | undefined,
): Promise<{ change?: Change; outcome: ApplyOutcome }> {
  const { name, namespace } = incoming.metadata;
  const host = await store.getHost(name);
  if (host !== undefined && host.metadata.namespace !== namespace) {
    throw new ConflictError(`${prefix}metadata.namespace`, `${incoming.kind} "${name}" belongs to BareMetalHost "${name}" in namespace "${host.metadata.namespace}"`);
  }
  if (host?.metadata.deletionTimestamp !== undefined) {
    throw new ConflictError(`${prefix}metadata.name`, `BareMetalHost "${name}" is being deleted`);
  }
  const existing = await store.getFirmwareObject(incoming.kind, namespace, name);
  if (incoming.kind === 'HostFirmwareSettings') {
    await checkAgainstSchema(store, incoming, existing?.kind === 'HostFirmwareSettings' ? existing : undefined, prefix);
  }
  const outcome: ApplyOutcome = { kind: incoming.kind, namespace, name, action: 'created', resourceVersion: existing?.metadata.resourceVersion ?? '' };
  if (existing === undefined) {
    if (version !== undefined) throw new ConflictError(`${prefix}metadata.resourceVersion`, `${incoming.kind} "${name}" does not exist`);
    const object = { ...incoming, metadata: { ...incoming.metadata, generation: 1 } } as AppliedFirmware;
    return { change: { kind: 'firmware', op: 'put', object, ifVersion: 'absent' }, outcome };
  }
  if (version !== undefined && version !== existing.metadata.resourceVersion) {
    throw new ConflictError(`${prefix}metadata.resourceVersion`, `stale resourceVersion ${version} (current ${existing.metadata.resourceVersion}): re-read the ${incoming.kind} and apply again`);
  }
  const { specChanged, metaChanged, metadata } = applyChange(existing, incoming);
  if (!specChanged && !metaChanged) return { outcome: { ...outcome, action: 'unchanged' } };
  const object = { ...existing, metadata, spec: incoming.spec } as AppliedFirmware;
  return { change: { kind: 'firmware', op: 'put', object, ifVersion: existing.metadata.resourceVersion }, outcome: { ...outcome, action: 'configured' } };
}

/** The firmware objects of host `name` (404 when there is no such host). */
export async function readHostFirmware(store: HostFirmwareReader, name: string): Promise<HostFirmware> {
  const host = await store.getHost(name);
  if (host === undefined) throw new NotFoundError('BareMetalHost', name);
  const { namespace } = host.metadata;
  const [hfs, hfc, hup] = await Promise.all([
    store.getFirmwareObject('HostFirmwareSettings', namespace, name),
    store.getFirmwareObject('HostFirmwareComponents', namespace, name),
    store.getFirmwareObject('HostUpdatePolicy', namespace, name),
  ]);
  const ref = hfs?.status.schema;
  const schema = ref === undefined ? undefined : await store.getFirmwareObject('FirmwareSchema', ref.namespace, ref.name);
  return { hostFirmwareSettings: hfs ?? null, hostFirmwareComponents: hfc ?? null, hostUpdatePolicy: hup ?? null, firmwareSchema: schema ?? null };
}
