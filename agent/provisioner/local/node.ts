/**
 * @module The local provisioner's backend record per host (what Ironic keeps in its node
 * table), stored in the host's `nodes` entry under `local`, beside the boot intent fields
 * (`boot`, `token`, …) the provisioner answers the boot services from. Pure decoding and the
 * decisions over it.
 * @pure
 */
import { decodeFirmwareVersionsSeen, type FirmwareVersionsSeen } from './firmware-versions.js';
import type { CleanParams, DeployParams, SoftwareRaidVolumeParams } from '../../../images/index.js';
import type { BootMode } from '../../host/types.js';
import { decodePrepJob, type PrepJob } from './prep-job.js';
import { isJsonObject } from '../../json-value.js';
import type { RamdiskIntent } from '../../boot/boot-intent.js';

/** Where the backend thinks the host is (a small subset of Ironic's provision states). */
export type NodeState = 'manageable' | 'inspecting' | 'available' | 'cleaning' | 'deploying' | 'active';

/** A ramdisk operation in flight or just finished. */
export interface NodeOperation {
  kind: 'inspect' | 'deploy' | 'clean' | 'raid';
  /** Echoed by the ramdisk in its inventory/result, so stale answers are ignored. */
  commandId: string;
  startedAtMs: number;
  /** Past this without an answer the operation fails with a diagnosis. */
  deadlineMs: number;
  /** booting: waiting for the ramdisk's first heartbeat; sent: the ramdisk has the command. */
  phase: 'booting' | 'sent' | 'done' | 'failed';
  message?: string;
  /** What `deploy` sends the ramdisk (the served image, its sha256, hints, config drive). */
  deploy?: DeployParams;
  /** What `clean` sends the ramdisk. */
  clean?: CleanParams;
  /** What `raid` sends the ramdisk (software RAID while preparing, prep-steps.ts). */
  raid?: { volumes: SoftwareRaidVolumeParams[] };
  /** The ramdisk's result details (deploy: root device and image; clean: one report per disk). */
  details?: unknown;
  /** The last lines of the ramdisk's log from its result: the host's console log. */
  log?: string[];
  /**
   * Given to a ramdisk that was already running (Ironic's fast track): the host was not
   * rebooted; if no heartbeat takes the command soon, it is booted after all.
   */
  fastTrack?: boolean;
}

/** What the ramdisk last told us. */
export interface RamdiskContact {
  lastHeartbeatMs: number;
  ip?: string;
  version?: string;
}

/** The record. */
export interface LocalNode {
  provID: string;
  /** The host's name, for events raised from ramdisk callbacks. */
  name: string;
  bootMACAddress: string;
  state: NodeState;
  /** The boot mode of the last ramdisk boot, reused for cleaning (deprovision is not told it). */
  bootMode?: BootMode;
  /**
   * Automated cleaning on (metal3 `automatedCleaningMode` ≠ `disabled`, Ironic's node
   * `automated_clean`); absent in records from older versions, which means on (metal3's default).
   */
  automatedClean?: boolean;
  op?: NodeOperation;
  ramdisk?: RamdiskContact;
  /** The last inventory the ramdisk posted (IPA-compatible JSON). */
  inventory?: unknown;
  /** The preparation or servicing job in flight or failed (prep-job.ts). */
  prep?: PrepJob;
  /** Firmware versions seen per component (firmware-versions.ts): initial, current, last flashed. */
  firmware?: Record<string, FirmwareVersionsSeen>;
  /**
   * Secure Boot for a `UEFISecureBoot` deploy (secure-boot.ts): `enabled-by-rackside` when the
   * deploy switched it on (deprovisioning switches it off again), `was-enabled` when it already was.
   */
  secureBoot?: 'enabled-by-rackside' | 'was-enabled';
}

/** How long a ramdisk token outlives its operation's deadline (results arriving late, a retry's heartbeat). */
export const RAMDISK_TOKEN_GRACE_MS = 10 * 60_000;

/**
 * Whether `entry`'s ramdisk token is still good at `nowMs`: before its expiry, or — for a record
 * written before tokens expired — only while an operation of ours is in flight.
 */
export function ramdiskTokenLive(entry: NodeEntry, nowMs: number): boolean {
  if (typeof entry.tokenExpiresAtMs === 'number') return nowMs <= entry.tokenExpiresAtMs;
  const phase = entry.local?.op?.phase;
  return phase !== undefined && phase !== 'done' && phase !== 'failed';
}

