/**
 * @module The provisioner-calling steps of the lifecycle states (BMO `actionInspecting`,
 * `actionPreparing`, `actionProvisioning`, `actionDeprovisioning`, `actionDeleting`,
 * `detachHost`). Each maps one provisioner result onto an ActionResult; the state handlers in
 * state-machine.ts decide the next state.
 */
import { isProvisionerError, ProvisionerErrorCode } from '../provisioner/index.js';
import type { ActionResult } from './action-result.js';
import { actionComplete, actionContinue, actionUpdate, withSave } from './action-result.js';
import { recordActionFailure, transientFailure } from './failures.js';
import {
  clearError,
  clearProvisioningSettings,
  clearRebootAnnotations,
  desiredProvisioningSettings,
  hasInspectAnnotation,
  hostBootMode,
  rebootRequested,
  removeAnnotation,
  saveProvisioningSettings,
  setOperationalStatus,
} from './host-status.js';
import { commitStartedUpdates, firmwareWork, resetStartedUpdates, syncFirmware } from './firmware.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS } from './reconcile-context.js';
import { Annotations, HOST_FINALIZER } from './types.js';

/** Runs a provisioner call, turning a rejection into a transient `error` action. */
export async function attempt<T>(call: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; action: ActionResult }> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return {
      ok: false,
      action: transientFailure(error, isProvisionerError(error, ProvisionerErrorCode.needsRegistration)),
    };
  }
}

/** `continue` with the delay, saved when clearing an old error changed status. */
function continueClearingError(ctx: ReconcileContext, requeueAfterMs: number): ActionResult {
  return clearError(ctx.host) ? actionUpdate(requeueAfterMs) : actionContinue(requeueAfterMs);
}

/** One step of inspection; `complete` once HardwareDetails are in status. */
export async function actionInspecting(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  const refresh = hasInspectAnnotation(host);
  const forceReboot = rebootRequested(host, true).requested;
  const call = await attempt(() =>
    ctx.provisioner.inspectHardware(
      {
        bootMode: host.status.provisioning.bootMode ?? hostBootMode(host),
        cpuArchitecture: host.spec.architecture ?? 'x86_64',
        inspectionMode: host.spec.inspectionMode ?? 'agent',
      },
      host.status.errorType === 'inspection error',
      refresh,
      forceReboot,
    ),
  );
  if (!call.ok) return call.action;
  const { result, started, details } = call.value;
  if (result.errorMessage !== '') return recordActionFailure(ctx, 'inspection error', result.errorMessage);
  if (started && (refresh || forceReboot)) {
    removeAnnotation(host, Annotations.inspect);
    if (forceReboot) clearRebootAnnotations(host);
    return actionUpdate(result.requeueAfterMs);
  }
  if (result.dirty || details === undefined) return continueClearingError(ctx, result.requeueAfterMs);
  clearError(host);
  host.status.hardware = structuredClone(details);
  return actionComplete();
}

/**
 * One step of preparing (RAID, root device hints, BIOS settings, firmware updates; upstream
 * `actionPreparing`); `complete` when the host is prepared. Valid pending HostFirmwareSettings
 * and HostFirmwareComponents changes go to the provisioner and count as `unprepared`; HFS/HFC
 * not ready yet → wait 60 s. On completion their status is read again from the provisioner.
 */
export async function actionPreparing(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  const desired = desiredProvisioningSettings(host);
  const actualRAIDConfig = host.status.provisioning.raid;
  const afterFailure = host.status.errorType === 'preparation error';
  // A failed clean may have left RAID half-built: reapply it.
  const bmhDirty = desired.dirty || afterFailure;
  const firmware = firmwareWork(ctx);
  if (firmware.notReady !== undefined) return actionContinue(DELAYS_MS.subResourceNotReady);
  const unprepared = bmhDirty || firmware.hfsDirty || firmware.hfcDirty;
  const call = await attempt(() =>
    ctx.provisioner.prepare(
      {
        ...(desired.settings.raid !== undefined ? { targetRAIDConfig: structuredClone(desired.settings.raid) } : {}),
        ...(actualRAIDConfig !== undefined && !afterFailure ? { actualRAIDConfig: structuredClone(actualRAIDConfig) } : {}),
        ...(desired.settings.rootDeviceHints !== undefined ? { rootDeviceHints: structuredClone(desired.settings.rootDeviceHints) } : {}),
        targetFirmwareSettings: firmware.targetFirmwareSettings,
        actualFirmwareSettings: firmware.actualFirmwareSettings,
        targetFirmwareComponents: firmware.targetFirmwareComponents,
      },
      unprepared,
      afterFailure,
    ),
  );
  if (!call.ok) return call.action;
  const { result, started } = call.value;
  if (result.errorMessage !== '') {
    clearProvisioningSettings(host);
    if (firmware.hfcDirty) resetStartedUpdates(ctx);
    return recordActionFailure(ctx, 'preparation error', result.errorMessage);
  }
  if (firmware.hfcDirty && started) await commitStartedUpdates(ctx);
  let saved = false;
  if (bmhDirty && started) {
    saveProvisioningSettings(host, desired.settings);
    saved = true;
  }
  if (result.dirty) {
    const next = continueClearingError(ctx, result.requeueAfterMs);
    return saved ? withSave(next) : next;
  }
  clearError(host);
  if (!saved && desired.dirty) saveProvisioningSettings(host, desired.settings);
  // What the host now has (upstream's HFS/HFC controllers read it back after cleaning).
  await syncFirmware(ctx, true);
  return actionComplete();
}

