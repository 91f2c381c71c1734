/**
 * @module Result helpers for provisioner implementations: the four outcomes of
 * provisioner.ts spelled as functions, so no implementation builds a `Result` by hand.
 * @pure
 */
import type { Result } from './provisioner.js';
import { TransientProvisionerError } from './errors.js';

/** Still running: call again after `delayMs` (0 = as soon as possible). */
export function operationContinuing(delayMs: number): Result {
  return { dirty: true, requeueAfterMs: Math.max(0, delayMs), errorMessage: '' };
}

/** Done: the controller moves on. */
export function operationComplete(): Result {
  return { dirty: false, requeueAfterMs: 0, errorMessage: '' };
}

/** Failed and the user must act: recorded in status, counted, retried after a backoff. */
export function operationFailed(message: string): Result {
  return { dirty: false, requeueAfterMs: 0, errorMessage: message === '' ? 'operation failed' : message };
}

/**
 * A transient failure (network, BMC busy): returns the error to `throw`, so the controller
 * retries with backoff without recording anything in status.
 */
export function transientError(message: string, cause?: unknown): TransientProvisionerError {
  return new TransientProvisionerError(message, cause === undefined ? undefined : { cause });
}
