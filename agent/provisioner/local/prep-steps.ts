/**
 * @module The steps of a preparation or servicing job (prep-job.ts), each one call at a time
 * against the BMC or the ramdisk: hardware RAID through the driver's RAID control (Redfish
 * Storage volumes, the BMC's task followed), BIOS settings staged in the settings object
 * (Redfish `@Redfish.Settings`, applied at the next reset), firmware components through
 * SimpleUpdate (one task per component; a task the BMC keeps `pending` is scheduled for the next
 * reset), software RAID in the ramdisk (`clean` metadata, then `raid`: mdadm), the one reset that
 * applies staged changes, and the settle step that waits until they show. A step mutates the job
 * it is given and reports {@link StepOutcome}; the runner (prepare.ts) stores the job after every
 * call, so an agent restart resumes the step where it was. BMC errors are thrown to the runner.
 */
import type { BmcDriver, PowerAction, TaskStatus } from '../../../drivers/index.js';
import { isBmcError, raidTargetMatches } from '../../../drivers/index.js';
import { encodeRamdiskCommand, RamdiskProtocolError, type CleanParams, type SoftwareRaidVolumeParams } from '../../../images/index.js';
import type { BootMode } from '../../host/types.js';
import type { EventPublisher, HostData } from '../provisioner.js';
import { bmcFailure } from './bmc-result.js';
import type { LocalNode, NodeEntry } from './node.js';
import { timeoutDiagnosis } from './node.js';
import type { BiosStep, FirmwareStep, HardwareRaidStep, PrepJob, PrepStep, RebootStep, SoftwareRaidStep } from './prep-job.js';

/** What the preparation and servicing steps use of the local provisioner. */
export interface PrepContext {
  host: HostData;
  publish: EventPublisher;
  /** How often a running step is looked at again. */
  pollMs: number;
  nowMs(): number;
  newId(): string;
  /** Time one ramdisk operation (software RAID's clean, then raid) may take. */
  ramdiskTimeoutMs: number;
  /** Time a whole job may take before it fails with the step it was in. */
  jobTimeoutMs: number;
  /**
   * Starts a ramdisk operation the way the provisioner starts its own (token, boot intent,
   * record, then a network or virtual-media boot of the ramdisk).
   */
  /** `queued`: the boot governor holds the power-on (nothing written; call again, the host is woken). */
  startRamdiskOperation(kind: 'clean', timeoutMs: number, bootMode: BootMode, params: { clean: CleanParams }): Promise<'started' | 'queued'>;
  node(): Promise<{ entry: NodeEntry; node: LocalNode }>;
  /** The host's last inventory from the ramdisk (NodeTable.inventory), or undefined. */
  inventory(): Promise<unknown>;
  update(change: (node: LocalNode, entry: NodeEntry) => void): Promise<void>;
  driver(): BmcDriver;
  setPower(action: PowerAction): Promise<void>;
}

/** What one step call did: finished (go on), still waiting (ask again after `waitMs`), or failed. */
export type StepOutcome = { next: true } | { waitMs: number } | { failed: string };

/** Time after the reset within which a staged BIOS value may still be neither pending nor current. */
export const SETTLE_GRACE_MS = 5 * 60_000;

const next: StepOutcome = { next: true };

function taskText(task: TaskStatus): string {
  return task.messages.length > 0 ? task.messages.join('; ') : `task ${task.id} ${task.state}`;
}

function firmwareMode(bootMode: BootMode | undefined): 'uefi' | 'legacy' {
  return bootMode === 'legacy' ? 'legacy' : 'uefi';
}

/** Powers the host on, or resets it when it is on. */
async function resetOrPowerOn(ctx: PrepContext): Promise<void> {
  const power = await ctx.driver().power.getPowerState();
  await ctx.setPower(power === 'on' || power === 'powering-on' ? 'reset' : 'on');
}

