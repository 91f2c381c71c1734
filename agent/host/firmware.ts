/**
 * @module The host controller's side of HostFirmwareSettings and HostFirmwareComponents
 * (docs/metal3-mapping.md: "Firmware objects", "Registration", "States"): registration creates the objects
 * named after the host and refreshes their status from the provisioner (`getFirmwareSettings`
 * with the schema, `getFirmwareComponents`) — what upstream's separate HFS/HFC controllers do,
 * on their schedule (5 min, 1 min while a change is pending, at once after a spec edit) —, and
 * the conditions are recomputed; prepare and service get the valid pending changes from here
 * and commit the updates handed over. Everything works on the reconcile's working copies
 * (`ctx.firmware`); the reconciler stores them.
 */
import type { FirmwareComponentStatus, FirmwareUpdate } from './types.js';
import type { HostFirmwareComponents, HostFirmwareSettings } from './firmware-types.js';
import { FIRMWARE_API_VERSION, FirmwareCondition } from './firmware-types.js';
import {
  evaluateFirmwareComponents,
  evaluateFirmwareSettings,
  findCondition,
  firmwareComponentsPending,
  firmwareSchemaObject,
  firmwareSettingsPending,
  isConditionTrue,
  statusSettingsOf,
  updatesDifference,
} from './firmware-status.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS } from './reconcile-context.js';

function emptyMeta(ctx: ReconcileContext): HostFirmwareSettings['metadata'] {
  const { name, namespace } = ctx.host.metadata;
  return { name, namespace, uid: '', resourceVersion: '', generation: 1, creationTimestamp: '' };
}

/** A new HostFirmwareSettings for the host (upstream `createHostFirmwareSettings`): empty spec and status. */
function newSettings(ctx: ReconcileContext): HostFirmwareSettings {
  return { apiVersion: FIRMWARE_API_VERSION, kind: 'HostFirmwareSettings', metadata: emptyMeta(ctx), spec: { settings: {} }, status: { settings: {} } };
}

/** A new HostFirmwareComponents for the host (upstream `createHostFirmwareComponents`): no updates. */
function newComponents(ctx: ReconcileContext): HostFirmwareComponents {
  return { apiVersion: FIRMWARE_API_VERSION, kind: 'HostFirmwareComponents', metadata: emptyMeta(ctx), spec: { updates: [] }, status: {} };
}

/** Whether firmware status should be read from the provisioner now. */
function refreshDue(ctx: ReconcileContext, nowMs: number): boolean {
  const { hfs, hfc, refreshedAtMs } = ctx.firmware;
  if (refreshedAtMs === undefined || hfs === undefined) return true;
  // A spec edit is looked at at once (upstream's controllers run on generation changes).
  for (const o of [hfs, hfc]) {
    const change = findCondition(o?.status.conditions, FirmwareCondition.changeDetected);
    if (o !== undefined && (change === undefined || change.observedGeneration !== o.metadata.generation)) return true;
  }
  const pending = isConditionTrue(hfs.status.conditions, FirmwareCondition.changeDetected) || isConditionTrue(hfc?.status.conditions, FirmwareCondition.changeDetected);
  // A wall clock that stepped back (NTP, `date -s`) would otherwise hold the next refresh for as long: refresh once now.
  if (nowMs < refreshedAtMs) return true;
  return nowMs - refreshedAtMs >= (pending ? DELAYS_MS.firmwareRefreshChangeDetected : DELAYS_MS.firmwareRefresh);
}

/** Reads the BIOS settings and schema into the HFS status; false when the provisioner failed (transient). */
async function readSettings(ctx: ReconcileContext, hfs: HostFirmwareSettings): Promise<boolean> {
  let read;
  try {
    read = await ctx.provisioner.getFirmwareSettings(true);
  } catch {
    return false; // transient (BMC busy or unreachable): the next refresh tries again
  }
  const settings = statusSettingsOf(read.settings);
  let changed = JSON.stringify(hfs.status.settings) !== JSON.stringify(settings);
  hfs.status.settings = settings;
  if (read.schema !== undefined) {
    const schema = firmwareSchemaObject(hfs.metadata.namespace, read.schema, ctx.host.status.hardware?.systemVendor);
    if (ctx.firmware.schema?.metadata.name !== schema.metadata.name) ctx.firmware.schema = schema;
    if (hfs.status.schema?.name !== schema.metadata.name || hfs.status.schema.namespace !== schema.metadata.namespace) {
      hfs.status.schema = { namespace: schema.metadata.namespace, name: schema.metadata.name };
      changed = true;
    }
  }
  if (changed) hfs.status.lastUpdated = ctx.nowIso;
  return true;
}

/** Reads the firmware components; undefined when the provisioner failed (transient). */
async function readComponents(ctx: ReconcileContext): Promise<FirmwareComponentStatus[] | undefined> {
  try {
    return await ctx.provisioner.getFirmwareComponents();
  } catch {
    return undefined;
  }
}

