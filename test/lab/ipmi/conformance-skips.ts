/**
 * @module The conformance cases the IPMI driver skips, with reasons, shared by the fake-BMC
 * unit run and the ipmi_sim integration run of test/conformance/bmc-driver.suite.ts.
 */

/** Why IPMI skips cases: capabilities IPMI does not have. */
export const IPMI_CONFORMANCE_SKIPS = {
  virtualMedia: 'IPMI has no virtual media (vendor OEM commands only)',
  biosSettings: 'IPMI has no BIOS settings interface',
  firmware: 'IPMI has no firmware inventory or update interface',
  tasks: 'IPMI has no task monitors',
  raid: 'IPMI has no RAID interface',
  eventSubscriptions: 'IPMI has no event subscriptions (PET/SNMP traps are out of scope)',
  secureBoot: 'IPMI has no Secure Boot interface',
  'inventory.hardware': 'IPMI FRU/SDR carry no processor, memory or NIC inventory (manufacturer/model/serial only)',
} as const;
