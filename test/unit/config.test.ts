import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ConfigError, decodeConfig, parseConfigYaml, type ConfigProblem } from '../../agent/config.js';
import { isIpv6, parseCidr, parseListen } from '../../agent/config-decode.js';

const defaults = { agentId: 'rack-a' };

function problemsOf(fn: () => unknown): ConfigProblem[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.code, 'RACKSIDE_ERR_CONFIG');
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

test('an empty config gets every default', () => {
  for (const input of [undefined, null, {}]) {
    assert.deepEqual(decodeConfig(input, defaults), {
      agent: { id: 'rack-a', stateDir: '/var/lib/rackside' },
      provisioner: 'local',
      management: { listen: { host: '127.0.0.1', port: 8080 } },
      provisioning: {},
      dhcp: { mode: 'off', ranges: [], leaseSeconds: 3600, dns: [], unknownHosts: 'ignore' },
      discovery: { approve: 'auto', enrollBMC: false, maxPending: 32, maxHosts: 256, tokenTtlSeconds: 1800, namespace: 'default' },
      tftp: { listen: { host: '0.0.0.0', port: 69 }, maxTransfers: 1024, transferThread: 'on' },
      http: { listen: { host: '0.0.0.0', port: 8081 }, sendfile: 'on', tlsBoot: 'off' },
      images: { cacheDir: '/var/lib/rackside/images', ramdisk: {} },
      bmc: { concurrency: 32, powerPollSeconds: 60 },
      reconcile: { concurrency: 4, timeScale: 1, provisioningLimit: 20 },
      log: { level: 'info' },
    });
  }
});

test('an empty file is all defaults too', () => {
  assert.equal(parseConfigYaml('', '/etc/rackside/rackside.yaml', defaults).agent.id, 'rack-a');
  assert.equal(parseConfigYaml('# only comments\n', 'x.yaml', defaults).dhcp.mode, 'off');
});

test('a full config decodes with derived defaults', () => {
  const config = parseConfigYaml(`
agent: {id: rack-7, stateDir: /srv/rackside}
provisioner: demo
management: {listen: "0.0.0.0:9090", token: 0123456789abcdef0123}
provisioning: {interface: eth1, address: 192.0.2.1/24}
dhcp:
  mode: full
  range: 192.0.2.100-192.0.2.199
  router: 192.0.2.254
  dns: [192.0.2.53, 198.51.100.53]
  unknownHosts: discover
tftp: {listen: ":69", transferThread: off}
http: {listen: "[::]:8081", root: /srv/http, sendfile: off}
bmc: {concurrency: 2}
controller: {url: "https://central.example/api", token: t0k3n}
ssh:
  tunnel: {host: bastion.example, user: rack7, identity: /etc/rackside/id_ed25519, remotePort: 22007, hostKey: 'SHA256:0123456789abcdefghijklmnopqrstuvwxyzABCDEFG'}
reconcile: {timeScale: 0.01}
log: {level: debug}
`, 'r.yaml', defaults);
  assert.equal(config.agent.id, 'rack-7');
  assert.equal(config.images.cacheDir, '/srv/rackside/images');
  assert.deepEqual(config.management, { listen: { host: '0.0.0.0', port: 9090 }, token: '0123456789abcdef0123' });
  assert.deepEqual(config.provisioning, { interface: 'eth1', address: '192.0.2.1', prefixLength: 24 });
  assert.deepEqual(config.dhcp.ranges, [{ subnet: '192.0.2.0/24', prefixLength: 24, first: '192.0.2.100', last: '192.0.2.199', router: '192.0.2.254', dns: ['192.0.2.53', '198.51.100.53'] }]);
  assert.equal(config.dhcp.unknownHosts, 'discover');
  assert.deepEqual(config.tftp, { listen: { host: '0.0.0.0', port: 69 }, maxTransfers: 1024, transferThread: 'off' });
  assert.deepEqual(config.http, { listen: { host: '::', port: 8081 }, root: '/srv/http', sendfile: 'off', tlsBoot: 'off' });
  assert.deepEqual(config.controller, { url: 'https://central.example/api', urls: ['https://central.example/api'], token: 't0k3n', intervalSeconds: 60 });
  assert.deepEqual(config.ssh, {
    listen: { host: '0.0.0.0', port: 2222 }, hostKey: '/srv/rackside/ssh_host_ed25519_key', authorizedKeys: '/etc/rackside/authorized_keys',
    tunnel: { host: 'bastion.example', port: 22, user: 'rack7', hostKey: 'SHA256:0123456789abcdefghijklmnopqrstuvwxyzABCDEFG', identity: '/etc/rackside/id_ed25519', remotePort: 22007 },
  });
  assert.equal(config.reconcile.timeScale, 0.01);
  assert.equal(config.log.level, 'debug');
});

