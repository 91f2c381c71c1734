/**
 * @module How the local provisioner gets its ramdisk running on a host. Network boot: a one-time
 * PXE boot device and a power-on or reset (DHCP → iPXE → the per-host script). Virtual media
 * (BMC schemes whose first boot path is `virtual-media`: `redfish-virtualmedia://`,
 * `idrac-virtualmedia://` …; docs/architecture.md, "Boot flow"): the host's own rackside ISO (vmedia-iso.ts)
 * inserted through the BMC, a one-time CD boot device, then power. UEFI HTTP boot
 * (`redfish-uefihttp://`, Ironic's `redfish-https` boot interface): the same ISO, booted by a
 * one-time `UefiHttp` override whose `HttpBootUri` is the ISO's URL where the BMC has that
 * property; without one (or without an ISO source) the firmware's DHCP request (vendor class
 * HTTPClient) gets the boot URL from rackside's DHCP as any HTTP-boot client does. And Ironic's fast track
 * (`[deploy]fast_track`, on in metal3's ironic-image): a ramdisk that is still running and
 * heartbeating when the next operation starts takes it at its next heartbeat, without a reboot.
 */
import type { BmcDriver, PowerAction } from '../../../drivers/index.js';
import { bmcCapabilities } from '../../../drivers/index.js';
import type { BootMode } from '../../host/types.js';
import type { NodeEntry } from './node.js';
import type { DebianArch } from '../../../images/index.js';
import { HostIsoUnavailableError, type HostIsoSource } from './vmedia-iso.js';

/**
 * A ramdisk heard from this recently is taken to be running, so a new operation goes to it
 * without a reboot; a fast-tracked command no heartbeat took within this time reboots the host.
 * Three of the ramdisk's default 10 s heartbeat intervals.
 */
export const FAST_TRACK_WINDOW_MS = 30_000;

/** How a host boots the ramdisk: its BMC scheme's first boot path (drivers/bmc-schemes.ts). */
export type RamdiskBootPath = 'network' | 'virtual-media' | 'uefi-http';

/**
 * Answers of {@link ramdiskBootPath} by address: the capacity check asks it for every busy
 * host each time a host wants to start an operation, and parsing 500 BMC addresses per call was
 * 5–7 % of the agent's busy event-loop time in a 500-client PXE storm (docs/PERFORMANCE.md). A
 * rack has a few addresses per host; the map is cleared should it ever pass its bound.
 */
const bootPathByAddress = new Map<string, RamdiskBootPath>();
const BOOT_PATH_MEMO_MAX = 16_384;

/** How the host at `bmcAddress` boots the ramdisk (its scheme's first boot path); `network` for an unparseable address. */
export function ramdiskBootPath(bmcAddress: string): RamdiskBootPath {
  const known = bootPathByAddress.get(bmcAddress);
  if (known !== undefined) return known;
  let answer: RamdiskBootPath;
  try {
    const first = bmcCapabilities(bmcAddress).bootPaths[0];
    answer = first === 'virtual-media' || first === 'uefi-http' ? first : 'network';
  } catch {
    answer = 'network'; // an unparseable address fails in validateManagementAccess, with its message
  }
  if (bootPathByAddress.size >= BOOT_PATH_MEMO_MAX) bootPathByAddress.clear();
  bootPathByAddress.set(bmcAddress, answer);
  return answer;
}

/** True when the host at `bmcAddress` boots the ramdisk by virtual media; false for an unparseable address. */
export function bootsByVirtualMedia(bmcAddress: string): boolean {
  return ramdiskBootPath(bmcAddress) === 'virtual-media';
}

/** True when the host at `bmcAddress` boots the rackside ISO (virtual media, or UEFI HTTP boot by HttpBootUri). */
export function bootsTheIso(bmcAddress: string): boolean {
  return ramdiskBootPath(bmcAddress) !== 'network';
}

