/**
 * @module Building blocks for decoding the YAML config (agent/config.ts): a reader that
 * collects one {@link ConfigProblem} per wrong key instead of stopping at the first, and the
 * address syntaxes the config uses (IPv4, IPv6, `host:port`, CIDR). No I/O: `node:net`'s
 * `isIP` is deliberately not used so this file stays pure.
 * @pure
 */

/** One wrong key: where it is, what was expected there, and what was found. */
export interface ConfigProblem {
  /** Dotted path with list indexes, e.g. `dhcp.range[1].subnet`; `''` is the whole file. */
  path: string;
  expected: string;
  got: string;
  /** 1-based line in the source file, when known (set by parseConfigYaml). */
  line?: number;
}

/** A socket address to listen on. `host` is an IP literal (`0.0.0.0`, `::`, `127.0.0.1`). */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Renders a found value for a problem report: short, typed, never a whole object. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** Config keys whose values are secrets (`management.token`, `controller.token`). */
const SECRET_KEYS = new Set(['token', 'password']);

/**
 * Renders a found secret for a problem report without showing it: problems go to stderr,
 * journald and `rackside doctor`, so a mistyped token would otherwise be printed there.
 */
export function describeSecretValue(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters${/\s/.test(value) ? ' with whitespace' : ''} (not shown: a secret)`;
  if (typeof value === 'number' || typeof value === 'boolean') return `a ${typeof value} (not shown: a secret)`;
  return describeValue(value);
}

/** `text` with any `user:password@` after the scheme replaced by `***@` (URLs that do not parse too). */
export function redactUrlCredentials(text: string): string {
  return text.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#@]*@/, '$1***@');
}

/** Parses dotted-quad IPv4 (no leading zeros, RFC 791 notation) to a 32-bit number, or undefined. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Formats a 32-bit number as dotted-quad IPv4. */
export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** True for an RFC 4291 §2.2 IPv6 text address (with `::` compression and an optional IPv4 tail). */
export function isIpv6(text: string): boolean {
  if (text.length === 0 || text.length > 45) return false;
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groups = (half: string): string[] => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  const all = [...head, ...tail];
  let count = all.length;
  const last = all[all.length - 1];
  if (last !== undefined && last.includes('.')) {
    if (parseIpv4(last) === undefined) return false;
    all.pop();
    count += 1; // an IPv4 tail fills two groups
  }
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? count < 8 : count === 8;
}

/** Parses `A.B.C.D/N` into the network number and prefix length; reports host bits set. */
export function parseCidr(
  text: string,
): { network: number; prefixLength: number; hostBitsSet: boolean } | undefined {
  const match = /^([0-9.]+)\/([0-9]{1,2})$/.exec(text);
  if (match === null) return undefined;
  const address = parseIpv4(match[1] ?? '');
  const prefixLength = Number(match[2]);
  if (address === undefined || prefixLength > 32) return undefined;
  const size = 2 ** (32 - prefixLength);
  const network = address - (address % size);
  return { network, prefixLength, hostBitsSet: network !== address };
}

/** Parses `HOST:PORT`, `[IPV6]:PORT` or `:PORT` (all IPv4 addresses) for a listener. */
export function parseListen(text: string): ListenAddress | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(text);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  const v6 = match[1];
  if (v6 !== undefined) return isIpv6(v6) ? { host: v6, port } : undefined;
  const v4 = match[2] ?? '';
  if (v4 === '') return { host: '0.0.0.0', port };
  return parseIpv4(v4) === undefined ? undefined : { host: v4, port };
}

/** `{ [key]: value }` when value is defined, else `{}` (keeps optional keys absent, not undefined). */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Levenshtein distance, for "did you mean" hints on misspelled keys. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Joins a parent path and a key. */
export function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * Reads typed values out of decoded YAML, recording a problem for each wrong one and
 * returning a fallback so decoding can go on and find the next problem.
 */
export class ConfigReader {
  /** Every problem found so far, in the order met. */
  readonly problems: ConfigProblem[] = [];

  /** Records a problem; the value of a secret key (`token`, `password`) is described, never shown, and URL credentials are masked. */
  report(path: string, expected: string, value: unknown): void {
    const secret = SECRET_KEYS.has(path.slice(path.lastIndexOf('.') + 1));
    this.problems.push({ path, expected, got: secret ? describeSecretValue(value) : describeValue(value) });
  }

  /**
   * Reads a mapping whose keys must all be in `keys`; absent or null is `{}`. Each unknown key
   * is one problem, with the closest known key suggested.
   */
  mapping(path: string, value: unknown, keys: readonly string[]): Record<string, unknown> {
    if (value === undefined || value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.report(path, `a mapping with keys ${keys.join(', ')}`, value);
      return {};
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (keys.includes(key)) continue;
      const limit = key.length <= 3 ? 1 : 2;
      const near = keys.filter((k) => editDistance(k.toLowerCase(), key.toLowerCase()) <= limit);
      const hint = near.length > 0 ? `did you mean ${near.join(' or ')}? ` : '';
      this.problems.push({
        path: joinPath(path, key),
        expected: `no such key (${hint}known keys: ${keys.join(', ')})`,
        got: `unknown key ${JSON.stringify(key)}`,
      });
    }
    return record;
  }

  /** Reads an optional non-empty string. */
  string(path: string, value: unknown, what = 'a non-empty string'): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string' && value.trim() !== '') return value;
    this.report(path, what, value);
    return undefined;
  }

  /** Reads an optional string matching `pattern`. */
  matching(path: string, value: unknown, pattern: RegExp, what: string): string | undefined {
    const text = this.string(path, value, what);
    if (text === undefined || pattern.test(text)) return text;
    this.report(path, what, value);
    return undefined;
  }

  /** Reads an absolute filesystem path, or returns `fallback`. */
  absolutePath(path: string, value: unknown, fallback: string): string;
  absolutePath(path: string, value: unknown, fallback?: undefined): string | undefined;
  absolutePath(path: string, value: unknown, fallback?: string): string | undefined {
    return this.matching(path, value, /^\/./, 'an absolute path (starting with /)') ?? fallback;
  }

  /** Reads one of `options`, or returns `fallback`. */
  oneOf<T extends string>(path: string, value: unknown, options: readonly T[], fallback: T): T {
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'string' && (options as readonly string[]).includes(value)) return value as T;
    this.report(path, `one of ${options.join(', ')}`, value);
    return fallback;
  }

  /** Reads an integer in `[min, max]`, or returns `fallback`. */
  integer(path: string, value: unknown, fallback: number, min: number, max: number): number {
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    this.report(path, `an integer from ${min} to ${max}`, value);
    return fallback;
  }

  /** Reads a finite number greater than 0, or returns `fallback`. */
  positiveNumber(path: string, value: unknown, fallback: number): number {
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
    this.report(path, 'a number greater than 0', value);
    return fallback;
  }

  /** Reads an IPv4 address. */
  ipv4(path: string, value: unknown): string | undefined {
    const text = this.string(path, value, 'an IPv4 address like 192.0.2.10');
    if (text === undefined) return undefined;
    if (parseIpv4(text) !== undefined) return text;
    this.report(path, 'an IPv4 address like 192.0.2.10', value);
    return undefined;
  }

  /** Reads a list of IPv4 addresses (a single address is accepted as a list of one). */
  ipv4List(path: string, value: unknown): string[] {
    if (value === undefined || value === null) return [];
    if (typeof value === 'string') return [this.ipv4(path, value)].filter((x) => x !== undefined);
    if (!Array.isArray(value)) {
      this.report(path, 'a list of IPv4 addresses', value);
      return [];
    }
    return value.map((item, i) => this.ipv4(joinPath(path, i), item)).filter((x) => x !== undefined);
  }

  /** Reads a listen address (`HOST:PORT`, `[V6]:PORT`, `:PORT`), or returns `fallback`. */
  listen(path: string, value: unknown, fallback: string): ListenAddress {
    const what = 'ADDRESS:PORT with an IP address, e.g. 127.0.0.1:8080, [::1]:8080 or :69';
    const fallbackAddress = parseListen(fallback) ?? { host: '0.0.0.0', port: 0 };
    if (value === undefined || value === null) return fallbackAddress;
    const parsed = typeof value === 'string' ? parseListen(value) : undefined;
    if (parsed !== undefined) return parsed;
    this.report(path, what, value);
    return fallbackAddress;
  }

  /**
   * Reads an `http:` or `https:` URL without `user:password@`: nothing would send those
   * credentials (the agent authenticates with a token or a client certificate), and a password
   * in a URL ends up in logs and `ps` output — so the URL is refused, shown masked.
   */
  httpUrl(path: string, value: unknown, credentialsHint: string): string | undefined {
    const what = 'an http:// or https:// URL';
    const text = this.string(path, value, what);
    if (text === undefined) return undefined;
    const url = URL.canParse(text) ? new URL(text) : undefined;
    if (url === undefined || !/^https?:$/.test(url.protocol)) {
      this.report(path, what, redactUrlCredentials(text));
      return undefined;
    }
    if (url.username !== '' || url.password !== '') {
      this.report(path, `${what} without user:password@ (${credentialsHint})`, redactUrlCredentials(text));
      return undefined;
    }
    return text;
  }
}

/**
 * Reads `bmc.ipmi.cipherSuites`: a non-empty list of the RMCP+ cipher suites rackside accepts
 * (17 and 3, each at most once, strongest first as the operator orders them); absent: undefined
 * (the driver's default, 17 then 3). 0 and every other suite are a problem, never used.
 */
export function readCipherSuites(r: ConfigReader, path: string, value: unknown): number[] | undefined {
  if (value === undefined || value === null) return undefined;
  const ok = Array.isArray(value) && value.length > 0 && value.every((v) => v === 17 || v === 3) && new Set(value).size === value.length;
  if (ok) return [...(value as number[])];
  r.report(path, 'a list of IPMI cipher suites from 17 and 3 (e.g. [17, 3]; never 0)', value);
  return undefined;
}
