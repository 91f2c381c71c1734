/**
 * Tests of rackside doctor's run over fake probes (agent/doctor/doctor.ts): line order, the
 * fallback to defaults when the config is broken, what each probe is asked, and the CLI's
 * usage errors for doctor, migrate, install and uninstall.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigYaml } from '../../../agent/config.js';
import { runCli } from '../../../agent/cli/run.js';
import type { CliIo } from '../../../agent/cli/io.js';
import { doctorExitCode, runDoctor, type DoctorProbes } from '../../../agent/doctor/index.js';
import type { ConfigProbe, DhcpProbe, InterfaceProbe } from '../../../agent/doctor/types.js';

const CONFIG = parseConfigYaml(`
agent: { stateDir: /srv/rackside }
provisioning: { interface: eth1, address: 192.0.2.1/24 }
dhcp: { mode: full, range: 192.0.2.100-192.0.2.199 }
`, 't.yaml', { agentId: 'rack-t' });
const NOW = Date.parse('2026-03-01T12:00:00Z');

interface Calls { iface: string[]; ports: number[]; dhcp: [string, number][]; assetsDir: string[]; stateDir: string[]; threadNice: number[] }

/** A running agent for the fakes: the holder of the DHCP port, and its event loop's nice value. */
interface RunningAgent { pid: number; nice: number }

function fakeProbes(configProbe: ConfigProbe, dhcp: DhcpProbe = { state: 'done', interface: 'eth1', listenMs: 1500, offers: [] }, agent?: RunningAgent): { probes: DoctorProbes; calls: Calls } {
  const calls: Calls = { iface: [], ports: [], dhcp: [], assetsDir: [], stateDir: [], threadNice: [] };
  const iface: InterfaceProbe = { name: 'eth1', exists: true, operState: 'up', mac: '52:54:00:00:00:01', addresses: [{ address: '192.0.2.1', prefixLength: 24 }] };
  const probes: DoctorProbes = {
    config: () => Promise.resolve(configProbe),
    defaultConfig: () => parseConfigYaml('', '(defaults)', { agentId: 'rack-t' }),
    iface: (name) => {
      calls.iface.push(name);
      return Promise.resolve(iface);
    },
    port: (need) => {
      calls.ports.push(need.port);
      if (agent !== undefined && need.port === 67) {
        const holders = [{ command: 'node', pid: agent.pid, local: '0.0.0.0%eth1:67', device: 'eth1', cmdline: 'node /usr/lib/rackside/dist/agent/cli.js agent' }];
        return Promise.resolve({ protocol: need.protocol, address: need.address, port: need.port, bind: 'in-use', holders });
      }
      return Promise.resolve({ protocol: need.protocol, address: need.address, port: need.port, bind: 'free', holders: [] });
    },
    dhcp: (probed, listenMs) => {
      calls.dhcp.push([probed.name, listenMs]);
      return Promise.resolve(dhcp);
    },
    assets: (dir) => {
      calls.assetsDir.push(dir);
      return Promise.resolve([{ name: 'undionly.kpxe', group: 'ipxe', package: 'ipxe', path: '/usr/lib/ipxe/undionly.kpxe', sha256: '00' }]);
    },
    kernel: () => Promise.resolve({ path: '/boot/vmlinuz', source: 'config', sha256: '11' }),
    busybox: () => Promise.resolve({ path: '/bin/busybox', source: 'system', isStatic: true, sha256: '22' }),
    ramdiskBuild: () => Promise.resolve({ dir: '/srv/rackside/images/ramdisk', status: { state: 'ready', message: 'built' }, built: { format: 'initrd', kernelRelease: '6.1.0-57-amd64' } }),
    stateDir: (path) => {
      calls.stateDir.push(path);
      return Promise.resolve({ path, exists: true, writable: true });
    },
    eraseKey: (stateDir) => Promise.resolve({ path: `${stateDir}/erase_signing_ed25519_key`, exists: true, mode: 0o100600, fingerprint: 'SHA256:abc' }),
    controller: () => Promise.resolve({ state: 'not-configured' }),
    bmcs: () => Promise.resolve({ state: 'no-api', server: 'http://127.0.0.1:8080', error: 'ECONNREFUSED' }),
    rmemMax: () => Promise.resolve(4 * 1024 * 1024),
    threadNice: (pid) => {
      calls.threadNice.push(pid);
      return Promise.resolve(agent?.pid === pid ? agent.nice : undefined);
    },
    nowMs: () => NOW,
  };
  return { probes, calls };
}

