/**
 * @module Decoding the `governor` section of the config (agent/config.ts): the budgets the
 * boot governor (agent/boot/governor.ts) paces power-ons by — boot HTTP bandwidth in Mbit/s
 * (a number, or `auto` for 90 % of the provisioning interface's link speed, read at start),
 * DHCP exchanges per second, and power-ons per minute. No key set, no governor.
 * @pure
 */
import { ConfigReader, optional } from './config-decode.js';

/** The decoded `governor` section; absent from {@link Config} when no budget is set. */
export interface GovernorConfig {
  /**
   * Boot HTTP budget in megabits per second (10^6 bit/s): power-ons are spaced by the bytes
   * each boot fetches, and boot HTTP sends file bodies no faster. `auto`: 90 % of the link
   * speed of `provisioning.interface`, read from sysfs when the agent starts.
   */
  httpMbps?: number | 'auto';
  /** DHCP exchanges (DISCOVER … ACK, one lease) per second power-ons may cause; a network boot's power-on causes 2 (firmware PXE, iPXE; the ramdisk's own lease follows its downloads), a virtual-media boot none. */
  dhcpPerSecond?: number;
  /** Power-ons per minute, whatever the boot path (shared power circuits: inrush current). */
  bootsPerMinute?: number;
}

/** Share of the link speed `httpMbps: auto` takes: headroom for DHCP, TFTP, the ramdisk API and other traffic. */
export const AUTO_LINK_SHARE = 0.9;

const KEYS = ['httpMbps', 'dhcpPerSecond', 'bootsPerMinute'] as const;

/** Decodes `governor` (problems go to `r`); undefined when the section is absent or sets nothing. */
export function decodeGovernor(r: ConfigReader, value: unknown, provisioningInterface: string | undefined): GovernorConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const g = r.mapping('governor', value, KEYS);
  let httpMbps: number | 'auto' | undefined;
  if (g.httpMbps === 'auto') {
    httpMbps = 'auto';
    if (provisioningInterface === undefined) r.report('governor.httpMbps', 'a number of Mbit/s (auto needs provisioning.interface, whose link speed it reads)', g.httpMbps);
  } else if (g.httpMbps !== undefined && g.httpMbps !== null) {
    if (typeof g.httpMbps === 'number' && Number.isFinite(g.httpMbps) && g.httpMbps > 0) httpMbps = g.httpMbps;
    else r.report('governor.httpMbps', 'a number of Mbit/s greater than 0, or auto', g.httpMbps);
  }
  const rate = (key: 'dhcpPerSecond' | 'bootsPerMinute'): number | undefined => {
    const v = g[key];
    return v === undefined || v === null ? undefined : r.positiveNumber(`governor.${key}`, v, 1);
  };
  const dhcpPerSecond = rate('dhcpPerSecond');
  const bootsPerMinute = rate('bootsPerMinute');
  const out: GovernorConfig = { ...optional('httpMbps', httpMbps), ...optional('dhcpPerSecond', dhcpPerSecond), ...optional('bootsPerMinute', bootsPerMinute) };
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Converts megabits per second to bytes per second. */
export function mbpsToBytesPerSecond(mbps: number): number {
  return (mbps * 1e6) / 8;
}
