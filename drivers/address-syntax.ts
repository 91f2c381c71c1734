/**
 * @module The URL and host syntax rules metal3 inherits from Go, re-stated for TypeScript:
 * the subset of Go's `net/url.Parse` that `GetParsedURL` relies on (scheme detection, opaque
 * form, authority, bracketed IPv6, optional numeric port), `net.SplitHostPort`, `net.ParseIP`
 * and BMO's DNS-label rule. WHATWG `new URL()` differs from Go on exactly the inputs BMC
 * addresses use (`ipmi:1.2.3.4`, `[v6]:623`, `redfish+http://…`), so it is not used here.
 * Nothing in this file knows about BMC schemes; see bmc-address.ts for that.
 * @pure
 */

/** The parts of a Go `url.URL` that BMC address parsing reads. */
export interface GoUrl {
  /** Lower-cased scheme, '' when none (Go lower-cases `Scheme`). */
  readonly scheme: string;
  /** Text after `scheme:` when it does not start with `/` (e.g. `1.2.3.4` in `ipmi:1.2.3.4`). */
  readonly opaque: string;
  /** Go `url.Host`: the authority without userinfo, brackets and port kept (`[fe80::1]:623`). */
  readonly host: string;
  /** True when the authority carried `user[:password]@`. */
  readonly hasUserinfo: boolean;
  /** Percent-decoded path ('' when absent). */
  readonly path: string;
  /** Query string without the leading `?`. */
  readonly rawQuery: string;
}

/** Go's reason for a scheme-less `host:port`; BMO treats this failure as "maybe host:port". */
export const FIRST_SEGMENT_COLON = 'first path segment in URL cannot contain colon';

/** Why a Go-style parse failed: `port` for a non-numeric port, `syntax` for everything else. */
export type GoUrlFailureKind = 'syntax' | 'port';

/** Result of {@link parseGoUrl}: the URL, or the failure kind and Go's reason text. */
export type GoUrlResult =
  | { readonly ok: true; readonly url: GoUrl }
  | { readonly ok: false; readonly kind: GoUrlFailureKind; readonly reason: string };

function fail(reason: string, kind: GoUrlFailureKind = 'syntax'): GoUrlResult {
  return { ok: false, kind, reason };
}

/** True when `s` holds an ASCII control byte (Go rejects these before anything else). */
function hasControlByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Go `getScheme`: a scheme is `[A-Za-z][A-Za-z0-9+.-]*` followed by `:`. */
function splitScheme(raw: string): { scheme: string; rest: string } | undefined {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charAt(i);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c === '+' || c === '-' || c === '.') {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) return undefined; // Go: "missing protocol scheme"
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

/** Go `validOptionalPort`: '' or ':' followed by decimal digits only (no range check). */
function isValidOptionalPort(colonPort: string): boolean {
  if (colonPort === '') return true;
  return /^:[0-9]*$/.test(colonPort);
}

/** Decodes `%XX` escapes; undefined when an escape is malformed (Go "invalid URL escape"). */
function decodePercent(s: string, plusIsSpace: boolean): string | undefined {
  if (/%(?![0-9A-Fa-f]{2})/.test(s)) return undefined;
  const text = plusIsSpace ? s.replace(/\+/g, ' ') : s;
  try {
    return decodeURIComponent(text);
  } catch {
    // Valid escapes that are not UTF-8: Go keeps raw bytes; we keep the escaped text.
    return text;
  }
}

/** Go `parseHost` checks: brackets balanced, port numeric. Host content is validated later. */
function checkHost(host: string): GoUrlResult | undefined {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) return fail(`missing ']' in host`);
    const colonPort = host.slice(close + 1);
    if (!isValidOptionalPort(colonPort)) return fail(`invalid port "${colonPort}" after host`, 'port');
    return undefined;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0) {
    const colonPort = host.slice(colon);
    if (!isValidOptionalPort(colonPort)) return fail(`invalid port "${colonPort}" after host`, 'port');
  }
  return undefined;
}

/**
 * Parses `raw` the way Go's `url.Parse` does for the shapes BMC addresses take; never throws.
 * Mirrors: control bytes rejected; fragment dropped; `?` splits the query; `scheme:x` without
 * `/` is opaque; a scheme-less first segment must not contain `:`; `//authority` is split at
 * the first `/`, userinfo at the last `@`; ports must be numeric.
 */