test('a healthy node: every line in order, exit code 0, probes asked about the configured things', async () => {
  const { probes, calls } = fakeProbes({ path: 't.yaml', state: 'ok', config: CONFIG });
  const results = await runDoctor({ configPath: 't.yaml', dhcpListenMs: 1500 }, probes);
  assert.deepEqual(results.map((r) => `${r.check}:${r.status}`), [
    'config:ok', 'provisioning interface:ok', 'port 67/udp (DHCP):ok', 'port 69/udp (TFTP):ok', 'port 4011/udp (proxyDHCP):ok',
    'port 8081/tcp (boot HTTP):ok', 'other DHCP servers:ok', 'DHCP receive buffer:ok', 'event-loop priority:skip', 'asset undionly.kpxe:ok', 'ramdisk kernel:ok', 'busybox (static):ok',
    'ramdisk build:ok', 'state dir writable:ok', 'clock:ok', 'erase record key:ok', 'controller:skip', 'BMCs reachable:skip',
  ]);
  assert.equal(doctorExitCode(results), 0);
  assert.deepEqual(calls.iface, ['eth1']);
  assert.deepEqual(calls.dhcp, [['eth1', 1500]]);
  assert.deepEqual(calls.ports, [67, 69, 4011, 8081]);
  assert.deepEqual(calls.assetsDir, ['/srv/rackside/boot-assets']);
  assert.deepEqual(calls.stateDir, ['/srv/rackside']);
  assert.deepEqual(calls.threadNice, [], 'no running agent: no priority read');
});

test('a running agent: its event loop\'s nice value is read from the pid holding a boot port; nice 0 warns, the unit\'s -5 is ok', async () => {
  for (const [nice, status] of [[0, 'warn'], [-5, 'ok']] as const) {
    const { probes, calls } = fakeProbes({ path: 't.yaml', state: 'ok', config: CONFIG }, undefined, { pid: 4242, nice });
    const results = await runDoctor({ configPath: 't.yaml', dhcpListenMs: 1500 }, probes);
    assert.equal(results.find((r) => r.check === 'port 67/udp (DHCP)')?.status, 'ok', 'held by rackside');
    assert.equal(results.find((r) => r.check === 'event-loop priority')?.status, status);
    assert.deepEqual(calls.threadNice, [4242]);
  }
});

test('a rogue DHCP server fails the run; our own address is not rogue', async () => {
  const offers = [
    { serverId: '192.0.2.1', sourceAddress: '192.0.2.1', offeredAddress: '192.0.2.100' },
    { serverId: '192.0.2.66', sourceAddress: '192.0.2.66', offeredAddress: '192.0.2.150' },
  ];
  const { probes } = fakeProbes({ path: 't.yaml', state: 'ok', config: CONFIG }, { state: 'done', interface: 'eth1', listenMs: 3000, offers });
  const results = await runDoctor({ configPath: 't.yaml' }, probes);
  const dhcp = results.find((r) => r.check === 'other DHCP servers');
  assert.equal(dhcp?.status, 'fail');
  assert.match(dhcp.detail, /server 192\.0\.2\.66 offered 192\.0\.2\.150/);
  assert.doesNotMatch(dhcp.detail, /192\.0\.2\.1 /);
  assert.equal(doctorExitCode(results), 1);
});

