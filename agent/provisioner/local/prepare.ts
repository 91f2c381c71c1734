/**
 * @module The local provisioner's `prepare` (Ironic's manual cleaning as metal3 drives it,
 * docs/metal3-mapping.md, "Ironic mapping", Prepare) and the job runner `service.ts` shares. With `unprepared`
 * and work to do, a job is planned (prep-job.ts: hardware RAID, software RAID, BIOS settings,
 * firmware, reset, settle), BIOS values are checked against the BMC's attribute registry first
 * (a bad value fails at once, naming the attribute), the job is stored in the node record and
 * `started` is returned; every later call runs the job's current step (prep-steps.ts) and
 * stores it again, so an agent restart resumes where it was. Outcomes follow the controller's
 * contract: `dirty` while running (operationContinuing), `errorMessage` when a step failed
 * (operationFailed, the job kept as failed until `restartOnFailure` replans it), a transient
 * BMC error (unreachable, busy, timeout) thrown, complete when done. A target changed while a
 * job ran is applied by a new job once it ends.
 */
import { isBmcError, isTransientBmcError } from '../../../drivers/index.js';
import type { Storage } from '../../host/types.js';
import type { PrepareData, Result, StartedResult } from '../provisioner.js';
import { operationComplete, operationContinuing, operationFailed, transientError } from '../result.js';
import { bmcFailure, bmcMessage } from './bmc-result.js';
import { biosChanges, biosSettingProblems } from './firmware-settings.js';
import { hardwareDetailsFromInventory } from './inventory.js';
import type { LocalNode } from './node.js';
import { describeStep, planFirmwareSteps, planRaidSteps, PrepPlanError, withSettling, type PrepJob, type PrepStep } from './prep-job.js';
import { runStep, type PrepContext, type StepOutcome } from './prep-steps.js';

/** Steps one call may finish before it hands back to the controller (each may call the BMC). */
const MAX_STEPS_PER_CALL = 8;

/** Canonical JSON of a job's target, to notice a target that changed while the job ran. */
export function fingerprintOf(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, canonical(x)]))
        : v;
  return JSON.stringify(canonical(value));
}

function title(purpose: PrepJob['purpose']): string {
  return purpose === 'prepare' ? 'Preparation' : 'Servicing';
}

/** Stores `job` in the node record (the ramdisk callbacks' fields are left as they are). */
function saveJob(ctx: PrepContext, job: PrepJob): Promise<void> {
  return ctx.update((n) => {
    n.prep = structuredClone(job);
  });
}

/**
 * Runs the job's current step and the ones after it that finish at once; returns `'done'` when
 * every step finished, else the Result to hand back (continuing, or failed with the step named).
 */
export async function advanceJob(ctx: PrepContext, job: PrepJob): Promise<Result | 'done'> {
  for (let i = 0; i < MAX_STEPS_PER_CALL && job.step < job.steps.length; i++) {
    const step = job.steps[job.step];
    if (step === undefined) break;
    let outcome: StepOutcome;
    if (ctx.nowMs() > job.deadlineMs) {
      outcome = { failed: `timed out after ${Math.round((ctx.nowMs() - job.startedAtMs) / 60_000)} min` };
    } else {
      try {
        outcome = await runStep(ctx, job, step);
      } catch (error) {
        await saveJob(ctx, job);
        // Transient (unreachable, busy, timeout): the controller retries; the job stays where it is.
        if (isTransientBmcError(error)) throw transientError(`${title(job.purpose).toLowerCase()}, ${describeStep(step)}: ${bmcMessage(error)}`, error);
        if (!isBmcError(error)) throw error;
        outcome = { failed: bmcMessage(error) };
      }
    }
    if ('failed' in outcome) {
      job.state = 'failed';
      job.message = `${title(job.purpose)} failed in ${describeStep(step)}: ${outcome.failed}`;
      await saveJob(ctx, job);
      ctx.publish(`${title(job.purpose)}Failed`, job.message);
      return operationFailed(job.message);
    }
    if ('waitMs' in outcome) {
      await saveJob(ctx, job);
      return operationContinuing(outcome.waitMs);
    }
    job.step += 1;
    await saveJob(ctx, job);
  }
  return job.step >= job.steps.length ? 'done' : operationContinuing(0);
}

/** A new job over `steps`, not yet stored. */
export function newJob(ctx: PrepContext, purpose: PrepJob['purpose'], fingerprint: string, steps: PrepStep[]): PrepJob {
  const now = ctx.nowMs();
  return { purpose, fingerprint, startedAtMs: now, deadlineMs: now + ctx.jobTimeoutMs, state: 'running', step: 0, steps, needsReboot: false, touchedPower: false };
}

/**
 * Checks the BIOS step of `steps` against the BMC: a bad value is a failure naming the
 * attribute; values already current are dropped (a step left empty is removed). Returns the
 * steps to run, or the failed Result. BMC errors become a Result (or a transient throw).
 */
