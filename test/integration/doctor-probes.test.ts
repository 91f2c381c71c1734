/**
 * rackside doctor's probes against real sockets and files on loopback: the BMC knock (a
 * management API listing hosts, a TCP "Redfish" listener, a UDP ASF responder, closed ports,
 * an invalid address), the controller HEAD, the port prober with `ss`, the interface, the
 * state dir, the kernel in an images cache, and busybox; and against a real agent process: its
 * listener is recognised as rackside's and the BMC of a host applied to it is knocked on.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { parseConfigYaml } from '../../agent/config.js';
import { checkInterface, checkPort, isRacksideHolder } from '../../agent/doctor/checks.js';
import type { InterfaceProbe } from '../../agent/doctor/types.js';
import { managementUrl, probeBmcs, probeController } from '../../agent/doctor/probe-net.js';
import { createPortProber, probeBusybox, probeInterface, probeKernel, probeRmemMax, probeStateDir } from '../../agent/doctor/probes.js';
import { removeDir, runCli, scratchDir, startAgentProcess } from '../helpers/agent-process.js';
import { requireTools } from '../helpers/integration.js';
import { NetnsLab, runCommand, waitFor } from '../helpers/netns.js';

function listen(server: HttpServer | ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** A UDP port nobody listens on (bound, noted, closed). */
async function closedUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  const { port } = s.address();
  s.close();
  return port;
}

