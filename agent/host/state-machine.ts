/**
 * @module The BareMetalHost state machine (BMO `host_state_machine.go`,
 * docs/metal3-mapping.md, "State machine"): the order of checks on every reconcile, one handler per provisioning state
 * (a `Record` checked with `satisfies`, so a new state does not compile without a handler),
 * and the capacity-gated state change. It reaches the world only through the provisioner
 * in the context.
 */
import type { ActionResult } from './action-result.js';
import { actionComplete, actionContinue, actionDelayed, actionUpdate } from './action-result.js';
import {
  actionDeleting,
  actionDeprovisioning,
  actionInspecting,
  actionPreparing,
  actionProvisioning,
  attempt,
  detachHost,
} from './actions-lifecycle.js';
import { recordActionFailure } from './failures.js';
import { firmwareWork } from './firmware.js';
import {
  clearError,
  clearProvisioningSettings,
  desiredProvisioningSettings,
  detachRequest,
  hasBMCDetails,
  hasInspectAnnotation,
  hostBootMode,
  inspectionDisabled,
  needsProvisioning,
  recordStateBegin,
  recordStateEnd,
  setOperationalStatus,
} from './host-status.js';
import { actionManageSteadyState, followObservedPower, manageHostPower } from './power.js';
import type { ReconcileContext } from './reconcile-context.js';
import { DELAYS_MS, sameCredentials } from './reconcile-context.js';
import { registerHost } from './register.js';
import { CAPACITY_GATED_STATES } from './states.js';
import type { ProvisioningState } from './types.js';
import { jsonEqual } from '../json-value.js';

type Handler = (ctx: ReconcileContext) => Promise<ActionResult>;

/** A state change the machine made, for the caller's events and the transition-table check. */
export interface StateChange {
  from: ProvisioningState;
  to: ProvisioningState;
}

/** What one reconcile did. */
export interface ReconcileOutcome {
  result: ActionResult;
  change?: StateChange;
}

/** Runs one reconcile of one host: the checks of upstream `ReconcileState`, then the state handler. */
export async function reconcileState(ctx: ReconcileContext): Promise<ReconcileOutcome> {
  return new HostStateMachine(ctx).run();
}

class HostStateMachine {
  private nextState: ProvisioningState;
  private readonly initialState: ProvisioningState;

  constructor(private readonly ctx: ReconcileContext) {
    this.initialState = ctx.host.status.provisioning.state;
    this.nextState = this.initialState;
  }

  async run(): Promise<ReconcileOutcome> {
    let result = await this.decide();
    let change: StateChange | undefined;
    if (this.nextState !== this.initialState) {
      const gated = await this.applyStateChange();
      if (gated !== undefined) result = gated;
      else change = { from: this.initialState, to: this.nextState };
    }
    return change === undefined ? { result } : { result, change };
  }

  private async decide(): Promise<ActionResult> {
    const delayed = await this.checkDelayedHost();
    if (delayed !== undefined) return delayed;
    if (this.checkInitiateDelete()) return actionComplete();
    const detached = await this.checkDetachedHost();
    if (detached !== undefined) return detached;
    const registered = await this.ensureRegistered();
    if (registered !== undefined) return registered;
    return this.handlers[this.initialState](this.ctx);
  }

  // ---- checks before the state handler --------------------------------------------------

  /** A delayed host waits for capacity; hosts already in a gated state re-check it. */
  private async checkDelayedHost(): Promise<ActionResult | undefined> {
    const { host } = this.ctx;
    if (host.status.operationalStatus === 'delayed') {
      const gated = await this.ensureCapacity();
      if (gated !== undefined) return gated;
      clearError(host);
      return actionUpdate(0);
    }
    if (CAPACITY_GATED_STATES.includes(host.status.provisioning.state) && host.metadata.deletionTimestamp === undefined) {
      return this.ensureCapacity();
    }
    return undefined;
  }

  private async ensureCapacity(): Promise<ActionResult | undefined> {
    const capacity = await attempt(() => this.ctx.provisioner.hasCapacity());
    if (!capacity.ok) return capacity.action;
    if (capacity.value) return undefined;
    if (setOperationalStatus(this.ctx.host, 'delayed')) {
      this.ctx.publish('Delayed', 'No provisioning capacity: the operation waits for a free slot');
    }
    return actionDelayed();
  }