/** One step of provisioning; `complete` once the image (or custom deploy) is active. */
export async function actionProvisioning(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  const forceReboot = rebootRequested(host, true).requested;
  const image = structuredClone(host.spec.image ?? { url: '' });
  host.status.lastAttemptedImage = structuredClone(image);
  const call = await attempt(() =>
    ctx.provisioner.provision(
      {
        image,
        hostConfig: ctx.hostConfig,
        bootMode: host.status.provisioning.bootMode ?? hostBootMode(host),
        hardwareProfile: host.status.hardwareProfile,
        ...(host.status.provisioning.rootDeviceHints !== undefined
          ? { rootDeviceHints: structuredClone(host.status.provisioning.rootDeviceHints) }
          : {}),
        ...(host.spec.customDeploy !== undefined ? { customDeploy: structuredClone(host.spec.customDeploy) } : {}),
        cpuArchitecture: host.spec.architecture ?? host.status.hardware?.cpu.arch ?? 'x86_64',
      },
      forceReboot,
    ),
  );
  if (!call.ok) return call.action;
  const result = call.value;
  const annotationsCleared = clearRebootAnnotations(host);
  if (result.errorMessage !== '') return recordActionFailure(ctx, 'provisioning error', result.errorMessage);
  if (clearError(host) || annotationsCleared) return actionUpdate(result.dirty ? result.requeueAfterMs : 0);
  if (result.dirty) return actionContinue(result.requeueAfterMs);
  host.status.provisioning.image = structuredClone(host.spec.image ?? { url: '' });
  if (host.spec.customDeploy !== undefined) host.status.provisioning.customDeploy = structuredClone(host.spec.customDeploy);
  else delete host.status.provisioning.customDeploy;
  return actionComplete();
}

/** One step of deprovisioning; `complete` once the host is clean and its image forgotten. */
export async function actionDeprovisioning(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  if (host.status.provisioning.image.url !== '' || host.status.provisioning.customDeploy !== undefined) {
    // Adopt first: the host may have been re-registered part-way through.
    const adopted = await attempt(() =>
      ctx.provisioner.adopt({ state: host.status.provisioning.state }, host.status.errorType === 'provisioned registration error'),
    );
    if (!adopted.ok) return adopted.action;
    if (adopted.value.errorMessage !== '') {
      return recordActionFailure(ctx, 'provisioned registration error', adopted.value.errorMessage);
    }
    if (adopted.value.dirty) return actionContinue(adopted.value.requeueAfterMs);
  }
  if (clearRebootAnnotations(host)) return actionUpdate(0);
  const call = await attempt(() =>
    ctx.provisioner.deprovision(host.status.errorType === 'provisioning error', host.spec.automatedCleaningMode ?? 'metadata'),
  );
  if (!call.ok) return call.action;
  const result = call.value;
  if (result.errorMessage !== '') return recordActionFailure(ctx, 'provisioning error', result.errorMessage);
  if (clearError(host)) return actionUpdate(result.requeueAfterMs);
  if (result.dirty) return actionContinue(result.requeueAfterMs);
  host.status.provisioning.image = { url: '' };
  delete host.status.provisioning.customDeploy;
  delete host.status.provisioning.rootDeviceHints;
  const raid = host.status.provisioning.raid;
  if (raid !== undefined) {
    // Keep hardware RAID; software RAID goes with the image.
    if ((raid.hardwareRAIDVolumes ?? undefined) === undefined) delete host.status.provisioning.raid;
    else host.status.provisioning.raid = { hardwareRAIDVolumes: raid.hardwareRAIDVolumes ?? null };
  }
  return actionComplete();
}

/** One step of deleting; `deleteComplete` once the provisioner forgot the host. */
export async function actionDeleting(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  if (!(host.metadata.finalizers ?? []).includes(HOST_FINALIZER)) return { kind: 'deleteComplete' };
  const call = await attempt(() => ctx.provisioner.delete());
  if (!call.ok) return call.action;
  if (call.value.dirty) return actionContinue(call.value.requeueAfterMs);
  host.metadata.finalizers = (host.metadata.finalizers ?? []).filter((f) => f !== HOST_FINALIZER);
  return { kind: 'deleteComplete' };
}

/** One step of detaching; sets operationalStatus `detached` when done and polls slowly. */
export async function detachHost(ctx: ReconcileContext, force: boolean): Promise<ActionResult> {
  const { host } = ctx;
  const call = await attempt(() => ctx.provisioner.detach(force));
  if (!call.ok) return call.action;
  const result = call.value;
  if (result.errorMessage !== '') return recordActionFailure(ctx, 'detach error', result.errorMessage);
  if (result.dirty) {
    if (host.status.errorType === 'detach error' && clearError(host)) return actionUpdate(result.requeueAfterMs);
    return actionContinue(result.requeueAfterMs);
  }
  let dirty = false;
  if (host.status.errorType === 'detach error') {
    clearError(host);
    host.status.errorCount = 0;
    dirty = true;
  }
  if (setOperationalStatus(host, 'detached')) {
    ctx.publish('Detached', 'Host detached: the provisioner no longer manages it');
    dirty = true;
  }
  return dirty ? actionUpdate(DELAYS_MS.unmanagedRetry) : actionContinue(DELAYS_MS.unmanagedRetry);
}
