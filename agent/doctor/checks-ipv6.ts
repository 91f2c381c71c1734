/**
 * @module The doctor's IPv6 check of the provisioning interface (docs/ipv6.md): when
 * `provisioning.address` has an IPv6 entry, the interface must carry it (DHCPv6 answers and boot
 * URLs name it), not tentative or failed in duplicate address detection (RFC 4862 §5.4: it
 * cannot be bound or used then), with the configured prefix length; and with router
 * advertisements on it needs a link-local address, the source of every advertisement
 * (RFC 4861 §4.2).
 * @pure
 */
import type { Config } from '../config.js';
import type { CheckResult, InterfaceProbe } from './types.js';

/** The addresses of `probe` as `ADDRESS/LEN` text (tentative ones marked), or `no IPv6 address`. */
function list6(probe: InterfaceProbe): string {
  const a = probe.addresses6 ?? [];
  return a.length === 0 ? 'no IPv6 address' : a.map((x) => `${x.address}/${x.prefixLength}${x.dadFailed ? ' (dadfailed)' : x.tentative ? ' (tentative)' : ''}`).join(', ');
}

/**
 * Verdict on the IPv6 address of the provisioning interface; undefined (no line) when the config
 * has no IPv6 provisioning address or the interface is missing (the IPv4 check reports that).
 */
export function checkInterface6(config: Config, probe: InterfaceProbe | undefined): CheckResult | undefined {
  const { interface: name, address6, prefixLength6 } = config.provisioning;
  if (address6 === undefined || name === undefined || probe?.exists !== true) return undefined;
  const check = 'provisioning IPv6 address';
  const cidr = `${address6}/${prefixLength6 ?? 64}`;
  const persist = 'and make it permanent (/etc/network/interfaces or systemd-networkd)';
  const onIface = (probe.addresses6 ?? []).find((a) => a.address === address6);
  if (onIface === undefined) {
    const off = (probe.addresses6 ?? []).length === 0 ? ` (is IPv6 switched off? sysctl net.ipv6.conf.${name}.disable_ipv6)` : '';
    return { check, status: 'fail', detail: `${name} has ${list6(probe)}, not ${address6}${off}`, fix: `ip addr add ${cidr} dev ${name}, ${persist}` };
  }
  if (onIface.dadFailed) {
    return { check, status: 'fail', detail: `${address6} on ${name} failed duplicate address detection: another node on the link has it`, fix: `find the other node (ip -6 neigh show dev ${name}) or choose another provisioning.address` };
  }
  if (onIface.tentative) {
    return { check, status: 'warn', detail: `${address6} on ${name} is tentative (duplicate address detection still running): DHCPv6 relays cannot reach the agent yet`, fix: `wait a few seconds; if it stays tentative, check the link of ${name}` };
  }
  if (prefixLength6 !== undefined && onIface.prefixLength !== prefixLength6) {
    return { check, status: 'warn', detail: `${name} has ${address6}/${onIface.prefixLength}, the config says /${prefixLength6}`, fix: `make provisioning.address and the interface agree (ip addr replace ${cidr} dev ${name})` };
  }
  const linkLocal = (probe.addresses6 ?? []).find((a) => a.scope === 'link' && !a.tentative && !a.dadFailed);
  if (config.dhcp6?.routerAdvertisements === 'on' && linkLocal === undefined) {
    return { check, status: 'fail', detail: `${name} has no usable link-local address: router advertisements are sent from one (${list6(probe)})`, fix: `ip link set ${name} down && ip link set ${name} up (the kernel adds fe80::/64), or set net.ipv6.conf.${name}.addr_gen_mode to 0` };
  }
  return { check, status: 'ok', detail: `${name} has ${cidr}${linkLocal === undefined ? '' : ` and ${linkLocal.address}`}`, fix: '' };
}
