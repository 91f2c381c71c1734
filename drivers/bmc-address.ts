/**
 * @module BMC address parsing: metal3's `GetParsedURL` + `NewAccessDetails` scheme lookup
 * (docs/metal3-mapping.md, "Address parsing"), re-stated over Go's URL rules (address-syntax.ts), plus the
 * targets upstream derives for Ironic's driver info (Redfish endpoint and system id, IPMI port and privilege).
 *
 * Accepted like upstream: `scheme://host[:port][/path][?query]`, opaque `scheme:host[:port]`,
 * a bare `host`, `ipv4:port` or `[ipv6]:port` (= IPMI), bracketed IPv6 with or without port.
 * Rackside is stricter in four places, each with its own error code: an address longer than
 * {@link MAX_BMC_ADDRESS_LENGTH}, credentials in the address (they belong in the BMC secret),
 * an empty host (`ipmi:`), and a port outside 1–65535. It is more lenient in one: a bare
 * `name:port` whose "scheme" is no BMC type (`bmc1.rack:623`) means IPMI, where Go's parser
 * would read `bmc1.rack` as the scheme and BMO would report an unknown BMC type.
 * @pure
 */
import {
  decodeGoQuery, FIRST_SEGMENT_COLON, isDnsName, isIpLiteral, isIpv6Literal, parseGoUrl, splitGoHostPort, splitGoUrlHost,
  type GoUrl, type GoUrlResult,
} from './address-syntax.js';
import {
  capabilitiesOfScheme, describeBmcSchemes, resolveBmcScheme,
  type BmcCapabilities, type BmcDriverType, type BmcTransport, type BmcVendor,
} from './bmc-schemes.js';

/** Longest address accepted; longer input is refused before parsing. */
export const MAX_BMC_ADDRESS_LENGTH = 2048;

/** Stable codes of {@link BmcAddressError}. */
export const BmcAddressErrorCode = {
  empty: 'RACKSIDE_ERR_BMC_ADDRESS_EMPTY',
  syntax: 'RACKSIDE_ERR_BMC_ADDRESS_SYNTAX',
  invalidHost: 'RACKSIDE_ERR_BMC_ADDRESS_INVALID_HOST',
  missingHost: 'RACKSIDE_ERR_BMC_ADDRESS_MISSING_HOST',
  invalidPort: 'RACKSIDE_ERR_BMC_ADDRESS_INVALID_PORT',
  unknownType: 'RACKSIDE_ERR_BMC_ADDRESS_UNKNOWN_TYPE',
  credentials: 'RACKSIDE_ERR_BMC_ADDRESS_CREDENTIALS',
  tooLong: 'RACKSIDE_ERR_BMC_ADDRESS_TOO_LONG',
} as const;

/** One of {@link BmcAddressErrorCode}'s values. */
export type BmcAddressErrorCodeValue = (typeof BmcAddressErrorCode)[keyof typeof BmcAddressErrorCode];

/** A BMC address the user must fix; `message` names the problem, never echoes credentials. */
export class BmcAddressError extends Error {
  readonly code: BmcAddressErrorCodeValue;
  /** The offending address with any `user:password@` replaced by `***@`. */
  readonly address: string;
  constructor(code: BmcAddressErrorCodeValue, address: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.address = redactBmcAddress(address);
  }
}

/** A parsed, validated BMC address. Field meanings follow Go's `url.URL` as BMO reads it. */
export interface BmcAddress {
  /** The input, unchanged. */
  readonly raw: string;
  /** Full lower-case scheme, e.g. `idrac-virtualmedia+https` (`ipmi` for bare hosts). */
  readonly scheme: string;
  /** Scheme without `+transport`, e.g. `idrac-virtualmedia`. */
  readonly baseScheme: string;
  /** Protocol driver that serves the address: the registry key. */
  readonly type: BmcDriverType;
  readonly vendor: BmcVendor | undefined;
  /** `+http`/`+https` suffix when given; undefined means the driver default (Redfish: https). */
  readonly transport: BmcTransport | undefined;
  /** Go `url.Host`: brackets and port kept, e.g. `[fe80::1]:8443`. */
  readonly host: string;
  /** Host name or IP literal without brackets. */
  readonly hostname: string;
  readonly port: number | undefined;
  /** Decoded path ('' when none), e.g. the Redfish system `/redfish/v1/Systems/1`. */
  readonly path: string;
  /** Decoded query parameters, e.g. `{ privilegelevel: ['OPERATOR'] }`. */
  readonly query: Readonly<Record<string, readonly string[]>>;
}

