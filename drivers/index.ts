/**
 * @module Public surface of drivers/: what the agent uses, and nothing else (agent/ imports
 * drivers only through this file; `test/unit/boundaries.test.ts` holds the surface to names the
 * agent imports). BMC address parsing, the capability interfaces, BMC errors, the driver
 * registry with the built-in drivers (fake, Redfish, IPMI), and the power helper the agent
 * waits with. Tests reach the rest (the drivers themselves, the fake BMC, the Redfish decoders)
 * through the defining files.
 */
export { BmcAddressError, bmcCapabilities, parseBmcAddress, redactBmcAddress, resolveIpmiTarget, resolveRedfishTarget, type BmcAddress } from './bmc-address.js';
export type { BmcCapabilities } from './bmc-schemes.js';
export {
  CAPABILITY_NAMES,
  type BmcCapabilitySet,
  type BmcInfo,
  type BootDevice,
  type BootMode,
  type BootOverride,
  type CapabilityName,
  type PowerAction,
  type PowerControl,
  type PowerState,
  type SecureBootState,
  type VirtualMediaSlot,
} from './capabilities.js';
export type {
  BiosAttributeSchema, BiosSettings, FirmwareComponent, OutOfBandInventory, RaidLevel, RaidVolumeRequest, TaskStatus,
} from './capabilities-config.js';
export { BmcErrorCode, isBmcError, isPermanentBmcError, isTransientBmcError } from './errors.js';
export { DriverRegistry, type BmcCredentials, type BmcDriver } from './registry.js';
export { registerBuiltinDrivers } from './builtin-drivers.js';
export { waitForPowerState } from './power-helpers.js';
export { raidTargetMatches } from './redfish/storage.js';
export { probeBmc, type ProbeReport } from './probe.js';
