/**
 * @module Starts the DHCPv6 server of the boot services (docs/ipv6.md) from the `dhcp6` section
 * and the IPv6 `provisioning.address`: the same boot lookup, discovery lookup, flight recorder
 * and turn budget as DHCPv4, its leases in the `leases` sublevel under `dhcp6/` keys
 * (`lease-store6.ts`), boot URLs with the bracketed IPv6 literal of the agent; and, with
 * `dhcp6.routerAdvertisements: on`, the router advertisements that make hosts start DHCPv6.
 */
import { startDhcp6Server, startRouterAdvertiser, type BootEvent, type BootLookup, type TurnBudget } from '../../bootsvc/index.js';
import type { Config } from '../config.js';
import type { KeyValue } from '../store/types.js';
import { createLease6Store } from './lease-store6.js';
import { baseUrlOf } from './boot-https.js';

/** What {@link startDhcp6} needs from the boot services. */
export interface Dhcp6Wiring {
  config: Config;
  leases: KeyValue<unknown>;
  lookup: BootLookup;
  discoveryLookup?: BootLookup;
  turnBudget: TurnBudget;
  onEvent: (event: BootEvent) => void;
  log: (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

/** Boot HTTP's base URL as IPv6 clients reach it: `http://[address6]:<port>`. */
export function bootHttpBaseUrl6(config: Config): string | undefined {
  const a = config.provisioning.address6;
  return a === undefined ? undefined : baseUrlOf('http', a, config.http.listen.port);
}

/**
 * Warnings for boot services DHCPv6 clients cannot reach: the boot URLs name the agent's IPv6
 * address, but boot HTTP and TFTP listen where `http.listen` / `tftp.listen` say (IPv4 by
 * default). Empty when both listen on `::` or on that address. Pure.
 */
export function unreachableOverIpv6(config: Config): string[] {
  const address = config.provisioning.address6;
  if (address === undefined) return [];
  const out: string[] = [];
  for (const [key, listen, example] of [['http.listen', config.http.listen, `"[::]:${config.http.listen.port}"`], ['tftp.listen', config.tftp.listen, `"[::]:${config.tftp.listen.port}"`]] as const) {
    if (listen.host === '::' || listen.host === address) continue;
    out.push(`dhcp6 hands out boot URLs on [${address}] but ${key} is ${listen.host}:${listen.port}, which IPv6 clients cannot reach: set ${key} to ${example} (docs/ipv6.md)`);
  }
  return out;
}

/** Starts DHCPv6 when `dhcp6.mode` is full (the config decoder made sure it then has an interface, an IPv6 address and a range); `undefined` otherwise. */
export async function startDhcp6(w: Dhcp6Wiring): Promise<{ stop(): Promise<void>; stats(): unknown } | undefined> {
  const { config } = w;
  const d = config.dhcp6;
  const iface = config.provisioning.interface;
  const address = config.provisioning.address6;
  const httpBaseUrl = bootHttpBaseUrl6(config);
  if (d?.mode !== 'full' || d.ranges.length === 0 || iface === undefined || address === undefined || httpBaseUrl === undefined) return undefined;
  for (const warning of unreachableOverIpv6(config)) w.log('warn', warning);
  const server = await startDhcp6Server({
    mode: 'full', interface: iface, serverAddress: address, ranges: d.ranges,
    leaseSeconds: d.leaseSeconds, dns: d.dns, unknownHosts: config.dhcp.unknownHosts, bootLookup: w.lookup,
    ...(w.discoveryLookup === undefined ? {} : { discoveryLookup: w.discoveryLookup }),
    bootFiles: { httpBaseUrl }, leaseStore: createLease6Store(w.leases, (key, why) => { w.log('warn', `dhcp6 lease record ${key} skipped: ${why}`); }),
    onEvent: w.onEvent, log: w.log, turnBudget: w.turnBudget,
  });
  let ra: ReturnType<typeof startRouterAdvertiser> | undefined;
  try {
    ra = d.routerAdvertisements !== 'on' || config.provisioning.prefixLength6 === undefined ? undefined : startRouterAdvertiser({
      interface: iface, prefix: { address, length: config.provisioning.prefixLength6 }, autonomous: d.raAutonomous === 'on',
      routerLifetimeSeconds: d.raRouterLifetime, dns: d.dns, log: w.log,
    });
  } catch (err) {
    // EPERM without CAP_NET_RAW, ENODEV: the agent does not start half-configured.
    await server.stop();
    throw err;
  }
  return {
    stop: async () => { await ra?.stop(); await server.stop(); },
    stats: () => ({ ...server.stats(), ...(ra === undefined ? {} : { routerAdvertisements: ra.stats() }) }),
  };
}