/** Replaces `user[:password]@` in an address-like string with `***@` for messages and logs. */
export function redactBmcAddress(address: string): string {
  const slashes = address.indexOf('//');
  const start = slashes >= 0 ? slashes + 2 : 0;
  const tail = address.slice(start);
  const end = tail.search(/[/?#]/);
  const authority = end >= 0 ? tail.slice(0, end) : tail;
  const at = authority.lastIndexOf('@');
  if (at < 0) return address;
  return `${address.slice(0, start)}***${tail.slice(at)}`;
}

function syntaxError(address: string, result: GoUrlResult & { ok: false }): BmcAddressError {
  const code = result.kind === 'port' ? BmcAddressErrorCode.invalidPort : BmcAddressErrorCode.syntax;
  const hint = address.startsWith('[') && !address.includes(']:')
    ? ' (without a scheme, a bracketed IPv6 address needs a port, e.g. [fe80::1]:623; or write ipmi://[fe80::1])'
    : '';
  return new BmcAddressError(code, address,
    `failed to parse BMC address information: ${result.reason} in "${redactBmcAddress(address)}"${hint}`);
}

/**
 * GetParsedURL steps 2a–2c: Go parse, host:port fallback, opaque rewrite, bare-host rewrite.
 * `failure` is the Go parse error that led to the host:port fallback, unless it is the expected
 * "colon in first segment" one; if the fallback host is then invalid, that error is the better message.
 */
function parseLikeGetParsedUrl(address: string): { url: GoUrl; failure?: GoUrlResult & { ok: false } } {
  const bareHost: GoUrl = { scheme: 'ipmi', opaque: '', host: address, hasUserinfo: false, path: '', rawQuery: '' };
  const first = parseGoUrl(address);
  if (!first.ok) {
    if (address.includes(':') && !splitGoHostPort(address).ok) throw syntaxError(address, first);
    return first.reason === FIRST_SEGMENT_COLON ? { url: bareHost } : { url: bareHost, failure: first };
  }
  let url = first.url;
  if (url.opaque !== '') {
    // rackside leniency: `name:623` with no known scheme "name" is a bare host:port.
    if (/^[0-9]+$/.test(url.opaque) && resolveBmcScheme(url.scheme) === undefined && splitGoHostPort(address).ok) {
      return { url: bareHost };
    }
    const again = parseGoUrl(address.replace(':', '://'));
    if (!again.ok) throw syntaxError(address, again);
    url = again.url;
  }
  if (url.scheme === '' && splitGoUrlHost(url.host).hostname === '') {
    const again = parseGoUrl(`ipmi://${address}`);
    if (!again.ok) throw syntaxError(address, again);
    url = again.url;
  }
  return { url };
}

/**
 * Parses and validates a BMC address as metal3 does; throws {@link BmcAddressError} with a
 * stable code on bad input. Unknown schemes list the supported ones.
 */
export function parseBmcAddress(address: string): BmcAddress {
  if (address === '') throw new BmcAddressError(BmcAddressErrorCode.empty, address, 'missing BMC address');
  if (address.length > MAX_BMC_ADDRESS_LENGTH) {
    throw new BmcAddressError(BmcAddressErrorCode.tooLong, address.slice(0, 64),
      `BMC address is ${address.length} characters long; at most ${MAX_BMC_ADDRESS_LENGTH} are accepted`);
  }
  if (isIpv6Literal(address)) {
    // Go would read "fe80" as the scheme and report an unknown BMC type; say what is wrong.
    throw new BmcAddressError(BmcAddressErrorCode.syntax, address,
      `BMC address "${address}" is an IPv6 address without brackets; write [${address}]:623 or ipmi://[${address}]`);
  }
  const { url, failure } = parseLikeGetParsedUrl(address);
  const shown = redactBmcAddress(address);
  if (url.hasUserinfo || (url.scheme === 'ipmi' && url.host === address && address.includes('@'))) {
    throw new BmcAddressError(BmcAddressErrorCode.credentials, address,
      `BMC address "${shown}" contains credentials; put the username and password in the BMC secret instead`);
  }
  const { hostname, port: portText } = splitGoUrlHost(url.host);
  if (hostname !== '' && !isIpLiteral(hostname) && !isDnsName(hostname)) {
    if (failure !== undefined) throw syntaxError(address, failure);
    throw new BmcAddressError(BmcAddressErrorCode.invalidHost, address,
      `failed to parse BMC address information: BMC address hostname/IP : [${redactBmcAddress(hostname)}] is invalid`);
  }
  const resolved = resolveBmcScheme(url.scheme);
  if (resolved === undefined) {
    const what = url.scheme === '' ? 'has no BMC type (scheme)' : `has unknown BMC type '${url.scheme}'`;
    throw new BmcAddressError(BmcAddressErrorCode.unknownType, address,
      `BMC address "${shown}" ${what}; supported types: ${describeBmcSchemes()}`);
  }
  if (hostname === '') {
    throw new BmcAddressError(BmcAddressErrorCode.missingHost, address, `BMC address "${shown}" has no host name or IP address`);
  }
  const port = portText === '' ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65535)) {
    throw new BmcAddressError(BmcAddressErrorCode.invalidPort, address,
      `BMC address "${shown}" has port ${portText}; a port must be between 1 and 65535`);
  }
  return {
    raw: address,
    scheme: url.scheme,
    baseScheme: resolved.baseScheme,
    type: resolved.row.type,
    vendor: resolved.row.vendor,
    transport: resolved.transport,
    host: url.host,
    hostname,
    port,
    path: url.path,
    query: decodeGoQuery(url.rawQuery),
  };
}

