/**
 * Config `dhcp6` and the IPv6 entries of `provisioning.address` (agent/config-dhcp6.ts): what
 * decodes, that every existing spelling of `provisioning.address` still does, and that a
 * section which would do nothing is an error naming the key.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeConfig, type ConfigProblem } from '../../agent/config.js';
import { unreachableOverIpv6 } from '../../agent/boot/boot-services6.js';
import { unusedConfigSections } from '../../agent/provisioner/unused-sections.js';
import { configProblems } from '../helpers/config-problems.js';

const defaults = { agentId: 'rack-a' };

function problemsOf(input: unknown): ConfigProblem[] {
  return configProblems(input, defaults);
}

test('provisioning.address keeps its IPv4 spellings and takes a list with one IPv6 address', () => {
  assert.deepEqual(decodeConfig({ provisioning: { address: '192.0.2.1' } }, defaults).provisioning, { address: '192.0.2.1' });
  assert.deepEqual(decodeConfig({ provisioning: { address: '192.0.2.1/24' } }, defaults).provisioning, { address: '192.0.2.1', prefixLength: 24 });
  assert.deepEqual(decodeConfig({ provisioning: { address: ['192.0.2.1/24', 'FD00:1:0::1/64'] } }, defaults).provisioning, { address: '192.0.2.1', prefixLength: 24, address6: 'fd00:1::1', prefixLength6: 64 });
  assert.deepEqual(decodeConfig({ provisioning: { address: 'fd00:1::1' } }, defaults).provisioning, { address6: 'fd00:1::1', prefixLength6: 64 });
});

test('provisioning.address refuses two of a family and malformed entries', () => {
  assert.deepEqual(problemsOf({ provisioning: { address: ['fd00:1::1/64', 'fd00:2::1/64'] } }).map((p) => p.path), ['provisioning.address[1]']);
  assert.deepEqual(problemsOf({ provisioning: { address: ['192.0.2.1', '192.0.2.2'] } }).map((p) => p.path), ['provisioning.address[1]']);
  assert.deepEqual(problemsOf({ provisioning: { address: 'fd00::1::2/64' } }).map((p) => p.path), ['provisioning.address']);
  assert.deepEqual(problemsOf({ provisioning: { address: 'fd00::1/129' } }).map((p) => p.path), ['provisioning.address']);
});

const dualStack = { interface: 'eth1', address: ['192.0.2.1/24', 'fd00:1::1/64'] };

test('dhcp6 full decodes with its range, lease time and DNS; absent it is off', () => {
  const c = decodeConfig({ provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100 - fd00:1::1ff', dns: ['FD00:1::53'], leaseSeconds: 600 } }, defaults);
  assert.deepEqual(c.dhcp6, { mode: 'full', ranges: [{ subnet: 'fd00:1::/64', first: 'fd00:1::100', last: 'fd00:1::1ff' }], leaseSeconds: 600, dns: ['fd00:1::53'], routerAdvertisements: 'off', raAutonomous: 'off', raRouterLifetime: 0 });
  const relayed = decodeConfig({ provisioning: dualStack, dhcp6: { mode: 'full', range: [{ subnet: 'fd00:1::/64', range: 'fd00:1::100-fd00:1::1ff' }, { subnet: 'fd00:2:0:0::/64', range: 'fd00:2::100-fd00:2::1ff' }] } }, defaults);
  assert.deepEqual(relayed.dhcp6?.ranges.map((x) => x.subnet), ['fd00:1::/64', 'fd00:2::/64']);
  assert.equal(decodeConfig({}, defaults).dhcp6, undefined);
});

test('router advertisements decode with their prefix flag and router lifetime', () => {
  const c = decodeConfig({ provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff', routerAdvertisements: 'on', raAutonomous: 'on', raRouterLifetime: 1800 } }, defaults);
  assert.deepEqual([c.dhcp6?.routerAdvertisements, c.dhcp6?.raAutonomous, c.dhcp6?.raRouterLifetime], ['on', 'on', 1800]);
  const d = decodeConfig({ provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff', routerAdvertisements: 'on' } }, defaults);
  assert.deepEqual([d.dhcp6?.raAutonomous, d.dhcp6?.raRouterLifetime], ['off', 0]);
});

const bad: Record<string, { input: unknown; paths: string[] }> = {
  'a section without a mode': { input: { provisioning: dualStack, dhcp6: { range: 'fd00:1::100-fd00:1::1ff' } }, paths: ['dhcp6.mode'] },
  'a range with mode off': { input: { provisioning: dualStack, dhcp6: { mode: 'off', range: 'fd00:1::100-fd00:1::1ff' } }, paths: ['dhcp6.mode'] },
  'full without an IPv6 address': { input: { provisioning: { interface: 'eth1', address: '192.0.2.1/24' }, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff' } }, paths: ['provisioning.address'] },
  'full without a range': { input: { provisioning: dualStack, dhcp6: { mode: 'full' } }, paths: ['dhcp6.range'] },
  'a range outside the prefix': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:2::100-fd00:2::1ff' } }, paths: ['dhcp6.range'] },
  'a range holding the agent': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::-fd00:1::1ff' } }, paths: ['dhcp6.range'] },
  'a reversed range': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::1ff-fd00:1::100' } }, paths: ['dhcp6.range'] },
  'router advertisements neither on nor off': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff', routerAdvertisements: 'yes' } }, paths: ['dhcp6.routerAdvertisements'] },
  'RA settings without router advertisements': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff', raAutonomous: 'on', raRouterLifetime: 1800 } }, paths: ['dhcp6.raAutonomous', 'dhcp6.raRouterLifetime'] },
  'a router lifetime below MaxRtrAdvInterval': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff', routerAdvertisements: 'on', raRouterLifetime: 30 } }, paths: ['dhcp6.raRouterLifetime'] },
  'a router lifetime above 9000 s': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff', routerAdvertisements: 'on', raRouterLifetime: 9001 } }, paths: ['dhcp6.raRouterLifetime'] },
  'a list entry outside its subnet': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: [{ subnet: 'fd00:2::/64', range: 'fd00:3::1-fd00:3::9' }] } }, paths: ['dhcp6.range[0].range'] },
  'a list entry without a prefix length': { input: { provisioning: dualStack, dhcp6: { mode: 'full', range: [{ subnet: 'fd00:2::', range: 'fd00:2::1-fd00:2::9' }] } }, paths: ['dhcp6.range[0].subnet'] },
  'an unknown key': { input: { dhcp6: { mode: 'off', rnage: 'x' } }, paths: ['dhcp6.rnage'] },
};

for (const [name, { input, paths }] of Object.entries(bad)) {
  test(`dhcp6: ${name} is an error at ${paths.join(', ')}`, () => {
    assert.deepEqual(problemsOf(input).map((p) => p.path), paths);
  });
}

test('a dhcp6 section under a provisioner without boot services is reported unused', () => {
  const c = decodeConfig({ provisioner: 'fixture', dhcp6: { mode: 'off' } }, defaults);
  assert.deepEqual(unusedConfigSections(c).map((u) => u.section), ['dhcp6']);
});

test('with an IPv6 provisioning address boot HTTP and TFTP listen on :: by default; IPv4-only configs keep 0.0.0.0', () => {
  const dual = decodeConfig({ provisioning: dualStack }, defaults);
  assert.deepEqual([dual.http.listen, dual.tftp.listen], [{ host: '::', port: 8081 }, { host: '::', port: 69 }]);
  const v4 = decodeConfig({ provisioning: { interface: 'eth1', address: '192.0.2.1/24' } }, defaults);
  assert.deepEqual([v4.http.listen, v4.tftp.listen], [{ host: '0.0.0.0', port: 8081 }, { host: '0.0.0.0', port: 69 }]);
  const set = decodeConfig({ provisioning: dualStack, http: { listen: '192.0.2.1:8081' } }, defaults);
  assert.deepEqual(set.http.listen, { host: '192.0.2.1', port: 8081 }, 'a configured listen address is kept');
});

test('the agent warns when boot HTTP or TFTP listen where IPv6 clients cannot reach them', () => {
  const base = { provisioning: dualStack, dhcp6: { mode: 'full', range: 'fd00:1::100-fd00:1::1ff' } };
  assert.deepEqual(unreachableOverIpv6(decodeConfig({ ...base, http: { listen: '0.0.0.0:8081' }, tftp: { listen: '192.0.2.1:69' } }, defaults)).map((w) => w.split(' but ')[1]?.split(' is ')[0]), ['http.listen', 'tftp.listen']);
  assert.deepEqual(unreachableOverIpv6(decodeConfig(base, defaults)), [], 'the defaults reach IPv6 clients');
  assert.deepEqual(unreachableOverIpv6(decodeConfig({ ...base, http: { listen: '[::]:8081' }, tftp: { listen: '[fd00:1::1]:69' } }, defaults)), []);
  assert.deepEqual(unreachableOverIpv6(decodeConfig({ provisioning: { address: '192.0.2.1/24' } }, defaults)), []);
});