test('the provisioning limit defaults to upstream\'s 20', () => {
  assert.equal(decodeConfig({}, defaults).reconcile.provisioningLimit, 20);
  assert.equal(decodeConfig({ reconcile: { provisioningLimit: 3 } }, defaults).reconcile.provisioningLimit, 3);
});

test('bmc.ipmi.cipherSuites and bmc.powerStateChangeTimeoutSeconds: absent by default, decoded when given, 0 refused', () => {
  const empty = decodeConfig({}, defaults).bmc;
  assert.equal(empty.ipmi, undefined);
  assert.equal(empty.powerStateChangeTimeoutSeconds, undefined);
  const given = decodeConfig({ bmc: { ipmi: { cipherSuites: [3] }, powerStateChangeTimeoutSeconds: 20 } }, defaults).bmc;
  assert.deepEqual(given.ipmi, { cipherSuites: [3] });
  assert.equal(given.powerStateChangeTimeoutSeconds, 20);
  const problems = problemsOf(() => decodeConfig({ bmc: { ipmi: { cipherSuites: [17, 0] }, powerStateChangeTimeoutSeconds: 0 } }, defaults));
  assert.deepEqual(problems.map((p) => p.path), ['bmc.ipmi.cipherSuites', 'bmc.powerStateChangeTimeoutSeconds']);
  assert.match(problems[0]?.expected ?? '', /17 and 3.*never 0/);
});

test('ramdisk kernel params are split into arguments', () => {
  const config = decodeConfig({ images: { ramdisk: { kernelParams: 'no_timer_check console=ttyS1,115200' } } }, defaults);
  assert.deepEqual(config.images.ramdisk.kernelParams, ['no_timer_check', 'console=ttyS1,115200']);
  assert.equal(decodeConfig({}, defaults).images.ramdisk.kernelParams, undefined);
});

test('a list of ranges takes per-subnet router and dns, defaulting to the section values', () => {
  const config = decodeConfig({
    provisioning: { interface: 'eth1', address: '10.1.0.1' },
    dhcp: {
      mode: 'full', dns: ['10.1.0.53'],
      range: [
        { subnet: '10.1.0.0/24', range: '10.1.0.10-10.1.0.20', router: '10.1.0.1' },
        { subnet: '10.2.0.0/16', range: '10.2.1.0 - 10.2.1.255', dns: ['10.2.0.53'] },
      ],
    },
  }, defaults);
  assert.deepEqual(config.dhcp.ranges, [
    { subnet: '10.1.0.0/24', prefixLength: 24, first: '10.1.0.10', last: '10.1.0.20', router: '10.1.0.1', dns: ['10.1.0.53'] },
    { subnet: '10.2.0.0/16', prefixLength: 16, first: '10.2.1.0', last: '10.2.1.255', dns: ['10.2.0.53'] },
  ]);
});