  /** Maps the current state onto a delete path (docs/metal3-mapping.md, "Delete"); true when it changed the state. */
  private checkInitiateDelete(): boolean {
    const { host } = this.ctx;
    if (host.metadata.deletionTimestamp === undefined) return false;
    const detached = host.status.operationalStatus === 'detached' || detachRequest(host) !== undefined;
    switch (this.nextState) {
      case 'deleting':
        return false;
      case 'deprovisioning':
      case 'powering off before delete':
        if (host.status.errorType === 'registration error' && host.status.errorCount > 3) {
          this.nextState = 'deleting';
          return true;
        }
        return false;
      case '':
      case 'unmanaged':
      case 'registering':
        this.nextState = 'deleting';
        return true;
      default:
        if (detached) {
          // A detached host is not deprovisioned; `deleteAction: delay` waits for re-attach.
          if (detachRequest(host)?.deleteAction === 'delay' || detachRequest(host) === undefined) return false;
          this.nextState = 'deleting';
          return true;
        }
        this.nextState =
          this.nextState === 'provisioning' || this.nextState === 'provisioned' ? 'deprovisioning' : 'powering off before delete';
        return true;
    }
  }

  /** Detach while the annotation is there; undo a detach once it is gone (docs/metal3-mapping.md, "Detach"). */
  private async checkDetachedHost(): Promise<ActionResult | undefined> {
    const { host } = this.ctx;
    const request = detachRequest(host);
    if (request !== undefined && host.metadata.deletionTimestamp === undefined) {
      const state = host.status.provisioning.state;
      const detachable = state === 'provisioned' || state === 'externally provisioned' || state === 'ready' || state === 'available';
      if (detachable || request.force) return detachHost(this.ctx, request.force);
    }
    if (request !== undefined && host.metadata.deletionTimestamp !== undefined && host.status.operationalStatus === 'detached') {
      return actionContinue(DELAYS_MS.unmanagedRetry); // deletion waits for re-attach (deleteAction: delay)
    }
    if (request === undefined && host.status.errorType === 'detach error') {
      clearError(host);
      host.status.errorCount = 0;
      return actionUpdate(0);
    }
    if (request === undefined && host.status.operationalStatus === 'detached') {
      setOperationalStatus(host, (host.status.errorType ?? '') !== '' ? 'error' : 'OK');
      this.ctx.publish('Attached', 'Host re-attached: the provisioner manages it again');
      return actionUpdate(0);
    }
    return undefined;
  }

  /** Registers on every reconcile once past registering (upstream `ensureRegistered`). */
  private async ensureRegistered(): Promise<ActionResult | undefined> {
    const { host } = this.ctx;
    if (!this.ctx.haveCreds) return undefined;
    switch (this.nextState) {
      case '':
      case 'unmanaged':
      case 'match profile':
      case 'deleting':
        return undefined;
      case 'registering':
        break;
      default:
        if (host.status.errorType === 'registration error' || !sameCredentials(host.status.goodCredentials, this.ctx.credentials)) {
          recordStateBegin(host, 'registering', this.ctx.nowIso);
        }
    }
    const result = await registerHost(this.ctx);
    return result?.kind === 'complete' ? actionUpdate(0) : result;
  }

  /** Applies `nextState`, gated by capacity for inspecting/provisioning/deprovisioning. */
  private async applyStateChange(): Promise<ActionResult | undefined> {
    const { host } = this.ctx;
    if (CAPACITY_GATED_STATES.includes(this.nextState)) {
      const gated = await this.ensureCapacity();
      if (gated !== undefined) return gated;
    }
    recordStateEnd(host, this.initialState, this.ctx.nowIso);
    recordStateBegin(host, this.nextState, this.ctx.nowIso);
    host.status.provisioning.state = this.nextState;
    if (this.nextState === 'registering' || this.nextState === 'inspecting' || this.nextState === 'provisioning') {
      host.status.provisioning.bootMode = hostBootMode(host);
    }
    return undefined;
  }