/** Capability answers for an address (parsed, or a string parsed first; may throw BmcAddressError). */
export function bmcCapabilities(address: BmcAddress | string): BmcCapabilities {
  const parsed = typeof address === 'string' ? parseBmcAddress(address) : address;
  const resolved = resolveBmcScheme(parsed.scheme);
  if (resolved === undefined) {
    throw new BmcAddressError(BmcAddressErrorCode.unknownType, parsed.raw,
      `unknown BMC type '${parsed.scheme}'; supported types: ${describeBmcSchemes()}`);
  }
  return capabilitiesOfScheme(resolved.baseScheme, resolved.row);
}

/** Where a Redfish driver connects (BMO DriverInfo `redfish_address` / `redfish_system_id`). */
export interface RedfishTarget {
  /** `<transport>://<host[:port]>`, https unless the scheme says `+http`; IPv6 keeps brackets. */
  readonly endpoint: string;
  /**
   * System resource path from the address, or undefined to discover the single member of
   * `/redfish/v1/Systems`. Empty, `/` and `/redfish/v1[/]` give undefined, except for
   * `redfish-uefihttp`, which BMO always passes as is (possibly '').
   */
  readonly systemId: string | undefined;
}

/** Derives the Redfish endpoint and system id from an address (BMO `getRedfishAddress`). */
export function resolveRedfishTarget(address: BmcAddress): RedfishTarget {
  const endpoint = `${address.transport ?? 'https'}://${address.host}`;
  const trimmed = address.path.replace(/^\/+|\/+$/g, '');
  const keep = address.baseScheme === 'redfish-uefihttp' || (trimmed !== '' && trimmed !== 'redfish/v1');
  return { endpoint, systemId: keep ? address.path : undefined };
}

/** IPMI default RMCP+ port (BMO `ipmiDefaultPort`, IPMI v2.0 §13.1.1). */
export const IPMI_DEFAULT_PORT = 623;

/** Where an IPMI driver connects (BMO DriverInfo `ipmi_address`/`ipmi_port`/`ipmi_priv_level`). */
export interface IpmiTarget {
  readonly hostname: string;
  readonly port: number;
  /** `?privilegelevel=` (first value, as given) or `ADMINISTRATOR`. */
  readonly privilegeLevel: string;
}

/** Derives the IPMI host, port (default 623) and privilege level from an address. */
export function resolveIpmiTarget(address: BmcAddress): IpmiTarget {
  return {
    hostname: address.hostname,
    port: address.port ?? IPMI_DEFAULT_PORT,
    privilegeLevel: address.query.privilegelevel?.[0] ?? 'ADMINISTRATOR',
  };
}