async function hardwareRaid(ctx: PrepContext, job: PrepJob, step: HardwareRaidStep): Promise<StepOutcome> {
  const driver = ctx.driver();
  if (!driver.supports('raid')) {
    if (step.volumes.length === 0) return next; // nothing to delete on a BMC without RAID control
    return { failed: `hardware RAID needs a BMC with RAID control (Redfish Storage); the ${driver.type} BMC ${driver.address.host} has none` };
  }
  if (step.phase === 'apply') {
    const staged = await driver.raid.applyRaidConfig(step.volumes);
    if (staged.rebootRequired) job.needsReboot = true;
    if (staged.taskId !== undefined) {
      step.phase = 'task';
      step.taskId = staged.taskId;
      return { waitMs: ctx.pollMs };
    }
    step.phase = 'verify';
  }
  if (step.phase === 'task' && step.taskId !== undefined) {
    const task = await driver.tasks.getTask(step.taskId);
    if (task.state === 'failed' || task.state === 'cancelled') return { failed: `the BMC's RAID task ${task.state}: ${taskText(task)}` };
    if (task.state !== 'completed') return { waitMs: ctx.pollMs };
    step.phase = 'verify';
  }
  const { volumes } = await driver.raid.getRaidConfig();
  if (raidTargetMatches(volumes, step.volumes)) {
    ctx.publish('RAIDConfigured', `hardware RAID: ${volumes.length === 0 ? 'no volumes' : volumes.map((v) => `${v.name} (RAID ${v.level}, ${v.physicalDisks.join('+')})`).join(', ')}`);
    return next;
  }
  if (job.needsReboot) {
    step.phase = 'after-reboot'; // the controller applies it at the next reset; the settle step checks
    return next;
  }
  return { failed: `the BMC reports ${volumes.length} volume(s) (${volumes.map((v) => `RAID ${v.level}`).join(', ') || 'none'}) after the change, not the ${step.volumes.length} requested` };
}

async function bios(ctx: PrepContext, job: PrepJob, step: BiosStep): Promise<StepOutcome> {
  const driver = ctx.driver();
  if (!driver.supports('biosSettings')) return { failed: `the ${driver.type} BMC ${driver.address.host} cannot change BIOS settings` };
  const staged = await driver.biosSettings.applyBiosSettings(step.settings);
  if (staged.rebootRequired) job.needsReboot = true;
  if (staged.taskId !== undefined) step.taskId = staged.taskId;
  ctx.publish('BIOSSettingsStaged', `staged ${Object.entries(step.settings).map(([k, v]) => `${k}=${v}`).join(', ')}; they apply at the next reset`);
  return next;
}

async function firmware(ctx: PrepContext, job: PrepJob, step: FirmwareStep): Promise<StepOutcome> {
  const driver = ctx.driver();
  if (!driver.supports('firmware') || !driver.supports('tasks')) return { failed: `the ${driver.type} BMC ${driver.address.host} cannot update firmware (no UpdateService)` };
  for (const update of step.updates) {
    if (update.state === 'done' || update.state === 'after-reboot') continue;
    if (update.state === 'start') {
      const inventory = await driver.firmware.getFirmwareInventory();
      const component = inventory.find((c) => c.component === update.component);
      if (component === undefined) {
        return { failed: `firmware component ${update.component} is not in the BMC's firmware inventory (it has ${[...new Set(inventory.map((c) => c.component))].join(', ') || 'nothing'})` };
      }
      if (!component.updateable) return { failed: `firmware component ${update.component} (${component.name}) is not updateable through the BMC` };
      // Write-ahead: a crash between sending and storing the task must not flash the part twice.
      Object.assign(update, { targetId: component.id, fromVersion: component.version, state: 'sending' });
      await ctx.update((n) => { n.prep = structuredClone(job); });
      let taskId: string;
      try {
        ({ taskId } = await driver.firmware.simpleUpdate({ imageUrl: update.url, targets: [component.id] }));
      } catch (error) {
        update.state = 'start'; // the BMC answered with an error: nothing started, sending again is safe
        throw error;
      }
      Object.assign(update, { taskId, state: 'running' });
      ctx.publish('FirmwareUpdateStarted', `${update.component} ${component.version}: updating from ${update.url}`);
      return { waitMs: ctx.pollMs };
    }
    if (update.state === 'sending') {
      // The agent stopped while the BMC was being asked: the update may or may not have started.
      const now = (await driver.firmware.getFirmwareInventory()).find((c) => c.component === update.component)?.version;
      if (now !== undefined && update.fromVersion !== undefined && now !== update.fromVersion) {
        update.state = 'done';
        ctx.publish('FirmwareUpdated', `${update.component}: ${update.fromVersion} → ${now} (the update was sent just before the agent stopped)`);
        continue;
      }
      return {
        failed: `the agent stopped while asking the BMC to update ${update.component} from ${update.url}, so the update may have started; ` +
          'it is not sent again (two updates of one part at once can brick it): check the BMC\'s task list, then re-apply the firmware components to run it again',
      };
    }
    if (update.taskId === undefined) return { failed: `firmware update of ${update.component} lost its BMC task` };
    const task = await driver.tasks.getTask(update.taskId);
    if (task.state === 'failed' || task.state === 'cancelled') return { failed: `firmware update of ${update.component} from ${update.url} failed: ${taskText(task)}` };
    if (task.state === 'running') return { waitMs: ctx.pollMs };
    if (task.state === 'pending') {
      update.state = 'after-reboot'; // scheduled by the BMC for the next reset (iDRAC, most BIOS images)
      job.needsReboot = true;
      continue;
    }
    update.state = 'done';
    await publishFirmwareDone(ctx, driver, update.component, update.fromVersion);
  }
  return next;
}