export async function checkBiosStep(ctx: PrepContext, steps: PrepStep[], desired: Readonly<Record<string, string | number>>): Promise<PrepStep[] | Result> {
  const index = steps.findIndex((s) => s.kind === 'bios');
  const step = steps[index];
  if (step?.kind !== 'bios') return steps;
  const driver = ctx.driver();
  if (!driver.supports('biosSettings')) return operationFailed(`BIOS settings cannot be changed through the ${driver.type} BMC ${driver.address.host}: remove them or use a Redfish BMC address`);
  let settings;
  try {
    settings = await driver.biosSettings.getBiosSettings();
  } catch (error) {
    return bmcFailure('reading the BIOS settings', error);
  }
  const problems = biosSettingProblems(desired, settings.schema);
  if (problems.length > 0) return operationFailed(`BIOS settings refused by the BMC's attribute registry: ${problems.join('; ')}`);
  const changes = biosChanges(desired, settings.current);
  const out = [...steps];
  if (Object.keys(changes).length === 0) out.splice(index, 1);
  else out[index] = { kind: 'bios', settings: changes };
  return out.some((s) => s.kind === 'bios' || s.kind === 'firmware') ? out : out.filter((s) => s.kind !== 'reboot' && s.kind !== 'settle');
}

/** The disks the last agent inspection found (none after fast or no inspection). */
function inspectedDisks(inventory: unknown): Storage[] {
  try {
    return hardwareDetailsFromInventory(inventory).storage ?? [];
  } catch {
    return [];
  }
}

/** Ends a finished preparation: node manageable, boot intent none, host off when the job powered it. */
async function finishPrepare(ctx: PrepContext, job: PrepJob): Promise<void> {
  await ctx.update((n, entry) => {
    delete n.prep;
    if (n.op?.kind === 'clean' || n.op?.kind === 'raid') delete n.op;
    n.state = 'manageable';
    if (job.touchedPower) entry.boot = 'none';
  });
  if (job.touchedPower) await ctx.setPower('off').catch(() => undefined); // best effort: power management takes over in available
  ctx.publish('PreparationComplete', `applied: ${job.steps.filter((s) => s.kind !== 'reboot' && s.kind !== 'settle').map(describeStep).join('; ')}`);
}

/**
 * Plans, checks and records a preparation or servicing job (shared by prepare and service):
 * a plan error or a refused BIOS value fails without touching the BMC; an empty plan is
 * complete at once (started, so the controller commits the settings); otherwise the job is
 * stored with `onStart`'s changes to the node and announced as `reason`.
 */
export async function startJob(
  ctx: PrepContext,
  job: { purpose: PrepJob['purpose']; fingerprint: string; reason: string; settings: Readonly<Record<string, string | number>>; plan: () => PrepStep[]; onStart?: (node: LocalNode) => void },
): Promise<StartedResult> {
  let steps: PrepStep[];
  try {
    steps = withSettling(job.plan());
  } catch (error) {
    if (error instanceof PrepPlanError) return { result: operationFailed(error.message), started: false };
    throw error;
  }
  const checked = await checkBiosStep(ctx, steps, job.settings);
  if (!Array.isArray(checked)) return { result: checked, started: false };
  // Nothing to change (Ironic: no clean steps): started, so the controller commits the settings.
  if (checked.length === 0) return { result: operationComplete(), started: true };
  const started = newJob(ctx, job.purpose, job.fingerprint, checked);
  await ctx.update((n) => {
    n.prep = structuredClone(started);
    job.onStart?.(n);
  });
  ctx.publish(job.reason, checked.filter((s) => s.kind !== 'reboot' && s.kind !== 'settle').map(describeStep).join('; '));
  return { result: operationContinuing(0), started: true };
}

async function startPrepare(ctx: PrepContext, data: PrepareData, fingerprint: string): Promise<StartedResult> {
  const disks = inspectedDisks(await ctx.inventory());
  return startJob(ctx, {
    purpose: 'prepare', fingerprint, reason: 'PreparationStarted', settings: data.targetFirmwareSettings,
    plan: () => [
      ...planRaidSteps(data.targetRAIDConfig, data.actualRAIDConfig, disks),
      ...planFirmwareSteps(data.targetFirmwareSettings, data.targetFirmwareComponents),
    ],
    onStart: (n) => { n.state = 'cleaning'; },
  });
}

/** One call of `prepare` (see the module comment). Re-entrant: cheap when nothing runs and nothing changed. */
export async function prepareStep(ctx: PrepContext, data: PrepareData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult> {
  const { node } = await ctx.node();
  const fingerprint = fingerprintOf({ raid: data.targetRAIDConfig, settings: data.targetFirmwareSettings, updates: data.targetFirmwareComponents });
  let job = node.prep;
  if (job !== undefined && (job.purpose !== 'prepare' || (job.state === 'failed' && restartOnFailure))) {
    // A leftover servicing job (the host was deprovisioned), or a failure the controller backed off from: plan again.
    const dropped = job;
    await ctx.update((n, entry) => {
      delete n.prep;
      if (dropped.purpose === 'prepare' && dropped.touchedPower) {
        if (n.op?.kind === 'clean' || n.op?.kind === 'raid') delete n.op;
        entry.boot = 'none';
      }
    });
    job = undefined;
  }
  if (job?.state === 'failed') return { result: operationFailed(job.message ?? 'preparation failed'), started: false };
  if (job !== undefined) {
    const outcome = await advanceJob(ctx, job);
    if (outcome !== 'done') return { result: outcome, started: false };
    await finishPrepare(ctx, job);
    if (!unprepared || job.fingerprint === fingerprint) return { result: operationComplete(), started: false };
  } else if (!unprepared) {
    return { result: operationComplete(), started: false };
  }
  return startPrepare(ctx, data, fingerprint);
}