test('an invalid config fails and the rest runs on defaults (no interface, DHCP not probed)', async () => {
  const { probes, calls } = fakeProbes({ path: 'bad.yaml', state: 'invalid', error: 'invalid config bad.yaml (1 problem)' });
  const results = await runDoctor({ configPath: 'bad.yaml' }, probes);
  assert.equal(results[0]?.status, 'fail');
  assert.equal(results.find((r) => r.check === 'provisioning interface')?.status, 'skip');
  assert.equal(results.find((r) => r.check === 'other DHCP servers')?.status, 'skip');
  assert.deepEqual(calls.iface, []);
  assert.deepEqual(calls.dhcp, []);
  assert.deepEqual(calls.stateDir, ['/var/lib/rackside']);
  assert.equal(doctorExitCode(results), 1);
});

function io(): { io: CliIo; err: () => string } {
  let err = '';
  return {
    io: {
      stdout: () => undefined,
      stderr: (t) => {
        err += t;
      },
      env: {},
      readStdin: () => Promise.resolve(''),
      readFile: () => Promise.reject(new Error('ENOENT')),
      fetch: globalThis.fetch,
      now: () => NOW,
      sleep: () => Promise.resolve(),
      clientVersion: '0',
      runAgent: () => Promise.resolve(0),
    },
    err: () => err,
  };
}

const usageCases: Record<string, [string[], RegExp]> = {
  'doctor -o yaml': [['doctor', '-o', 'yaml'], /-o must be json or table/],
  'doctor --timeout nonsense': [['doctor', '--timeout', 'soon'], /--timeout .* up to 60s/],
  'doctor --timeout too long': [['doctor', '--timeout', '5m'], /--timeout/],
  'doctor extra argument': [['doctor', 'now'], /usage: rackside doctor/],
  'doctor --purge does not apply': [['doctor', '--purge'], /--purge does not apply to "rackside doctor"/],
  'migrate relative state dir': [['migrate', '--state-dir', 'var/lib/rackside'], /--state-dir must be an absolute path/],
  'migrate unreadable config': [['migrate', '--config', '/nonexistent.yaml'], /cannot read \/nonexistent\.yaml/],
  'install --purge does not apply': [['install', '--purge'], /--purge does not apply to "rackside install"/],
  'uninstall extra argument': [['uninstall', 'now'], /usage: rackside uninstall/],
};
for (const [name, [argv, message]] of Object.entries(usageCases)) {
  test(`CLI usage: ${name} exits 2`, async () => {
    const h = io();
    assert.equal(await runCli(argv, h.io), 2);
    assert.match(h.err(), message);
  });
}


test('provisioner fixture with a dhcp section: a warning per unused section, as the agent logs; the boot-service checks skipped', async () => {
  const config = parseConfigYaml('provisioner: fixture\ndhcp: { mode: off }\nimages: { cacheDir: /srv/images }\n', 't.yaml', { agentId: 'rack-t' });
  const { probes } = fakeProbes({ path: 't.yaml', state: 'ok', config });
  const results = await runDoctor({ configPath: 't.yaml', dhcpListenMs: 1500 }, probes);
  const unused = results.filter((r) => r.check.startsWith('config section '));
  assert.deepEqual(unused.map((r) => `${r.check}:${r.status}`), ['config section dhcp:warn', 'config section images:warn']);
  assert.match(unused[0]?.detail ?? '', /config section "dhcp" is ignored: the fixture provisioner runs no boot services/);
  assert.ok(!results.some((r) => r.check === 'ramdisk build' || r.check === 'ramdisk kernel' || r.check.startsWith('port ')), 'no boot-service checks');
  assert.match(results.find((r) => r.check === 'boot services')?.detail ?? '', /the fixture provisioner runs no DHCP, TFTP, boot HTTP or ramdisk/);
});
