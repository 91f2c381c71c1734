/**
 * @module BMC errors with stable codes (`RACKSIDE_ERR_BMC_*`). Drivers throw them for transient
 * and BMC-side failures; callers branch on `code` through {@link isBmcError}, never on classes
 * across module boundaries. Messages name the BMC address (never credentials).
 * @pure
 */
import type { CapabilityName } from './capabilities.js';

/** Stable codes of {@link BmcError}. */
export const BmcErrorCode = {
  /** No answer: connection refused, no route, DNS failure, TLS handshake failure. */
  unreachable: 'RACKSIDE_ERR_BMC_UNREACHABLE',
  /** Credentials rejected (HTTP 401/403, RAKP failure, unknown user). */
  auth: 'RACKSIDE_ERR_BMC_AUTH',
  /** The driver or the BMC does not offer the requested capability or action. */
  unsupported: 'RACKSIDE_ERR_BMC_UNSUPPORTED',
  /** The BMC did not answer or finish in time. */
  timeout: 'RACKSIDE_ERR_BMC_TIMEOUT',
  /** The BMC answered something unexpected: bad status, bad JSON, missing fields, bad packet. */
  protocol: 'RACKSIDE_ERR_BMC_PROTOCOL',
  /** The BMC is busy (HTTP 409/429/503, IPMI node busy 0xC0); retry later. */
  busy: 'RACKSIDE_ERR_BMC_BUSY',
  /** No driver is registered for the address's type. */
  noDriver: 'RACKSIDE_ERR_BMC_NO_DRIVER',
} as const;

/** One of {@link BmcErrorCode}'s values. */
export type BmcErrorCodeValue = (typeof BmcErrorCode)[keyof typeof BmcErrorCode];

/** Options of {@link BmcError}. */
export interface BmcErrorOptions {
  /** The BMC address (as parsed, credential-free) the error concerns. */
  readonly address?: string;
  readonly cause?: unknown;
  /**
   * Overrides the code's default permanence (see {@link BmcError.permanent}): e.g. a host name
   * the resolver says does not exist is `unreachable` yet permanent.
   */
  readonly permanent?: boolean;
}

/** Codes whose errors may clear by themselves: retrying later can help. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([BmcErrorCode.unreachable, BmcErrorCode.timeout, BmcErrorCode.busy]);

/** A BMC failure with a stable code and the address it concerns. */
export class BmcError extends Error {
  readonly code: BmcErrorCodeValue;
  readonly address: string | undefined;
  /**
   * True when retrying cannot help until someone changes the address, the credentials, the
   * options or the BMC (refused credentials, a name that does not resolve, no common cipher
   * suite); false when a later try may succeed. Default: false for unreachable, timeout and busy,
   * true for every other code.
   */
  readonly permanent: boolean;
  constructor(code: BmcErrorCodeValue, message: string, options: BmcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.address = options.address;
    this.permanent = options.permanent ?? !TRANSIENT_CODES.has(code);
  }
}

/**
 * A BMC host name the resolver could not turn into an address. Code `RACKSIDE_ERR_BMC_UNREACHABLE`;
 * permanent when the resolver answered that the name does not exist (ENOTFOUND, ENODATA …),
 * transient when it could not answer (EAI_AGAIN, a resolver timeout). The message names the host
 * and the resolver's answer.
 */
export class BmcHostUnresolvedError extends BmcError {
  /** The name that did not resolve. */
  readonly hostname: string;
  /** The resolver's code, e.g. `ENOTFOUND` or `EAI_AGAIN`. */
  readonly resolverCode: string;
  constructor(address: string, hostname: string, resolverCode: string, permanent: boolean, cause?: unknown) {
    const meaning = permanent ? 'the resolver says no such name exists' : 'the resolver could not answer now';
    super(BmcErrorCode.unreachable, `BMC ${address}: cannot resolve the host name ${hostname} (${resolverCode}: ${meaning})`, { address, cause, permanent });
    this.hostname = hostname;
    this.resolverCode = resolverCode;
  }
}

/** A capability (or one action of it) this driver or BMC does not offer. */
export class UnsupportedCapabilityError extends BmcError {
  readonly capability: CapabilityName;
  /** Method or action that was called, e.g. `insertMedia` or `setPower(soft-reset)`. */
  readonly operation: string;
  constructor(capability: CapabilityName, operation: string, options: BmcErrorOptions & { readonly driver?: string } = {}) {
    const who = options.address === undefined ? 'this BMC' : `BMC ${options.address}`;
    const via = options.driver === undefined ? '' : ` (${options.driver} driver)`;
    super(BmcErrorCode.unsupported, `${who}${via} does not support ${capability}.${operation}`, options);
    this.capability = capability;
    this.operation = operation;
  }
}

/** Structural view of a BMC error, for callers that must not depend on the class. */
export interface BmcErrorLike {
  readonly code: BmcErrorCodeValue;
  readonly message: string;
  /** See {@link BmcError.permanent}; absent means the code's default. */
  readonly permanent?: boolean;
}

const BMC_CODES: ReadonlySet<string> = new Set(Object.values(BmcErrorCode));

/** True when `err` carries a BMC error code (`code` given: exactly that one). */
export function isBmcError(err: unknown, code?: BmcErrorCodeValue): err is BmcErrorLike {
  if (typeof err !== 'object' || err === null) return false;
  const actual = (err as { code?: unknown }).code;
  if (typeof actual !== 'string') return false;
  return code === undefined ? BMC_CODES.has(actual) : actual === code;
}

/**
 * True when retrying later may succeed (unreachable, timeout, busy, unless the error says it is
 * permanent): the provisioner throws these as transient; auth, unsupported, protocol, no-driver
 * and any error marked permanent (a BMC name that does not resolve) need the user to act.
 */
export function isTransientBmcError(err: unknown): boolean {
  if (!isBmcError(err) || !TRANSIENT_CODES.has(err.code)) return false;
  return err.permanent !== true;
}

/** True for a BMC error that retrying will not clear (see {@link BmcError.permanent}): show it, e.g. as a registration error. */
export function isPermanentBmcError(err: unknown): boolean {
  return isBmcError(err) && !isTransientBmcError(err);
}

