/**
 * @module How HTTP outcomes become `BmcError`s for the Redfish client: status codes
 * (DSP0266 §7.9 "HTTP status codes": 401/403 auth, 409/429/503 busy, 412 a lost ETag race,
 * everything else protocol), transport failures (refused, reset, DNS, timeout) and TLS
 * verification failures, which name the host and say how to turn verification off. Messages
 * carry the BMC address, the method and the path — never credentials, tokens or headers.
 * @pure
 */
import { BmcError, BmcErrorCode, BmcHostUnresolvedError, type BmcErrorCodeValue } from '../errors.js';
import { unresolvedHostError } from '../resolver-errors.js';
import { describeRedfishErrorDetail } from './resources.js';

/** What a request was, for messages. */
export interface RequestDescription {
  /** BMC address as configured. */
  readonly address: string;
  readonly method: string;
  readonly path: string;
  /** Credentials the BMC may echo in its error (some put the login body in ExtendedInfo): never shown. */
  readonly secrets?: readonly string[];
}

/** `text` with every one of `secrets` replaced by `[redacted]`. */
export function withoutSecrets(text: string, secrets: readonly string[] | undefined): string {
  let out = text;
  for (const secret of secrets ?? []) if (secret !== '') out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * What a certificate verification code means, for an operator: a self-signed certificate, one
 * from a CA this agent does not trust (typically a BMC whose certificate was replaced), an
 * expired one, or one that does not name the address.
 */
function tlsReason(tlsCode: string, host: string): string {
  switch (tlsCode) {
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
      return 'it is self-signed';
    case 'CERT_HAS_EXPIRED':
      return 'it has expired';
    case 'CERT_NOT_YET_VALID':
      return "it is not valid yet: check the BMC's clock and this machine's";
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `it does not name ${host}`;
    default:
      return "it is not signed by a CA this agent trusts (was the BMC's certificate replaced?)";
  }
}

/**
 * TLS verification failed: the BMC's certificate was not trusted. Code `RACKSIDE_ERR_BMC_UNREACHABLE`
 * (transient: retried with backoff, so a BMC that gets a trusted certificate back recovers by
 * itself); the message names the host, the OpenSSL code and what it means, and both fixes.
 */
export class RedfishTlsError extends BmcError {
  /** OpenSSL/Node verification code, e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`. */
  readonly tlsCode: string;
  /** Host whose certificate was refused. */
  readonly host: string;
  constructor(address: string, host: string, tlsCode: string, cause: unknown) {
    super(BmcErrorCode.unreachable,
      `BMC ${address}: the TLS certificate of ${host} was not accepted (${tlsCode}): ${tlsReason(tlsCode, host)}; trust its CA `
      + "(NODE_EXTRA_CA_CERTS in the agent's environment) or set disableCertificateVerification: true for this host (rackside bmc: --insecure)",
      { address, cause });
    this.tlsCode = tlsCode;
    this.host = host;
  }
}

/** Node/OpenSSL codes of certificate verification failures. */
export const TLS_VERIFY_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'INVALID_CA',
]);

const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ETIMEDOUT',
  'EADDRNOTAVAIL', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

function errorCodeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('RACKSIDE_')) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** getaddrinfo's codes: the resolver, not the BMC, failed (host-lookup.ts words them). */
const RESOLVER_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'ENODATA']);