/** Each case: a config and the one problem it must produce. */
const wrongKeys: Record<string, { input: unknown; path: string; expected: RegExp; got: string }> = {
  'top level not a mapping': { input: ['a'], path: '', expected: /a mapping with keys agent, /, got: 'a list of 1' },
  'unknown section with a hint': { input: { dchp: {} }, path: 'dchp', expected: /did you mean dhcp\?/, got: 'unknown key "dchp"' },
  'unknown key in a section': { input: { bmc: { concurency: 3 } }, path: 'bmc.concurency', expected: /did you mean concurrency\?/, got: 'unknown key "concurency"' },
  'section of the wrong type': { input: { management: 'yes' }, path: 'management', expected: /a mapping with keys listen, token, tls/, got: '"yes"' },
  'management tls without a key': { input: { management: { tls: { cert: '/etc/rackside/tls.pem' } } }, path: 'management.tls.key', expected: /server private key/, got: 'nothing' },
  'http tls without a key': { input: { http: { tls: { cert: '/etc/rackside/boot.pem' } } }, path: 'http.tls.key', expected: /server private key/, got: 'nothing' },
  'http tls neither auto nor a mapping': { input: { http: { tls: 'yes' } }, path: 'http.tls', expected: /`auto` or a mapping/, got: '"yes"' },
  'http tlsPort without tls (would do nothing)': { input: { http: { tlsPort: 8443 } }, path: 'http.tlsPort', expected: /no http.tlsPort without http.tls/, got: '8443' },
  'http tlsBoot without tls (would do nothing)': { input: { http: { tlsBoot: 'on' } }, path: 'http.tlsBoot', expected: /http.tls set as well/, got: '"on"' },
  'http tlsPort out of range': { input: { http: { tls: 'auto', tlsPort: 0 } }, path: 'http.tlsPort', expected: /an integer from 1 to 65535/, got: '0' },
  'ramdisk kernel params with a quote': { input: { images: { ramdisk: { kernelParams: 'console=ttyS1 "x"' } } }, path: 'images.ramdisk.kernelParams', expected: /kernel arguments/, got: '"console=ttyS1 \\"x\\""' },
  'enum value': { input: { provisioner: 'ironic' }, path: 'provisioner', expected: /one of local, fixture, demo/, got: '"ironic"' },
  'string where a number goes': { input: { bmc: { concurrency: 'eight' } }, path: 'bmc.concurrency', expected: /an integer from 1 to 1024/, got: '"eight"' },
  'number out of range': { input: { dhcp: { leaseSeconds: 5 } }, path: 'dhcp.leaseSeconds', expected: /an integer from 60/, got: '5' },
  'fraction where an integer goes': { input: { reconcile: { concurrency: 1.5 } }, path: 'reconcile.concurrency', expected: /an integer/, got: '1.5' },
  'provisioning limit of zero': { input: { reconcile: { provisioningLimit: 0 } }, path: 'reconcile.provisioningLimit', expected: /an integer from 1/, got: '0' },
  'zero time scale': { input: { reconcile: { timeScale: 0 } }, path: 'reconcile.timeScale', expected: /greater than 0/, got: '0' },
  'relative path': { input: { agent: { stateDir: 'var/lib' } }, path: 'agent.stateDir', expected: /absolute path/, got: '"var/lib"' },
  'listen without a port': { input: { management: { listen: '127.0.0.1' } }, path: 'management.listen', expected: /ADDRESS:PORT/, got: '"127.0.0.1"' },
  'listen with a host name': { input: { tftp: { listen: 'localhost:69' } }, path: 'tftp.listen', expected: /IP address/, got: '"localhost:69"' },
  'TFTP transfer limit of zero': { input: { tftp: { maxTransfers: 0 } }, path: 'tftp.maxTransfers', expected: /an integer from 1/, got: '0' },
  'port too large': { input: { http: { listen: '0.0.0.0:70000' } }, path: 'http.listen', expected: /ADDRESS:PORT/, got: '"0.0.0.0:70000"' },
  'http.sendfile not on or off': { input: { http: { sendfile: true } }, path: 'http.sendfile', expected: /on or off|one of/, got: 'true' },
  'tftp.transferThread not on or off': { input: { tftp: { transferThread: 'yes' } }, path: 'tftp.transferThread', expected: /on or off|one of/, got: '"yes"' },
  'bad IPv4': { input: { dhcp: { router: '10.0.0.256' } }, path: 'dhcp.router', expected: /IPv4 address/, got: '"10.0.0.256"' },
  'bad address in a dns list': { input: { dhcp: { dns: ['1.1.1.1', 'dns.example'] } }, path: 'dhcp.dns[1]', expected: /IPv4 address/, got: '"dns.example"' },
  'short token': { input: { management: { token: 'short' } }, path: 'management.token', expected: /at least 16 characters/, got: 'a string of 5 characters (not shown: a secret)' },
  'bad log level': { input: { log: { level: 'verbose' } }, path: 'log.level', expected: /one of fatal, error, warn, info, debug, trace, silent/, got: '"verbose"' },
  'bad agent id': { input: { agent: { id: 'rack 1' } }, path: 'agent.id', expected: /a name of letters/, got: '"rack 1"' },
  'subnet with host bits': { input: { dhcp: { range: [{ subnet: '10.0.0.5/24', range: '10.0.0.10-10.0.0.20' }] } }, path: 'dhcp.range[0].subnet', expected: /host bits zero/, got: '"10.0.0.5/24"' },
  'range outside its subnet': { input: { dhcp: { range: [{ subnet: '10.0.0.0/24', range: '10.0.0.10-10.0.1.20' }] } }, path: 'dhcp.range[0].range', expected: /inside 10\.0\.0\.0\/24/, got: '"10.0.0.10-10.0.1.20"' },
  'range backwards': { input: { dhcp: { range: [{ subnet: '10.0.0.0/24', range: '10.0.0.30-10.0.0.20' }] } }, path: 'dhcp.range[0].range', expected: /FIRST-LAST/, got: '"10.0.0.30-10.0.0.20"' },
  'range includes the broadcast address': { input: { dhcp: { range: [{ subnet: '10.0.0.0/24', range: '10.0.0.10-10.0.0.255' }] } }, path: 'dhcp.range[0].range', expected: /FIRST-LAST/, got: '"10.0.0.10-10.0.0.255"' },
  'router outside the subnet': { input: { dhcp: { range: [{ subnet: '10.0.0.0/24', range: '10.0.0.10-10.0.0.20', router: '10.9.0.1' }] } }, path: 'dhcp.range[0].router', expected: /inside 10\.0\.0\.0\/24/, got: '"10.9.0.1"' },
  'string range without a known subnet': { input: { dhcp: { range: '10.0.0.10-10.0.0.20' } }, path: 'dhcp.range', expected: /ADDRESS\/PREFIX/, got: '"10.0.0.10-10.0.0.20"' },
  'range covering the agent address': { input: { provisioning: { address: '10.0.0.15/24' }, dhcp: { range: '10.0.0.10-10.0.0.20' } }, path: 'dhcp.range', expected: /excludes provisioning\.address 10\.0\.0\.15/, got: '"10.0.0.10-10.0.0.20"' },
  'range of the wrong type': { input: { dhcp: { range: 7 } }, path: 'dhcp.range', expected: /FIRST-LAST/, got: '7' },
  'controller without url': { input: { controller: { token: 'x' } }, path: 'controller.url', expected: /controller URL/, got: 'nothing' },
  'controller with a non-http url': { input: { controller: { url: 'ftp://x' } }, path: 'controller.url', expected: /http:\/\/ or https:\/\//, got: '"ftp://x"' },
  'controller cert without key': { input: { controller: { url: 'https://c', tls: { cert: '/c.pem' } } }, path: 'controller.tls.key', expected: /together/, got: 'nothing' },
  'controller without a credential': { input: { controller: { url: 'https://c/push' } }, path: 'controller.token', expected: /a rack token, or controller\.tls\.cert and controller\.tls\.key/, got: 'nothing' },
  'controller client certificate over http': { input: { controller: { url: ['https://a/push', 'http://b/push'], tls: { cert: '/c.pem', key: '/c.key' } } }, path: 'controller.url', expected: /https:\/\/ controller URLs: a client certificate is sent only over TLS/, got: '"http://b/push"' },
  'tunnel without remotePort': { input: { ssh: { tunnel: { host: 'b', user: 'u', identity: '/k', hostKey: 'SHA256:x' } } }, path: 'ssh.tunnel.remotePort', expected: /required/, got: 'nothing' },
  'tunnel without a pinned host key': { input: { ssh: { tunnel: { host: 'b', user: 'u', identity: '/k', remotePort: 22001 } } }, path: 'ssh.tunnel.hostKey', expected: /pinned host key/, got: 'nothing' },
  'boolean where a string goes': { input: { provisioning: { interface: true } }, path: 'provisioning.interface', expected: /interface name/, got: 'true' },
};
for (const [name, c] of Object.entries(wrongKeys)) {
  test(`wrong key: ${name}`, () => {
    const problems = problemsOf(() => decodeConfig(c.input, defaults));
    assert.equal(problems.length, 1, JSON.stringify(problems));
    const [p] = problems;
    assert.equal(p!.path, c.path);
    assert.match(p!.expected, c.expected);
    assert.equal(p!.got, c.got);
  });
}

test('a controller section with a client certificate and no token is accepted', () => {
  const config = decodeConfig({ controller: { url: 'https://c/push', tls: { ca: '/ca.pem', cert: '/c.pem', key: '/c.key' } } }, defaults);
  assert.deepEqual(config.controller, { url: 'https://c/push', urls: ['https://c/push'], tls: { ca: '/ca.pem', cert: '/c.pem', key: '/c.key' }, intervalSeconds: 60 });
});

test('dhcp full mode needs an interface, an address and a range', () => {
  const problems = problemsOf(() => decodeConfig({ dhcp: { mode: 'full' } }, defaults));
  assert.deepEqual(problems.map((p) => p.path), ['dhcp.range', 'provisioning.interface', 'provisioning.address']);
  const proxy = problemsOf(() => decodeConfig({ dhcp: { mode: 'proxy' }, provisioning: { interface: 'eth0' } }, defaults));
  assert.deepEqual(proxy.map((p) => p.path), ['provisioning.address']);
});

test('several problems are reported together, each with its line', () => {
  const text = [
    'agent:',
    '  stateDir: relative',
    'bmc:',
    '  concurrency: 0',
    '  powerPoll: 5',
    'log: {level: loud}',
    'extra: true',
  ].join('\n');
  let error: unknown;
  try {
    parseConfigYaml(text, '/etc/rackside/rackside.yaml', defaults);
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof ConfigError);
  assert.deepEqual(error.problems.map((p) => [p.path, p.line]), [
    ['extra', 7], ['agent.stateDir', 2], ['bmc.powerPoll', 5], ['bmc.concurrency', 4], ['log.level', 6],
  ]);
  assert.match(error.message, /^invalid config \/etc\/rackside\/rackside\.yaml \(5 problems\):\n/);
  assert.match(error.message, /\/etc\/rackside\/rackside\.yaml:4: bmc\.concurrency: expected an integer from 1 to 1024, got 0/);
});

test('YAML syntax errors name the line and column', () => {
  const problems = problemsOf(() => parseConfigYaml('agent:\n  id: [rack\nbmc: {}\n', 'r.yaml', defaults));
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.expected, 'valid YAML');
  assert.match(problems[0]!.got, /at line \d+, column \d+/);
  assert.equal(typeof problems[0]!.line, 'number');
});

