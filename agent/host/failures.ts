/**
 * @module Recording a user-visible failure (BMO `recordActionFailure`): status error fields,
 * errorCount, and an event named after the error type.
 */
import type { ActionResult } from './action-result.js';
import { setErrorMessage } from './host-status.js';
import type { ReconcileContext } from './reconcile-context.js';
import type { ErrorType } from './types.js';

/** Event reason per error type, as upstream names them. */
const EVENT_REASON: Record<ErrorType, string> = {
  'provisioned registration error': 'ProvisionedRegistrationError',
  'registration error': 'RegistrationError',
  'inspection error': 'InspectionError',
  'preparation error': 'PreparationError',
  'provisioning error': 'ProvisioningError',
  'power management error': 'PowerManagementError',
  'detach error': 'DetachError',
  'servicing error': 'ServicingError',
};

/** Records the failure in status, publishes a Warning event and returns the `failed` action. */
export function recordActionFailure(ctx: ReconcileContext, errorType: ErrorType, message: string): ActionResult {
  setErrorMessage(ctx.host, errorType, message);
  ctx.publish(EVENT_REASON[errorType], message, 'Warning');
  return { kind: 'failed', errorType, errorCount: ctx.host.status.errorCount };
}

/** A transient provisioner failure: nothing recorded, the reconciler backs off. */
export function transientFailure(error: unknown, needsRegistration = false): ActionResult {
  return { kind: 'error', error, needsRegistration };
}
