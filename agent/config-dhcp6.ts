/**
 * @module Decoding the `dhcp6` section (agent/config.ts; docs/ipv6.md) and the IPv6 entries of
 * `provisioning.address`: mode (`full` or `off`), the address range (`"FIRST-LAST"` inside the
 * provisioning IPv6 prefix, excluding the agent's address, or a list of `{subnet, range}` for
 * links behind relays), lease time, DNS servers, and router advertisements
 * (`routerAdvertisements`, `raAutonomous`, `raRouterLifetime`). A section that would do nothing is an error, not a silent no-op: a
 * range or settings with `mode: off`, no mode at all, or `mode: full` without an IPv6
 * provisioning address.
 * @pure
 */
import { canonicalIpv6, isIpv6 } from '../bootsvc/index.js';
import { ConfigReader, joinPath } from './config-decode.js';

/** The decoded `dhcp6` section. */
export interface Dhcp6Config {
  /** `full`: stateful DHCPv6 (IA_NA) with boot options; `off` (default). */
  mode: 'full' | 'off';
  /**
   * Address ranges, one per link, inclusive, canonical text (mode `full`): `dhcp6.range` as
   * `"FIRST-LAST"` (the provisioning prefix) or a list of `{subnet, range}` (links behind relays too).
   */
  ranges: { subnet: string; first: string; last: string }[];
  leaseSeconds: number;
  /** Option 23. */
  dns: string[];
  /**
   * `on`: the agent sends router advertisements on the provisioning interface (Managed and Other
   * flags, the provisioning prefix on-link; `bootsvc/ra/`, docs/ipv6.md); `off` (default).
   */
  routerAdvertisements: 'on' | 'off';
  /** The prefix's autonomous (SLAAC) flag in those advertisements; default `off`: DHCPv6 hands out addresses. */
  raAutonomous: 'on' | 'off';
  /** Router lifetime of the advertisements in seconds (RFC 4861 §4.2): 0 (default) says the agent is no default router. */
  raRouterLifetime: number;
}

/** The IPv6 side of `provisioning.address`. */
export interface Provisioning6 {
  interface?: string;
  address6?: string;
  prefixLength6?: number;
}

const KEYS = ['mode', 'range', 'leaseSeconds', 'dns', 'routerAdvertisements', 'raAutonomous', 'raRouterLifetime'] as const;

/** `a` and `b` share their first `length` bits. */
function samePrefix(a: string, b: string, length: number): boolean {
  const bits = (t: string): string => (canonicalIpv6(t) === undefined ? '' : expand(t));
  return bits(a).slice(0, length) === bits(b).slice(0, length) && bits(a) !== '';
}

/** The 128 bits of an IPv6 address as a string of 0/1. */
function expand(text: string): string {
  const [head = '', tail] = text.split('::');
  const hg = head === '' ? [] : head.split(':');
  const tg = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? hg : [...hg, ...new Array<string>(8 - hg.length - tg.length).fill('0'), ...tg];
  return groups.map((g) => parseInt(g, 16).toString(2).padStart(16, '0')).join('');
}

/** Decodes one `"FIRST-LAST"` at `path` inside `prefix`, excluding the agent's address. */
function decodeOneRange(r: ConfigReader, path: string, value: unknown, prefix: { address: string; length: number } | undefined, own: string | undefined): Dhcp6Config['ranges'][number] | undefined {
  const m = typeof value === 'string' ? /^\s*([0-9A-Fa-f:]+)\s*-\s*([0-9A-Fa-f:]+)\s*$/.exec(value) : null;
  const first = canonicalIpv6(m?.[1] ?? '');
  const last = canonicalIpv6(m?.[2] ?? '');
  const what = `"FIRST-LAST" IPv6 addresses${prefix === undefined ? '' : ` inside ${prefix.address}/${prefix.length}`}, e.g. fd00:1::100-fd00:1::1ff`;
  if (prefix === undefined || first === undefined || last === undefined || expand(first) > expand(last) ||
    !samePrefix(first, prefix.address, prefix.length) || !samePrefix(last, prefix.address, prefix.length)) {
    r.report(path, what, value);
    return undefined;
  }
  if (own !== undefined && expand(first) <= expand(own) && expand(own) <= expand(last)) {
    r.report(path, `a range that excludes provisioning.address ${own}`, value);
  }
  const network = canonicalIpv6(networkOf(prefix.address, prefix.length)) ?? prefix.address;
  return { subnet: `${network}/${prefix.length}`, first, last };
}

/** The network address of `address`/`length` as text. */
function networkOf(address: string, length: number): string {
  const bits = expand(address).slice(0, length).padEnd(128, '0');
  const groups: string[] = [];
  for (let i = 0; i < 128; i += 16) groups.push(parseInt(bits.slice(i, i + 16), 2).toString(16));
  return groups.join(':');
}

