/**
 * @module Redfish power and boot override. Power: `ComputerSystem.Reset` with the ResetType
 * chosen from `ResetType@Redfish.AllowableValues` (or the action's ActionInfo) — On/ForceOn,
 * ForceOff, GracefulShutdown, ForceRestart, GracefulRestart, PowerCycle — with Ironic's
 * mapping (reboot of a host that is off = On) and the no-op rules of capabilities.ts.
 * Boot: PATCH `Boot.BootSourceOverride{Target,Enabled,Mode}` with If-Match; `Enabled` is sent
 * only when it changes (Ironic story 2007355: some BMCs reject re-setting it), targets are
 * checked against `BootSourceOverrideTarget@Redfish.AllowableValues`; `UefiHttp` carries
 * `HttpBootUri` when asked and the System has that property.
 */
import type { BootDevice, BootDeviceControl, BootMode, PowerAction, PowerControl } from '../capabilities.js';
import type { RedfishContext } from './context.js';
import { decodeActionInfoAllowableValues, type ComputerSystem } from './resources.js';

/** ResetTypes to try for each action, best first. */
const RESET_CANDIDATES: Readonly<Record<PowerAction, readonly string[]>> = {
  on: ['On', 'ForceOn'],
  off: ['ForceOff'],
  'soft-off': ['GracefulShutdown'],
  reset: ['ForceRestart', 'PowerCycle'],
  'soft-reset': ['GracefulRestart'],
  cycle: ['PowerCycle', 'ForceRestart'],
};

/** metal3 boot device → Redfish BootSourceOverrideTarget. */
export const BOOT_TARGETS: Readonly<Record<BootDevice, string>> = {
  pxe: 'Pxe', disk: 'Hdd', cdrom: 'Cd', bios: 'BiosSetup', 'uefi-http': 'UefiHttp',
};

const MODES: Readonly<Record<BootMode, string>> = { uefi: 'UEFI', legacy: 'Legacy' };

async function allowedResetTypes(ctx: RedfishContext, system: ComputerSystem): Promise<readonly string[] | undefined> {
  const reset = system.reset;
  if (reset === undefined) return undefined;
  if (reset.allowableValues !== undefined) return reset.allowableValues;
  if (reset.actionInfo === undefined) return undefined;
  const info = await ctx.fetch(reset.actionInfo, (body, c) => decodeActionInfoAllowableValues(body, 'ResetType', c));
  return info.value;
}

/** Builds the power capability. */
export function createPowerControl(ctx: RedfishContext): PowerControl {
  return {
    async getPowerState() {
      return (await ctx.system()).value.powerState;
    },
    async setPower(action) {
      const { value: system } = await ctx.system();
      const state = system.powerState;
      const off = state === 'off' || state === 'powering-off';
      const on = state === 'on' || state === 'powering-on';
      if ((action === 'on' && on) || ((action === 'off' || action === 'soft-off') && off)) return;
      // Ironic RedfishPower.reboot: a host that is off is rebooted by turning it on.
      const effective: PowerAction = off && (action === 'reset' || action === 'soft-reset' || action === 'cycle') ? 'on' : action;
      if (system.reset === undefined) throw ctx.unsupported('power', `setPower(${action})`, 'the System has no ComputerSystem.Reset action');
      const allowed = await allowedResetTypes(ctx, system);
      const resetType = RESET_CANDIDATES[effective].find((t) => allowed === undefined || allowed.includes(t));
      if (resetType === undefined) {
        throw ctx.unsupported('power', `setPower(${action})`, `allowed ResetTypes are ${(allowed ?? []).join(', ') || 'none'}`);
      }
      await ctx.client.post(system.reset.target, { ResetType: resetType });
    },
  };
}

function decodeBootDevice(target: string | undefined): BootDevice | 'none' {
  const found = Object.entries(BOOT_TARGETS).find(([, t]) => t === target);
  return found === undefined ? 'none' : found[0] as BootDevice;
}

/** Builds the boot override capability. */
export function createBootDeviceControl(ctx: RedfishContext): BootDeviceControl {
  return {
    async getBootDevice() {
      const { boot } = (await ctx.system()).value;
      const device = boot.enabled === 'Disabled' ? 'none' : decodeBootDevice(boot.target);
      const mode = boot.mode === 'UEFI' ? 'uefi' : boot.mode === 'Legacy' ? 'legacy' : undefined;
      const httpBootUri = typeof boot.httpBootUri === 'string' && boot.httpBootUri !== '' ? boot.httpBootUri : undefined;
      return { device, persistent: device !== 'none' && boot.enabled === 'Continuous', mode, ...(httpBootUri === undefined ? {} : { httpBootUri }) };
    },
    async setBootDevice(device, options = {}) {
      const { value: system, etag, path } = await ctx.system();
      const { boot } = system;
      const target = BOOT_TARGETS[device];
      const operation = `setBootDevice(${device})`;
      if (boot.allowedTargets !== undefined && !boot.allowedTargets.includes(target)) {
        throw ctx.unsupported('bootDevice', operation, `allowed targets are ${boot.allowedTargets.join(', ')}`);
      }
      const enabled = options.persistent === true ? 'Continuous' : 'Once';
      const mode = options.mode === undefined ? undefined : MODES[options.mode];
      const modeChanges = mode !== undefined && mode !== boot.mode;
      // HttpBootUri only where the System has the property (ComputerSystem v1_9+); else DHCP gives the URI.
      const uri = device === 'uefi-http' && boot.httpBootUri !== undefined ? options.httpBootUri : undefined;
      const uriChanges = uri !== undefined && uri !== boot.httpBootUri;
      if (boot.target === target && boot.enabled === enabled && !modeChanges && !uriChanges) return;
      const patch: Record<string, string> = { BootSourceOverrideTarget: target };
      if (uriChanges) patch.HttpBootUri = uri;
      if (boot.enabled !== enabled) patch.BootSourceOverrideEnabled = enabled;
      if (modeChanges) {
        if (!ctx.quirks.bootModeSettable) {
          throw ctx.unsupported('bootDevice', `${operation} in ${options.mode ?? ''} mode`,
            `this BMC takes the boot mode from the BIOS (BootMode attribute; now ${boot.mode ?? 'unknown'}); change it through BIOS settings`);
        }
        if (boot.allowedModes !== undefined && !boot.allowedModes.includes(mode)) {
          throw ctx.unsupported('bootDevice', `${operation} in ${options.mode ?? ''} mode`, `allowed modes are ${boot.allowedModes.join(', ')}`);
        }
        patch.BootSourceOverrideMode = mode;
      }
      await ctx.client.patch(path, { Boot: patch }, etag);
    },
  };
}
