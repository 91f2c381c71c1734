/**
 * @module Public surface of drivers/: BMC address parsing and the scheme capability table.
 * agent/ imports drivers only through this file. Capability interfaces, the registry and the
 * drivers themselves are exported here as they land.
 */
export * from './bmc-address.js';
export * from './bmc-schemes.js';
