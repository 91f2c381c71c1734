/**
 * @module The local provisioner's `service`: firmware changes on a provisioned host (metal3
 * servicing, docs/metal3-mapping.md: "Servicing", "Ironic mapping"). The controller calls it while the host
 * is off for a reboot; BIOS settings are staged and firmware components updated through the BMC,
 * the host is reset onto its own disk (persistent disk boot) so they apply, and the job waits
 * until they show — the same job runner and steps as `prepare` (prepare.ts, prep-steps.ts), no
 * RAID. Like Ironic: a failed or running job whose firmware spec was cleared
 * (`hasFirmwareSpec` false) is aborted; a failed one is reported until `restartOnFailure`.
 */
import type { ServicingData, StartedResult } from '../provisioner.js';
import { operationComplete, operationFailed, transientError } from '../result.js';
import { describeStep, planFirmwareSteps, type PrepJob } from './prep-job.js';
import type { PrepContext } from './prep-steps.js';
import { advanceJob, fingerprintOf, startJob } from './prepare.js';

/** Ends servicing (done or aborted): job gone, boot intent back to the local disk. */
async function finishService(ctx: PrepContext, job: PrepJob, aborted: boolean): Promise<void> {
  await ctx.update((n, entry) => {
    delete n.prep;
    entry.boot = 'local-disk';
  });
  if (aborted) {
    ctx.publish('ServicingAborted', `firmware spec cleared: servicing stopped (${job.state === 'failed' ? 'after a failure' : `in ${describeStep(job.steps[job.step] ?? { kind: 'settle' })}`}); the host boots its disk`);
    return;
  }
  const applied = job.steps.filter((s) => s.kind !== 'reboot' && s.kind !== 'settle').map(describeStep).join('; ');
  ctx.publish('ServicingComplete', `applied: ${applied}${job.touchedPower ? '; the host was reset onto its disk' : ''}`);
}

/** One call of `service` (see the module comment). Re-entrant: cheap when nothing runs and nothing changed. */
export async function serviceStep(ctx: PrepContext, data: ServicingData, unprepared: boolean, restartOnFailure: boolean): Promise<StartedResult> {
  const { node } = await ctx.node();
  if (node.state !== 'active') throw transientError(`servicing needs a provisioned host; the local node of ${ctx.host.objectMeta.name} is ${node.state}`);
  const fingerprint = fingerprintOf({ settings: data.targetFirmwareSettings, updates: data.targetFirmwareComponents });
  let job = node.prep?.purpose === 'service' ? node.prep : undefined;
  if (job !== undefined && !data.hasFirmwareSpec) {
    await finishService(ctx, job, true);
    return { result: operationComplete(), started: false };
  }
  if (job?.state === 'failed') {
    if (!restartOnFailure) return { result: operationFailed(job.message ?? 'servicing failed'), started: false };
    await ctx.update((n) => {
      delete n.prep;
    });
    job = undefined;
  }
  if (job !== undefined) {
    const outcome = await advanceJob(ctx, job);
    if (outcome !== 'done') return { result: outcome, started: false };
    await finishService(ctx, job, false);
    if (!unprepared || job.fingerprint === fingerprint) return { result: operationComplete(), started: false };
  } else if (!unprepared) {
    return { result: operationComplete(), started: false };
  }

  return startJob(ctx, {
    purpose: 'service', fingerprint, reason: 'ServicingStarted', settings: data.targetFirmwareSettings,
    plan: () => planFirmwareSteps(data.targetFirmwareSettings, data.targetFirmwareComponents),
  });
}
