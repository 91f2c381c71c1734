/**
 * @module Steady-state management (BMO `actionManageSteadyState` and `manageHostPower`,
 * docs/metal3-mapping.md, "Power"): adopt provisioned hosts, track the observed power, service them
 * while they reboot (servicing.ts), enforce `spec.online` and run reboot annotations. Power is
 * enforced only in steady states.
 */
import type { ActionResult } from './action-result.js';
import { actionContinue, actionUpdate, withSave } from './action-result.js';
import { attempt } from './actions-lifecycle.js';
import { recordActionFailure } from './failures.js';
import { clearError, rebootRequested, removeAnnotation } from './host-status.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS } from './reconcile-context.js';
import { serviceIfNeeded } from './servicing.js';
import type { RebootMode } from './types.js';
import { Annotations } from './types.js';

/** Adopt (a no-op for an active host), then manage power. Provisioned and externally provisioned hosts. */
export async function actionManageSteadyState(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  const adopted = await attempt(() =>
    ctx.provisioner.adopt({ state: host.status.provisioning.state }, host.status.errorType === 'provisioned registration error'),
  );
  if (!adopted.ok) return adopted.action;
  const result = adopted.value;
  if (result.errorMessage !== '') return recordActionFailure(ctx, 'provisioned registration error', result.errorMessage);
  if (result.dirty) return actionContinue(result.requeueAfterMs);
  if (host.status.errorType === 'provisioned registration error') {
    clearError(host);
    return actionUpdate(0);
  }
  return manageHostPower(ctx);
}

/** Observes power and moves it towards `spec.online` (or off while a reboot is requested). */
export async function manageHostPower(ctx: ReconcileContext): Promise<ActionResult> {
  const { host } = ctx;
  const observed = await attempt(() => ctx.provisioner.updateHardwareState());
  if (!observed.ok) return observed.action;
  const poweredOn = observed.value.poweredOn;
  if (poweredOn !== undefined && poweredOn !== host.status.poweredOn) {
    host.status.poweredOn = poweredOn;
    if (host.status.errorType === 'power management error') clearError(host);
    return actionUpdate(0);
  }

  const state = host.status.provisioning.state;
  const isProvisioned = state === 'provisioned' || state === 'externally provisioned';

  // The host is off: a one-shot (suffixless) reboot annotation has done its job.
  if (!host.status.poweredOn && removeAnnotation(host, Annotations.reboot)) {
    ctx.publish('RebootDone', 'Host powered off for the requested reboot; powering on again');
    return actionUpdate(0);
  }

  // Servicing (docs/metal3-mapping.md, "Servicing"): a provisioned host that is off although it should be on is mid-reboot.
  const midReboot = isProvisioned && !host.status.poweredOn && host.spec.online;
  if (midReboot || host.status.operationalStatus === 'servicing' || host.status.errorType === 'servicing error') {
    const serviced = await serviceIfNeeded(ctx);
    if (serviced !== undefined) return serviced;
  }

  let desiredOn = host.spec.online;
  let mode: RebootMode = 'soft';
  if (desiredOn) {
    // In provisioned states any reboot annotation counts; in available only forced ones.
    const reboot = rebootRequested(host, !isProvisioned);
    if (reboot.requested) {
      desiredOn = false;
      mode = reboot.mode;
    }
  }
  if (desiredOn === host.status.poweredOn) {
    // Settled: a power error that was cleared by observing the new state is now a success.
    if (host.status.errorCount > 0 && (host.status.errorType ?? '') === '') {
      host.status.errorCount = 0;
      return actionUpdate(DELAYS_MS.powerCheck);
    }
    return actionContinue(DELAYS_MS.powerCheck);
  }

  if (!desiredOn && host.spec.disablePowerOff === true) {
    // Power-off is forbidden: the provisioner reboots instead; the one-shot annotation goes now.
    removeAnnotation(host, Annotations.reboot);
  }
  const force = host.status.errorType === 'power management error';
  if (host.status.errorCount > 0) mode = 'hard';
  const call = await attempt(() =>
    desiredOn
      ? ctx.provisioner.powerOn(force)
      : ctx.provisioner.powerOff(mode, force, host.spec.automatedCleaningMode ?? 'metadata'),
  );
  if (!call.ok) return call.action;
  const result = call.value;
  if (result.errorMessage !== '') {
    const message =
      !desiredOn && mode === 'soft' && host.status.errorType !== 'power management error'
        ? `Continuing with hard poweroff after soft poweroff fails. More details: ${result.errorMessage}`
        : result.errorMessage;
    return recordActionFailure(ctx, 'power management error', message);
  }
  if (result.dirty) return actionUpdate(result.requeueAfterMs);
  // Nothing left to do for the provisioner: the host is where we want it.
  host.status.poweredOn = desiredOn;
  host.status.errorCount = 0;
  if (host.status.errorType === 'power management error') clearError(host);
  return actionUpdate(DELAYS_MS.powerCheck);
}

/**
 * While a host inspects (the provisioner powers it itself), `status.poweredOn` follows what the
 * BMC reports — the provisioner's reading, which after a power request of its own is the state
 * the BMC reached (agent/provisioner/local/power-intents.ts) — instead of staying as it was
 * until the host is steady. A failed read changes nothing (inspection reports its own errors).
 * Returns `result`, made to save the host when poweredOn changed; other kinds as they are.
 */
export async function followObservedPower(ctx: ReconcileContext, result: ActionResult): Promise<ActionResult> {
  if (result.kind !== 'continue' && result.kind !== 'update') return result;
  let poweredOn: boolean | undefined;
  try {
    poweredOn = (await ctx.provisioner.updateHardwareState()).poweredOn;
  } catch {
    return result;
  }
  if (poweredOn === undefined || poweredOn === ctx.host.status.poweredOn) return result;
  ctx.host.status.poweredOn = poweredOn;
  return withSave(result);
}