async function publishFirmwareDone(ctx: PrepContext, driver: BmcDriver, component: string, fromVersion: string | undefined): Promise<void> {
  const now = (await driver.firmware.getFirmwareInventory()).find((c) => c.component === component)?.version ?? 'unknown';
  ctx.publish('FirmwareUpdated', `${component}: ${fromVersion ?? 'unknown'} → ${now}`);
}

/** Checks this job's ramdisk operation: done, failed (message), or still running. */
async function ramdiskOpStatus(ctx: PrepContext, commandId: string): Promise<'done' | 'running' | { failed: string }> {
  const { node } = await ctx.node();
  const op = node.op;
  if (op?.commandId !== commandId) return { failed: `the ramdisk operation ${commandId} was replaced by another one (${op?.kind ?? 'none'})` };
  if (op.phase === 'done') return 'done';
  if (op.phase === 'failed') return { failed: op.message ?? `${op.kind} failed in the ramdisk` };
  const now = ctx.nowMs();
  if (now <= op.deadlineMs) return 'running';
  const message = timeoutDiagnosis(op, node.ramdisk, now);
  await ctx.update((n) => {
    if (n.op?.commandId === commandId) Object.assign(n.op, { phase: 'failed', message });
  });
  return { failed: message };
}

/**
 * Queues a ramdisk operation. The first one of a job (`clean`) boots the ramdisk through the
 * provisioner's own operation start (network boot, or the host's ISO by virtual media); the
 * next (`raid`) goes to the ramdisk that is still running and heartbeating — the ramdisk agent
 * takes a new command id at its next heartbeat, no reboot. Returns the operation's command id,
 * or undefined while the boot governor holds the power-on (the step then waits and asks again).
 */
async function queueRamdiskOp(ctx: PrepContext, job: PrepJob, kind: 'clean' | 'raid', volumes: SoftwareRaidVolumeParams[]): Promise<string | undefined> {
  const now = ctx.nowMs();
  const { node } = await ctx.node();
  if (kind === 'clean') {
    if (await ctx.startRamdiskOperation('clean', ctx.ramdiskTimeoutMs, node.bootMode ?? 'UEFI', { clean: { mode: 'metadata' } }) === 'queued') return undefined;
    job.touchedPower = true;
    if (job.needsReboot) job.rebootedAtMs = now; // the ramdisk boot applies what was staged before it
    const started = (await ctx.node()).node.op;
    if (started?.kind !== 'clean') throw new Error('the clean operation for software RAID was not recorded');
    return started.commandId;
  }
  const commandId = `raid-${ctx.newId().slice(0, 12)}`;
  await ctx.update((n, entry) => {
    entry.boot = 'ramdisk';
    n.op = { kind: 'raid', commandId, startedAtMs: now, deadlineMs: now + ctx.ramdiskTimeoutMs, phase: 'booting', raid: { volumes } };
  });
  return commandId;
}

async function softwareRaid(ctx: PrepContext, job: PrepJob, step: SoftwareRaidStep): Promise<StepOutcome> {
  if (step.volumes.length > 0) {
    try {
      encodeRamdiskCommand({ command: 'raid', commandId: 'validate', raid: { volumes: step.volumes } });
    } catch (error) {
      if (error instanceof RamdiskProtocolError) return { failed: `invalid software RAID volumes: ${error.message}` };
      throw error;
    }
  }
  if (step.commandId === undefined) {
    try {
      step.commandId = await queueRamdiskOp(ctx, job, step.phase, step.volumes);
    } catch (error) {
      if (isBmcError(error)) throw error; // the runner's policy: transient, or the job fails with it
      // Not the BMC (e.g. a virtual-media host without its ISO): bmcFailure says whether the user must act.
      return { failed: bmcFailure('booting the ramdisk', error).errorMessage };
    }
    return { waitMs: ctx.pollMs };
  }
  const status = await ramdiskOpStatus(ctx, step.commandId);
  if (status === 'running') return { waitMs: ctx.pollMs };
  if (typeof status === 'object') return { failed: `${step.phase === 'clean' ? 'removing the old software RAID' : 'building the software RAID'}: ${status.failed}` };
  if (step.phase === 'clean' && step.volumes.length > 0) {
    step.phase = 'raid';
    step.commandId = await queueRamdiskOp(ctx, job, 'raid', step.volumes);
    return { waitMs: ctx.pollMs };
  }
  const details = (await ctx.node()).node.op?.details;
  const made = typeof details === 'object' && details !== null && 'volumes' in details && Array.isArray(details.volumes) ? details.volumes.length : 0;
  ctx.publish('RAIDConfigured', step.volumes.length === 0 ? 'software RAID removed' : `software RAID: ${made} md volume(s) built in the ramdisk`);
  return next;
}

