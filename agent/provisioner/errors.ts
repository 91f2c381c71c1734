/**
 * @module The provisioner's typed errors with stable `code`s, mirroring metal3's
 * `ErrNeedsRegistration`, `ErrNeedsPreprovisioningImage` and `ErrFirmwareUpdateUnsupported`.
 * Callers test `code` (see {@link isProvisionerError}), never `instanceof` across modules.
 * @pure
 */

/** Stable error codes of the provisioner API. */
export const ProvisionerErrorCode = {
  needsRegistration: 'RACKSIDE_ERR_PROVISIONER_NEEDS_REGISTRATION',
  needsPreprovisioningImage: 'RACKSIDE_ERR_PROVISIONER_NEEDS_PREPROVISIONING_IMAGE',
  firmwareUpdateUnsupported: 'RACKSIDE_ERR_PROVISIONER_FIRMWARE_UPDATE_UNSUPPORTED',
  transient: 'RACKSIDE_ERR_PROVISIONER_TRANSIENT',
} as const;

/** One of {@link ProvisionerErrorCode}'s values. */
export type ProvisionerErrorCodeValue = (typeof ProvisionerErrorCode)[keyof typeof ProvisionerErrorCode];

/** Base class: an error with a stable code. */
export class ProvisionerError extends Error {
  readonly code: ProvisionerErrorCodeValue;
  constructor(code: ProvisionerErrorCodeValue, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The host is unknown to the backend (no id, or its record is gone): register again. */
export class NeedsRegistrationError extends ProvisionerError {
  constructor(message = 'host not registered', options?: ErrorOptions) {
    super(ProvisionerErrorCode.needsRegistration, message, options);
  }
}

/** The provisioner needs a preprovisioning ramdisk/ISO that has not been supplied yet. */
export class NeedsPreprovisioningImageError extends ProvisionerError {
  constructor(message = 'no suitable preprovisioning image available', options?: ErrorOptions) {
    super(ProvisionerErrorCode.needsPreprovisioningImage, message, options);
  }
}

/** The host's BMC or driver cannot update firmware components. */
export class FirmwareUpdateUnsupportedError extends ProvisionerError {
  constructor(message = 'firmware update is not supported by this driver', options?: ErrorOptions) {
    super(ProvisionerErrorCode.firmwareUpdateUnsupported, message, options);
  }
}

/** A transient failure (network, BMC busy): retried with backoff, not recorded in status. */
export class TransientProvisionerError extends ProvisionerError {
  constructor(message: string, options?: ErrorOptions) {
    super(ProvisionerErrorCode.transient, message, options);
  }
}

/** True when `err` carries the given provisioner error code. */
export function isProvisionerError(err: unknown, code: ProvisionerErrorCodeValue): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