/** Recomputes the HFS and HFC conditions, publishing `ValidationFailed` for new problems. */
export function evaluateFirmware(ctx: ReconcileContext, components?: FirmwareComponentStatus[]): void {
  const { hfs, hfc } = ctx.firmware;
  if (hfs !== undefined) {
    const result = evaluateFirmwareSettings(hfs, ctx.firmware.schema?.spec.schema, ctx.nowIso);
    if (result.changed) hfs.status.lastUpdated = ctx.nowIso;
    for (const error of result.newErrors) ctx.publish('ValidationFailed', `Invalid BIOS setting: ${error}`, 'Warning');
  }
  if (hfc !== undefined) {
    const result = evaluateFirmwareComponents(hfc, components, ctx.nowIso);
    if (result.changed) hfc.status.lastUpdated = ctx.nowIso;
    for (const error of result.newErrors) ctx.publish('ValidationFailed', `Invalid Firmware Components: ${error}`, 'Warning');
  }
}

/**
 * Registration step 8: ensures the HostFirmwareSettings exists, the HostFirmwareComponents too
 * when the provisioner reports components, refreshes their status when due (`force`: now) and
 * recomputes their conditions. Provisioner failures are transient: status stays as it was.
 * Nothing is created for a host being deleted.
 */
export async function syncFirmware(ctx: ReconcileContext, force = false): Promise<void> {
  if (ctx.host.metadata.deletionTimestamp !== undefined) return;
  const nowMs = Date.parse(ctx.nowIso);
  ctx.firmware.hfs ??= newSettings(ctx);
  const hfs = ctx.firmware.hfs;
  let components: FirmwareComponentStatus[] | undefined;
  if (force || refreshDue(ctx, nowMs)) {
    const settingsRead = await readSettings(ctx, hfs);
    components = await readComponents(ctx);
    if (settingsRead && components !== undefined) ctx.firmware.refreshedAtMs = nowMs;
    if (ctx.firmware.hfc === undefined && components !== undefined && components.length > 0) ctx.firmware.hfc = newComponents(ctx);
  }
  evaluateFirmware(ctx, components);
}

/** The valid pending firmware work of a host for prepare or service (upstream `PrepareData`/`ServicingData` firmware fields). */
export interface FirmwareWork {
  hfsDirty: boolean;
  hfcDirty: boolean;
  /** Set when the HFS/HFC cannot be judged yet (wait {@link DELAYS_MS.subResourceNotReady}). */
  notReady?: string;
  targetFirmwareSettings: HostFirmwareSettings['spec']['settings'];
  actualFirmwareSettings: HostFirmwareSettings['status']['settings'];
  targetFirmwareComponents: FirmwareUpdate[];
  /** Any HFS setting or HFC update is specified (upstream `hasFirmwareSpec`). */
  hasFirmwareSpec: boolean;
}

/**
 * The firmware part of PrepareData/ServicingData: HFS dirty → actual (status) and target (spec)
 * settings; HFC dirty → the updates not yet handed over. `settings`/`updates` false leave that
 * kind out (servicing without a HostUpdatePolicy allowing it).
 */
export function firmwareWork(ctx: ReconcileContext, include: { settings: boolean; updates: boolean } = { settings: true, updates: true }): FirmwareWork {
  const { hfs, hfc } = ctx.firmware;
  const work: FirmwareWork = { hfsDirty: false, hfcDirty: false, targetFirmwareSettings: {}, actualFirmwareSettings: {}, targetFirmwareComponents: [], hasFirmwareSpec: false };
  if (include.settings) {
    const pending = firmwareSettingsPending(hfs);
    if (pending.notReady !== undefined) work.notReady = pending.notReady;
    if (pending.dirty && hfs !== undefined) {
      work.hfsDirty = true;
      work.targetFirmwareSettings = structuredClone(hfs.spec.settings);
      work.actualFirmwareSettings = structuredClone(hfs.status.settings);
    }
    work.hasFirmwareSpec ||= Object.keys(hfs?.spec.settings ?? {}).length > 0;
  }
  if (include.updates) {
    const pending = firmwareComponentsPending(hfc);
    if (pending.notReady !== undefined) work.notReady ??= pending.notReady;
    if (pending.dirty && hfc !== undefined) {
      work.hfcDirty = true;
      work.targetFirmwareComponents = updatesDifference(hfc.spec.updates, hfc.status.updates);
    }
    work.hasFirmwareSpec ||= (hfc?.spec.updates.length ?? 0) > 0;
  }
  return work;
}

/**
 * Upstream `saveHostFirmwareComponents` after `started`: the spec updates were handed over, so
 * `status.updates = spec.updates`; the component versions are read again (best effort).
 */
export async function commitStartedUpdates(ctx: ReconcileContext): Promise<void> {
  const hfc = ctx.firmware.hfc;
  if (hfc === undefined || JSON.stringify(hfc.status.updates) === JSON.stringify(hfc.spec.updates)) return;
  hfc.status.updates = structuredClone(hfc.spec.updates);
  hfc.status.lastUpdated = ctx.nowIso;
  evaluateFirmware(ctx, await readComponents(ctx));
}

/** After a failed prepare/service: forget the updates handed over, so the next attempt hands them over again. */
export function resetStartedUpdates(ctx: ReconcileContext): void {
  const hfc = ctx.firmware.hfc;
  if (hfc?.status.updates === undefined) return;
  delete hfc.status.updates;
  hfc.status.lastUpdated = ctx.nowIso;
  evaluateFirmware(ctx);
}
