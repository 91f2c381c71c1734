/**
 * @module The network_data.json a host without a networkData secret gets on its config drive
 * when the provisioning network has IPv6 (images/config-drive-network.ts, docs/ipv6.md): the
 * boot NIC with DHCPv4 when the agent serves it, and DHCPv6 (`dhcp6.mode: full`) or else SLAAC,
 * with the `dhcp6.dns` servers.
 */
import { renderDefaultNetworkData } from '../../../images/index.js';
import type { Config } from '../../config.js';

/** The default network data per boot MAC for `config`; `undefined` on an IPv4-only network. */
export function defaultNetworkDataOf(config: Pick<Config, 'provisioning' | 'dhcp' | 'dhcp6'>): ((bootMac: string) => unknown) | undefined {
  if (config.provisioning.address6 === undefined) return undefined;
  const ipv4Dhcp = config.provisioning.address !== undefined && config.dhcp.mode !== 'off';
  const full = config.dhcp6?.mode === 'full';
  const dns = config.dhcp6?.dns ?? [];
  return (mac) => renderDefaultNetworkData({ mac, ipv4Dhcp, ipv6: full ? 'dhcp' : 'slaac', dns });
}
