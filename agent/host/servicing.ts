/**
 * @module Servicing: firmware changes on a provisioned host while it reboots (upstream
 * `doServiceIfNeeded`, docs/metal3-mapping.md, "Servicing"). Opt-in through a HostUpdatePolicy named after
 * the host: `firmwareSettings: onReboot` lets HostFirmwareSettings changes through,
 * `firmwareUpdates: onReboot` HostFirmwareComponents updates. The power code calls it when a
 * provisioned host is off while `spec.online` (mid-reboot), is already servicing, or failed
 * servicing; it returns `undefined` to hand back to normal power handling.
 */
import type { ActionResult } from './action-result.js';
import { actionContinue, actionUpdate } from './action-result.js';
import { attempt } from './actions-lifecycle.js';
import { recordActionFailure, transientFailure } from './failures.js';
import { commitStartedUpdates, firmwareWork, resetStartedUpdates, syncFirmware } from './firmware.js';
import { clearError, setOperationalStatus } from './host-status.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS } from './reconcile-context.js';

/** Whether the HostUpdatePolicy lets settings and updates be applied on reboot. */
export function servicingAllowed(ctx: ReconcileContext): { settings: boolean; updates: boolean } {
  const spec = ctx.firmware.hup?.spec;
  return { settings: spec?.firmwareSettings === 'onReboot', updates: spec?.firmwareUpdates === 'onReboot' };
}

/**
 * One step of servicing. Nothing pending, not servicing and no servicing error → `undefined`.
 * First it only sets operationalStatus `servicing` and saves (the next registration then wants
 * the preprovisioning image); then `service(data, unprepared = pending changes,
 * restartOnFailure = errorType is servicing error)`: `errorMessage` → servicing error (and the
 * handed-over updates forgotten); `started` → the updates committed to the HFC status; dirty →
 * continue; done → firmware status read again, operationalStatus `OK`, and power handling
 * powers the host back on. A spec cleared after a failure makes `hasFirmwareSpec` false, which
 * the provisioner takes as "abort".
 */
export async function serviceIfNeeded(ctx: ReconcileContext): Promise<ActionResult | undefined> {
  const { host } = ctx;
  const allowed = servicingAllowed(ctx);
  const work = firmwareWork(ctx, allowed);
  if (work.notReady !== undefined) return transientFailure(new Error(`could not determine updated firmware: ${work.notReady}`));
  const hasChanges = work.hfsDirty || work.hfcDirty;
  const failed = host.status.errorType === 'servicing error';
  if (!hasChanges && host.status.operationalStatus !== 'servicing' && !failed) return undefined;

  if (host.status.operationalStatus !== 'servicing') {
    // Yield before calling the provisioner: registration must see `servicing` first.
    setOperationalStatus(host, 'servicing');
    ctx.publish('ServicingRequested', hasChanges ? 'Firmware changes pending: servicing the host while it is off for the reboot' : 'Resuming servicing');
    return actionUpdate(0);
  }

  const call = await attempt(() =>
    ctx.provisioner.service(
      {
        targetFirmwareSettings: work.targetFirmwareSettings,
        actualFirmwareSettings: work.actualFirmwareSettings,
        targetFirmwareComponents: work.targetFirmwareComponents,
        hasFirmwareSpec: work.hasFirmwareSpec,
      },
      hasChanges,
      failed,
    ),
  );
  if (!call.ok) return call.action;
  const { result, started } = call.value;
  if (result.errorMessage !== '') {
    if (work.hfcDirty) resetStartedUpdates(ctx);
    return recordActionFailure(ctx, 'servicing error', result.errorMessage);
  }
  const dirty = clearError(host, 'servicing');
  if (work.hfcDirty && started) await commitStartedUpdates(ctx);
  if (dirty) return actionUpdate(result.dirty ? result.requeueAfterMs : 0);
  if (result.dirty) return actionContinue(result.requeueAfterMs);

  // Servicing is finished: read back what the host has now, then hand back to power handling.
  await syncFirmware(ctx, true);
  if (clearError(host, 'OK')) {
    ctx.publish('ServicingFinished', 'Servicing finished; the host is powered on again');
    return actionUpdate(DELAYS_MS.subResourceNotReady);
  }
  return undefined;
}
