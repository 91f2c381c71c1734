/**
 * @module Power helpers over any `PowerControl` (Redfish, IPMI, fake): waiting for a power
 * state (real BMCs change `PowerState` seconds after accepting a reset — docs/test-peers.md,
 * "Redfish": poll with a timeout ≥ 15 s), a graceful power-off that falls back to a hard one
 * after a grace period (Ironic's soft power off), and a bounded-concurrency power-state sweep.
 * Driver-agnostic: drivers/index.ts exports them for the agent (power sweep, provisioner) and the
 * `rackside bmc` tool.
 */
import type { PowerControl, PowerState } from './capabilities.js';
import { BmcError, BmcErrorCode, isBmcError } from './errors.js';

/** Options of {@link waitForPowerState}. */
export interface WaitForPowerOptions {
  /** Give up after this long; default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Poll interval; default 1000 ms. */
  readonly pollMs?: number;
  /** Address named in the timeout error. */
  readonly address?: string;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `power.getPowerState()` until it reports `target` (transitional `powering-*` states
 * do not count); throws `BmcError(RACKSIDE_ERR_BMC_TIMEOUT)` with the last state seen.
 */
export async function waitForPowerState(power: PowerControl, target: 'on' | 'off', options: WaitForPowerOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pollMs = options.pollMs ?? 1000;
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? (() => performance.now());
  const deadline = now() + timeoutMs;
  let last: PowerState = 'unknown';
  for (;;) {
    last = await power.getPowerState();
    if (last === target) return;
    if (now() >= deadline) break;
    await sleep(Math.max(0, Math.min(pollMs, deadline - now())));
  }
  const who = options.address === undefined ? 'the BMC' : `BMC ${options.address}`;
  throw new BmcError(BmcErrorCode.timeout, `${who}: power state is still ${last} after ${timeoutMs} ms waiting for ${target}`,
    options.address === undefined ? {} : { address: options.address });
}

/** Options of {@link softPowerOff}. */
export interface SoftPowerOffOptions extends WaitForPowerOptions {
  /** How long the OS gets to shut down before the hard off; default 60 000 ms. */
  readonly graceMs?: number;
}

/**
 * Requests a graceful shutdown and waits up to `graceMs` for `off`; when the OS ignores it
 * (or the BMC does not offer soft-off), forces the power off and waits for `off`. Resolves
 * `soft` or `hard` to say which one worked.
 */
export async function softPowerOff(power: PowerControl, options: SoftPowerOffOptions = {}): Promise<'soft' | 'hard'> {
  try {
    await power.setPower('soft-off');
    await waitForPowerState(power, 'off', { ...options, timeoutMs: options.graceMs ?? 60_000 });
    return 'soft';
  } catch (err) {
    if (!isBmcError(err, BmcErrorCode.timeout) && !isBmcError(err, BmcErrorCode.unsupported)) throw err;
  }
  await power.setPower('off');
  await waitForPowerState(power, 'off', options);
  return 'hard';
}

/** One result of {@link sweepPowerStates}. */
export type PowerSweepResult<K> =
  | { readonly key: K; readonly ok: true; readonly state: PowerState }
  | { readonly key: K; readonly ok: false; readonly error: unknown };

/**
 * Reads the power state of every target with at most `concurrency` requests in flight;
 * failures are reported per target, never thrown. Results keep the input order.
 */
export async function sweepPowerStates<K>(
  targets: readonly { readonly key: K; readonly power: PowerControl }[], concurrency: number,
): Promise<PowerSweepResult<K>[]> {
  const results = new Array<PowerSweepResult<K>>(targets.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < targets.length; i = next++) {
      const target = targets[i];
      if (target === undefined) continue;
      try {
        results[i] = { key: target.key, ok: true, state: await target.power.getPowerState() };
      } catch (error) {
        results[i] = { key: target.key, ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, targets.length)) }, worker));
  return results;
}