/**
 * The whole `nodes` entry: the boot intent (agent/boot/boot-intent.ts: `boot`, `token`, `isoUrl`,
 * …) the boot services are answered from (node-intents.ts), plus our record.
 */
export interface NodeEntry extends RamdiskIntent {
  /**
   * When the ramdisk API stops accepting `token`: each ramdisk boot gets a fresh token valid
   * until its operation's deadline plus {@link RAMDISK_TOKEN_GRACE_MS} (a fast-track handoff to
   * the running ramdisk keeps its token and extends it). Absent in records from older versions.
   */
  tokenExpiresAtMs?: number;
  /** The ISO URI the host's BMC holds for its current ramdisk boot (`redfish-uefihttp://`, ramdisk-boot.ts). */
  httpBootUri?: string;
  local?: LocalNode;
  [key: string]: unknown;
}

const BOOT_KINDS = new Set(['ramdisk', 'local-disk', 'live-iso', 'none']);

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function stringsOf(value: unknown): string[] | undefined {
  if (typeof value === 'string' && value !== '') return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' && v !== '')) return value as string[];
  return undefined;
}

/** Reads the boot intent fields out of a `nodes` entry, ignoring everything else in it (and anything mistyped). */
export function decodeRamdiskIntent(value: unknown): RamdiskIntent {
  if (!isJsonObject(value)) return {};
  const out: RamdiskIntent = {};
  if (typeof value.boot === 'string' && BOOT_KINDS.has(value.boot)) out.boot = value.boot as NonNullable<RamdiskIntent['boot']>;
  const kernelUrl = stringOf(value.kernelUrl);
  if (kernelUrl !== undefined) out.kernelUrl = kernelUrl;
  const initrds = stringsOf(value.initrdUrl);
  if (initrds !== undefined) out.initrdUrl = initrds;
  const isoUrl = stringOf(value.isoUrl);
  if (isoUrl !== undefined) out.isoUrl = isoUrl;
  const token = stringOf(value.token);
  if (token !== undefined) out.token = token;
  const extra = Array.isArray(value.extraKernelParams) ? value.extraKernelParams.filter((p): p is string => typeof p === 'string' && p !== '') : undefined;
  if (extra !== undefined) out.extraKernelParams = extra;
  const message = stringOf(value.message);
  if (message !== undefined) out.message = message;
  if (out.boot === 'ramdisk' && stringOf(value.httpBootUri) !== undefined) {
    // The BMC holds the ISO's URI (Redfish Boot.HttpBootUri, ramdisk-boot.ts): the firmware boots
    // it, so DHCP gives this host an address and no boot file (UEFI 2.10 §24.7: the URI in the
    // boot option wins), and the ramdisk started from the ISO needs none either.
    out.boot = 'none';
    out.message = 'booting the rackside ISO from the URI its BMC holds (Boot.HttpBootUri): no boot file from DHCP';
  }
  return out;
}

const STATES = new Set<NodeState>(['manageable', 'inspecting', 'available', 'cleaning', 'deploying', 'active']);

/** Copies the command parameters and result of a stored operation, dropping mistyped ones. */
function decodeOperationParams(op: Record<string, unknown>, out: NodeOperation): void {
  const deploy = op.deploy;
  if (
    isJsonObject(deploy) &&
    typeof deploy.imageUrl === 'string' &&
    typeof deploy.checksum === 'string' &&
    (deploy.checksumType === 'md5' || deploy.checksumType === 'sha256' || deploy.checksumType === 'sha512')
  ) {
    // Written by us; encodeRamdiskCommand validates every field again before it is sent.
    out.deploy = deploy as unknown as DeployParams;
  }
  const clean = op.clean;
  if (isJsonObject(clean) && (clean.mode === 'metadata' || clean.mode === 'erase')) out.clean = { mode: clean.mode, ...(clean.keepSoftwareRaid === true ? { keepSoftwareRaid: true } : {}) };
  const raid = op.raid;
  // Written by us; encodeRamdiskCommand validates every volume again before it is sent.
  if (isJsonObject(raid) && Array.isArray(raid.volumes) && raid.volumes.every(isJsonObject)) out.raid = raid as unknown as { volumes: SoftwareRaidVolumeParams[] };
  if (op.details !== undefined) out.details = op.details;
  if (Array.isArray(op.log)) out.log = op.log.filter((l): l is string => typeof l === 'string');
  if (op.fastTrack === true) out.fastTrack = true;
}

