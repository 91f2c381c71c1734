/**
 * @module Errors the management API maps to HTTP statuses: each names the field path the
 * user must fix. Thrown by validation, the store and the host service; caught by agent/web.
 * @pure
 */

/** Stable codes of API-facing errors. */
export const ApiErrorCode = {
  invalid: 'RACKSIDE_ERR_API_INVALID',
  conflict: 'RACKSIDE_ERR_API_CONFLICT',
  notFound: 'RACKSIDE_ERR_API_NOT_FOUND',
  unauthorized: 'RACKSIDE_ERR_API_UNAUTHORIZED',
} as const;

/** An error the API reports as JSON `{ error: { code, message, field } }` with `status`. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  /** Dotted path of the offending field (`spec.bmc.address`, `items[1].metadata.name`), or ''. */
  readonly field: string;
  constructor(code: string, status: number, field: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.field = field;
  }
}

/** Bad input (400): malformed, unknown field, wrong type, failed rule. */
export class ValidationError extends ApiError {
  constructor(field: string, message: string) {
    super(ApiErrorCode.invalid, 400, field, field === '' ? message : `${field}: ${message}`);
  }
}

/** A write that conflicts with stored state (409): stale resourceVersion, immutable field. */
export class ConflictError extends ApiError {
  constructor(field: string, message: string) {
    super(ApiErrorCode.conflict, 409, field, field === '' ? message : `${field}: ${message}`);
  }
}

/** The named object does not exist (404). */
export class NotFoundError extends ApiError {
  constructor(kind: string, name: string) {
    super(ApiErrorCode.notFound, 404, 'metadata.name', `${kind} "${name}" not found`);
  }
}

/** True when `err` is an {@link ApiError} (checked by shape, not identity). */
export function isApiError(err: unknown): err is ApiError {
  return (
    err instanceof Error &&
    typeof (err as Partial<ApiError>).status === 'number' &&
    typeof (err as Partial<ApiError>).code === 'string'
  );
}
