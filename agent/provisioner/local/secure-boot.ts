/**
 * @module Secure Boot for `bootMode: UEFISecureBoot`, as metal3 drives it through Ironic
 * (`boot_mode_utils.configure_secure_boot_if_needed` / `deconfigure_…`): before the deploy boots
 * anything, the BMC's Secure Boot is switched on (Redfish `SecureBoot.SecureBootEnable`) — the
 * ramdisk then boots through shim and signed GRUB on the network path (agent/boot/host-boot-plan.ts),
 * the ISO through its own shim — and deprovisioning switches it off again when the deploy was what
 * switched it on. A BMC that cannot switch it (no SecureBoot resource, an IPMI BMC) is a provisioning
 * error naming the BMC's answer: the host never boots insecurely when it asked for Secure Boot.
 */
import { BmcErrorCode, isBmcError } from '../../../drivers/index.js';
import type { BootMode } from '../../host/types.js';
import type { Result } from '../provisioner.js';
import { operationFailed } from '../result.js';
import { bmcFailure, bmcMessage } from './bmc-result.js';
import type { DeployContext } from './deploy.js';

type SecureBootContext = Pick<DeployContext, 'driver' | 'node' | 'update' | 'publish'>;

/**
 * Makes sure Secure Boot is on for a `UEFISecureBoot` deploy, once per deploy (the node records
 * it); undefined to go on, else the failed Result. Other boot modes: nothing, undefined.
 */
export async function ensureSecureBoot(ctx: SecureBootContext, bootMode: BootMode): Promise<Result | undefined> {
  if (bootMode !== 'UEFISecureBoot') return undefined;
  if ((await ctx.node()).node.secureBoot !== undefined) return undefined;
  try {
    const driver = ctx.driver();
    const state = await driver.secureBoot.getSecureBoot();
    if (!state.enabled) await driver.secureBoot.setSecureBoot(true);
    await ctx.update((n) => {
      n.secureBoot = state.enabled ? 'was-enabled' : 'enabled-by-rackside';
    });
    ctx.publish('SecureBootEnabled', state.enabled ? 'Secure Boot was already on (bootMode UEFISecureBoot)' : 'Secure Boot switched on through the BMC for bootMode UEFISecureBoot');
    return undefined;
  } catch (error) {
    if (isBmcError(error, BmcErrorCode.unsupported)) {
      return operationFailed(`bootMode UEFISecureBoot: this BMC cannot switch Secure Boot on (${bmcMessage(error)}); use a Redfish BMC with a SecureBoot resource, or bootMode UEFI`);
    }
    return bmcFailure('switching Secure Boot on for bootMode UEFISecureBoot', error);
  }
}

/**
 * Switches Secure Boot off again when the deploy switched it on (deprovisioning), and forgets
 * the record; undefined to go on, else the failed Result.
 */
export async function restoreSecureBoot(ctx: SecureBootContext): Promise<Result | undefined> {
  const recorded = (await ctx.node()).node.secureBoot;
  if (recorded === undefined) return undefined;
  try {
    if (recorded === 'enabled-by-rackside') await ctx.driver().secureBoot.setSecureBoot(false);
  } catch (error) {
    return bmcFailure('switching Secure Boot back off (the deploy had switched it on)', error);
  }
  await ctx.update((n) => {
    delete n.secureBoot;
  });
  if (recorded === 'enabled-by-rackside') ctx.publish('SecureBootRestored', 'Secure Boot switched back off: the deploy had switched it on');
  return undefined;
}
