/**
 * @module Public surface of the Redfish driver: the driver and its factory, the client (for
 * the `rackside bmc` tool and tests), the pure resource decoders and the vendor quirk tables.
 * drivers/index.ts re-exports this file; the power helpers moved to drivers/power-helpers.ts.
 */
export { createRedfishDriver, createRedfishDriverFactory, quirksForAddress, vendorOf, type RedfishDriverOptions } from './redfish-driver.js';
export { RedfishClient, type RedfishAuthMode, type RedfishClientOptions, type RedfishResponse } from './client.js';
export { RedfishStatusError, RedfishTlsError, httpStatusOf, TLS_VERIFY_CODES } from './http-errors.js';
export { DEFAULT_MAX_BODY_BYTES } from './transport.js';
export * from './resources.js';
export { decodeCollection, type DecodeContext, type JsonObject } from './json.js';
export { checkBiosValue, encodeBiosValue, planBiosChanges, pendingBiosValues, type BiosPlan } from './bios-settings.js';
export { BOOT_TARGETS } from './power-boot.js';
export { deviceOfSlot, pickSlot } from './media.js';
export { firmwareComponentOf } from './services.js';
export { MIN_DISKS, raidTargetMatches } from './storage.js';
export { GENERIC_QUIRKS, type RedfishQuirks } from './vendors/quirks.js';
export { IDRAC_QUIRKS } from './vendors/idrac.js';
export { ILO_QUIRKS } from './vendors/ilo.js';
