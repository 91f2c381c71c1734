/** The doctor's IPv6 check of the provisioning interface (agent/doctor/checks-ipv6.ts), as a table. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigYaml, type Config } from '../../../agent/config.js';
import { checkInterface6 } from '../../../agent/doctor/checks-ipv6.js';
import type { CheckResult, InterfaceProbe } from '../../../agent/doctor/types.js';
import { parseIpAddrJson6 } from '../../../bootsvc/net/interface-addresses.js';

const config = (yaml: string): Config => parseConfigYaml(yaml, 'test.yaml', { agentId: 'rack-t' });
const V4 = config('provisioning: { interface: eth1, address: 192.0.2.1/24 }\n');
const DUAL = config('provisioning: { interface: eth1, address: [192.0.2.1/24, "fd00:1::1/64"] }\n');
const RA = config('provisioning: { interface: eth1, address: [192.0.2.1/24, "fd00:1::1/64"] }\ndhcp6: { mode: full, range: "fd00:1::100-fd00:1::1ff", routerAdvertisements: "on" }\n');

const global = { address: 'fd00:1::1', prefixLength: 64, scope: 'global', tentative: false, dadFailed: false };
const linkLocal = { address: 'fe80::5054:ff:fe12:3456', prefixLength: 64, scope: 'link', tentative: false, dadFailed: false };
const eth1 = (addresses6: InterfaceProbe['addresses6']): InterfaceProbe => ({ name: 'eth1', exists: true, addresses: [{ address: '192.0.2.1', prefixLength: 24 }], addresses6 });

const cases: Record<string, [Config, InterfaceProbe | undefined, { status: CheckResult['status']; detail: RegExp; fix?: RegExp } | undefined]> = {
  'IPv4-only config: no line': [V4, eth1([linkLocal]), undefined],
  'interface missing: no line (the IPv4 check fails)': [DUAL, { name: 'eth1', exists: false, addresses: [] }, undefined],
  'present with its link-local address': [DUAL, eth1([global, linkLocal]), { status: 'ok', detail: /eth1 has fd00:1::1\/64 and fe80::5054:ff:fe12:3456/ }],
  'missing': [DUAL, eth1([linkLocal]), { status: 'fail', detail: /eth1 has fe80::5054:ff:fe12:3456\/64, not fd00:1::1$/, fix: /ip addr add fd00:1::1\/64 dev eth1/ }],
  'IPv6 off on the interface': [DUAL, eth1([]), { status: 'fail', detail: /no IPv6 address, not fd00:1::1 \(is IPv6 switched off\? sysctl net\.ipv6\.conf\.eth1\.disable_ipv6\)/ }],
  'duplicate address detection failed': [DUAL, eth1([{ ...global, tentative: true, dadFailed: true }, linkLocal]), { status: 'fail', detail: /failed duplicate address detection/, fix: /ip -6 neigh/ }],
  'tentative': [DUAL, eth1([{ ...global, tentative: true }, linkLocal]), { status: 'warn', detail: /is tentative/ }],
  'prefix differs': [DUAL, eth1([{ ...global, prefixLength: 48 }, linkLocal]), { status: 'warn', detail: /fd00:1::1\/48, the config says \/64/ }],
  'router advertisements without a link-local address': [RA, eth1([global]), { status: 'fail', detail: /no usable link-local address/, fix: /addr_gen_mode/ }],
  'router advertisements with a tentative link-local address': [RA, eth1([global, { ...linkLocal, tentative: true }]), { status: 'fail', detail: /no usable link-local address/ }],
  'router advertisements with a link-local address': [RA, eth1([global, linkLocal]), { status: 'ok', detail: /and fe80::/ }],
};

for (const [name, [cfg, probe, want]] of Object.entries(cases)) {
  test(`checkInterface6: ${name}`, () => {
    const line = checkInterface6(cfg, probe);
    if (want === undefined) {
      assert.equal(line, undefined);
      return;
    }
    assert.ok(line !== undefined);
    assert.equal(line.status, want.status, JSON.stringify(line));
    assert.match(line.detail, want.detail);
    if (want.fix !== undefined) assert.match(line.fix, want.fix);
    if (line.status === 'fail') assert.notEqual(line.fix, '');
  });
}

test('ip -j -6 addr output: addresses with scope, tentative and dadfailed', () => {
  const text = JSON.stringify([{ ifname: 'eth1', addr_info: [
    { family: 'inet', local: '192.0.2.1', prefixlen: 24 },
    { family: 'inet6', local: 'fd00:1::1', prefixlen: 64, scope: 'global', tentative: true, dadfailed: true },
    { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
  ] }]);
  assert.deepEqual(parseIpAddrJson6(text), [
    { address: 'fd00:1::1', prefixLength: 64, scope: 'global', tentative: true, dadFailed: true },
    { address: 'fe80::1', prefixLength: 64, scope: 'link', tentative: false, dadFailed: false },
  ]);
});