/** Decodes `dhcp6.range`: `"FIRST-LAST"` in the provisioning prefix, or a list of `{subnet, range}`. */
function decodeRanges(r: ConfigReader, value: unknown, p: Provisioning6): Dhcp6Config['ranges'] {
  const own = p.address6;
  if (typeof value === 'string') {
    // Without an IPv6 provisioning.address there is no prefix to place it in: that key's problem is reported instead.
    if (own === undefined || p.prefixLength6 === undefined) return [];
    const one = decodeOneRange(r, 'dhcp6.range', value, { address: own, length: p.prefixLength6 }, own);
    return one === undefined ? [] : [one];
  }
  if (!Array.isArray(value)) {
    if (value !== undefined && value !== null) r.report('dhcp6.range', '"FIRST-LAST" or a list of {subnet, range}', value);
    return [];
  }
  const out: Dhcp6Config['ranges'] = [];
  value.forEach((item: unknown, i) => {
    const path = joinPath('dhcp6.range', i);
    const e = r.mapping(path, item, ['subnet', 'range']);
    const subnet = typeof e.subnet === 'string' ? parseIpv6Cidr(e.subnet) : undefined;
    if (subnet === undefined || typeof e.subnet !== 'string' || !e.subnet.includes('/')) {
      r.report(joinPath(path, 'subnet'), 'an IPv6 prefix like fd00:2::/64', e.subnet);
      return;
    }
    const one = decodeOneRange(r, joinPath(path, 'range'), e.range, { address: subnet.address, length: subnet.prefixLength }, own);
    if (one !== undefined) out.push(one);
  });
  return out;
}

/** Decodes the `dhcp6` section, recording problems in `r`. */
export function decodeDhcp6(r: ConfigReader, value: unknown, p: Provisioning6): Dhcp6Config {
  const d = r.mapping('dhcp6', value, KEYS);
  const present = value !== undefined && value !== null;
  const mode = r.oneOf('dhcp6.mode', d.mode, ['full', 'off'], 'off');
  const routerAdvertisements = r.oneOf('dhcp6.routerAdvertisements', d.routerAdvertisements, ['on', 'off'], 'off');
  const dns: string[] = [];
  if (d.dns !== undefined && d.dns !== null) {
    if (Array.isArray(d.dns) && d.dns.every((x) => typeof x === 'string' && isIpv6(x))) dns.push(...d.dns.map((x: string) => canonicalIpv6(x) ?? x));
    else r.report('dhcp6.dns', 'a list of IPv6 addresses', d.dns);
  }
  const ranges = decodeRanges(r, d.range, p);
  const settings = KEYS.filter((k) => k !== 'mode' && d[k] !== undefined);
  if (present && d.mode === undefined) r.report('dhcp6.mode', 'full or off (the section does nothing without it)', undefined);
  else if (mode === 'off' && settings.length > 0) r.report('dhcp6.mode', `full: with mode off the section's ${settings.join(', ')} would do nothing (remove them, or the section)`, d.mode);
  if (mode === 'full') {
    if (d.range === undefined) r.report('dhcp6.range', 'an IPv6 range "FIRST-LAST" (or a list of {subnet, range}) when dhcp6.mode is full', undefined);
    if (p.interface === undefined) r.report('provisioning.interface', 'the interface to serve DHCPv6 on (dhcp6.mode is full)', undefined);
    if (p.address6 === undefined) r.report('provisioning.address', "the agent's IPv6 address on that interface, e.g. [192.0.2.1/24, fd00:1::1/64] (dhcp6.mode is full)", undefined);
  }
  const raAutonomous = r.oneOf('dhcp6.raAutonomous', d.raAutonomous, ['on', 'off'], 'off');
  // RFC 4861 §6.2.1: AdvDefaultLifetime is 0 or MaxRtrAdvInterval (600 s here) to 9000 s.
  const raRouterLifetime = r.integer('dhcp6.raRouterLifetime', d.raRouterLifetime, 0, 0, 9000);
  if (raRouterLifetime > 0 && raRouterLifetime < 600) r.report('dhcp6.raRouterLifetime', '0 (no default router) or 600-9000 seconds', d.raRouterLifetime);
  for (const key of ['raAutonomous', 'raRouterLifetime'] as const) {
    if (d[key] !== undefined && routerAdvertisements !== 'on') r.report(`dhcp6.${key}`, 'nothing without dhcp6.routerAdvertisements: on (remove it, or turn router advertisements on)', d[key]);
  }
  const leaseSeconds = r.integer('dhcp6.leaseSeconds', d.leaseSeconds, 3600, 60, 31_536_000);
  return { mode, ranges, leaseSeconds, dns, routerAdvertisements, raAutonomous, raRouterLifetime };
}

/** Addresses in every range together (for "free" on the status page), capped at Number.MAX_SAFE_INTEGER. */
export function countPool6Addresses(ranges: Dhcp6Config['ranges']): number {
  const size = ranges.reduce((sum, r) => sum + BigInt(`0b${expand(r.last)}`) - BigInt(`0b${expand(r.first)}`) + 1n, 0n);
  return size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(size);
}

/** One IPv6 entry of `provisioning.address` (`ADDRESS/PREFIX`, prefix 64 when left out), or `undefined` when `text` is not IPv6. */
export function parseIpv6Cidr(text: string): { address: string; prefixLength: number } | undefined {
  const [addr = '', len, ...rest] = text.split('/');
  const address = canonicalIpv6(addr);
  if (address === undefined || addr.includes('%') || rest.length > 0) return undefined;
  if (len === undefined) return { address, prefixLength: 64 };
  if (!/^[0-9]{1,3}$/.test(len) || Number(len) < 1 || Number(len) > 128) return undefined;
  return { address, prefixLength: Number(len) };
}