test('duplicate keys are refused', () => {
  const problems = problemsOf(() => parseConfigYaml('log: {level: info}\nlog: {level: debug}\n', 'r.yaml', defaults));
  assert.match(problems[0]!.got, /unique/);
});

const listens: Record<string, ReturnType<typeof parseListen>> = {
  '127.0.0.1:8080': { host: '127.0.0.1', port: 8080 },
  ':69': { host: '0.0.0.0', port: 69 },
  '[::1]:8080': { host: '::1', port: 8080 },
  '[fe80::1:2]:1': { host: 'fe80::1:2', port: 1 },
  '::1:8080': undefined,
  '01.2.3.4:80': undefined,
  '1.2.3.4:': undefined,
};
for (const [text, expected] of Object.entries(listens)) {
  test(`parseListen ${JSON.stringify(text)}`, () => {
    assert.deepEqual(parseListen(text), expected);
  });
}

test('isIpv6 and parseCidr cover the forms used', () => {
  assert.equal(isIpv6('::'), true);
  assert.equal(isIpv6('2001:db8::1'), true);
  assert.equal(isIpv6('::ffff:192.0.2.1'), true);
  assert.equal(isIpv6('1:2:3:4:5:6:7:8'), true);
  assert.equal(isIpv6('1:2:3:4:5:6:7:8:9'), false);
  assert.equal(isIpv6('1::2::3'), false);
  assert.equal(isIpv6('g::1'), false);
  assert.deepEqual(parseCidr('192.0.2.0/24'), { network: 0xc0000200, prefixLength: 24, hostBitsSet: false });
  assert.equal(parseCidr('192.0.2.1/24')?.hostBitsSet, true);
  assert.equal(parseCidr('192.0.2.0/33'), undefined);
});

