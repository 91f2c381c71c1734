/**
 * @module IP address parsing and OpenSSH `from="pattern-list"` matching (sshd(8) "AUTHORIZED_KEYS
 * FILE FORMAT", OpenSSH `match_host_and_ip` / `addr_match_list`): a comma-separated list of
 * entries, each an address, a CIDR block (`192.0.2.0/24`, `2001:db8::/32`) or a wildcard pattern
 * (`*`, `?`), optionally negated with `!`. A negated match always denies; otherwise one positive
 * match allows; no match denies. rackside never resolves names (OpenSSH's `UseDNS no`), so
 * wildcard patterns are matched against the address text only.
 * @pure
 */

/** A parsed IP address: 4 or 16 bytes. */
export interface IpAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

function parseIpv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

function parseIpv6Bytes(text: string): number[] | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIpv4Bytes(piece);
        if (v4 === undefined) return undefined;
        out.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
        continue;
      }
      if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return undefined;
      out.push(parseInt(piece, 16));
    }
    return out;
  };
  const head = groupsOf(halves[0] ?? '');
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/**
 * Parses an IPv4 or IPv6 address (an IPv6 zone `%eth0` is ignored). An IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`, what a dual-stack listener reports) becomes the IPv4 address.
 * Returns undefined for anything else.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  const v4 = parseIpv4Bytes(text);
  if (v4 !== undefined) return { family: 4, bytes: Uint8Array.from(v4) };
  const v6 = parseIpv6Bytes(text.replace(/%[^%]*$/, ''));
  if (v6 === undefined) return undefined;
  const mapped = v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return mapped ? { family: 4, bytes: Uint8Array.from(v6.slice(12)) } : { family: 6, bytes: Uint8Array.from(v6) };
}

/** Renders a parsed address in its usual text form (IPv6 without zero compression). */
function formatIpAddress(address: IpAddress): string {
  if (address.family === 4) return Array.from(address.bytes).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((address.bytes[i] ?? 0) << 8) | (address.bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/**
 * Normalizes a socket's remote address for matching and rate limiting: IPv4-mapped IPv6
 * addresses become IPv4 (`::ffff:127.0.0.1` → `127.0.0.1`); other text is returned unchanged.
 */
export function normalizeAddress(text: string): string {
  const parsed = parseIpAddress(text);
  return parsed?.family === 4 ? formatIpAddress(parsed) : text;
}

/** A CIDR block; `prefixLength` counts leading bits of `network`. */
export interface CidrBlock {
  network: IpAddress;
  prefixLength: number;
}

/**
 * Parses `ADDRESS/PREFIX` (or a bare address as a full-length block).
 * @returns the block, `undefined` when the text is not an address at all (a wildcard pattern),
 *   or an error message when it is an address with a bad prefix or host bits set (OpenSSH
 *   refuses `10.0.0.1/8`).
 */
export function parseCidrBlock(text: string): CidrBlock | undefined | { error: string } {
  const slash = text.indexOf('/');
  const network = parseIpAddress(slash < 0 ? text : text.slice(0, slash));
  if (network === undefined) return slash < 0 ? undefined : { error: `"${text}" is not an ADDRESS/PREFIX block` };
  const max = network.family === 4 ? 32 : 128;
  if (slash < 0) return { network, prefixLength: max };
  const prefixText = text.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(prefixText) || Number(prefixText) > max) {
    return { error: `"${text}" has a bad prefix length (0-${max})` };
  }
  const prefixLength = Number(prefixText);
  for (let bit = prefixLength; bit < max; bit++) {
    if (((network.bytes[bit >> 3] ?? 0) >> (7 - (bit & 7))) & 1) {
      return { error: `"${text}" has host bits set beyond /${prefixLength}` };
    }
  }
  return { network, prefixLength };
}

function inBlock(address: IpAddress, block: CidrBlock): boolean {
  if (address.family !== block.network.family) return false;
  for (let bit = 0; bit < block.prefixLength; bit++) {
    const mask = 1 << (7 - (bit & 7));
    if (((address.bytes[bit >> 3] ?? 0) & mask) !== ((block.network.bytes[bit >> 3] ?? 0) & mask)) return false;
  }
  return true;
}

/** Matches `text` against a wildcard pattern (`*` any run, `?` one character), case-insensitively. */
export function matchWildcard(pattern: string, text: string): boolean {
  const p = pattern.toLowerCase();
  const t = text.toLowerCase();
  // Iterative glob with single backtrack point: linear in practice, no regex injection.
  let pi = 0;
  let ti = 0;
  let star = -1;
  let mark = 0;
  while (ti < t.length) {
    if (pi < p.length && (p[pi] === '?' || p[pi] === t[ti])) {
      pi++;
      ti++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      mark = ti;
    } else if (star >= 0) {
      pi = star + 1;
      ti = ++mark;
    } else return false;
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

/**
 * Checks a `from=` pattern list for mistakes OpenSSH would also reject: empty entries, and
 * address blocks with a bad prefix or host bits set. Returns one message per problem.
 */
export function checkPatternList(patterns: readonly string[]): string[] {
  const problems: string[] = [];
  if (patterns.length === 0) problems.push('empty pattern list');
  for (const raw of patterns) {
    const entry = raw.startsWith('!') ? raw.slice(1) : raw;
    if (entry === '') {
      problems.push('empty pattern');
      continue;
    }
    const block = parseCidrBlock(entry);
    if (block !== undefined && 'error' in block) problems.push(block.error);
  }
  return problems;
}

/**
 * Decides whether `address` is allowed by an OpenSSH `from=` pattern list: false when any
 * negated entry matches or no entry matches, or when the list is malformed; true when a
 * positive entry matches.
 */
export function matchAddressPatterns(patterns: readonly string[], address: string): boolean {
  const normalized = normalizeAddress(address);
  const parsed = parseIpAddress(normalized);
  let allowed = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const entry = negated ? raw.slice(1) : raw;
    if (entry === '') return false;
    const block = parseCidrBlock(entry);
    if (block !== undefined && 'error' in block) return false;
    const hit = block !== undefined
      ? parsed !== undefined && inBlock(parsed, block)
      : matchWildcard(entry, normalized);
    if (!hit) continue;
    if (negated) return false;
    allowed = true;
  }
  return allowed;
}
