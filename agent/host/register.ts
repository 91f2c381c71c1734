/**
 * @module Registration (BMO `registerHost`): runs on every reconcile of a registered host, so
 * the provisioner's validateManagementAccess must be idempotent and cheap (docs/metal3-mapping.md, "Registration").
 * Step 8 (firmware objects and their status) is in firmware.ts.
 */
import { isProvisionerError, ProvisionerErrorCode } from '../provisioner/index.js';
import type { ActionResult } from './action-result.js';
import { actionComplete, actionContinue, actionUpdate } from './action-result.js';
import { recordActionFailure, transientFailure } from './failures.js';
import { syncFirmware } from './firmware.js';
import {
  clearError,
  clearProvisioningSettings,
  hardwareProfileFor,
  hostBootMode,
  inspectionDisabled,
} from './host-status.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS, sameCredentials } from './reconcile-context.js';
import type { ProvisioningState } from './types.js';

/** States in which no preprovisioning image is wanted (upstream forces formats to nil there). */
function wantsPreprovisioningImage(ctx: ReconcileContext): boolean {
  const state: ProvisioningState = ctx.host.status.provisioning.state;
  switch (state) {
    case 'registering':
    case 'deleting':
    case 'powering off before delete':
      return false;
    case 'provisioned':
    case 'externally provisioned':
      return ctx.host.status.operationalStatus === 'servicing';
    case 'deprovisioning':
      return ctx.host.spec.automatedCleaningMode !== 'disabled';
    case 'inspecting':
      return ctx.host.spec.inspectionMode !== 'fast';
    default:
      return true;
  }
}

/**
 * Registers the host (or confirms it is registered). Returns `undefined` when nothing changed
 * and the caller may run the state handler; otherwise the action to take.
 */
export async function registerHost(ctx: ReconcileContext): Promise<ActionResult | undefined> {
  const { host, provisioner } = ctx;
  let dirty = false;

  const credentialsChanged = !sameCredentials(host.status.triedCredentials, ctx.credentials);
  if (credentialsChanged) {
    host.status.triedCredentials = structuredClone(ctx.credentials);
    dirty = true;
  }

  const formats = wantsPreprovisioningImage(ctx) ? await provisioner.preprovisioningImageFormats() : null;
  if (formats?.length === 0) {
    return recordActionFailure(ctx, 'registration error', 'no acceptable preprovisioning image formats');
  }

  const currentImage =
    host.status.provisioning.image.url !== ''
      ? host.status.provisioning.image
      : host.status.provisioning.state === 'provisioning' || host.status.provisioning.state === 'externally provisioned'
        ? host.spec.image
        : undefined;

  let outcome;
  try {
    outcome = await provisioner.validateManagementAccess(
      {
        bootMode: hostBootMode(host),
        automatedCleaningMode: host.spec.automatedCleaningMode ?? 'metadata',
        state: host.status.provisioning.state,
        operationalStatus: host.status.operationalStatus,
        ...(currentImage !== undefined ? { currentImage: structuredClone(currentImage) } : {}),
        preprovisioningNetworkData: ctx.preprovisioningNetworkData,
        hasCustomDeploy: (host.spec.customDeploy?.method ?? '') !== '',
        disablePowerOff: host.spec.disablePowerOff ?? false,
        cpuArchitecture: host.spec.architecture ?? host.status.hardware?.cpu.arch ?? 'x86_64',
        ...(host.status.hardware !== undefined ? { hardwareDetails: structuredClone(host.status.hardware) } : {}),
        disableInspection: inspectionDisabled(host),
        inspectionMode: host.spec.inspectionMode ?? (inspectionDisabled(host) ? 'disabled' : 'agent'),
      },
      credentialsChanged,
      host.status.errorType === 'registration error',
    );
  } catch (error) {
    if (formats !== null && isProvisionerError(error, ProvisionerErrorCode.needsPreprovisioningImage)) {
      // No image supplied yet: wait for the image provider.
      return dirty ? actionUpdate(DELAYS_MS.preprovisioningImageRetry) : actionContinue(DELAYS_MS.preprovisioningImageRetry);
    }
    return transientFailure(error, isProvisionerError(error, ProvisionerErrorCode.needsRegistration));
  }
  const { result, provID } = outcome;
  if (result.errorMessage !== '') return recordActionFailure(ctx, 'registration error', result.errorMessage);

  if (provID !== '' && host.status.provisioning.ID !== provID) {
    host.status.provisioning.ID = provID;
    if (host.status.provisioning.state === 'preparing') clearProvisioningSettings(host);
    dirty = true;
  }

  // matchProfile: record the hardware profile and, through it, the default root hints.
  const profile = hardwareProfileFor(host);
  if (host.status.hardwareProfile !== profile) {
    host.status.hardwareProfile = profile;
    dirty = true;
  }

  if (result.dirty) {
    if (clearError(host)) dirty = true;
    return dirty ? actionUpdate(result.requeueAfterMs) : actionContinue(result.requeueAfterMs);
  }

  // Step 8: the HostFirmwareSettings/Components named after the host, their status refreshed.
  await syncFirmware(ctx);

  const newCredentials = !sameCredentials(host.status.goodCredentials, ctx.credentials);
  if (newCredentials) {
    host.status.goodCredentials = structuredClone(ctx.credentials);
    ctx.publish('BMCAccessValidated', 'Verified access to BMC');
    dirty = true;
  }
  if (host.status.errorType === 'registration error' || newCredentials) {
    if (clearError(host)) dirty = true;
  }
  return dirty ? actionComplete() : undefined;
}