test('probeBmcs: lists hosts from the API and knocks on each BMC', async (t) => {
  const redfish = createServer((socket) => socket.end());
  const redfishPort = await listen(redfish);
  t.after(() => redfish.close());
  const closedTcp = createServer();
  const closedTcpPort = await listen(closedTcp);
  closedTcp.close();

  const bmc = createSocket('udp4');
  bmc.on('message', (msg, rinfo) => {
    // Answer an ASF presence ping (type 0x80) with a pong (0x40) carrying the same tag.
    if (msg.length >= 12 && msg[8] === 0x80) bmc.send(Buffer.from([0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x40, msg[9] ?? 0, 0x00, 0x10, ...new Array<number>(16).fill(0)]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => bmc.bind(0, '127.0.0.1', resolve));
  t.after(() => bmc.close());
  const silentPort = await closedUdpPort();

  const hosts = [
    ['node-redfish', `redfish+http://127.0.0.1:${redfishPort}/redfish/v1/Systems/1`],
    ['node-ipmi', `ipmi://127.0.0.1:${bmc.address().port}`],
    ['node-ipmi-down', `ipmi://127.0.0.1:${silentPort}`],
    ['node-redfish-down', `redfish://127.0.0.1:${closedTcpPort}/redfish/v1/Systems/1`],
    ['node-bad', 'bogus://10.0.0.1'],
    ['node-fake', 'fake://x'],
  ];
  const api = createHttpServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(req.url === '/api/v1/hosts' ? JSON.stringify({ items: hosts.map(([name, address]) => ({ metadata: { name }, spec: { bmc: { address } } })) }) : '{}');
  });
  const apiPort = await listen(api);
  t.after(() => api.close());

  const probe = await probeBmcs(`http://127.0.0.1:${apiPort}`, 3, 1000);
  assert.equal(probe.state, 'done');
  assert.deepEqual(probe.results.map((r) => [r.host, r.protocol, r.reachable]), [
    ['node-ipmi', 'udp', true],
    ['node-ipmi-down', 'udp', false],
    ['node-redfish', 'tcp', true],
    ['node-redfish-down', 'tcp', false],
  ]);
  assert.match(probe.results.find((r) => r.host === 'node-redfish-down')?.error ?? '', /ECONNREFUSED/);
  assert.deepEqual(probe.invalid.map((i) => i.host), ['node-bad']);

  const none = await probeBmcs(`http://127.0.0.1:${closedTcpPort}`, 3, 1000);
  assert.ok(none.state === 'no-api', JSON.stringify(none));
  assert.match(none.error, /ECONNREFUSED/);
});

test('managementUrl: --server wins; wildcard listeners become loopback', () => {
  const config = (listen: string): ReturnType<typeof parseConfigYaml> => parseConfigYaml(`management: { listen: "${listen}" }`, 't', { agentId: 'a' });
  assert.equal(managementUrl(config('0.0.0.0:8080'), undefined), 'http://127.0.0.1:8080');
  assert.equal(managementUrl(config('[::]:9000'), undefined), 'http://[::1]:9000');
  assert.equal(managementUrl(config('192.0.2.1:8080'), undefined), 'http://192.0.2.1:8080');
  assert.equal(managementUrl(config('127.0.0.1:8080'), 'http://10.0.0.1:8080/'), 'http://10.0.0.1:8080');
});

test('probeController: HEAD with the bearer token; HTTP status, refusal and unreachable', async (t) => {
  const seen: { method?: string; auth?: string }[] = [];
  const server = createHttpServer((req, res) => {
    seen.push({ method: req.method ?? '', auth: req.headers.authorization ?? '' });
    res.statusCode = req.url === '/denied' ? 401 : 204;
    res.end();
  });
  const port = await listen(server);
  t.after(() => server.close());
  const config = (url: string): ReturnType<typeof parseConfigYaml> => parseConfigYaml(`controller: { url: "${url}", token: rack-token-0123456789 }`, 't', { agentId: 'a' });
  assert.deepEqual(await probeController(config(`http://127.0.0.1:${port}/api/racks`), 2000), { state: 'reachable', url: `http://127.0.0.1:${port}/api/racks`, httpStatus: 204 });
  assert.deepEqual(seen[0], { method: 'HEAD', auth: 'Bearer rack-token-0123456789' });
  const denied = await probeController(config(`http://127.0.0.1:${port}/denied`), 2000);
  assert.equal(denied.state === 'reachable' ? denied.httpStatus : 0, 401);
  const closed = createServer();
  const closedPort = await listen(closed);
  closed.close();
  const down = await probeController(config(`http://127.0.0.1:${closedPort}/`), 2000);
  assert.ok(down.state === 'error', JSON.stringify(down));
  assert.equal(down.code, 'unreachable');
  assert.deepEqual(await probeController(parseConfigYaml('', 't', { agentId: 'a' }), 2000), { state: 'not-configured' });
});

test('createPortProber: free, and in use by this very process (named through ss)', async (t) => {
  if (!requireTools(t, ['ss'])) return;
  const probe = createPortProber();
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.after(() => socket.close());
  const port = socket.address().port;
  const taken = await probe({ label: 'x', protocol: 'udp', address: '127.0.0.1', port, needed: true });
  assert.equal(taken.bind, 'in-use');
  assert.ok(taken.holders.some((h) => h.pid === process.pid && h.command === 'node'), JSON.stringify(taken.holders));
  assert.ok(taken.holders.some((h) => h.cmdline?.includes('doctor-probes') === true), 'the command line comes from /proc');
  const free = await closedUdpPort();
  assert.deepEqual(await probe({ label: 'y', protocol: 'udp', address: '127.0.0.1', port: free, needed: true }), { protocol: 'udp', address: '127.0.0.1', port: free, bind: 'free', holders: [] });
  const tcp = createServer();
  const tcpPort = await listen(tcp);
  t.after(() => tcp.close());
  assert.equal((await probe({ label: 'z', protocol: 'tcp', address: '0.0.0.0', port: tcpPort, needed: true })).bind, 'in-use');
});

test('probeInterface: loopback exists with 127.0.0.1/8; a made-up name does not', async () => {
  const lo = await probeInterface('lo');
  assert.equal(lo.exists, true);
  assert.ok(lo.addresses.some((a) => a.address === '127.0.0.1' && a.prefixLength === 8), JSON.stringify(lo));
  assert.deepEqual(await probeInterface('nosuch0'), { name: 'nosuch0', exists: false, addresses: [] });
});

test('probeInterface: a bridge whose only port has no carrier keeps its address in the probe (getifaddrs would hide it), admin up, operstate down', async (t) => {
  const lab = await NetnsLab.create(t);
  if (lab === undefined) return;
  const bridge = await lab.bridge('carrier');
  await lab.addAddress(bridge.ns, 'br0', '192.0.2.1/24');
  await runCommand('ip', ['-n', bridge.ns, 'tuntap', 'add', 'tap0', 'mode', 'tap']);
  await runCommand('ip', ['-n', bridge.ns, 'link', 'set', 'tap0', 'master', 'br0', 'up']);
  // The kernel's linkwatch takes the bridge's carrier down within about a second.
  await waitFor(async () => (await lab.exec(bridge.ns, 'cat', ['/sys/class/net/br0/operstate'])).stdout.trim() === 'down', 'br0 operstate down', 10_000, 100);
  const script = `import { probeInterface } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../agent/doctor/probes.js')).href)};
import { networkInterfaces } from 'node:os';
console.log(JSON.stringify({ probe: await probeInterface('br0'), getifaddrs: Object.keys(networkInterfaces()) }));`;
  const result = await lab.exec(bridge.ns, process.execPath, ['--input-type=module', '-e', script]);
  const seen = JSON.parse(result.stdout) as { probe: InterfaceProbe; getifaddrs: string[] };
  assert.equal(seen.getifaddrs.includes('br0'), false, 'the premise: getifaddrs leaves out an interface without carrier');
  assert.deepEqual(seen.probe.addresses, [{ address: '192.0.2.1', prefixLength: 24 }]);
  assert.equal(seen.probe.adminUp, true);
  assert.equal(seen.probe.operState, 'down');
  const config = parseConfigYaml('provisioning: { interface: br0, address: 192.0.2.1/24 }\ndhcp: { mode: full, range: 192.0.2.100-192.0.2.199 }\n', 'test', { agentId: 'a' });
  assert.equal(checkInterface(config, seen.probe).status, 'warn', 'no carrier warns; it does not fail the doctor');
});

test('probeStateDir: writes and removes its file, finds the newest file; a missing dir is reported', async (t) => {
  const dir = await scratchDir('statedir');
  t.after(() => removeDir(dir));
  await mkdir(join(dir, 'db'));
  await writeFile(join(dir, 'db/LOG'), 'x');
  const p = await probeStateDir(dir, 'tag1');
  assert.equal(p.exists, true);
  assert.equal(p.writable, true, p.error);
  assert.equal(p.newestPath, join(dir, 'db/LOG'));
  assert.equal(p.ownerUid, process.getuid?.());
  const missing = await probeStateDir(join(dir, 'nope'), 'tag2');
  assert.equal(missing.exists, false);
  assert.equal(missing.writable, false);
});

test('probeKernel: the newest vmlinuz unpacked in the images cache (<cacheDir>/build/debian, where builds put it), with its sha256; a configured path wins', async (t) => {
  const dir = await scratchDir('imgcache');
  t.after(() => removeDir(dir));
  const boot = join(dir, 'build/debian/linux-image-6.1.0-40-amd64_6.1.153-1/root/boot');
  await mkdir(boot, { recursive: true });
  await writeFile(join(boot, 'vmlinuz-6.1.0-40-amd64'), 'kernel bytes');
  const cached = await probeKernel(parseConfigYaml(`images: { cacheDir: ${dir} }`, 't', { agentId: 'a' }));
  assert.deepEqual(cached, { path: join(boot, 'vmlinuz-6.1.0-40-amd64'), source: 'cache', sha256: createHash('sha256').update('kernel bytes').digest('hex') });
  const configured = await probeKernel(parseConfigYaml(`images: { cacheDir: ${dir}, ramdisk: { kernel: ${dir}/none } }`, 't', { agentId: 'a' }));
  assert.deepEqual(configured, { path: `${dir}/none`, source: 'config', error: 'does not exist' });
  assert.deepEqual(await probeKernel(parseConfigYaml(`images: { cacheDir: ${dir}/empty }`, 't', { agentId: 'a' })), {});
});

test('probeBusybox: Debian busybox-static at /bin/busybox is a static ELF', async (t) => {
  if (!requireTools(t, ['busybox'])) return;
  const p = await probeBusybox(parseConfigYaml('', 't', { agentId: 'a' }));
  assert.ok(p.path?.endsWith('busybox'), JSON.stringify(p));
  assert.match(p.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.equal(p.isStatic, true, 'install busybox-static (the dynamic busybox package is not enough for the ramdisk)');
});

test('against a real agent: its listener counts as rackside\'s, and its registered BMC is knocked on', async (t) => {
  if (!requireTools(t, ['ss'])) return;
  const dir = await scratchDir('doctor-agent');
  t.after(() => removeDir(dir));
  const redfish = createServer((socket) => socket.end());
  const redfishPort = await listen(redfish);
  t.after(() => redfish.close());
  const agent = await startAgentProcess(dir);
  t.after(() => agent.kill());
  const manifest = [
    'apiVersion: v1', 'kind: Secret', 'metadata: { name: bmc-secret, namespace: default }', 'type: Opaque',
    'data: { username: YWRtaW4=, password: c2VjcmV0 }', '---',
    'apiVersion: metal3.io/v1alpha1', 'kind: BareMetalHost', 'metadata: { name: worker-9, namespace: default }',
    `spec: { online: false, bootMACAddress: "00:5c:52:31:3a:99", bmc: { address: "redfish+http://127.0.0.1:${redfishPort}/redfish/v1/Systems/1", credentialsName: bmc-secret } }`,
    '',
  ].join('\n');
  const applied = await runCli(agent.url, ['apply', '-f', '-'], manifest);
  assert.equal(applied.code, 0, applied.stderr);

  const port = Number(new URL(agent.url).port);
  const need = { label: 'management', protocol: 'tcp' as const, address: '127.0.0.1', port, needed: true };
  const probe = await createPortProber()(need);
  assert.equal(probe.bind, 'in-use');
  assert.ok(probe.holders.some(isRacksideHolder), JSON.stringify(probe.holders));
  const line = checkPort(need, probe);
  assert.equal(line.status, 'ok', JSON.stringify(line));
  assert.match(line.detail, /held by rackside: node \(pid \d+\)/);

  const bmcs = await probeBmcs(agent.url.replace(/\/+$/, ''), 2, 2000);
  assert.ok(bmcs.state === 'done', JSON.stringify(bmcs));
  assert.deepEqual(bmcs.results.map((r) => [r.host, r.protocol, r.target, r.reachable]), [['worker-9', 'tcp', `127.0.0.1:${redfishPort}`, true]]);
});

test('probeRmemMax reads net.core.rmem_max; an unreadable or garbled file is undefined', async (t) => {
  const real = await probeRmemMax();
  assert.ok(real !== undefined && real >= 4096, `read ${String(real)}`);
  const dir = await scratchDir('rmem');
  t.after(() => removeDir(dir));
  await writeFile(join(dir, 'rmem_max'), '212992\n');
  assert.equal(await probeRmemMax(join(dir, 'rmem_max')), 212_992);
  await writeFile(join(dir, 'garbled'), 'lots\n');
  assert.equal(await probeRmemMax(join(dir, 'garbled')), undefined);
  assert.equal(await probeRmemMax(join(dir, 'missing')), undefined);
});
