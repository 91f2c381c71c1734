/**
 * @module The local provisioner's preparation and servicing job: the record kept in the host's
 * `nodes` entry (`local.prep`, so it survives an agent restart and is resumed step by step), its
 * decoder, and the planning of its steps from metal3's PrepareData/ServicingData with Ironic's
 * rules (docs/metal3-mapping.md, "Ironic mapping", Prepare / Service; upstream's `BuildRAIDCleanSteps`): hardware RAID
 * only when a target is given and differs from the applied one; software RAID when target and
 * applied differ and are not both empty; BIOS settings and firmware components as given. The
 * order is Ironic's clean-step order (RAID, BIOS, firmware), then one reset when a staged change
 * waits for it, then a settle step that checks the result.
 * @pure
 */
import type { RaidLevel, RaidVolumeRequest } from '../../../drivers/index.js';
import type { RootDeviceHints, SoftwareRaidVolumeParams } from '../../../images/index.js';
import type { FirmwareUpdate, HardwareRAIDVolume, RAIDConfig, SoftwareRAIDVolume, Storage } from '../../host/types.js';
import { isJsonObject, jsonEqual } from '../../json-value.js';

/**
 * Hardware RAID through the BMC (Redfish Storage): `apply` → `task` (follow the BMC task) →
 * `verify`; a controller that applies at the next reset leaves it `after-reboot` for the settle step.
 */
export interface HardwareRaidStep {
  kind: 'hardware-raid';
  /** The volumes to end with; `[]` deletes every volume. */
  volumes: RaidVolumeRequest[];
  phase: 'apply' | 'task' | 'verify' | 'after-reboot';
  taskId?: string;
}

/** BIOS settings staged in the BMC's settings object; they apply at the next host reset. */
export interface BiosStep {
  kind: 'bios';
  /** Target values, as strings (metal3 IntOrString rendered). */
  settings: Record<string, string>;
  /** The BMC's job for the change (iDRAC), followed by the settle step. */
  taskId?: string;
}

/** One firmware component update (Redfish SimpleUpdate) and where it is. */
export interface FirmwareUpdateRecord {
  component: string;
  url: string;
  /** The BMC's id of the component (FirmwareInventory member). */
  targetId?: string;
  fromVersion?: string;
  taskId?: string;
  /**
   * `sending`: written before SimpleUpdate is sent and replaced by `running` with the task once
   * the BMC answers, so an agent killed in between finds `sending` and never sends it twice.
   * `after-reboot`: the BMC scheduled it for the next reset (task pending).
   */
  state: 'start' | 'sending' | 'running' | 'after-reboot' | 'done';
}

/** Firmware updates, one component after another. */
export interface FirmwareStep {
  kind: 'firmware';
  updates: FirmwareUpdateRecord[];
}

/** Software RAID in the ramdisk: `clean` (metadata, stops old arrays) then `raid` (mdadm), or only `clean` to delete. */
export interface SoftwareRaidStep {
  kind: 'software-raid';
  /** The volumes to build; `[]` only deletes the existing software RAID. */
  volumes: SoftwareRaidVolumeParams[];
  phase: 'clean' | 'raid';
  /** The ramdisk operation of the current phase, once queued. */
  commandId?: string;
}

/** One host reset (or power-on) so staged BIOS settings and scheduled firmware apply; skipped when none waits. */
export interface RebootStep {
  kind: 'reboot';
  phase: 'request' | 'wait';
}

/** Waits for the staged changes to show: BIOS values current, scheduled firmware tasks completed. */
export interface SettleStep {
  kind: 'settle';
}

/** One step of a job. */
export type PrepStep = HardwareRaidStep | BiosStep | FirmwareStep | SoftwareRaidStep | RebootStep | SettleStep;

/** A preparation (before available) or servicing (provisioned host) job. */
export interface PrepJob {
  purpose: 'prepare' | 'service';
  /** The target the job applies (JSON): another target asked for while it runs starts a new job after it. */
  fingerprint: string;
  startedAtMs: number;
  deadlineMs: number;
  state: 'running' | 'failed';
  message?: string;
  /** Index of the current step in `steps`. */
  step: number;
  steps: PrepStep[];
  /** A staged change waits for a host reset. */
  needsReboot: boolean;
  /** When the host was last reset (or booted into the ramdisk) after a staged change. */
  rebootedAtMs?: number;
  /** The job booted the ramdisk or reset the host: finishing powers it off (prepare) or boots the disk (service). */
  touchedPower: boolean;
}

