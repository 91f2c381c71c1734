/**
 * @module Registration of rackside's built-in BMC drivers. Called once by agent/main.ts (and by
 * tests that want the real set); nothing registers itself on import (docs/architecture.md, rule 4).
 * Today: `fake`, `redfish` and `ipmi` (native lanplus).
 */
import { createFakeDriverFactory, FakeBmcPool } from './fake/fake-driver.js';
import { createIpmiDriverFactory, type IpmiDriverOptions } from './ipmi/ipmi-driver.js';
import { createRedfishDriverFactory } from './redfish/redfish-driver.js';
import type { DriverRegistry } from './registry.js';

/** Options of {@link registerBuiltinDrivers}. */
export interface BuiltinDriverOptions {
  /** Pool behind `fake://` addresses; a fresh one when absent. */
  readonly fakePool?: FakeBmcPool;
  /**
   * Defaults of every `ipmi` driver — e.g. the agent's cipher suite setting as `cipherSuites`
   * (`[17, 3]` when absent); a host's `DriverOptions.ipmiCipherSuite` pin still wins.
   */
  readonly ipmi?: IpmiDriverOptions;
}

/** Registers every built-in driver on `registry`; returns the fake pool so the demo can turn its knobs. */
export function registerBuiltinDrivers(registry: DriverRegistry, options: BuiltinDriverOptions = {}): { readonly fakePool: FakeBmcPool } {
  const fakePool = options.fakePool ?? new FakeBmcPool();
  registry.register('fake', createFakeDriverFactory(fakePool));
  registry.register('ipmi', createIpmiDriverFactory(options.ipmi));
  registry.register('redfish', createRedfishDriverFactory());
  return { fakePool };
}
