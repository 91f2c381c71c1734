/**
 * @module Vendor quirk switches of the Redfish driver, chosen from the address scheme's vendor
 * field (`idrac-*` → iDRAC, `ilo5-*`/`ilo4*` → iLO), never sniffed: the generic behaviour is
 * the DMTF one as sushy/Ironic implement it; vendors/idrac.ts and vendors/ilo.ts override the
 * few places where a vendor needs something else.
 */
import type { BmcVendor } from '../../bmc-schemes.js';
import type { RedfishClient } from '../client.js';

/** What a vendor hook may use. */
export interface VendorHookContext {
  readonly client: RedfishClient;
  readonly address: string;
  /** The Manager of the system (resolved lazily by the driver). */
  managerUri(): Promise<string>;
}

/** The behaviour switches. */
export interface RedfishQuirks {
  readonly name: 'generic' | 'idrac' | 'ilo';
  /** Where VirtualMedia is looked for first (Redfish 2021.1 moved it to the System; many BMCs keep it on the Manager). */
  readonly virtualMediaOn: 'system-first' | 'manager-first';
  /** Whether `BootSourceOverrideMode` may be PATCHed with the override (iLO ties it to the BIOS `BootMode`). */
  readonly bootModeSettable: boolean;
  /** Send `@Redfish.SettingsApplyTime: OnReset` with BIOS changes when the BMC lists it. */
  readonly biosApplyTime: boolean;
  /** FirmwareInventory ids to leave out (iDRAC lists `Previous-`/`Available-` images next to the installed ones). */
  readonly skipFirmwareId: (id: string) => boolean;
  /**
   * After the BIOS settings PATCH: schedule the change (iDRAC: a config job) and return the
   * task/job path to follow, or undefined when the BMC applies it at the next reset by itself.
   */
  readonly afterBiosPatch?: (ctx: VendorHookContext, settingsUri: string) => Promise<string | undefined>;
  /** Turns a task id that is not a path (iDRAC `JID_…`) into the path to read. */
  readonly taskPath?: (ctx: VendorHookContext, taskId: string) => Promise<string | undefined>;
}

/** DMTF behaviour (sushy defaults). */
export const GENERIC_QUIRKS: RedfishQuirks = {
  name: 'generic',
  virtualMediaOn: 'system-first',
  bootModeSettable: true,
  biosApplyTime: true,
  skipFirmwareId: () => false,
};

/** Quirks for a vendor, given the lookup of vendor overrides (kept here to avoid an import cycle). */
export function selectQuirks(vendor: BmcVendor | undefined, overrides: Partial<Record<BmcVendor, RedfishQuirks>>): RedfishQuirks {
  return (vendor === undefined ? undefined : overrides[vendor]) ?? GENERIC_QUIRKS;
}
