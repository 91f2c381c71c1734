/**
 * @module Errors the store raises for problems that are not the caller's input: a locked or
 * too-new database, a bad key file, a record that fails authentication. Each carries a stable
 * `code` so agent/main.ts can print a clear message and exit.
 * @pure
 */

/** Stable codes of {@link StoreError}s. */
export const StoreErrorCode = {
  /** Another process (or another open in this process) holds the LevelDB `LOCK`. */
  locked: 'RACKSIDE_ERR_STORE_LOCKED',
  /** `secret.key` has the wrong size, type or permissions. */
  keyFile: 'RACKSIDE_ERR_STORE_KEY_FILE',
  /** The on-disk schema is newer than this build, or a migration list is malformed or failed. */
  schema: 'RACKSIDE_ERR_STORE_SCHEMA',
  /** A stored record failed to decrypt or authenticate (tampering, wrong key, corruption). */
  corrupt: 'RACKSIDE_ERR_STORE_CORRUPT',
  /** The store was used after {@link Store.close}. */
  closed: 'RACKSIDE_ERR_STORE_CLOSED',
} as const;

/** A store failure that is not a conflict or validation problem; `code` is one of {@link StoreErrorCode}. */
export class StoreError extends Error {
  readonly code: (typeof StoreErrorCode)[keyof typeof StoreErrorCode];
  constructor(code: StoreError['code'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}
