/**
 * The default network_data.json of an IPv6 provisioning network (images/config-drive-network.ts)
 * and its choice from the agent's config (agent/provisioner/local/default-network-data.ts):
 * golden objects in the OpenStack network_data format cloud-init reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ipv6Netmask, renderDefaultNetworkData } from '../../../images/config-drive-network.js';
import { defaultNetworkDataOf } from '../../../agent/provisioner/local/default-network-data.js';
import type { Config } from '../../../agent/config.js';

const MAC = '52:54:00:AA:06:01';

test('IPv6-only with DHCPv6: one phy link by MAC, one ipv6_dhcp network, the DNS servers', () => {
  assert.deepEqual(renderDefaultNetworkData({ mac: MAC, ipv4Dhcp: false, ipv6: 'dhcp', dns: ['fd00:1::53'] }), {
    links: [{ id: 'boot0', type: 'phy', ethernet_mac_address: '52:54:00:aa:06:01' }],
    networks: [{ id: 'network0', type: 'ipv6_dhcp', link: 'boot0', network_id: 'network0' }],
    services: [{ type: 'dns', address: 'fd00:1::53' }],
  });
});

test('dual-stack with SLAAC: ipv4_dhcp then ipv6_slaac on the same link', () => {
  const data = renderDefaultNetworkData({ mac: MAC, ipv4Dhcp: true, ipv6: 'slaac' });
  assert.deepEqual(data?.networks, [
    { id: 'network0', type: 'ipv4_dhcp', link: 'boot0', network_id: 'network0' },
    { id: 'network1', type: 'ipv6_slaac', link: 'boot0', network_id: 'network1' },
  ]);
  assert.deepEqual(data.services, []);
});

test('a fixed IPv6 address: type ipv6 with its netmask and default route', () => {
  const data = renderDefaultNetworkData({ mac: MAC, ipv4Dhcp: false, ipv6: { address: 'fd00:1::105', prefixLength: 64, gateway: 'fd00:1::1' } });
  assert.deepEqual(data?.networks, [{
    id: 'network0', type: 'ipv6', link: 'boot0', network_id: 'network0', ip_address: 'fd00:1::105', netmask: 'ffff:ffff:ffff:ffff::',
    routes: [{ network: '::', netmask: '::', gateway: 'fd00:1::1' }],
  }]);
});

test('nothing to add: no IPv6, or no MAC', () => {
  assert.equal(renderDefaultNetworkData({ mac: MAC, ipv4Dhcp: true }), undefined);
  assert.equal(renderDefaultNetworkData({ mac: ' ', ipv4Dhcp: false, ipv6: 'dhcp' }), undefined);
});

test('ipv6Netmask', () => {
  assert.equal(ipv6Netmask(64), 'ffff:ffff:ffff:ffff::');
  assert.equal(ipv6Netmask(56), 'ffff:ffff:ffff:ff00::');
  assert.equal(ipv6Netmask(128), 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
  assert.equal(ipv6Netmask(0), '::');
  assert.throws(() => ipv6Netmask(129), RangeError);
});

function config(address: string | undefined, address6: string | undefined, dhcp6: 'full' | 'off' | undefined): Pick<Config, 'provisioning' | 'dhcp' | 'dhcp6'> {
  return {
    provisioning: { ...(address === undefined ? {} : { address }), ...(address6 === undefined ? {} : { address6 }) },
    dhcp: { mode: address === undefined ? 'off' : 'full' },
    ...(dhcp6 === undefined ? {} : { dhcp6: { mode: dhcp6, dns: ['fd00:1::53'] } }),
  } as unknown as Pick<Config, 'provisioning' | 'dhcp' | 'dhcp6'>;
}

test('defaultNetworkDataOf: by the provisioning network\'s families and dhcp6 mode', () => {
  assert.equal(defaultNetworkDataOf(config('192.0.2.1', undefined, undefined)), undefined);
  const types = (c: ReturnType<typeof config>): unknown => (defaultNetworkDataOf(c)?.(MAC) as { networks: { type: string }[] }).networks.map((n) => n.type);
  assert.deepEqual(types(config(undefined, 'fd00:1::1', 'full')), ['ipv6_dhcp']);
  assert.deepEqual(types(config('192.0.2.1', 'fd00:1::1', 'full')), ['ipv4_dhcp', 'ipv6_dhcp']);
  assert.deepEqual(types(config('192.0.2.1', 'fd00:1::1', 'off')), ['ipv4_dhcp', 'ipv6_slaac']);
});
