/**
 * @module The local provisioner's `provision` and `deprovision` steps (Ironic's behaviour as in
 * docs/metal3-mapping.md, "Ironic mapping": Provision, Deprovision, done by rackside itself). Both are re-entrant and never
 * block: each call reads the node record and starts the next step or reports progress.
 *
 * provision: active → complete. Otherwise the image and config drive are prepared in the
 * background (image-prep.ts); meanwhile a node still `manageable` (inspected or just registered)
 * with automated cleaning on is cleaned first, as Ironic's `provide` does before a node becomes
 * available for deploys (docs/metal3-mapping.md, "Ironic mapping": Provision). Then the `deploy`
 * operation goes to the ramdisk — the one still running after that clean (fast track), else a
 * freshly booted one — which streams the served raw image to the hinted disk and writes the
 * config drive; when it reports ok the host gets boot intent `local-disk`, its virtual media
 * ejected, a persistent BMC boot device `disk` and a reset.
 * A `live-iso` image skips the ramdisk: the host network-boots the cached ISO (iPXE sanboot).
 * deprovision: cleaning `disabled` → available at once; `metadata` → the `clean` operation
 * (signatures and both ends of every disk; software RAID kept, as Ironic's automated cleaning
 * does), then available, boot none, media ejected, power off.
 */
import { encodeRamdiskCommand, RamdiskProtocolError, type CleanParams, type DeployParams, type RootDeviceHints } from '../../../images/index.js';
import type { BmcDriver, PowerAction } from '../../../drivers/index.js';
import type { BootPath } from '../../boot/governor.js';
import { Annotations, type AutomatedCleaningMode, type BootMode } from '../../host/types.js';
import type { EventPublisher, HostData, ProvisionData, Result } from '../provisioner.js';
import { operationComplete, operationContinuing, operationFailed } from '../result.js';
import { bmcFailure, bmcFailureKeepingWork } from './bmc-result.js';
import type { ImagePreparer, PreparedImage } from './image-prep.js';
import type { LocalNode, NodeEntry, NodeOperation } from './node.js';
import { ensureSecureBoot, restoreSecureBoot } from './secure-boot.js';

/**
 * What automated cleaning (before the first deploy, and deprovisioning) asks of the ramdisk:
 * metadata, keeping software RAID (Ironic's automated clean runs IPA's erase_devices_metadata,
 * which skips RAID members; deleting software RAID is a preparing step). The host's
 * `rackside.io/cleaning-mode: erase` annotation asks for the whole of every disk to be zeroed
 * instead (IPA's erase_devices); software RAID still survives, its volumes zeroed through the
 * array.
 */
export function automatedClean(annotations: Readonly<Record<string, string>>): CleanParams {
  return { mode: annotations[Annotations.cleaningMode] === 'erase' ? 'erase' : 'metadata', keepSoftwareRaid: true };
}

/** Outcome of checking a ramdisk operation (see LocalProvisioner.checkOperation). */
export type OperationStatus = 'none' | 'done' | 'running' | { failed: string };

/** What the provision and deprovision steps use of the provisioner: its record, BMC and operations. */
export interface DeployContext {
  host: HostData;
  publish: EventPublisher;
  pollMs: number;
  timeouts: { deployMs: number; cleanMs: number };
  /** Absent when the agent runs without an OS image cache: provision then fails clearly. */
  preparer: ImagePreparer | undefined;
  node(): Promise<{ entry: NodeEntry; node: LocalNode }>;
  update(change: (node: LocalNode, entry: NodeEntry) => void): Promise<void>;
  /**
   * Starts a ramdisk operation; `fastTrack` hands it to a ramdisk still running, without a
   * reboot. `queued`: the boot governor holds it (nothing written; call again, the host is woken).
   */
  startOperation(kind: NodeOperation['kind'], timeoutMs: number, bootMode: BootMode, params?: Pick<NodeOperation, 'deploy' | 'clean'>, options?: { fastTrack?: boolean }): Promise<'started' | 'queued'>;
  /** Asks the boot governor whether a boot by `path` streaming `imageBytes` may start now (true without a governor). */
  governBoot(path: BootPath, imageBytes: number): Promise<boolean>;
  checkOperation(kind: NodeOperation['kind']): Promise<OperationStatus>;
  driver(): BmcDriver;
  setPower(action: PowerAction): Promise<void>;
  /** Ejects a virtual-media host's ramdisk ISO (best effort; no-op for network-booted hosts). */
  releaseRamdiskMedia(): Promise<void>;
}

