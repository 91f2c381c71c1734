/**
 * @module The doctor's verdict on other DHCPv6 servers on the provisioning segment (docs/ipv6.md):
 * with `dhcp6.mode: full` an Advertise from a server DUID that is not rackside's fails — a
 * client takes the Advertise with the highest preference, or the first (RFC 8415 §18.2.9), so
 * hosts could get another server's address and no boot URL; with `dhcp6.mode` off another
 * server is expected and reported.
 * @pure
 */
import type { Config } from '../config.js';
import type { CheckResult, Dhcp6Advertise, Dhcp6Probe } from './types.js';

/** The source address without its zone (`fe80::1%eth1` → `fe80::1`). */
function withoutZone(address: string): string {
  return address.split('%')[0] ?? address;
}

function describe(a: Dhcp6Advertise): string {
  return `server ${withoutZone(a.sourceAddress)} (DUID ${a.serverDuid}) ${a.offeredAddress === undefined ? 'advertised no address' : `advertised ${a.offeredAddress}`}`;
}

/**
 * Verdict on the DHCPv6 servers heard; undefined (no line) when the config has no IPv6
 * provisioning address. `ourDuid` is rackside's server DUID on the interface (hex).
 */
export function checkDhcp6Servers(config: Config, probe: Dhcp6Probe, ourDuid: string | undefined): CheckResult | undefined {
  if (config.provisioning.address6 === undefined) return undefined;
  const check = 'other DHCPv6 servers';
  if (probe.state === 'not-run') return { check, status: 'skip', detail: probe.reason, fix: '' };
  if (probe.state === 'error') {
    return { check, status: 'warn', detail: `Solicit probe failed: ${probe.error}`, fix: 'run rackside doctor as root (it binds UDP 546 on the provisioning interface)' };
  }
  const seen = new Map<string, Dhcp6Advertise>();
  for (const a of probe.advertises) if (a.serverDuid !== ourDuid) seen.set(`${a.serverDuid} ${a.sourceAddress}`, a);
  const foreign = [...seen.values()];
  const own = probe.advertises.length > foreign.length ? '; rackside itself answered' : '';
  const seconds = (probe.listenMs / 1000).toFixed(1);
  if (foreign.length === 0) {
    return { check, status: 'ok', detail: `no other DHCPv6 server answered a Solicit on ${probe.interface} within ${seconds}s${own}`, fix: '' };
  }
  const found = foreign.map(describe).join('; ');
  if (config.dhcp6?.mode === 'full') {
    return {
      check, status: 'fail', detail: `rogue DHCPv6 on ${probe.interface}: ${found}`,
      fix: `stop the DHCPv6 server at ${[...new Set(foreign.map((a) => withoutZone(a.sourceAddress)))].join(', ')} on this segment`,
    };
  }
  return { check, status: 'ok', detail: `expected with dhcp6.mode off: ${found}`, fix: '' };
}
