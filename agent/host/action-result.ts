/**
 * @module What one state-machine step decided (BMO `action_result.go`): whether the host must
 * be saved, when to run again, and whether the object is gone. Plus the upstream backoff.
 * @pure
 */
import type { ErrorType } from './types.js';

/** The outcome of one reconcile step. */
export type ActionResult =
  /** Nothing to save; run again after the delay. */
  | { kind: 'continue'; requeueAfterMs: number }
  /** Save the host; run again after the delay. */
  | { kind: 'update'; requeueAfterMs: number }
  /** The step finished: save (the handler may have set the next state) and run again at once. */
  | { kind: 'complete' }
  /** No capacity to enter the next state: save `delayed` and retry in 1–2 minutes. */
  | { kind: 'delayed' }
  /** A failure the user must act on was recorded in status: save and back off. */
  | { kind: 'failed'; errorType: ErrorType; errorCount: number }
  /** A transient failure: save nothing, retry with the reconciler's own backoff. */
  | { kind: 'error'; error: unknown; needsRegistration: boolean }
  /** The delete flow finished: remove the host. */
  | { kind: 'deleteComplete' }
  /** Save if `save`, then do not requeue (an edit or a secret change wakes the host). */
  | { kind: 'stop'; save: boolean };

export const actionContinue = (requeueAfterMs = 0): ActionResult => ({ kind: 'continue', requeueAfterMs });
export const actionUpdate = (requeueAfterMs = 0): ActionResult => ({ kind: 'update', requeueAfterMs });
export const actionComplete = (): ActionResult => ({ kind: 'complete' });
export const actionDelayed = (): ActionResult => ({ kind: 'delayed' });

/** Turns a continue into an update (the step also changed something that must be saved). */
export function withSave(result: ActionResult): ActionResult {
  return result.kind === 'continue' ? { kind: 'update', requeueAfterMs: result.requeueAfterMs } : result;
}

/** Whether the host must be written after this step (BMO `Dirty()`). */
export function isDirty(result: ActionResult): boolean {
  switch (result.kind) {
    case 'update':
    case 'complete':
    case 'delayed':
    case 'failed':
      return true;
    case 'stop':
      return result.save;
    case 'continue':
    case 'error':
    case 'deleteComplete':
      return false;
  }
}

const MINUTE_MS = 60_000;

/**
 * Upstream `calculateBackoff`: n capped at 9, base 2ⁿ minutes, a value uniform in [base/2, base].
 * `random` is a number in [0, 1).
 */
export function calculateBackoffMs(errorCount: number, random: number): number {
  const n = Math.min(Math.max(errorCount, 1), 9);
  const baseMs = 2 ** n * MINUTE_MS;
  return Math.round(baseMs / 2 + (random * baseMs) / 2);
}

/** When to run the host again after `result`; `undefined` = not until something changes. */
export function requeueDelayMs(result: ActionResult, random: number): number | undefined {
  switch (result.kind) {
    case 'continue':
    case 'update':
      return result.requeueAfterMs;
    case 'complete':
      return 0;
    case 'delayed':
      return calculateBackoffMs(1, random);
    case 'failed':
      return calculateBackoffMs(result.errorCount, random);
    case 'error':
      return undefined; // the reconciler applies its own transient-error backoff
    case 'deleteComplete':
    case 'stop':
      return undefined;
  }
}