const STEP_KINDS = new Set<string>(['hardware-raid', 'bios', 'firmware', 'software-raid', 'reboot', 'settle']);

/** Reads a stored job written by any version; a malformed one reads as none (the next prepare starts afresh). */
export function decodePrepJob(value: unknown): PrepJob | undefined {
  if (!isJsonObject(value)) return undefined;
  const { purpose, fingerprint, startedAtMs, deadlineMs, state, step, steps } = value;
  if (purpose !== 'prepare' && purpose !== 'service') return undefined;
  if (typeof fingerprint !== 'string' || typeof startedAtMs !== 'number' || typeof deadlineMs !== 'number') return undefined;
  if (state !== 'running' && state !== 'failed') return undefined;
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0 || !Array.isArray(steps)) return undefined;
  if (!steps.every((s) => isJsonObject(s) && typeof s.kind === 'string' && STEP_KINDS.has(s.kind))) return undefined;
  const job: PrepJob = {
    purpose,
    fingerprint,
    startedAtMs,
    deadlineMs,
    state,
    step,
    // Written by us and shape-checked by kind above; each step re-validates what it sends.
    steps: steps as PrepStep[],
    needsReboot: value.needsReboot === true,
    touchedPower: value.touchedPower === true,
  };
  if (typeof value.message === 'string') job.message = value.message;
  if (typeof value.rebootedAtMs === 'number') job.rebootedAtMs = value.rebootedAtMs;
  return job;
}

/** Thrown by the planners for a target that cannot be applied; the message names the field. */
export class PrepPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrepPlanError';
  }
}

const GIB = 1024 ** 3;
const DRIVER_LEVELS = new Set<string>(['0', '1', '5', '6', '1+0', '5+0', '6+0']);

/** Returns the driver's volume request for metal3 `spec.raid.hardwareRAIDVolumes[index]`. */
export function hardwareVolumeRequest(volume: HardwareRAIDVolume, index: number): RaidVolumeRequest {
  const field = `spec.raid.hardwareRAIDVolumes[${index}]`;
  if (!DRIVER_LEVELS.has(volume.level)) throw new PrepPlanError(`${field}.level: RAID ${volume.level} is not supported by rackside's BMC RAID (use 0, 1, 5, 6, 1+0, 5+0 or 6+0)`);
  if (volume.physicalDisks !== undefined && volume.numberOfPhysicalDisks !== undefined && volume.physicalDisks.length !== volume.numberOfPhysicalDisks) {
    throw new PrepPlanError(`${field}.numberOfPhysicalDisks: ${volume.numberOfPhysicalDisks} differs from the ${volume.physicalDisks.length} physicalDisks listed`);
  }
  const request: { -readonly [K in keyof RaidVolumeRequest]: RaidVolumeRequest[K] } = { level: volume.level as RaidLevel };
  if (volume.name !== undefined && volume.name !== '') request.name = volume.name;
  if (volume.sizeGibibytes !== undefined && volume.sizeGibibytes > 0) request.sizeBytes = volume.sizeGibibytes * GIB;
  if (volume.physicalDisks !== undefined && volume.physicalDisks.length > 0) request.physicalDisks = [...volume.physicalDisks];
  if (volume.numberOfPhysicalDisks !== undefined) request.diskCount = volume.numberOfPhysicalDisks;
  if (volume.controller !== undefined && volume.controller !== '') request.controller = volume.controller;
  if (volume.rotational !== undefined) request.rotational = volume.rotational;
  return request;
}

/** A disk's hints for software RAID when the user named none: its serial, else its device name. */
function diskHints(disk: Storage): RootDeviceHints | undefined {
  if (disk.serialNumber !== undefined && disk.serialNumber !== '') return { serialNumber: disk.serialNumber };
  const name = disk.alternateNames?.find((n) => n.startsWith('/dev/') && !n.startsWith('/dev/disk/')) ?? disk.name;
  return name?.startsWith('/dev/') === true ? { deviceName: name } : undefined;
}

/**
 * Returns the ramdisk's software RAID volumes for metal3 `softwareRAIDVolumes`. A volume without
 * `physicalDisks` uses every inspected disk (IPA's default), which must be at least two.
 */
