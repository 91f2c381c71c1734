/**
 * @module BMC call instrumentation: every call a driver makes on the agent's behalf (power,
 * boot device, virtual media, BIOS, firmware, RAID, …) reported with its driver type, operation
 * (`capability.method`), outcome (`ok`, or the `BmcError` code, or `error` for anything else)
 * and duration. {@link recordCalls} is the driver wrapper (wrap-driver.ts) that reports them; the metrics
 * module turns the reports into `rackside_bmc_call_duration_seconds`. Drivers stay unaware of
 * it (drivers/ never imports agent/).
 */
import { isBmcError } from '../../drivers/index.js';
import type { DriverCallWrapper } from './wrap-driver.js';

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
 * The wrapper (wrap-driver.ts) that times each call and reports it to `recorder` with its
 * outcome; results and errors pass through unchanged.
 */
export function recordCalls(recorder: BmcCallRecorder, nowMs: () => number = monotonicMs): DriverCallWrapper {
  return (call, invoke) => {
    const startedMs = nowMs();
    const report = (outcome: string): void => { recorder.record({ driver: call.driver, operation: call.operation, outcome, durationMs: nowMs() - startedMs }); };
    let result: unknown;
    try {
      result = invoke();
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
}
