/**
 * @module How the local provisioner turns a BMC failure into a provisioner Result: refused
 * credentials, an unreachable BMC and unsupported requests are the user's to fix (recorded in
 * status), and so is a virtual-media host without the rackside ISO to boot; anything else is
 * transient (retried with backoff, nothing recorded).
 */
import { BmcErrorCode, isBmcError } from '../../../drivers/index.js';
import type { Result } from '../provisioner.js';
import { operationFailed, transientError } from '../result.js';
import { HostIsoUnavailableError } from './vmedia-iso.js';

/** Returns the message of any thrown value. */
export function bmcMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Returns the failed Result for `error` during `what`, or throws the transient error (see the module comment). */
export function bmcFailure(what: string, error: unknown): Result {
  if (isBmcError(error, BmcErrorCode.auth)) return operationFailed(`${what}: the BMC refused the credentials: ${bmcMessage(error)}`);
  if (isBmcError(error, BmcErrorCode.unreachable) || isBmcError(error, BmcErrorCode.timeout)) {
    return operationFailed(`${what}: cannot reach the BMC: ${bmcMessage(error)}`);
  }
  if (isBmcError(error, BmcErrorCode.unsupported)) return operationFailed(`${what}: ${bmcMessage(error)}`);
  if (error instanceof HostIsoUnavailableError) return operationFailed(`${what}: ${error.message}`);
  throw transientError(`${what}: ${bmcMessage(error)}`, error);
}