/** A BmcHostUnresolvedError anywhere in the cause chain (the connect lookup threw it). */
function findUnresolved(err: unknown): BmcHostUnresolvedError | undefined {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    if (e instanceof BmcHostUnresolvedError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The `hostname` getaddrinfo errors carry, searched down the cause chain. */
function hostnameOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    const name = (e as { hostname?: unknown }).hostname;
    if (typeof name === 'string' && name !== '') return name;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `host` of `host[:port]` (brackets of an IPv6 literal removed). */
function hostOnly(hostPort: string): string {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(hostPort) ?? /^([^:]+)(?::\d+)?$/.exec(hostPort);
  return m?.[1] ?? hostPort;
}

function errorNameOf(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

/** True when the failure is worth one more try of an idempotent request (reset, refused mid-way). */
export function isRetryableTransportError(err: unknown): boolean {
  const code = errorCodeOf(err);
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

/**
 * Maps a thrown transport error (undici, node:net, AbortSignal.timeout) to a `BmcError`.
 * `host` is the `host[:port]` connected to; `timeoutMs` the deadline that applied.
 */
export function transportError(err: unknown, request: RequestDescription, host: string, timeoutMs: number): BmcError {
  if (err instanceof BmcError) return err;
  const { address, method, path } = request;
  const name = errorNameOf(err);
  const code = errorCodeOf(err);
  if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new BmcError(BmcErrorCode.timeout, `BMC ${address}: ${method} ${path} got no complete answer within ${timeoutMs} ms`, { address, cause: err });
  }
  const unresolved = findUnresolved(err);
  if (unresolved !== undefined) return unresolved;
  if (code !== undefined && TLS_VERIFY_CODES.has(code)) return new RedfishTlsError(address, host, code, err);
  if (code !== undefined && RESOLVER_CODES.has(code)) return unresolvedHostError(address, hostnameOf(err) ?? hostOnly(host), err);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    return new BmcError(BmcErrorCode.unreachable, `BMC ${address}: ${method} ${path} failed: cannot reach ${host} (${code})`, { address, cause: err });
  }
  const what = code ?? name ?? 'error';
  return new BmcError(BmcErrorCode.unreachable, `BMC ${address}: ${method} ${path} failed talking to ${host} (${what})`, { address, cause: err });
}

function codeOfStatus(status: number): BmcErrorCodeValue {
  if (status === 401 || status === 403) return BmcErrorCode.auth;
  if (status === 409 || status === 412 || status === 429 || status === 503) return BmcErrorCode.busy;
  if (status === 408 || status === 504) return BmcErrorCode.timeout;
  return BmcErrorCode.protocol;
}

/** Title of an HTML error page (`<title>…</title>`), shortened, for messages. */
export function htmlTitle(text: string): string | undefined {
  const m = /<title[^>]*>([^<]{1,200})<\/title>/i.exec(text);
  const title = m?.[1]?.replace(/\s+/g, ' ').trim();
  return title === undefined || title === '' ? undefined : title;
}

/** A BMC answer with an unsuccessful HTTP status; `httpStatus` tells which. */
export class RedfishStatusError extends BmcError {
  readonly httpStatus: number;
  constructor(code: BmcErrorCodeValue, message: string, address: string, httpStatus: number) {
    super(code, message, { address });
    this.httpStatus = httpStatus;
  }
}

/** The HTTP status behind an error, when it came from a BMC answer. */
export function httpStatusOf(err: unknown): number | undefined {
  return err instanceof RedfishStatusError ? err.httpStatus : undefined;
}

/**
 * Maps a non-success HTTP status to a `BmcError`; `body` is the parsed JSON error (if any),
 * `html` the raw text when the BMC sent an HTML page instead. What the BMC said is quoted in its
 * own words — each ExtendedInfo Message with its MessageId and Resolution
 * (`describeRedfishErrorDetail`) — without `request.secrets`.
 */
export function statusError(status: number, request: RequestDescription, body: unknown, html?: string): RedfishStatusError {
  const { address, method, path } = request;
  const said = describeRedfishErrorDetail(body) ?? (html === undefined ? undefined : `HTML page${htmlTitle(html) === undefined ? '' : ` "${htmlTitle(html) ?? ''}"`}`);
  const detail = said === undefined ? undefined : withoutSecrets(said, request.secrets);
  const code = codeOfStatus(status);
  const lead = code === BmcErrorCode.auth ? 'rejected the credentials' : code === BmcErrorCode.busy ? 'is busy' : 'failed';
  return new RedfishStatusError(code, `BMC ${address}: ${method} ${path} ${lead} (HTTP ${status}${detail === undefined ? '' : `: ${detail}`})`, address, status);
}

/** A protocol error about the exchange itself (HTML instead of JSON, truncated body, refused redirect …). */
export function exchangeError(request: RequestDescription, message: string): BmcError {
  return new BmcError(BmcErrorCode.protocol, `BMC ${request.address}: ${request.method} ${request.path}: ${message}`, { address: request.address });
}