/** True when `entry`'s ramdisk can take a new operation without a reboot: booted for us and heartbeating within {@link FAST_TRACK_WINDOW_MS}. */
export function ramdiskIsUp(entry: NodeEntry, nowMs: number): boolean {
  const heartbeatMs = entry.local?.ramdisk?.lastHeartbeatMs;
  return entry.boot === 'ramdisk' && heartbeatMs !== undefined && nowMs - heartbeatMs < FAST_TRACK_WINDOW_MS;
}

/** What {@link bootRamdisk} acts on. */
export interface RamdiskBootTarget {
  driver: BmcDriver;
  /** Changes power (the provisioner's own, which also notes the change for the power sweep). */
  setPower(action: PowerAction): Promise<void>;
  path: RamdiskBootPath;
  hostIso: HostIsoSource | undefined;
  /** The architecture of the ramdisk the host boots: which ISO its BMC is given. */
  arch: DebianArch;
}

/** What {@link bootRamdisk} did that the boot services need to know. */
export interface RamdiskBootOutcome {
  /**
   * The URI the BMC now holds for this boot (`Boot.HttpBootUri`, read back after setting it):
   * the firmware boots it, so DHCP gives the host an address and no boot file.
   */
  httpBootUri?: string;
}

/** Sets the one-time `UefiHttp` override; returns the URI when the BMC took it (read back), else none. */
async function setUefiHttp(target: RamdiskBootTarget, token: string): Promise<RamdiskBootOutcome> {
  const { driver } = target;
  const iso = target.hostIso;
  if (iso !== undefined) await iso.baseIso(target.arch); // a missing build fails here, with how to make one
  const uri = iso?.urlFor(token, target.arch);
  // HTTP boot exists only in UEFI firmware (since UEFI 2.5), whatever spec.bootMode says.
  await driver.bootDevice.setBootDevice('uefi-http', { mode: 'uefi', ...(uri === undefined ? {} : { httpBootUri: uri }) });
  if (uri === undefined) return {};
  // A BMC without the property (iDRAC keeps it in BIOS attributes) ignores it: DHCP then names the boot file.
  const now = await driver.bootDevice.getBootDevice().catch(() => undefined);
  return now?.httpBootUri === uri ? { httpBootUri: uri } : {};
}

/**
 * Boots the ramdisk (see the module comment) for the host whose ramdisk token is `token`.
 * Throws {@link HostIsoUnavailableError} when a virtual-media host has no ISO to boot, before
 * any BMC request; BMC errors as the driver throws them.
 */
export async function bootRamdisk(target: RamdiskBootTarget, bootMode: BootMode, token: string): Promise<RamdiskBootOutcome> {
  const { driver } = target;
  const mode = bootMode === 'legacy' ? 'legacy' : 'uefi';
  let outcome: RamdiskBootOutcome = {};
  if (target.path === 'uefi-http') {
    outcome = await setUefiHttp(target, token);
  } else if (target.path === 'virtual-media') {
    const iso = target.hostIso;
    if (iso === undefined) throw new HostIsoUnavailableError('this agent serves no rackside ISO, which virtual-media hosts boot the ramdisk from');
    await iso.baseIso(target.arch); // a missing build fails here, with how to make one, not as a BMC download error
    // InsertMedia replaces another image and is a no-op for the same URL (the drivers' contract).
    await driver.virtualMedia.insertMedia({ imageUrl: iso.urlFor(token, target.arch) });
    await driver.bootDevice.setBootDevice('cdrom', { mode });
  } else {
    await driver.bootDevice.setBootDevice('pxe', { mode });
  }
  const power = await driver.power.getPowerState();
  await target.setPower(power === 'on' || power === 'powering-on' ? 'reset' : 'on');
  return outcome;
}

/** The event message of a started ramdisk operation `kind`. */
export function ramdiskBootMessage(kind: string, how: 'fast-track' | RamdiskBootPath): string {
  switch (how) {
    case 'uefi-http':
      return `booting the rackside ramdisk by UEFI HTTP boot to ${kind}`;
    case 'fast-track':
      return `the running rackside ramdisk takes ${kind} (fast track: no reboot)`;
    case 'virtual-media':
      return `booting the rackside ISO by virtual media to ${kind}`;
    case 'network':
      return `network-booting the rackside ramdisk to ${kind}`;
  }
}
