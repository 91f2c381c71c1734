/**
 * @module `inspectHardware` with `inspectionMode: fast`: out-of-band inspection through the BMC
 * (Redfish Systems/Processors/Memory/EthernetInterfaces/Storage via the driver's inventory
 * control) without booting the host — no boot device change, no power change, no ramdisk
 * (docs/metal3-mapping.md, "Enums and annotations"; BMO asks for no preprovisioning image in this mode). The BMC
 * answers at once, so a call returns the details directly; a refresh (the inspect annotation)
 * first reports `started` so the controller removes the annotation, and the next call reads.
 */
import { publishInventoryWarnings } from './bmc-host-options.js';
import type { InspectData, InspectResult } from '../provisioner.js';
import { operationComplete, operationContinuing, operationFailed } from '../result.js';
import { bmcFailure } from './bmc-result.js';
import { hardwareDetailsFromOutOfBand } from './oob-hardware.js';
import type { PrepContext } from './prep-steps.js';

/** One call of fast inspection (see the module comment). Never touches power or boot devices. */
export async function fastInspectStep(ctx: Pick<PrepContext, 'host' | 'publish' | 'node' | 'update' | 'driver'>, data: InspectData, refresh: boolean): Promise<InspectResult> {
  await ctx.node(); // registered, or NeedsRegistrationError
  const driver = ctx.driver();
  // metal3: fast inspection needs the driver's inspect interface (redfish, idrac-redfish …; not IPMI, whose FRU is too thin).
  if (!driver.supports('inventory') || !driver.schemeCapabilities.supportsOutOfBandInspection) {
    return {
      result: operationFailed(`inspectionMode fast needs out-of-band inspection, which ${driver.address.scheme}:// BMCs do not offer: use inspectionMode agent`),
      started: false,
    };
  }
  if (refresh) {
    ctx.publish('InspectionStarted', 'fast (out-of-band) inspection through the BMC');
    return { result: operationContinuing(0), started: true };
  }
  let inventory;
  try {
    inventory = await driver.inventory.getInventory();
  } catch (error) {
    return { result: bmcFailure('fast inspection', error), started: false };
  }
  // Parts the BMC does not have (404/405/501) were skipped: one Warning event each, the rest is kept.
  publishInventoryWarnings(inventory, ctx.publish);
  const details = hardwareDetailsFromOutOfBand(inventory, ctx.host.bootMACAddress, data.cpuArchitecture);
  await ctx.update((n, entry) => {
    // An agent inspection left over from before the mode changed is abandoned.
    if (n.op?.kind === 'inspect') {
      delete n.op;
      entry.boot = 'none';
    }
    n.state = 'manageable';
  });
  const disks = details.storage?.length ?? 0;
  ctx.publish('InspectionComplete', `fast inspection: ${details.cpu.count ?? '?'} CPUs, ${details.ramMebibytes ?? '?'} MiB, ${details.nics?.length ?? 0} NICs, ${disks} disks (from the BMC, no boot)`);
  return { result: operationComplete(), started: false, details };
}