export function parseGoUrl(raw: string): GoUrlResult {
  if (hasControlByte(raw)) return fail('invalid control character in URL');
  const hash = raw.indexOf('#');
  const beforeFragment = hash >= 0 ? raw.slice(0, hash) : raw;
  if (hash >= 0 && decodePercent(raw.slice(hash + 1), false) === undefined) {
    return fail('invalid URL escape in fragment');
  }
  const split = splitScheme(beforeFragment);
  if (split === undefined) return fail('missing protocol scheme');
  const scheme = split.scheme.toLowerCase();
  let rest = split.rest;
  let rawQuery = '';
  const question = rest.indexOf('?');
  if (question >= 0) {
    rawQuery = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  if (!rest.startsWith('/')) {
    if (scheme !== '') {
      return { ok: true, url: { scheme, opaque: rest, host: '', hasUserinfo: false, path: '', rawQuery } };
    }
    const firstSegment = rest.split('/', 1)[0] ?? '';
    if (firstSegment.includes(':')) return fail(FIRST_SEGMENT_COLON);
  }
  let host = '';
  let hasUserinfo = false;
  if ((scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    const slash = authority.indexOf('/');
    rest = slash >= 0 ? authority.slice(slash) : '';
    authority = slash >= 0 ? authority.slice(0, slash) : authority;
    const at = authority.lastIndexOf('@');
    hasUserinfo = at >= 0;
    host = at >= 0 ? authority.slice(at + 1) : authority;
    const hostProblem = checkHost(host);
    if (hostProblem !== undefined) return hostProblem;
  }
  const path = decodePercent(rest, false);
  if (path === undefined) return fail('invalid URL escape in path');
  return { ok: true, url: { scheme, opaque: '', host, hasUserinfo, path, rawQuery } };
}

/** Result of {@link splitGoHostPort}. */
export type HostPortResult =
  | { readonly ok: true; readonly host: string; readonly port: string }
  | { readonly ok: false; readonly reason: string };

/** Go `net.SplitHostPort`: `host:port` or `[v6]:port`; the port text is not validated. */
export function splitGoHostPort(hostPort: string): HostPortResult {
  const colon = hostPort.lastIndexOf(':');
  if (colon < 0) return { ok: false, reason: 'missing port in address' };
  let host: string;
  let hostStart = 0;
  let afterHost = 0;
  if (hostPort.startsWith('[')) {
    const end = hostPort.indexOf(']');
    if (end < 0) return { ok: false, reason: `missing ']' in address` };
    if (end + 1 === hostPort.length) return { ok: false, reason: 'missing port in address' };
    if (end + 1 !== colon) {
      const reason = hostPort.charAt(end + 1) === ':' ? 'too many colons in address' : 'missing port in address';
      return { ok: false, reason };
    }
    host = hostPort.slice(1, end);
    hostStart = 1;
    afterHost = end + 1;
  } else {
    host = hostPort.slice(0, colon);
    if (host.includes(':')) return { ok: false, reason: 'too many colons in address' };
  }
  if (hostPort.slice(hostStart).includes('[')) return { ok: false, reason: `unexpected '[' in address` };
  if (hostPort.slice(afterHost).includes(']')) return { ok: false, reason: `unexpected ']' in address` };
  return { ok: true, host, port: hostPort.slice(colon + 1) };
}

/** Go `url.URL.Hostname()`/`Port()` on a `Host` value: brackets stripped, numeric port split off. */
export function splitGoUrlHost(host: string): { readonly hostname: string; readonly port: string } {
  let hostname = host;
  let port = '';
  const colon = hostname.lastIndexOf(':');
  if (colon >= 0 && isValidOptionalPort(hostname.slice(colon))) {
    port = hostname.slice(colon + 1);
    hostname = hostname.slice(0, colon);
  }
  if (hostname.startsWith('[') && hostname.endsWith(']')) hostname = hostname.slice(1, -1);
  return { hostname, port };
}

/** Go `url.ParseQuery`, lenient like BMO's use of it: pairs that fail to decode are skipped. */
export function decodeGoQuery(rawQuery: string): Record<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue; // Go ≥1.17 rejects ';' separators.
    const eq = pair.indexOf('=');
    const key = decodePercent(eq >= 0 ? pair.slice(0, eq) : pair, true);
    const value = decodePercent(eq >= 0 ? pair.slice(eq + 1) : '', true);
    if (key === undefined || value === undefined) continue;
    const values = out.get(key);
    if (values === undefined) out.set(key, [value]);
    else values.push(value);
  }
  return Object.fromEntries(out); // own data properties, so `__proto__` is just a key
}

/** True for a dotted-quad IPv4 literal as Go ≥1.17 `net.ParseIP` accepts it (no leading zeros). */
export function isIpv4Literal(s: string): boolean {
  const fields = s.split('.');
  if (fields.length !== 4) return false;
  return fields.every((f) => /^(0|[1-9][0-9]{0,2})$/.test(f) && Number(f) <= 255);
}

/** Counts 16-bit groups in one side of an IPv6 literal; undefined when malformed. */
function countIpv6Groups(side: string, allowTrailingIpv4: boolean): number | undefined {
  if (side === '') return 0;
  const fields = side.split(':');
  let groups = 0;
  for (let k = 0; k < fields.length; k++) {
    const field = fields[k] ?? '';
    if (allowTrailingIpv4 && k === fields.length - 1 && field.includes('.')) {
      if (!isIpv4Literal(field)) return undefined;
      groups += 2;
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(field)) {
      groups += 1;
    } else {
      return undefined;
    }
  }
  return groups;
}

/**
 * True for an IPv6 literal (RFC 4291 §2.2 text forms, incl. `::` and a trailing dotted quad) as
 * `net.ParseIP` accepts it. Zone ids (`%eth0`) are rejected: ParseIP does not take them.
 */
export function isIpv6Literal(s: string): boolean {
  const halves = s.split('::');
  if (halves.length > 2) return false;
  if (halves.length === 1) return countIpv6Groups(s, true) === 8;
  const left = countIpv6Groups(halves[0] ?? '', false);
  const right = countIpv6Groups(halves[1] ?? '', true);
  if (left === undefined || right === undefined) return false;
  return left + right <= 7; // `::` stands for at least one zero group.
}

/** True when `s` is an IPv4 or IPv6 literal (Go `net.ParseIP(s) != nil`). */
export function isIpLiteral(s: string): boolean {
  return isIpv4Literal(s) || isIpv6Literal(s);
}

const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * True when `s` is dot-separated DNS labels as BMO's `checkDNSValid` requires: each label 1–63
 * alphanumerics or inner hyphens, not starting or ending with `-`; no trailing dot, no `_`.
 */
export function isDnsName(s: string): boolean {
  return s !== '' && s.split('.').every((label) => DNS_LABEL.test(label));
}
