import assert from 'node:assert/strict';
import { test } from 'node:test';
import { interfaceIpv4Addresses, parseIpAddrJson } from '../../../../bootsvc/net/interface-addresses.js';

// `ip -j -4 addr show dev br0` (iproute2 6.1) for a bridge without carrier: NO-CARRIER, operstate DOWN, address kept.
const NO_CARRIER = '[{"ifindex":2,"ifname":"br0","flags":["NO-CARRIER","BROADCAST","MULTICAST","UP"],"mtu":1500,"qdisc":"noqueue","operstate":"DOWN","group":"default","txqlen":1000,'
  + '"addr_info":[{"family":"inet","local":"192.0.2.1","prefixlen":24,"scope":"global","label":"br0","valid_life_time":4294967295,"preferred_life_time":4294967295},'
  + '{"family":"inet","local":"198.51.100.7","prefixlen":32,"scope":"global","secondary":true,"label":"br0"}]}]';

test('parseIpAddrJson: every inet address with its prefix, carrier or not', () => {
  assert.deepEqual(parseIpAddrJson(NO_CARRIER), [{ address: '192.0.2.1', prefixLength: 24 }, { address: '198.51.100.7', prefixLength: 32 }]);
});

test('parseIpAddrJson: no links, an interface without addresses, other families and junk entries give nothing', () => {
  assert.deepEqual(parseIpAddrJson('[]'), []);
  assert.deepEqual(parseIpAddrJson('[{"ifname":"eth9","addr_info":[]}]'), []);
  assert.deepEqual(parseIpAddrJson('[{"addr_info":[{"family":"inet6","local":"fe80::1","prefixlen":64},{"family":"inet","local":7},null]},3,{}]'), []);
  assert.deepEqual(parseIpAddrJson('{"not":"a list"}'), []);
});

test('parseIpAddrJson: text that is not JSON throws', () => {
  assert.throws(() => parseIpAddrJson('Device "x" does not exist.'), SyntaxError);
});

test('interfaceIpv4Addresses: loopback has 127.0.0.1/8; an unknown interface has none', async () => {
  assert.ok((await interfaceIpv4Addresses('lo')).some((a) => a.address === '127.0.0.1' && a.prefixLength === 8));
  assert.deepEqual(await interfaceIpv4Addresses('nosuch0'), []);
});
