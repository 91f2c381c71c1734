/**
 * @module The local provisioner's `powerOn` and `powerOff`: one request per intent, then wait
 * for the BMC to show the new state (power-intents.ts) — never re-sent while it still shows the
 * old one — failing with the timeout named when it does not. A soft power-off gets Ironic's
 * 180 s (docs/metal3-mapping.md, "Ironic mapping", PowerOff), counted from that power-off's own
 * request: a later power-on or hard power-off replaced it, so its time never leaks into the next one.
 */
import type { PowerAction, PowerState } from '../../../drivers/index.js';
import type { RebootMode } from '../../host/types.js';
import type { Result } from '../provisioner.js';
import { operationComplete, operationContinuing, operationFailed } from '../result.js';
import { bmcFailure } from './bmc-result.js';
import type { PowerIntents } from './power-intents.js';

/** What the power steps use of a provisioner. */
export interface PowerStepContext {
  readonly uid: string;
  readonly intents: PowerIntents;
  readonly nowMs: () => number;
  /** Requeue delay while a change is awaited. */
  readonly requeueMs: number;
  readonly getPowerState: () => Promise<PowerState>;
  /** Sends one power request (recorded as the host's intent). */
  readonly setPower: (action: PowerAction) => Promise<void>;
}

/** The failure of an awaited change that timed out, or undefined while it may still come. */
function timedOut(ctx: PowerStepContext, what: string): Result | undefined {
  const intent = ctx.intents.pending(ctx.uid);
  if (intent === undefined) return undefined;
  const elapsed = ctx.nowMs() - intent.sinceMs;
  if (intent.action === 'soft-off') {
    if (elapsed < ctx.intents.softOffTimeoutMs) return undefined;
    ctx.intents.forget(ctx.uid);
    return operationFailed(`soft power off did not finish within ${ctx.intents.softOffTimeoutMs / 1000} s: the OS ignores the ACPI power button`);
  }
  if (elapsed <= ctx.intents.timeoutMs) return undefined;
  ctx.intents.forget(ctx.uid);
  return operationFailed(`${what}: the BMC did not show the new power state within the power state change timeout of ${ctx.intents.timeoutMs / 1000} s (bmc.powerStateChangeTimeoutSeconds)`);
}

/** `powerOn`: done once the BMC shows on; one request, then waits (see the module comment). */
export async function powerOnStep(ctx: PowerStepContext): Promise<Result> {
  try {
    const power = await ctx.getPowerState();
    if (power === 'on') {
      // Every later transition ends the earlier intent (a soft power-off's start time included).
      ctx.intents.observe(ctx.uid, power);
      ctx.intents.forget(ctx.uid);
      return operationComplete();
    }
    const pending = ctx.intents.pending(ctx.uid);
    if (pending?.poweredOn === true) return timedOut(ctx, 'powering on') ?? operationContinuing(ctx.requeueMs);
    if (power !== 'powering-on') await ctx.setPower('on');
    return operationContinuing(ctx.requeueMs);
  } catch (error) {
    return bmcFailure('powering on', error);
  }
}

/** `powerOff`: done once the BMC shows off; soft unless `rebootMode` is hard or `force`. */
export async function powerOffStep(ctx: PowerStepContext, rebootMode: RebootMode, force: boolean): Promise<Result> {
  try {
    const power = await ctx.getPowerState();
    if (power === 'off') {
      ctx.intents.observe(ctx.uid, power);
      ctx.intents.forget(ctx.uid);
      return operationComplete();
    }
    const hard = rebootMode === 'hard' || force;
    const pending = ctx.intents.pending(ctx.uid);
    // The same intent already sent (a hard request also satisfies a soft one): wait for the BMC.
    if (pending?.poweredOn === false && (!hard || pending.action === 'off')) return timedOut(ctx, 'powering off') ?? operationContinuing(ctx.requeueMs);
    if (power !== 'powering-off') await ctx.setPower(hard ? 'off' : 'soft-off');
    return operationContinuing(ctx.requeueMs);
  } catch (error) {
    return bmcFailure('powering off', error);
  }
}
