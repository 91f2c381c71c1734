/**
 * @module The `network_data.json` a config drive gets when the host has no networkData secret
 * and its provisioning network has IPv6: without one, cloud-init's fallback configures DHCPv4
 * on the first NIC only, and an IPv6-only host comes up unreachable. The file follows the
 * OpenStack network_data format cloud-init's ConfigDrive datasource reads (`links`, `networks`,
 * `services`): one `phy` link for the boot NIC by MAC, and per family a network on it —
 * `ipv4_dhcp`; `ipv6_dhcp` (stateful DHCPv6), `ipv6_slaac` (addresses from router
 * advertisements) or `ipv6` (a fixed address with its netmask) —, DNS servers as `dns` services.
 * @pure
 */

/** How the boot NIC gets its IPv6 address. */
export type Ipv6Method = 'dhcp' | 'slaac' | { address: string; prefixLength: number; gateway?: string };

/** Inputs of {@link renderDefaultNetworkData}. */
export interface DefaultNetworkDataInput {
  /** The boot NIC's MAC (`spec.bootMACAddress`). */
  mac: string;
  /** DHCPv4 on the boot NIC (a dual-stack provisioning network). */
  ipv4Dhcp: boolean;
  /** IPv6 on the boot NIC; none: an IPv4-only network (then the file adds nothing cloud-init lacks). */
  ipv6?: Ipv6Method;
  dns?: readonly string[];
}

/** The IPv6 netmask of a prefix length (`64` → `ffff:ffff:ffff:ffff::`), as cloud-init's `ipv6` networks spell it. */
export function ipv6Netmask(prefixLength: number): string {
  if (!Number.isInteger(prefixLength) || prefixLength < 0 || prefixLength > 128) throw new RangeError(`IPv6 prefix length must be 0-128, got ${prefixLength}`);
  const groups: string[] = [];
  for (let i = 0; i < 8; i++) {
    const bits = Math.max(0, Math.min(16, prefixLength - i * 16));
    groups.push(((0xffff << (16 - bits)) & 0xffff).toString(16));
  }
  const zeroFrom = groups.indexOf('0');
  if (zeroFrom === -1) return groups.join(':');
  return zeroFrom === 0 ? '::' : `${groups.slice(0, zeroFrom).join(':')}::`;
}

function ipv6Network(method: Ipv6Method, id: string, link: string): Record<string, unknown> {
  if (method === 'dhcp') return { id, type: 'ipv6_dhcp', link, network_id: id };
  if (method === 'slaac') return { id, type: 'ipv6_slaac', link, network_id: id };
  const routes = method.gateway === undefined ? [] : [{ network: '::', netmask: '::', gateway: method.gateway }];
  return { id, type: 'ipv6', link, network_id: id, ip_address: method.address, netmask: ipv6Netmask(method.prefixLength), routes };
}

/**
 * Returns the default network_data.json object for the boot NIC, or `undefined` when it would
 * say nothing cloud-init's fallback does not (no IPv6) or the MAC is empty.
 */
export function renderDefaultNetworkData(input: DefaultNetworkDataInput): Record<string, unknown> | undefined {
  const mac = input.mac.trim().toLowerCase();
  if (input.ipv6 === undefined || mac === '') return undefined;
  const link = 'boot0';
  const networks: Record<string, unknown>[] = [];
  if (input.ipv4Dhcp) networks.push({ id: 'network0', type: 'ipv4_dhcp', link, network_id: 'network0' });
  const id = `network${networks.length}`;
  networks.push(ipv6Network(input.ipv6, id, link));
  return {
    links: [{ id: link, type: 'phy', ethernet_mac_address: mac }],
    networks,
    services: (input.dns ?? []).map((address) => ({ type: 'dns', address })),
  };
}
