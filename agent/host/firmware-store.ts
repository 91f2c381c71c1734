/**
 * @module Reading and writing a host's firmware objects for the reconciler: the working set a
 * reconcile starts from (HostFirmwareSettings, HostFirmwareComponents and HostUpdatePolicy named
 * after the host, and the FirmwareSchema the settings refer to), the store changes that persist
 * what a step did (committed atomically with the host, each with a resourceVersion precondition),
 * and their removal with the host (upstream's owner-reference garbage collection). A
 * FirmwareSchema is shared by name (a hash of its content) and removed when no
 * HostFirmwareSettings refers to it any more; every commit that starts referring to one writes it
 * too, so a concurrent removal and a new reference conflict instead of leaving a dangling name.
 */
import type { Change, FirmwareReader } from '../store/types.js';
import type { FirmwareSchema, HostFirmwareComponents, HostFirmwareSettings, HostUpdatePolicy, SchemaReference } from './firmware-types.js';
import { jsonEqual } from '../json-value.js';
import type { FirmwareWorkingSet } from './reconcile-context.js';
import type { BareMetalHost } from './types.js';

/** The firmware objects as stored when the reconcile began (the preconditions of its writes). */
export interface StoredFirmware {
  hfs?: HostFirmwareSettings;
  hfc?: HostFirmwareComponents;
  hup?: HostUpdatePolicy;
  schema?: FirmwareSchema;
}

/**
 * Reads the host's firmware objects; returns the stored copies and a working set to mutate.
 * FirmwareSchemas are named by a hash of their content, so `schemaCache` (kept by the caller
 * across reconciles) never goes stale; the working set shares the schema (steps never change one).
 */
export async function loadFirmware(
  store: Pick<FirmwareReader, 'getFirmwareObject'>,
  host: BareMetalHost,
  schemaCache?: Map<string, FirmwareSchema>,
): Promise<{ stored: StoredFirmware; working: FirmwareWorkingSet }> {
  const { name, namespace } = host.metadata;
  const [hfs, hfc, hup] = await Promise.all([
    store.getFirmwareObject('HostFirmwareSettings', namespace, name),
    store.getFirmwareObject('HostFirmwareComponents', namespace, name),
    store.getFirmwareObject('HostUpdatePolicy', namespace, name),
  ]);
  const ref = hfs?.status.schema;
  let schema: FirmwareSchema | undefined;
  if (ref !== undefined) {
    const key = `${ref.namespace}/${ref.name}`;
    schema = schemaCache?.get(key) ?? (await store.getFirmwareObject('FirmwareSchema', ref.namespace, ref.name));
    if (schema !== undefined) schemaCache?.set(key, schema);
  }
  const objects = {
    ...(hfs === undefined ? {} : { hfs }),
    ...(hfc === undefined ? {} : { hfc }),
    ...(hup === undefined ? {} : { hup }),
  };
  const stored: StoredFirmware = { ...objects, ...(schema === undefined ? {} : { schema }) };
  const working: FirmwareWorkingSet = { ...structuredClone(objects), ...(schema === undefined ? {} : { schema }) };
  return { stored, working };
}

function sameRef(a: SchemaReference | undefined, b: SchemaReference | undefined): boolean {
  return a?.name === b?.name && a?.namespace === b?.namespace;
}

/** A delete of the schema `ref` when no HostFirmwareSettings but `except`'s refers to it. */
async function releaseSchema(store: FirmwareReader, ref: SchemaReference, except: { namespace: string; name: string }): Promise<Change[]> {
  const users = (await store.listFirmwareObjects('HostFirmwareSettings')).filter(
    (o) => !(o.metadata.namespace === except.namespace && o.metadata.name === except.name) && sameRef(o.status.schema, ref),
  );
  if (users.length > 0) return [];
  const schema = await store.getFirmwareObject('FirmwareSchema', ref.namespace, ref.name);
  if (schema === undefined) return [];
  return [{ kind: 'firmware', op: 'delete', objectKind: 'FirmwareSchema', namespace: ref.namespace, name: ref.name, ifVersion: schema.metadata.resourceVersion }];
}

/**
 * The changes that store what a reconcile did to the working set: changed HFS/HFC (created
 * when new), the FirmwareSchema a new schema reference names (created, or rewritten to claim
 * it), and the old schema when nobody refers to it any more. Empty when nothing changed.
 */
export async function firmwareChanges(store: FirmwareReader, stored: StoredFirmware, working: FirmwareWorkingSet): Promise<Change[]> {
  const changes: Change[] = [];
  for (const key of ['hfs', 'hfc'] as const) {
    const object = working[key];
    if (object !== undefined && !jsonEqual(object, stored[key])) {
      changes.push({ kind: 'firmware', op: 'put', object, ifVersion: stored[key]?.metadata.resourceVersion ?? 'absent' });
    }
  }
  const hfs = working.hfs;
  const newRef = hfs?.status.schema;
  const oldRef = stored.hfs?.status.schema;
  if (hfs !== undefined && newRef !== undefined && !sameRef(newRef, oldRef)) {
    const existing = await store.getFirmwareObject('FirmwareSchema', newRef.namespace, newRef.name);
    const object = existing ?? working.schema;
    if (object !== undefined && object.metadata.name === newRef.name) {
      changes.push({ kind: 'firmware', op: 'put', object, ifVersion: existing?.metadata.resourceVersion ?? 'absent' });
    }
    if (oldRef !== undefined) changes.push(...(await releaseSchema(store, oldRef, hfs.metadata)));
  }
  return changes;
}

/** The changes removing a deleted host's firmware objects (and its schema when nobody else uses it). */
export async function firmwareDeletions(store: FirmwareReader, host: BareMetalHost, stored: StoredFirmware): Promise<Change[]> {
  const { namespace, name } = host.metadata;
  const changes: Change[] = [];
  for (const object of [stored.hfs, stored.hfc, stored.hup]) {
    if (object !== undefined) changes.push({ kind: 'firmware', op: 'delete', objectKind: object.kind, namespace, name, ifVersion: object.metadata.resourceVersion });
  }
  const ref = stored.hfs?.status.schema;
  if (ref !== undefined) changes.push(...(await releaseSchema(store, ref, host.metadata)));
  return changes;
}
