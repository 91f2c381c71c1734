/**
 * @module Decoding the `dhcp` section of the config (agent/config.ts): mode, address pools
 * (one `"first-last"` string in the provisioning subnet, or a list of `{subnet, range, router,
 * dns}`), lease time, options 3 and 6, and what to do with unknown MACs. Ranges must lie inside
 * their subnet and exclude the network, broadcast and agent addresses.
 * @pure
 */
import { ConfigReader, formatIpv4, joinPath, optional, parseCidr, parseIpv4 } from './config-decode.js';

/** `full` = DHCP server with leases; `proxy` = boot info only (RFC 4578 proxyDHCP, port 4011); `off`. */
export type DhcpMode = 'full' | 'proxy' | 'off';

/** One DHCPv4 address pool inside one subnet. */
export interface DhcpRange {
  /** Network in CIDR form, e.g. `192.0.2.0/24`. */
  subnet: string;
  prefixLength: number;
  /** First and last address handed out, inclusive. */
  first: string;
  last: string;
  /** Option 3; inside `subnet`. */
  router?: string;
  /** Option 6. */
  dns: string[];
}

/** The decoded `dhcp` section. */
export interface DhcpConfig {
  mode: DhcpMode;
  /** From `dhcp.range`: one `"first-last"` string or a list of `{subnet, range, router, dns}`. */
  ranges: DhcpRange[];
  leaseSeconds: number;
  router?: string;
  dns: string[];
  unknownHosts: 'ignore' | 'discover';
}

/** What decodeDhcp needs from the `provisioning` section. */
export interface ProvisioningAddress {
  interface?: string;
  address?: string;
  prefixLength?: number;
}

/** Decodes the `dhcp` section, recording problems in `r`. */
export function decodeDhcp(r: ConfigReader, value: unknown, provisioning: ProvisioningAddress): DhcpConfig {
  const d = r.mapping('dhcp', value, ['mode', 'range', 'leaseSeconds', 'router', 'dns', 'unknownHosts']);
  const mode = r.oneOf('dhcp.mode', d.mode, ['full', 'proxy', 'off'], 'off');
  const router = r.ipv4('dhcp.router', d.router);
  const dns = r.ipv4List('dhcp.dns', d.dns);
  const ranges: DhcpRange[] = [];
  const own = provisioning.address === undefined ? undefined : parseIpv4(provisioning.address);
  const addRange = (path: string, subnetText: string, rangeValue: unknown, rRouter: string | undefined, rDns: string[]): void => {
    const subnet = parseCidr(subnetText);
    if (subnet === undefined) return;
    const size = 2 ** (32 - subnet.prefixLength);
    const inside = (ip: number): boolean => ip >= subnet.network && ip < subnet.network + size;
    const what = `FIRST-LAST inside ${subnetText}, e.g. ${formatIpv4(subnet.network + 100)}-${formatIpv4(subnet.network + 199)}`;
    const m = typeof rangeValue === 'string' ? /^\s*([0-9.]+)\s*-\s*([0-9.]+)\s*$/.exec(rangeValue) : null;
    const first = m === null ? undefined : parseIpv4(m[1] ?? '');
    const last = m === null ? undefined : parseIpv4(m[2] ?? '');
    const usable = (ip: number): boolean => inside(ip) && (size <= 2 || (ip !== subnet.network && ip !== subnet.network + size - 1));
    if (first === undefined || last === undefined || first > last || !usable(first) || !usable(last)) {
      r.report(path, what, rangeValue);
      return;
    }
    if (own !== undefined && own >= first && own <= last) {
      r.report(path, `a range that excludes provisioning.address ${formatIpv4(own)}`, rangeValue);
    }
    const routerPath = path.endsWith('.range') ? path.replace(/range$/, 'router') : 'dhcp.router';
    if (rRouter !== undefined && !inside(parseIpv4(rRouter) ?? -1)) r.report(routerPath, `a router inside ${subnetText}`, rRouter);
    ranges.push({
      subnet: `${formatIpv4(subnet.network)}/${subnet.prefixLength}`, prefixLength: subnet.prefixLength,
      first: formatIpv4(first), last: formatIpv4(last), ...optional('router', rRouter), dns: rDns,
    });
  };
  if (typeof d.range === 'string') {
    if (own === undefined || provisioning.prefixLength === undefined) {
      r.report('dhcp.range', 'a subnet for the range: write provisioning.address as ADDRESS/PREFIX (e.g. 192.0.2.1/24) or give dhcp.range as a list of {subnet, range}', d.range);
    } else {
      const size = 2 ** (32 - provisioning.prefixLength);
      addRange('dhcp.range', `${formatIpv4(own - (own % size))}/${provisioning.prefixLength}`, d.range, router, dns);
    }
  } else if (Array.isArray(d.range)) {
    d.range.forEach((item: unknown, i) => {
      const path = joinPath('dhcp.range', i);
      const e = r.mapping(path, item, ['subnet', 'range', 'router', 'dns']);
      const subnetPath = joinPath(path, 'subnet');
      const subnetText = r.string(subnetPath, e.subnet, 'a subnet like 192.0.2.0/24');
      const cidr = subnetText === undefined ? undefined : parseCidr(subnetText);
      if (subnetText !== undefined && (cidr === undefined || cidr.hostBitsSet)) {
        r.report(subnetPath, 'a network address in CIDR form with host bits zero, e.g. 192.0.2.0/24', e.subnet);
        return;
      }
      if (subnetText === undefined) {
        if (item !== null && typeof item === 'object') r.report(subnetPath, 'a subnet like 192.0.2.0/24', e.subnet);
        return;
      }
      const rRouter = e.router === undefined ? router : r.ipv4(joinPath(path, 'router'), e.router);
      const rDns = e.dns === undefined ? dns : r.ipv4List(joinPath(path, 'dns'), e.dns);
      addRange(joinPath(path, 'range'), subnetText, e.range, rRouter, rDns);
    });
  } else if (d.range !== undefined && d.range !== null) {
    r.report('dhcp.range', '"FIRST-LAST" or a list of {subnet, range, router, dns}', d.range);
  }
  if (mode === 'full' && ranges.length === 0 && d.range === undefined) r.report('dhcp.range', 'at least one range when dhcp.mode is full', d.range);
  if (mode !== 'off') {
    if (provisioning.interface === undefined) r.report('provisioning.interface', `the interface to serve DHCP on (dhcp.mode is ${mode})`, undefined);
    if (provisioning.address === undefined) r.report('provisioning.address', `the agent's address on that interface (dhcp.mode is ${mode})`, undefined);
  }
  return {
    mode, ranges, leaseSeconds: r.integer('dhcp.leaseSeconds', d.leaseSeconds, 3600, 60, 31_536_000),
    ...optional('router', router), dns, unknownHosts: r.oneOf('dhcp.unknownHosts', d.unknownHosts, ['ignore', 'discover'], 'ignore'),
  };
}

