/**
 * @module Public surface of drivers/: BMC address parsing, the scheme capability table, the
 * capability interfaces, BMC errors, the driver registry, the driver-agnostic power helpers
 * (power-helpers.ts) and the built-in drivers (fake, Redfish, IPMI). agent/ imports drivers
 * only through this file.
 */
export * from './bmc-address.js';
export * from './bmc-schemes.js';
export type * from './capabilities.js';
export { CAPABILITY_NAMES } from './capabilities.js';
export * from './errors.js';
export * from './registry.js';
export {
  softPowerOff, sweepPowerStates, waitForPowerState,
  type PowerSweepResult, type SoftPowerOffOptions, type WaitForPowerOptions,
} from './power-helpers.js';
export { createNoopCapabilities, type NoopOwner } from './noop.js';
export { registerBuiltinDrivers, type BuiltinDriverOptions } from './builtin-drivers.js';
export { FakeBmc, defaultFakeKnobs, fakeMacAddress, type FakeBmcKnobs, type FakeBoot, type FakeCall } from './fake/fake-bmc.js';
export { createFakeDriver, createFakeDriverFactory, FakeBmcPool, type FakeDriverOptions } from './fake/fake-driver.js';
export * from './redfish/index.js';
export { createIpmiDriver, createIpmiDriverFactory, type IpmiDriverImplementation, type IpmiDriverOptions } from './ipmi/ipmi-driver.js';
export { IpmiSession, IpmiCompletionCodeError, type IpmiSessionOptions, type IpmiSessionStats } from './ipmi/ipmi-session.js';
export type { IpmiSensorValue } from './ipmi/ipmi-inventory.js';
export { probeBmc, type ProbeOptions, type ProbeReport, type ProbeAttempt, type ProbeFeature, type RedfishFacts, type IpmiFacts } from './probe.js';
