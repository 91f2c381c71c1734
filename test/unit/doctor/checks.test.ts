/**
 * Table tests of rackside doctor's pure decisions about the config and the provisioning
 * network (agent/doctor/checks.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigYaml, type Config } from '../../../agent/config.js';
import {
  checkConfig, checkDhcpReceiveBuffer, checkDhcpServers, checkInterface, checkPort, describeOffer, isRacksideHolder, portsToCheck, type PortNeed,
} from '../../../agent/doctor/checks.js';
import type { CheckResult, ConfigProbe, DhcpOffer, DhcpProbe, InterfaceProbe, PortProbe } from '../../../agent/doctor/types.js';

function config(yaml: string): Config {
  return parseConfigYaml(yaml, 'test.yaml', { agentId: 'rack-t' });
}

const FULL = config(`
provisioning: { interface: eth1, address: 192.0.2.1/24 }
dhcp: { mode: full, range: 192.0.2.100-192.0.2.199 }
http: { listen: "192.0.2.1:8081" }
`);
const PROXY = config(`
provisioning: { interface: eth1, address: 192.0.2.1/24 }
dhcp: { mode: proxy }
`);
const OFF = config('');

function expectLine(actual: CheckResult, expected: { status: CheckResult['status']; detail?: RegExp; fix?: RegExp }): void {
  assert.equal(actual.status, expected.status, `status of ${JSON.stringify(actual)}`);
  if (expected.detail !== undefined) assert.match(actual.detail, expected.detail);
  if (expected.fix !== undefined) assert.match(actual.fix, expected.fix);
  if (actual.status === 'fail') assert.notEqual(actual.fix, '', 'every failed line carries a fix');
}

const configCases: Record<string, [ConfigProbe, { status: CheckResult['status']; detail?: RegExp; fix?: RegExp }]> = {
  'parses': [{ path: '/etc/rackside/rackside.yaml', state: 'ok', config: FULL }, { status: 'ok', detail: /parses .*dhcp\.mode full/ }],
  'missing file': [{ path: '/etc/rackside/rackside.yaml', state: 'missing' }, { status: 'fail', detail: /does not exist/, fix: /rackside\.yaml\.example/ }],
  'unreadable file': [{ path: '/x.yaml', state: 'unreadable', error: 'EACCES' }, { status: 'fail', detail: /cannot read \/x\.yaml: EACCES/, fix: /permissions/ }],
  'invalid file, multi-line message on one line': [
    { path: '/x.yaml', state: 'invalid', error: 'invalid config /x.yaml (1 problem):\n  /x.yaml:3: dhcp.mode: expected full, got "fool"' },
    { status: 'fail', detail: /^invalid config .* dhcp\.mode: expected/, fix: /\/x\.yaml/ },
  ],
};
for (const [name, [probe, expected]] of Object.entries(configCases)) {
  test(`checkConfig: ${name}`, () => {
    const line = checkConfig(probe);
    expectLine(line, expected);
    assert.ok(!line.detail.includes('\n'));
  });
}

const eth1 = (over: Partial<InterfaceProbe> = {}): InterfaceProbe => ({
  name: 'eth1', exists: true, operState: 'up', mac: '52:54:00:12:34:56', addresses: [{ address: '192.0.2.1', prefixLength: 24 }], ...over,
});

const interfaceCases: Record<string, [Config, InterfaceProbe | undefined, { status: CheckResult['status']; detail?: RegExp; fix?: RegExp }]> = {
  'present with the address': [FULL, eth1(), { status: 'ok', detail: /eth1 \(up\) has 192\.0\.2\.1, MAC 52:54:00:12:34:56/ }],
  'not configured, dhcp off': [OFF, undefined, { status: 'skip', detail: /not set \(dhcp\.mode off\)/ }],
  'missing interface': [FULL, { name: 'eth1', exists: false, addresses: [] }, { status: 'fail', detail: /eth1 not found/, fix: /ip -br link/ }],
  'interface administratively down': [FULL, eth1({ operState: 'down', adminUp: false }), { status: 'fail', detail: /eth1 is administratively down \(192\.0\.2\.1\/24\)/, fix: /ip link set eth1 up/ }],
  'up without carrier (a bridge whose guests have not started) warns': [FULL, eth1({ operState: 'down', adminUp: true }), { status: 'warn', detail: /eth1 has 192\.0\.2\.1 but no carrier/, fix: /cable and switch port of eth1/ }],
  'no carrier and the wrong address still fails on the address': [FULL, eth1({ operState: 'lowerlayerdown', adminUp: true, addresses: [] }), { status: 'fail', detail: /eth1 has no IPv4 address, not 192\.0\.2\.1/ }],
  'wrong address': [FULL, eth1({ addresses: [{ address: '10.0.0.5', prefixLength: 8 }] }), { status: 'fail', detail: /has 10\.0\.0\.5\/8, not 192\.0\.2\.1/, fix: /ip addr add 192\.0\.2\.1\/24 dev eth1/ }],
  'no address at all': [FULL, eth1({ addresses: [] }), { status: 'fail', detail: /no IPv4 address/ }],
  'prefix differs': [FULL, eth1({ addresses: [{ address: '192.0.2.1', prefixLength: 16 }] }), { status: 'warn', detail: /\/16, the config says \/24/ }],
  'operstate unknown (veth, lo) is fine': [FULL, eth1({ operState: 'unknown' }), { status: 'ok' }],
};
for (const [name, [cfg, probe, expected]] of Object.entries(interfaceCases)) {
  test(`checkInterface: ${name}`, () => {
    expectLine(checkInterface(cfg, probe), expected);
  });
}

test('portsToCheck: DHCP ports are needed unless dhcp.mode is off; TFTP and boot HTTP follow the config', () => {
  assert.deepEqual(portsToCheck(FULL).map((p) => [p.port, p.protocol, p.address, p.needed]), [
    [67, 'udp', '0.0.0.0', true], [69, 'udp', '0.0.0.0', true], [4011, 'udp', '0.0.0.0', true], [8081, 'tcp', '192.0.2.1', true],
  ]);
  assert.deepEqual(portsToCheck(OFF).map((p) => [p.port, p.needed]), [[67, false], [69, true], [4011, false], [8081, true]]);
  const https = { ...FULL, http: { ...FULL.http, tls: { port: 8443 } } };
  assert.deepEqual(portsToCheck(https).at(-1), { label: 'port 8443/tcp (boot HTTPS)', protocol: 'tcp', address: '192.0.2.1', port: 8443, needed: true }, 'http.tls adds the HTTPS port');
});

const dhcpNeed: PortNeed = { label: 'port 67/udp (DHCP)', protocol: 'udp', address: '0.0.0.0', port: 67, needed: true };
const port = (over: Partial<PortProbe>): PortProbe => ({ protocol: 'udp', address: '0.0.0.0', port: 67, bind: 'in-use', holders: [], ...over });
const agentHolder = { command: 'node', pid: 42, cmdline: '/usr/bin/node /usr/lib/rackside/dist/agent/cli.js agent --config /etc/rackside/rackside.yaml' };
const dnsmasq = { command: 'dnsmasq', pid: 77, cmdline: '/usr/sbin/dnsmasq -x /run/dnsmasq/dnsmasq.pid' };

const portCases: Record<string, [PortNeed, PortProbe, { status: CheckResult['status']; detail?: RegExp; fix?: RegExp }]> = {
  'free': [dhcpNeed, port({ bind: 'free' }), { status: 'ok', detail: /0\.0\.0\.0:67 is free/ }],
  'held by rackside': [dhcpNeed, port({ holders: [agentHolder] }), { status: 'ok', detail: /held by rackside: node \(pid 42\)/ }],
  'held by dnsmasq': [dhcpNeed, port({ holders: [dnsmasq] }), { status: 'fail', detail: /held by dnsmasq \(pid 77\)/, fix: /stop dnsmasq \(pid 77\).*except-interface/ }],
  'held by rackside and dnsmasq': [dhcpNeed, port({ holders: [agentHolder, dnsmasq] }), { status: 'fail', detail: /dnsmasq/ }],
  'held by a server bound to another interface': [dhcpNeed, port({ holders: [{ ...dnsmasq, device: 'eth0' }] }), { status: 'ok', detail: /dnsmasq \(pid 77\) on eth0, not on eth1/ }],
  'held by a server bound to the provisioning interface': [dhcpNeed, port({ holders: [{ ...dnsmasq, device: 'eth1' }] }), { status: 'fail' }],
  'in use, holder unknown': [dhcpNeed, port({ error: 'EADDRINUSE' }), { status: 'fail', detail: /holder unknown/, fix: /ss -lunpt/ }],
  'taken but not needed': [{ ...dhcpNeed, needed: false }, port({ holders: [dnsmasq] }), { status: 'skip', detail: /not needed/ }],
  'cannot bind as non-root, nobody listens': [dhcpNeed, port({ bind: 'denied', error: 'EACCES' }), { status: 'warn', detail: /cannot test .*EACCES/, fix: /as root/ }],
  'cannot bind as non-root, dnsmasq listens': [dhcpNeed, port({ bind: 'denied', error: 'EACCES', holders: [dnsmasq] }), { status: 'fail', detail: /dnsmasq/ }],
};
for (const [name, [need, probe, expected]] of Object.entries(portCases)) {
  test(`checkPort: ${name}`, () => {
    expectLine(checkPort(need, probe, 'eth1'), expected);
  });
}

test('isRacksideHolder: the installed wrapper, the unit command line, a repo checkout; not others', () => {
  assert.equal(isRacksideHolder(agentHolder), true);
  assert.equal(isRacksideHolder({ command: 'node', cmdline: 'node dist/agent/cli.js agent --demo' }), true);
  assert.equal(isRacksideHolder({ command: 'rackside' }), true);
  assert.equal(isRacksideHolder(dnsmasq), false);
  assert.equal(isRacksideHolder({ command: 'node', cmdline: 'node server.js' }), false);
});

const rogue = { serverId: '192.0.2.2', sourceAddress: '192.0.2.2', offeredAddress: '192.0.2.57' };
const done = (offers: DhcpOffer[]): DhcpProbe => ({ state: 'done', interface: 'eth1', listenMs: 3000, offers });
const OURS = ['192.0.2.1'];

const dhcpCases: Record<string, [Config, DhcpProbe, { status: CheckResult['status']; detail?: RegExp; fix?: RegExp }]> = {
  'nobody answers': [FULL, done([]), { status: 'ok', detail: /no other DHCP server answered a DISCOVER on eth1 within 3\.0s/ }],
  'only rackside answers': [FULL, done([{ serverId: '192.0.2.1', sourceAddress: '192.0.2.1', offeredAddress: '192.0.2.100' }]), { status: 'ok', detail: /rackside itself answered/ }],
  'rogue server in full mode': [FULL, done([rogue]), { status: 'fail', detail: /rogue DHCP on eth1: server 192\.0\.2\.2 offered 192\.0\.2\.57/, fix: /stop the DHCP server at 192\.0\.2\.2.*dhcp\.mode: proxy/ }],
  'rogue server answering twice is named once': [FULL, done([rogue, rogue]), { status: 'fail', detail: /^rogue DHCP on eth1: server 192\.0\.2\.2 offered 192\.0\.2\.57$/ }],
  'two rogue servers': [FULL, done([rogue, { serverId: '192.0.2.3', sourceAddress: '192.0.2.3', offeredAddress: '192.0.2.80' }]), { status: 'fail', detail: /192\.0\.2\.2 .*; server 192\.0\.2\.3 offered 192\.0\.2\.80/ }],
  'rogue proxyDHCP': [FULL, done([{ serverId: '192.0.2.9', sourceAddress: '192.0.2.9', offeredAddress: '0.0.0.0', bootFile: 'pxelinux.0' }]), { status: 'fail', detail: /answered as proxyDHCP \(no address\), boot file pxelinux\.0/ }],
  'site server in proxy mode is expected': [PROXY, done([rogue]), { status: 'ok', detail: /expected with dhcp\.mode proxy: server 192\.0\.2\.2/ }],
  'site server in off mode is expected': [OFF, done([rogue]), { status: 'ok', detail: /expected with dhcp\.mode off/ }],
  'server without option 54 is named by source': [FULL, done([{ sourceAddress: '192.0.2.4', offeredAddress: '192.0.2.60' }]), { status: 'fail', detail: /192\.0\.2\.4 \(no server id\)/ }],
  'not run': [FULL, { state: 'not-run', reason: 'eth1 has no IPv4 address' }, { status: 'skip', detail: /no IPv4/ }],
  'probe error': [FULL, { state: 'error', error: 'bind EADDRINUSE 0.0.0.0:68' }, { status: 'warn', detail: /EADDRINUSE/ }],
};
for (const [name, [cfg, probe, expected]] of Object.entries(dhcpCases)) {
  test(`checkDhcpServers: ${name}`, () => {
    expectLine(checkDhcpServers(cfg, probe, OURS), expected);
  });
}

test('describeOffer names a relayed server by option 54 and the relay it came through', () => {
  assert.equal(describeOffer({ serverId: '198.51.100.2', sourceAddress: '192.0.2.254', offeredAddress: '192.0.2.77' }), 'server 198.51.100.2 via 192.0.2.254 offered 192.0.2.77');
});

test('DHCP receive buffer: rmem_max below the 1 MiB the sockets ask for warns with the sysctl; off skips', () => {
  expectLine(checkDhcpReceiveBuffer(FULL, 212_992), { status: 'warn', detail: /net\.core\.rmem_max is 208 KiB: the DHCP sockets get that instead of 1024 KiB/, fix: /sysctl -w net\.core\.rmem_max=1048576; .*\/etc\/sysctl\.d\/60-rackside\.conf/ });
  expectLine(checkDhcpReceiveBuffer(PROXY, 1 << 20), { status: 'ok', detail: /1024 KiB ≥ the 1024 KiB/ });
  expectLine(checkDhcpReceiveBuffer(FULL, 4 << 20), { status: 'ok', detail: /4096 KiB/ });
  expectLine(checkDhcpReceiveBuffer(FULL, undefined), { status: 'warn', detail: /cannot read \/proc\/sys\/net\/core\/rmem_max/ });
  expectLine(checkDhcpReceiveBuffer(OFF, 212_992), { status: 'skip' });
});
