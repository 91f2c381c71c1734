/**
 * @module BMC call instrumentation: every call a driver makes on the agent's behalf (power,
 * boot device, virtual media, BIOS, firmware, RAID, …) reported with its driver type, operation
 * (`capability.method`), outcome (`ok`, or the `BmcError` code, or `error` for anything else)
 * and duration. {@link InstrumentedDriverRegistry} wraps the drivers it builds; the metrics
 * module turns the reports into `rackside_bmc_call_duration_seconds`. Drivers stay unaware of
 * it (drivers/ never imports agent/).
 */
import {
  CAPABILITY_NAMES, DriverRegistry, isBmcError,
  type BmcAddress, type BmcCapabilitySet, type BmcCredentials, type BmcDriver, type DriverOptions,
} from '../../drivers/index.js';

/** Milliseconds of the monotonic clock: call durations must not jump with the wall clock. */
const monotonicMs = (): number => performance.now();

/** One finished BMC call. */
export interface BmcCall {
  /** Driver type (`redfish`, `ipmi`, `idrac-redfish`, …). */
  readonly driver: string;
  /** `capability.method`, e.g. `power.getPowerState`. */
  readonly operation: string;
  /** `ok`, the `BmcError` code (`RACKSIDE_ERR_BMC_TIMEOUT`, …), or `error`. */
  readonly outcome: string;
  readonly durationMs: number;
}

/** Receives every finished call; must not throw (a throwing listener is ignored). */
export type BmcCallListener = (call: BmcCall) => void;

/** Fans BMC call reports out to listeners (the metrics subscribe after the registry exists). */
export class BmcCallRecorder {
  readonly #listeners = new Set<BmcCallListener>();

  /** Adds `listener`; returns the function that removes it. */
  onCall(listener: BmcCallListener): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /** Reports `call` to every listener. */
  record(call: BmcCall): void {
    for (const listener of this.#listeners) {
      try {
        listener(call);
      } catch {
        // A metrics bug must never fail a BMC call.
      }
    }
  }
}

/** The outcome label of a failed call. */
export function callOutcome(error: unknown): string {
  return isBmcError(error) ? error.code : 'error';
}

/**
 * Returns `capability` with each of its methods timed and reported as `<name>.<method>`;
 * results and errors pass through unchanged.
 */
function instrumentCapability<T extends object>(capability: T, name: string, driver: string, recorder: BmcCallRecorder, nowMs: () => number): T {
  return new Proxy(capability, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const method = value as (...args: unknown[]) => unknown;
      const operation = `${name}.${property}`;
      return (...args: unknown[]): unknown => {
        const startedMs = nowMs();
        const report = (outcome: string): void => { recorder.record({ driver, operation, outcome, durationMs: nowMs() - startedMs }); };
        let result: unknown;
        try {
          result = method.apply(target, args);
        } catch (error) {
          report(callOutcome(error));
          throw error;
        }
        if (result instanceof Promise) {
          return result.then(
            (value: unknown) => { report('ok'); return value; },
            (error: unknown) => { report(callOutcome(error)); throw error; },
          );
        }
        report('ok');
        return result;
      };
    },
  });
}

/** Wraps every capability of `driver` so its calls are reported to `recorder`. */
export function instrumentDriver(driver: BmcDriver, recorder: BmcCallRecorder, nowMs: () => number = monotonicMs): BmcDriver {
  const wrapped: Partial<Record<keyof BmcCapabilitySet, object>> = {};
  for (const name of CAPABILITY_NAMES) wrapped[name] = instrumentCapability(driver[name], name, driver.type, recorder, nowMs);
  return { ...driver, ...(wrapped as BmcCapabilitySet) };
}

/** A {@link DriverRegistry} whose drivers report every call to a {@link BmcCallRecorder}. */
export class InstrumentedDriverRegistry extends DriverRegistry {
  constructor(readonly recorder: BmcCallRecorder, private readonly nowMs: () => number = monotonicMs) {
    super();
  }

  /** Builds the driver as {@link DriverRegistry.create} does, instrumented. */
  override create(address: BmcAddress | string, credentials: BmcCredentials, options: DriverOptions = {}): BmcDriver {
    return instrumentDriver(super.create(address, credentials, options), this.recorder, this.nowMs);
  }
}
