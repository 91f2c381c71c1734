/**
 * @module iDRAC (Dell) overrides: BIOS changes are applied through the iDRAC job queue — PATCH
 * `Bios/Settings`, then POST `{TargetSettingsURI}` to `Managers/iDRAC.Embedded.1/Jobs`, whose
 * `Location` is the job (`Jobs/JID_…`, JobState `Scheduled` until the host resets); the
 * Redfish apply-time annotation is not sent (older firmware rejects it). Virtual media is
 * used through the Manager (`iDRAC.Embedded.1/VirtualMedia/CD`), as Ironic's idrac-redfish
 * virtual media boot does. FirmwareInventory `Previous-`/`Available-` entries are skipped.
 */
import { BmcError, BmcErrorCode } from '../../errors.js';
import { GENERIC_QUIRKS, type RedfishQuirks, type VendorHookContext } from './quirks.js';

async function jobsUri(ctx: VendorHookContext): Promise<string> {
  return `${(await ctx.managerUri()).replace(/\/+$/, '')}/Jobs`;
}

async function createBiosJob(ctx: VendorHookContext, settingsUri: string): Promise<string> {
  const res = await ctx.client.post(await jobsUri(ctx), { TargetSettingsURI: settingsUri });
  if (res.location !== undefined) return res.location;
  throw new BmcError(BmcErrorCode.protocol, `BMC ${ctx.address}: iDRAC created a BIOS job without a Location header`, { address: ctx.address });
}

/** iDRAC quirks. */
export const IDRAC_QUIRKS: RedfishQuirks = {
  ...GENERIC_QUIRKS,
  name: 'idrac',
  virtualMediaOn: 'manager-first',
  biosApplyTime: false,
  skipFirmwareId: (id) => id.startsWith('Previous-') || id.startsWith('Available-'),
  afterBiosPatch: createBiosJob,
  taskPath: async (ctx, taskId) => (/^[JR]ID_[0-9A-Za-z_]+$/.test(taskId) ? `${await jobsUri(ctx)}/${taskId}` : undefined),
};
