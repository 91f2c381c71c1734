/**
 * @module iLO (HPE iLO 4 ≥ 2.30 and iLO 5) overrides: virtual media lives on the Manager
 * (`Managers/1/VirtualMedia/2` is the CD/DVD slot, `/1` floppy/USB), the boot override mode
 * follows the BIOS `BootMode` attribute and cannot be PATCHed with the override (change it
 * through BIOS settings), and BIOS changes apply at the next reset without an apply-time
 * annotation. iLO's weak ETags (`W/"…"`) are handled by the client (strong-form retry on 412)
 * and its EjectMedia wants an empty JSON body, which the driver always sends.
 */
import { GENERIC_QUIRKS, type RedfishQuirks } from './quirks.js';

/** iLO quirks. */
export const ILO_QUIRKS: RedfishQuirks = {
  ...GENERIC_QUIRKS,
  name: 'ilo',
  virtualMediaOn: 'manager-first',
  bootModeSettable: false,
  biosApplyTime: false,
};
