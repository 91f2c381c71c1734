/**
 * @module Driver wrappers, composed once where a driver is made: `wrapDriver(driver, [recordCalls(…),
 * releaseSlot(…)])`. Each wrapper sees every capability method call (power, boot device,
 * virtual media, BIOS, firmware, RAID, …) with the driver type and `capability.method`, and runs
 * it; the first wrapper in the list is the innermost (closest to the driver). Drivers stay
 * unaware of them (drivers/ never imports agent/).
 */
import { CAPABILITY_NAMES, type BmcCapabilitySet, type BmcDriver } from '../../drivers/index.js';
import type { BmcSlotGate } from '../provisioner/provisioner.js';

/** One capability method call as a wrapper sees it. */
export interface DriverCall {
  /** Driver type (`redfish`, `ipmi`, `idrac-redfish`, …). */
  readonly driver: string;
  /** `capability.method`, e.g. `power.getPowerState`. */
  readonly operation: string;
}

/** Runs `invoke` (the call, already wrapped by the wrappers inside this one) and returns its result. */
export type DriverCallWrapper = (call: DriverCall, invoke: () => unknown) => unknown;

function wrapCapability<T extends object>(capability: T, name: string, driver: string, wrappers: readonly DriverCallWrapper[]): T {
  return new Proxy(capability, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const method = value as (...args: unknown[]) => unknown;
      const call: DriverCall = { driver, operation: `${name}.${property}` };
      return (...args: unknown[]): unknown => {
        let invoke = (): unknown => method.apply(target, args);
        for (const wrapper of wrappers) {
          const inner = invoke;
          invoke = () => wrapper(call, inner);
        }
        return invoke();
      };
    },
  });
}

/** Returns `driver` with every capability method call run through `wrappers` (first = innermost). */
export function wrapDriver(driver: BmcDriver, wrappers: readonly DriverCallWrapper[]): BmcDriver {
  if (wrappers.length === 0) return driver;
  const wrapped: Partial<Record<keyof BmcCapabilitySet, object>> = {};
  for (const name of CAPABILITY_NAMES) wrapped[name] = wrapCapability(driver[name], name, driver.type, wrappers);
  return { ...driver, ...(wrapped as BmcCapabilitySet) };
}

/**
 * The wrapper that makes each call outside the reconcile slot of the step it belongs to
 * (agent/host/reconcile-slot.ts): `gate()` is that step's gate, read per call (a host's steps
 * never overlap, so the current one is the caller's). Every capability method returns a promise
 * (drivers/capabilities.ts); results and errors pass through unchanged.
 */
export function releaseSlot(gate: () => BmcSlotGate): DriverCallWrapper {
  return (_call, invoke) => gate().outside(() => Promise.resolve(invoke()));
}