async function reboot(ctx: PrepContext, job: PrepJob, step: RebootStep): Promise<StepOutcome> {
  if (!job.needsReboot || job.rebootedAtMs !== undefined) return next;
  const driver = ctx.driver();
  if (step.phase === 'request') {
    if (job.purpose === 'service') {
      // Servicing ends on the host's own disk: make sure the reset boots it (docs/metal3-mapping.md, "Servicing").
      const { node } = await ctx.node();
      await driver.bootDevice.setBootDevice('disk', { persistent: true, mode: firmwareMode(node.bootMode) });
    }
    await resetOrPowerOn(ctx);
    job.touchedPower = true;
    step.phase = 'wait';
    ctx.publish('HostReset', 'resetting the host so staged BIOS settings and firmware apply');
  }
  const power = await driver.power.getPowerState();
  if (power !== 'on') return { waitMs: Math.min(ctx.pollMs, 5_000) };
  job.rebootedAtMs = ctx.nowMs();
  return next;
}

/** Waits until every staged change shows: BIOS values current, BMC jobs and scheduled firmware tasks completed, RAID as asked. */
async function settle(ctx: PrepContext, job: PrepJob): Promise<StepOutcome> {
  const driver = ctx.driver();
  const graceOver = ctx.nowMs() - (job.rebootedAtMs ?? job.startedAtMs) > SETTLE_GRACE_MS;
  let waiting = false;
  for (const step of job.steps) {
    if (step.kind === 'bios') {
      if (step.taskId !== undefined) {
        const task = await driver.tasks.getTask(step.taskId);
        if (task.state === 'failed' || task.state === 'cancelled') return { failed: `the BMC's BIOS job ${task.state}: ${taskText(task)}` };
        if (task.state !== 'completed') waiting = true;
      }
      const { current, pending } = await driver.biosSettings.getBiosSettings();
      for (const [name, value] of Object.entries(step.settings)) {
        if (current[name] === value) continue;
        if (pending[name] !== undefined || !graceOver) {
          waiting = true;
          continue;
        }
        return { failed: `BIOS setting ${name} is "${current[name] ?? '(absent)'}" after the reset, not "${value}": the BMC dropped the change` };
      }
    } else if (step.kind === 'firmware') {
      for (const update of step.updates) {
        if (update.state !== 'after-reboot' || update.taskId === undefined) continue;
        const task = await driver.tasks.getTask(update.taskId);
        if (task.state === 'failed' || task.state === 'cancelled') return { failed: `firmware update of ${update.component} from ${update.url} failed: ${taskText(task)}` };
        if (task.state !== 'completed') {
          waiting = true;
          continue;
        }
        update.state = 'done';
        await publishFirmwareDone(ctx, driver, update.component, update.fromVersion);
      }
    } else if (step.kind === 'hardware-raid' && step.phase === 'after-reboot') {
      if (raidTargetMatches((await driver.raid.getRaidConfig()).volumes, step.volumes)) step.phase = 'verify';
      else if (graceOver) return { failed: `hardware RAID: the BMC does not show the ${step.volumes.length} requested volume(s) after the reset` };
      else waiting = true;
    }
  }
  if (waiting) return { waitMs: ctx.pollMs };
  if (job.steps.some((s) => s.kind === 'bios')) ctx.publish('BIOSSettingsApplied', 'the BMC reports the new BIOS settings as current');
  return next;
}

/** Runs one call of `step` (see the module comment). */
export function runStep(ctx: PrepContext, job: PrepJob, step: PrepStep): Promise<StepOutcome> {
  switch (step.kind) {
    case 'hardware-raid':
      return hardwareRaid(ctx, job, step);
    case 'bios':
      return bios(ctx, job, step);
    case 'firmware':
      return firmware(ctx, job, step);
    case 'software-raid':
      return softwareRaid(ctx, job, step);
    case 'reboot':
      return reboot(ctx, job, step);
    case 'settle':
      return settle(ctx, job);
  }
}
