/**
 * @module How a failed host name lookup becomes a {@link BmcHostUnresolvedError}, for the drivers'
 * one resolver (host-lookup.ts) and the Redfish error mapping (redfish/http-errors.ts).
 * @pure
 */
import { BmcHostUnresolvedError } from './errors.js';

/** Resolver codes meaning "the name does not exist": retrying will not help. */
const NO_SUCH_NAME: ReadonlySet<string> = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_FAIL', 'ENONAME', 'EBADNAME', 'NXDOMAIN']);

/**
 * The {@link BmcHostUnresolvedError} for a failed lookup of `hostname` (any thrown value, e.g. a
 * getaddrinfo error with `code`): permanent for "no such name", transient otherwise. Used by the
 * drivers' one resolver (host-lookup.ts) and by the Redfish error mapping.
 */
export function unresolvedHostError(address: string, hostname: string, err: unknown): BmcHostUnresolvedError {
  if (err instanceof BmcHostUnresolvedError) return err;
  const raw = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const code = typeof raw === 'string' && raw !== '' ? raw : 'ENOTFOUND';
  return new BmcHostUnresolvedError(address, hostname, code, NO_SUCH_NAME.has(code), err);
}