test('docs/rackside.example.yaml decodes and names every section', () => {
  const text = readFileSync(new URL('../../../docs/rackside.example.yaml', import.meta.url), 'utf8');
  const config = parseConfigYaml(text, 'docs/rackside.example.yaml', defaults);
  assert.equal(config.dhcp.mode, 'full');
  for (const section of ['agent', 'provisioner', 'management', 'provisioning', 'dhcp', 'tftp', 'http', 'images', 'bmc', 'controller', 'ssh', 'reconcile', 'log']) {
    assert.match(text, new RegExp(`^#? ?${section}:`, 'm'), `${section} documented`);
  }
});

test('http.tls: auto issues from the boot CA on port 8443 by default; a mapping names the operator files', () => {
  assert.deepEqual(decodeConfig({ http: { tls: 'auto' } }, defaults).http.tls, { port: 8443 });
  assert.deepEqual(decodeConfig({ http: { tls: 'auto', tlsPort: 9443 } }, defaults).http.tls, { port: 9443 });
  assert.deepEqual(decodeConfig({ http: { tls: { cert: '/etc/rackside/boot.pem', key: '/etc/rackside/boot.key' } } }, defaults).http.tls, { port: 8443, cert: '/etc/rackside/boot.pem', key: '/etc/rackside/boot.key' });
  assert.equal(decodeConfig({}, defaults).http.tls, undefined, 'plain HTTP only by default');
  assert.equal(decodeConfig({ http: { tls: 'auto', tlsBoot: 'on' } }, defaults).http.tlsBoot, 'on');
});