export function softwareVolumeParams(volumes: readonly SoftwareRAIDVolume[], inspectedDisks: readonly Storage[]): SoftwareRaidVolumeParams[] {
  if (volumes.length > 2) throw new PrepPlanError('spec.raid.softwareRAIDVolumes: at most 2 software RAID volumes');
  if (volumes.length > 0 && volumes[0]?.level !== '1') throw new PrepPlanError('spec.raid.softwareRAIDVolumes[0].level: the first software RAID volume must be RAID 1');
  return volumes.map((v, i) => {
    const field = `spec.raid.softwareRAIDVolumes[${i}]`;
    let disks = v.physicalDisks ?? [];
    if (disks.length === 0) {
      disks = inspectedDisks.map(diskHints).filter((h): h is RootDeviceHints => h !== undefined);
      if (disks.length < 2) throw new PrepPlanError(`${field}.physicalDisks: not given, and inspection found ${disks.length} usable disk(s); software RAID needs at least 2`);
    } else if (disks.length < 2) {
      throw new PrepPlanError(`${field}.physicalDisks: at least 2 disks are needed, ${disks.length} given`);
    }
    const params: SoftwareRaidVolumeParams = { level: v.level, physicalDisks: disks.map((d) => structuredClone(d)) };
    if (v.sizeGibibytes !== undefined && v.sizeGibibytes > 0) params.sizeGibibytes = v.sizeGibibytes;
    return params;
  });
}

/** The RAID steps Ironic's `BuildRAIDCleanSteps` would run for `target` over the applied `actual`. */
export function planRaidSteps(target: RAIDConfig | undefined, actual: RAIDConfig | undefined, inspectedDisks: readonly Storage[]): PrepStep[] {
  const steps: PrepStep[] = [];
  const hardware = target?.hardwareRAIDVolumes ?? undefined;
  if (hardware !== undefined && !jsonEqual(hardware, actual?.hardwareRAIDVolumes ?? undefined)) {
    steps.push({ kind: 'hardware-raid', volumes: hardware.map(hardwareVolumeRequest), phase: 'apply' });
  }
  const software = target?.softwareRAIDVolumes ?? [];
  const appliedSoftware = actual?.softwareRAIDVolumes ?? [];
  if (!jsonEqual(software, appliedSoftware) && !(software.length === 0 && appliedSoftware.length === 0)) {
    steps.push({ kind: 'software-raid', volumes: softwareVolumeParams(software, inspectedDisks), phase: 'clean' });
  }
  return steps;
}

const COMPONENT = /^(bmc|bios|nic:.+)$/;

/** The firmware and BIOS steps for desired settings and component updates (plus reboot and settle when any). */
export function planFirmwareSteps(settings: Readonly<Record<string, string | number>>, updates: readonly FirmwareUpdate[]): PrepStep[] {
  const steps: PrepStep[] = [];
  const names = Object.keys(settings).sort();
  if (names.length > 0) steps.push({ kind: 'bios', settings: Object.fromEntries(names.map((n) => [n, String(settings[n])])) });
  updates.forEach((u, i) => {
    if (!COMPONENT.test(u.component)) throw new PrepPlanError(`firmware update ${i}: component "${u.component}" must be bmc, bios or nic:<id>`);
    if (!/^https?:\/\/[^\s/]+/i.test(u.url)) throw new PrepPlanError(`firmware update ${i} (${u.component}): url "${u.url}" must be an http(s) URL the BMC can fetch`);
  });
  if (updates.length > 0) steps.push({ kind: 'firmware', updates: updates.map((u) => ({ component: u.component, url: u.url, state: 'start' })) });
  return steps;
}

/** Appends the reboot and settle steps when a BIOS or firmware step may leave changes waiting for a reset. */
export function withSettling(steps: PrepStep[]): PrepStep[] {
  const staging = steps.some((s) => s.kind === 'bios' || s.kind === 'firmware');
  return staging ? [...steps, { kind: 'reboot', phase: 'request' }, { kind: 'settle' }] : steps;
}

/** A short label of a step for messages and events. */
export function describeStep(step: PrepStep): string {
  switch (step.kind) {
    case 'hardware-raid':
      return step.volumes.length === 0 ? 'deleting hardware RAID' : `hardware RAID (${step.volumes.map((v) => `RAID ${v.level}`).join(', ')})`;
    case 'software-raid':
      return step.volumes.length === 0 ? 'deleting software RAID' : `software RAID (${step.volumes.map((v) => `RAID ${v.level}`).join(', ')})`;
    case 'bios':
      return `BIOS settings (${Object.keys(step.settings).join(', ')})`;
    case 'firmware':
      return `firmware updates (${step.updates.map((u) => u.component).join(', ')})`;
    case 'reboot':
      return 'host reset to apply staged changes';
    case 'settle':
      return 'waiting for the changes to apply';
  }
}