/** Returns the ramdisk's root device hints for metal3 hints `hints` (empty strings dropped; none → undefined). */
export function ramdiskHints(hints: RootDeviceHints | undefined): RootDeviceHints | undefined {
  if (hints === undefined) return undefined;
  const out: RootDeviceHints = {};
  const text = ['deviceName', 'hctl', 'model', 'vendor', 'serialNumber', 'wwn', 'wwnWithExtension', 'wwnVendorExtension'] as const;
  for (const key of text) {
    const value = hints[key];
    if (value !== undefined && value.trim() !== '') out[key] = value;
  }
  if (hints.minSizeGigabytes !== undefined) out.minSizeGigabytes = hints.minSizeGigabytes;
  if (hints.rotational !== undefined) out.rotational = hints.rotational;
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Returns the `deploy` parameters for a prepared image: the served raw file, its sha256 and size, hints, config drive. */
export function deployParamsFor(prepared: PreparedImage, hints: RootDeviceHints | undefined): DeployParams {
  const params: DeployParams = {
    imageUrl: prepared.imageUrl,
    checksum: prepared.image.sha256,
    checksumType: 'sha256',
    imageSizeBytes: prepared.image.sizeBytes,
  };
  const rootDeviceHints = ramdiskHints(hints);
  if (rootDeviceHints !== undefined) params.rootDeviceHints = rootDeviceHints;
  if (prepared.configDrive !== undefined) params.configDrive = { url: prepared.configDrive.url, sha256: prepared.configDrive.sha256 };
  return params;
}

function firmwareMode(bootMode: BootMode): 'uefi' | 'legacy' {
  return bootMode === 'legacy' ? 'legacy' : 'uefi';
}

/** Sets a persistent boot device and (re)starts the host on it. */
async function bootFrom(ctx: DeployContext, device: 'disk' | 'pxe', bootMode: BootMode): Promise<void> {
  const driver = ctx.driver();
  await driver.bootDevice.setBootDevice(device, { persistent: true, mode: firmwareMode(bootMode) });
  const power = await driver.power.getPowerState();
  await ctx.setPower(power === 'on' || power === 'powering-on' ? 'reset' : 'on');
}

function rootDeviceName(details: unknown): string | undefined {
  if (typeof details !== 'object' || details === null || !('rootDevice' in details)) return undefined;
  const root = details.rootDevice;
  return typeof root === 'object' && root !== null && 'name' in root && typeof root.name === 'string' ? root.name : undefined;
}

/** The deploy finished: boot the written disk from now on. Idempotent until the record says active. */
async function finishDeploy(ctx: DeployContext, node: LocalNode, data: ProvisionData): Promise<Result> {
  await ctx.update((_n, entry) => {
    // First, so a host whose firmware ignores the override still gets "boot local disk" from iPXE.
    entry.boot = 'local-disk';
  });
  await ctx.releaseRamdiskMedia();
  try {
    await bootFrom(ctx, 'disk', data.bootMode);
  } catch (error) {
    // The deploy is done: a BMC blip here is retried, never a reason to write the disk again.
    return bmcFailureKeepingWork('booting the written disk', error);
  }
  const root = rootDeviceName(node.op?.details);
  await ctx.update((n) => {
    n.state = 'active';
    delete n.op;
  });
  await ctx.preparer?.forget(ctx.host.objectMeta.uid);
  ctx.publish('ProvisioningComplete', `${data.image.url} written${root === undefined ? '' : ` to ${root}`}; the host boots from its disk`);
  return operationComplete();
}

/** A live ISO: the host network-boots the cached ISO; no ramdisk, no config drive (docs/metal3-mapping.md, "Ironic mapping"). */
async function bootLiveIso(ctx: DeployContext, prepared: PreparedImage, data: ProvisionData): Promise<Result> {
  // The host fetches the whole ISO over boot HTTP (iPXE sanboot): one network boot for the governor.
  if (!(await ctx.governBoot('network', prepared.image.sizeBytes))) return operationContinuing(ctx.pollMs);
  await ctx.update((_n, entry) => {
    entry.boot = 'live-iso';
    entry.isoUrl = prepared.imageUrl;
  });
  try {
    await bootFrom(ctx, 'pxe', data.bootMode);
  } catch (error) {
    return bmcFailure('booting the live ISO', error);
  }
  await ctx.update((n) => {
    n.state = 'active';
    delete n.op;
  });
  await ctx.preparer?.forget(ctx.host.objectMeta.uid);
  ctx.publish('ProvisioningComplete', `the host network-boots the live ISO ${data.image.url} (served as ${prepared.imageUrl})`);
  return operationComplete();
}

/**
 * One step of provisioning `spec.image` (see the module comment); `forceReboot` restarts a running
 * deploy. A `spec.customDeploy.method` never reaches here: custom-deploy.ts runs those.
 */
export async function provisionStep(ctx: DeployContext, data: ProvisionData, forceReboot: boolean): Promise<Result> {
  const { node } = await ctx.node();
  if (node.state === 'active') return operationComplete();
  const url = data.image.url;
  if (url === '') return operationFailed('nothing to provision: spec.image.url is empty');
  const failedPrefix = `Image provisioning failed (url: ${url})`;
  const status = await ctx.checkOperation('deploy');
  if (status === 'done') return finishDeploy(ctx, node, data);
  if (typeof status === 'object') return operationFailed(`${failedPrefix}: ${status.failed}`);
  if (status === 'running') {
    const params = node.op?.deploy;
    if (!forceReboot || params === undefined) return operationContinuing(ctx.pollMs);
    try {
      if (await ctx.startOperation('deploy', ctx.timeouts.deployMs, data.bootMode, { deploy: params }) === 'queued') return operationContinuing(ctx.pollMs);
    } catch (error) {
      return bmcFailure('restarting the deploy', error);
    }
    ctx.publish('DeployRestarted', 'deploy restarted on request (reboot annotation with force)');
    return operationContinuing(ctx.pollMs);
  }

  if (ctx.preparer === undefined) return operationFailed('writing images needs the OS image cache, which this agent runs without');
  const secureBoot = await ensureSecureBoot(ctx, data.bootMode);
  if (secureBoot !== undefined) return secureBoot;
  const { started, status: prep } = ctx.preparer.prepare(ctx.host, data.image, data.hostConfig);
  if (started) ctx.publish('ProvisioningStarted', `preparing ${url} and the config drive`);
  if (prep.state === 'failed') return operationFailed(`${failedPrefix}: ${prep.message}`);
  const cleaning = await cleanBeforeDeploy(ctx, node, data);
  if (cleaning !== undefined) return cleaning;
  if (prep.state === 'running') return operationContinuing(ctx.pollMs);
  if (data.image.format === 'live-iso') return bootLiveIso(ctx, prep.prepared, data);

  const deploy = deployParamsFor(prep.prepared, data.rootDeviceHints);
  try {
    encodeRamdiskCommand({ command: 'deploy', commandId: 'validate', deploy }); // bad hints fail here, not in the ramdisk
  } catch (error) {
    if (error instanceof RamdiskProtocolError) return operationFailed(`${failedPrefix}: invalid deploy parameters: ${error.message}`);
    throw error;
  }
  try {
    await ctx.startOperation('deploy', ctx.timeouts.deployMs, data.bootMode, { deploy }, { fastTrack: true });
  } catch (error) {
    return bmcFailure('starting the deploy', error);
  }
  return operationContinuing(ctx.pollMs);
}

/**
 * Automated cleaning before the first deploy (see the module comment): undefined when the node
 * may be deployed now (cleaned, or no cleaning wanted), else the Result to return meanwhile.
 * A failed clean is the provisioning's failure; the controller then deprovisions, which cleans again.
 */
async function cleanBeforeDeploy(ctx: DeployContext, node: LocalNode, data: ProvisionData): Promise<Result | undefined> {
  const status = await ctx.checkOperation('clean');
  if (status === 'running') return operationContinuing(ctx.pollMs);
  if (typeof status === 'object') return operationFailed(`Cleaning before the deploy failed: ${status.failed}`);
  if (status === 'done') {
    const mode = node.op?.clean?.mode ?? 'metadata'; // as the clean ran, whatever the annotation says now
    // The ramdisk stays up and heartbeating: the deploy goes to it (fast track).
    await ctx.update((n) => {
      n.state = 'available';
      delete n.op;
    });
    ctx.publish('CleaningComplete', `disks cleaned (${mode}) before the deploy`);
    return undefined;
  }
  if (node.state !== 'manageable' || node.automatedClean === false) return undefined;
  try {
    await ctx.startOperation('clean', ctx.timeouts.cleanMs, data.bootMode, { clean: automatedClean(ctx.host.objectMeta.annotations) });
  } catch (error) {
    return bmcFailure('starting the automated cleaning before the deploy', error);
  }
  return operationContinuing(ctx.pollMs);
}

/** One step of deprovisioning (see the module comment); `restartOnFailure` restarts a failed clean. */
export async function deprovisionStep(ctx: DeployContext, restartOnFailure: boolean, automatedCleaningMode: AutomatedCleaningMode): Promise<Result> {
  const { node } = await ctx.node();
  const release = (): Promise<void> =>
    ctx.update((n, entry) => {
      n.state = 'available';
      delete n.op;
      entry.boot = 'none';
      delete entry.isoUrl;
    });
  const secureBoot = await restoreSecureBoot(ctx);
  if (secureBoot !== undefined) return secureBoot;
  if (automatedCleaningMode === 'disabled') {
    await release();
    await ctx.preparer?.forget(ctx.host.objectMeta.uid);
    return operationComplete();
  }
  const status = await ctx.checkOperation('clean');
  if (status === 'done') {
    const mode = node.op?.clean?.mode ?? 'metadata'; // as the clean ran, whatever the annotation says now
    await ctx.setPower('off').catch(() => undefined); // best effort: power management takes over in available
    await ctx.releaseRamdiskMedia();
    await release();
    ctx.publish('DeprovisioningComplete', `disks cleaned (${mode}); the host is available`);
    return operationComplete();
  }
  if (status === 'running') return operationContinuing(ctx.pollMs);
  if (typeof status === 'object' && !restartOnFailure) return operationFailed(`Cleaning failed: ${status.failed}`);
  // Nothing was written since the last clean: an image that failed before its deploy started.
  if (status === 'none' && node.state === 'available' && node.op === undefined) return operationComplete();
  await ctx.preparer?.forget(ctx.host.objectMeta.uid);
  try {
    await ctx.startOperation('clean', ctx.timeouts.cleanMs, node.bootMode ?? 'UEFI', { clean: automatedClean(ctx.host.objectMeta.annotations) });
  } catch (error) {
    return bmcFailure('starting cleaning', error);
  }
  return operationContinuing(ctx.pollMs);
}
