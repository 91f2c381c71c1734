/**
 * @module The local provisioner's BMC drivers run their requests outside the reconcile slot of
 * the step that makes them (agent/host/reconcile-slot.ts): every capability method that returns
 * a promise (power, boot device, virtual media, BIOS, firmware, RAID, …) is awaited with the
 * step's slot given to another step. Results and errors pass through unchanged.
 */
import { CAPABILITY_NAMES, type BmcCapabilitySet, type BmcDriver } from '../../../drivers/index.js';
import { outsideSlot } from '../../host/reconcile-slot.js';

function wrapCapability<T extends object>(capability: T): T {
  return new Proxy(capability, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      // Every capability method returns a promise (drivers/capabilities.ts).
      return (...args: unknown[]): Promise<unknown> => outsideSlot(() => Promise.resolve(method.apply(target, args)));
    },
  });
}

/** Returns `driver` with every capability's requests made outside the current reconcile slot. */
export function outsideSlotDriver(driver: BmcDriver): BmcDriver {
  const wrapped: Partial<Record<keyof BmcCapabilitySet, object>> = {};
  for (const name of CAPABILITY_NAMES) wrapped[name] = wrapCapability(driver[name]);
  return { ...driver, ...(wrapped as BmcCapabilitySet) };
}