/** Reads a `nodes` entry written by any version; unknown or mistyped parts are dropped. */
export function decodeNodeEntry(value: unknown): NodeEntry {
  if (!isJsonObject(value)) return {};
  const entry: NodeEntry = { ...value };
  const local = value.local;
  if (!isJsonObject(local) || typeof local.provID !== 'string' || typeof local.state !== 'string' || !STATES.has(local.state as NodeState)) {
    delete entry.local;
    return entry;
  }
  const node: LocalNode = {
    provID: local.provID,
    name: typeof local.name === 'string' ? local.name : '',
    bootMACAddress: typeof local.bootMACAddress === 'string' ? local.bootMACAddress : '',
    state: local.state as NodeState,
  };
  if (local.bootMode === 'UEFI' || local.bootMode === 'UEFISecureBoot' || local.bootMode === 'legacy') node.bootMode = local.bootMode;
  if (typeof local.automatedClean === 'boolean') node.automatedClean = local.automatedClean;
  const op = local.op;
  if (
    isJsonObject(op) &&
    (op.kind === 'inspect' || op.kind === 'deploy' || op.kind === 'clean' || op.kind === 'raid') &&
    typeof op.commandId === 'string' &&
    typeof op.startedAtMs === 'number' &&
    typeof op.deadlineMs === 'number' &&
    (op.phase === 'booting' || op.phase === 'sent' || op.phase === 'done' || op.phase === 'failed')
  ) {
    node.op = { kind: op.kind, commandId: op.commandId, startedAtMs: op.startedAtMs, deadlineMs: op.deadlineMs, phase: op.phase };
    if (typeof op.message === 'string') node.op.message = op.message;
    decodeOperationParams(op, node.op);
  }
  const ramdisk = local.ramdisk;
  if (isJsonObject(ramdisk) && typeof ramdisk.lastHeartbeatMs === 'number') {
    node.ramdisk = { lastHeartbeatMs: ramdisk.lastHeartbeatMs };
    if (typeof ramdisk.ip === 'string') node.ramdisk.ip = ramdisk.ip;
    if (typeof ramdisk.version === 'string') node.ramdisk.version = ramdisk.version;
  }
  if (local.inventory !== undefined) node.inventory = local.inventory;
  const prep = decodePrepJob(local.prep);
  if (prep !== undefined) node.prep = prep;
  const firmware = decodeFirmwareVersionsSeen(local.firmware);
  if (firmware !== undefined) node.firmware = firmware;
  if (local.secureBoot === 'enabled-by-rackside' || local.secureBoot === 'was-enabled') node.secureBoot = local.secureBoot;
  entry.local = node;
  return entry;
}

/**
 * Why an operation that ran out of time failed, in words an operator can act on; `bootPath` says
 * how the ramdisk was booted (a virtual-media host never network-boots it).
 */
export function timeoutDiagnosis(op: NodeOperation, ramdisk: RamdiskContact | undefined, nowMs: number, bootPath: 'network' | 'virtual-media' = 'network'): string {
  const minutes = Math.round((nowMs - op.startedAtMs) / 60_000);
  if (ramdisk === undefined || ramdisk.lastHeartbeatMs < op.startedAtMs) {
    const check = bootPath === 'virtual-media'
      ? 'boots the rackside ISO from virtual media (VirtualMediaFetched in the timeline; the BMC\'s virtual media and boot override) and gets a DHCP lease'
      : 'network-boots (DHCP/TFTP/HTTP timeline)';
    return `${op.kind} timed out after ${minutes} min: the ramdisk never called back — check that the host ${check} and its console for kernel or network errors`;
  }
  return `${op.kind} timed out after ${minutes} min: the ramdisk (last heartbeat from ${ramdisk.ip ?? 'unknown address'}) did not finish the command`;
}

/** The command the ramdisk should run now, given its last answered command id. */
export function commandFor(op: NodeOperation | undefined, lastCommandId: string | null): { command: NodeOperation['kind'] | 'none' | 'report'; commandId?: string } {
  if (op === undefined || op.phase === 'done' || op.phase === 'failed') return { command: 'none' };
  // The ramdisk runs a command between two heartbeats and names it only once its report went
  // out or was given up: naming the current, unfinished command means rackside never got the
  // report (down for longer than the ramdisk kept retrying) — ask for it again.
  if (lastCommandId === op.commandId) return { command: 'report', commandId: op.commandId };
  return { command: op.kind, commandId: op.commandId };
}