  // ---- state handlers ------------------------------------------------------------------

  private readonly handlers = {
    '': (ctx) => this.handleNone(ctx),
    unmanaged: (ctx) => this.handleUnmanaged(ctx),
    registering: (ctx) => this.handleRegistering(ctx),
    inspecting: (ctx) => this.handleInspecting(ctx),
    'match profile': () => this.goTo('preparing'),
    preparing: (ctx) => this.handlePreparing(ctx),
    ready: () => this.goTo('available'),
    available: (ctx) => this.handleAvailable(ctx),
    provisioning: (ctx) => this.handleProvisioning(ctx),
    provisioned: (ctx) => this.handleProvisioned(ctx),
    'externally provisioned': (ctx) => this.handleExternallyProvisioned(ctx),
    deprovisioning: (ctx) => this.handleDeprovisioning(ctx),
    'powering off before delete': (ctx) => this.handlePoweringOffBeforeDelete(ctx),
    deleting: (ctx) => actionDeleting(ctx),
  } satisfies Record<ProvisioningState, Handler>;

  private goTo(state: ProvisioningState, resetErrorCount = false): Promise<ActionResult> {
    this.nextState = state;
    if (resetErrorCount) this.ctx.host.status.errorCount = 0;
    return Promise.resolve(actionComplete());
  }

  private handleNone(ctx: ReconcileContext): Promise<ActionResult> {
    if (hasBMCDetails(ctx.host)) return this.goTo('registering');
    ctx.publish('Discovered', 'Discovered host with no BMC details');
    setOperationalStatus(ctx.host, 'discovered');
    return this.goTo('unmanaged');
  }

  private handleUnmanaged(ctx: ReconcileContext): Promise<ActionResult> {
    if (hasBMCDetails(ctx.host)) return this.goTo('registering');
    return Promise.resolve(actionContinue(DELAYS_MS.unmanagedRetry));
  }

  /** Reaching it means registration succeeded; we never come back here after that. */
  private handleRegistering(ctx: ReconcileContext): Promise<ActionResult> {
    if (ctx.host.spec.externallyProvisioned === true) return this.goTo('externally provisioned', true);
    if (inspectionDisabled(ctx.host)) return this.goTo('preparing', true);
    return this.goTo('inspecting', true);
  }

  private async handleInspecting(ctx: ReconcileContext): Promise<ActionResult> {
    if (inspectionDisabled(ctx.host)) {
      ctx.publish('InspectionSkipped', 'Hardware inspection is disabled');
      return this.goTo('preparing', true);
    }
    const result = await actionInspecting(ctx);
    if (result.kind === 'complete') return this.goTo('preparing', true);
    return followObservedPower(ctx, result);
  }

  private async handlePreparing(ctx: ReconcileContext): Promise<ActionResult> {
    const result = await actionPreparing(ctx);
    if (result.kind === 'complete') return this.goTo('available', true);
    return result;
  }

  private async handleAvailable(ctx: ReconcileContext): Promise<ActionResult> {
    const { host } = ctx;
    if (host.spec.externallyProvisioned === true) {
      clearProvisioningSettings(host);
      return this.goTo('externally provisioned');
    }
    if (hasInspectAnnotation(host)) return this.goTo('inspecting');
    if (desiredProvisioningSettings(host).dirty) return this.goTo('preparing');
    // Valid pending BIOS settings or firmware updates are applied by preparing too.
    const firmware = firmwareWork(ctx);
    if (firmware.hfsDirty || firmware.hfcDirty) return this.goTo('preparing');
    if ((host.spec.image?.url ?? '') === '' && (host.status.provisioningFailCount ?? 0) !== 0) {
      host.status.provisioningFailCount = 0;
      return actionUpdate(0);
    }
    if (needsProvisioning(host)) {
      if (host.spec.image !== undefined && !jsonEqual(host.spec.image, host.status.lastAttemptedImage ?? null)) {
        host.status.provisioningFailCount = 0;
      }
      const failures = host.status.provisioningFailCount ?? 0;
      if (ctx.maxProvisioningRetries > 0 && failures >= ctx.maxProvisioningRetries) {
        if (host.status.errorType === 'provisioning error') return actionContinue(DELAYS_MS.unmanagedRetry);
        return recordActionFailure(
          ctx,
          'provisioning error',
          `provisioning failed ${failures} times in a row with the same image; change the image to try again`,
        );
      }
      clearError(host);
      return this.goTo('provisioning');
    }
    return manageHostPower(ctx);
  }

