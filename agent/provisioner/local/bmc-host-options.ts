/**
 * @module Per-host BMC settings and reports of the local provisioner: the annotation that pins a
 * host's IPMI cipher suite (like Ironic's `ipmi_cipher_suite`; validated in
 * agent/host/validation-rules.ts, used as the driver's `DriverOptions.ipmiCipherSuite`), and the
 * out-of-band inventory's warnings turned into the host's Warning events.
 * @pure
 */
import type { OutOfBandInventory } from '../../../drivers/index.js';
import type { EventPublisher } from '../provisioner.js';

/** Annotation pinning a host's RMCP+ cipher suites: `17`, `3` or `17,3` (agent/host/validation-rules.ts checks it). */
export const IPMI_CIPHER_SUITE_ANNOTATION = 'rackside.io/ipmi-cipher-suite';

/** Event reason of a part of the BMC's inventory that was skipped (the rest is kept). */
export const INVENTORY_PART_SKIPPED = 'InventoryPartSkipped';

/** Publishes one Warning event per warning of `inventory` (each names the skipped part); returns how many. */
export function publishInventoryWarnings(inventory: OutOfBandInventory, publish: EventPublisher): number {
  const warnings = inventory.warnings ?? [];
  for (const warning of warnings) publish(INVENTORY_PART_SKIPPED, `BMC inventory: ${warning}`, 'Warning');
  return warnings.length;
}
