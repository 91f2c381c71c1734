/**
 * @module How the local provisioner turns a BMC failure into a provisioner Result: refused
 * credentials, an unreachable BMC and unsupported requests are the user's to fix (recorded in
 * status), and so is a virtual-media host without the rackside ISO to boot or a host whose ramdisk
 * build failed (ramdisk-builds.ts; the message has the reason and fix); anything else is
 * transient (retried with backoff, nothing recorded).
 */
import { BmcErrorCode, isBmcError } from '../../../drivers/index.js';
import type { Result } from '../provisioner.js';
import { operationFailed, transientError } from '../result.js';
import { HostIsoUnavailableError } from './vmedia-iso.js';
import { RamdiskUnavailableError } from './ramdisk-build-status.js';

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
  if (error instanceof HostIsoUnavailableError || error instanceof RamdiskUnavailableError) return operationFailed(`${what}: ${error.message}`);
  throw transientError(`${what}: ${bmcMessage(error)}`, error);
}

/**
 * Like {@link bmcFailure}, for a BMC step after work that must not be done again (the image is on
 * the disk and the ramdisk's report was taken): a BMC that cannot be reached or does not answer
 * now is transient — retried with backoff, the work kept — instead of a failure, which upstream's
 * state machine answers by deprovisioning and deploying all over again.
 */
export function bmcFailureKeepingWork(what: string, error: unknown): Result {
  if (isBmcError(error, BmcErrorCode.unreachable) || isBmcError(error, BmcErrorCode.timeout)) throw transientError(`${what}: ${bmcMessage(error)}`, error);
  return bmcFailure(what, error);
}