  private provisioningCancelled(): boolean {
    const { host } = this.ctx;
    const specUrl = host.spec.image?.url ?? '';
    const specMethod = host.spec.customDeploy?.method ?? '';
    if (specUrl === '' && specMethod === '') return true;
    const statusUrl = host.status.provisioning.image.url;
    const statusMethod = host.status.provisioning.customDeploy?.method ?? '';
    if (statusUrl === '' && statusMethod === '') return false;
    if (statusUrl !== '' && specUrl !== statusUrl) return true;
    return statusMethod !== '' && specMethod !== statusMethod;
  }

  private async handleProvisioning(ctx: ReconcileContext): Promise<ActionResult> {
    const { host } = ctx;
    if ((host.status.errorType ?? '') !== '' || this.provisioningCancelled()) {
      if ((host.status.errorType ?? '') !== '') host.status.provisioningFailCount = (host.status.provisioningFailCount ?? 0) + 1;
      return this.goTo('deprovisioning');
    }
    const result = await actionProvisioning(ctx);
    if (result.kind === 'complete') {
      host.status.provisioningFailCount = 0;
      return this.goTo('provisioned', true);
    }
    return result;
  }

  private async handleProvisioned(ctx: ReconcileContext): Promise<ActionResult> {
    if (this.provisioningCancelled()) return this.goTo('deprovisioning');
    return actionManageSteadyState(ctx);
  }

  private async handleExternallyProvisioned(ctx: ReconcileContext): Promise<ActionResult> {
    const { host } = ctx;
    if (host.spec.externallyProvisioned === true) return actionManageSteadyState(ctx);
    // Cleared: the host becomes a normally provisioned one (upstream main); with no image it
    // is then deprovisioned by the provisioned handler.
    host.status.provisioning.image = structuredClone(host.spec.image ?? { url: '' });
    if (host.spec.customDeploy !== undefined) host.status.provisioning.customDeploy = structuredClone(host.spec.customDeploy);
    return this.goTo('provisioned');
  }

  private async handleDeprovisioning(ctx: ReconcileContext): Promise<ActionResult> {
    const { host } = ctx;
    const result = await actionDeprovisioning(ctx);
    if (host.metadata.deletionTimestamp === undefined) {
      if (result.kind === 'complete') return this.goTo('available', true);
      return result;
    }
    if (result.kind === 'complete') return this.goTo('powering off before delete', true);
    if (result.kind === 'failed' && host.status.errorCount > 3) {
      ctx.publish('DeprovisioningSkipped', 'Giving up on cleaning after 3 attempts: the host may still hold data; clean it manually', 'Warning');
      return this.goTo('powering off before delete');
    }
    if (result.kind === 'error' && result.needsRegistration && !ctx.haveCreds) return this.goTo('deleting');
    return result;
  }

  private async handlePoweringOffBeforeDelete(ctx: ReconcileContext): Promise<ActionResult> {
    const { host } = ctx;
    if (host.spec.disablePowerOff === true) return this.goTo('deleting');
    const call = await attempt(() =>
      ctx.provisioner.powerOff('hard', host.status.errorType === 'power management error', host.spec.automatedCleaningMode ?? 'metadata'),
    );
    if (!call.ok) {
      if (call.action.kind === 'error' && call.action.needsRegistration && !ctx.haveCreds) return this.goTo('deleting');
      return call.action;
    }
    const result = call.value;
    if (result.errorMessage !== '') {
      if (host.status.errorCount > 3) return this.goTo('deleting');
      return recordActionFailure(ctx, 'power management error', result.errorMessage);
    }
    if (result.dirty) return actionContinue(result.requeueAfterMs);
    host.status.poweredOn = false;
    return this.goTo('deleting', true);
  }
}
