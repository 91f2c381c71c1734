/**
 * @module The conformance cases the IPMI driver skips, with reasons, shared by the fake-BMC
 * unit run and the ipmi_sim integration run of test/conformance/bmc-driver.suite.ts.
 */

import assert from 'node:assert/strict';
import type { BmcDriver } from '../../../drivers/index.js';

/** Why IPMI skips cases: capabilities IPMI does not have (each asserted absent by the suite). */
export const IPMI_CONFORMANCE_SKIPS = {
  virtualMedia: 'IPMI has no virtual media (vendor OEM commands only)',
  biosSettings: 'IPMI has no BIOS settings interface',
  firmware: 'IPMI has no firmware inventory or update interface',
  tasks: 'IPMI has no task monitors',
  raid: 'IPMI has no RAID interface',
  eventSubscriptions: 'IPMI has no event subscriptions (PET/SNMP traps are out of scope)',
  secureBoot: 'IPMI has no Secure Boot interface',
} as const;

/** What IPMI does instead of the hardware inventory case: FRU identity only, no CPU, memory or NICs. */
export const IPMI_CONFORMANCE_LIMITS = {
  'inventory.hardware': {
    reason: 'IPMI FRU/SDR carry no processor, memory or NIC inventory (manufacturer/model/serial only)',
    check: async (driver: BmcDriver): Promise<void> => {
      const inventory = await driver.inventory.getInventory();
      assert.deepEqual(inventory.processors, [], 'no processors are invented');
      assert.deepEqual(inventory.nics, [], 'no NICs are invented');
      assert.equal(inventory.memoryMebibytes, undefined, 'no memory size is invented');
    },
  },
} as const;
