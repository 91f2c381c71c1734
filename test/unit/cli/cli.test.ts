import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { FakeBackend, sampleHost, startFakeApi, type FakeApi } from '../../helpers/fake-backend.js';
import { runCli } from '../../../agent/cli/run.js';
import type { CliIo, RunAgentOptions } from '../../../agent/cli/io.js';
import type { BareMetalHost } from '../../../agent/host/types.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');

interface Harness {
  io: CliIo;
  out: () => string;
  err: () => string;
  sleeps: number[];
  agentCalls: RunAgentOptions[];
}

function harness(options: { files?: Record<string, string>; stdin?: string; signal?: AbortSignal; env?: Record<string, string>; onStdout?: (text: string) => void; runAgent?: CliIo['runAgent'] } = {}): Harness {
  let out = '';
  let err = '';
  let clock = NOW;
  const sleeps: number[] = [];
  const agentCalls: RunAgentOptions[] = [];
  const io: CliIo = {
    stdout: (t) => {
      out += t;
      options.onStdout?.(t);
    },
    stderr: (t) => {
      err += t;
    },
    env: { RACKSIDE_SERVER: api.baseUrl, ...options.env },
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    readFile: (path) => {
      const text = options.files?.[path];
      return text === undefined ? Promise.reject(new Error(`ENOENT: no such file ${path}`)) : Promise.resolve(text);
    },
    fetch: globalThis.fetch,
    now: () => clock,
    sleep: (ms) => {
      sleeps.push(ms);
      clock += ms;
      return Promise.resolve();
    },
    clientVersion: '1.2.3',
    runAgent: options.runAgent ?? ((o) => {
      agentCalls.push(o);
      return Promise.resolve(0);
    }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  return { io, out: () => out, err: () => err, sleeps, agentCalls };
}

let backend: FakeBackend;
let api: FakeApi;

before(async () => {
  backend = new FakeBackend();
  api = await startFakeApi(backend, { sseHeartbeatMs: 60_000 });
});
after(async () => {
  await api.close();
});

function rack(): void {
  backend.reset();
  backend.hosts.set('node-0', sampleHost('node-0', {
    created: '2025-12-30T01:00:00Z',
    spec: { consumerRef: { kind: 'Machine', name: 'worker-a' }, bootMACAddress: '52:54:00:00:00:10', bmc: { address: 'redfish://10.0.0.10/redfish/v1/Systems/1', credentialsName: 'node-0-bmc' }, description: 'rack 4, slot 12' },
    status: { poweredOn: true, provisioning: { state: 'provisioned', ID: 'n-0', image: { url: 'http://images/ubuntu.qcow2' } } },
  }));
  backend.hosts.set('node-1', sampleHost('node-1', {
    created: '2026-01-01T00:56:40Z',
    spec: { online: false, bootMACAddress: '52:54:00:00:00:11', bmc: { address: 'ipmi://10.0.0.11', credentialsName: 'node-1-bmc' } },
    status: { operationalStatus: 'error', errorType: 'inspection error', errorMessage: 'timeout', errorCount: 2, provisioning: { state: 'inspecting', ID: 'n-1', image: { url: '' } } },
  }));
}

async function cli(args: string[], h: Harness = harness()): Promise<{ code: number; out: string; err: string; h: Harness }> {
  const code = await runCli(args, h.io);
  return { code, out: h.out(), err: h.err(), h };
}

test('get hosts prints the kubectl-style table', async () => {
  rack();
  const { code, out, err } = await cli(['get', 'hosts']);
  assert.equal(code, 0, err);
  assert.equal(out, [
    'NAME     STATE         CONSUMER   ONLINE   POWERED   ERROR              AGE',
    'node-0   provisioned   worker-a   true     true                         2d',
    'node-1   inspecting               false    false     inspection error   3m20s',
    '',
  ].join('\n'));
});

test('get hosts -o wide adds status, BMC, boot MAC and spec.description', async () => {
  rack();
  const { code, out } = await cli(['get', 'hosts', '-o', 'wide']);
  assert.equal(code, 0);
  assert.equal(out, [
    'NAME     STATUS   STATE         CONSUMER   BMC                                        BOOTMAC             ONLINE   POWERED   ERROR              AGE     DESCRIPTION',
    'node-0   OK       provisioned   worker-a   redfish://10.0.0.10/redfish/v1/Systems/1   52:54:00:00:00:10   true     true                         2d      rack 4, slot 12',
    'node-1   error    inspecting               ipmi://10.0.0.11                           52:54:00:00:00:11   false    false     inspection error   3m20s',
    '',
  ].join('\n'));
});

test('get hosts -o json|yaml|name', async () => {
  rack();
  const json = await cli(['get', 'hosts', '-o', 'json']);
  const list = JSON.parse(json.out) as { kind: string; items: BareMetalHost[] };
  assert.equal(list.kind, 'List');
  assert.deepEqual(list.items.map((h) => h.metadata.name), ['node-0', 'node-1']);
  const yaml = await cli(['get', 'host', 'node-1', '-o', 'yaml']);
  const one = parseYaml(yaml.out) as BareMetalHost;
  assert.equal(one.status.errorType, 'inspection error');
  const names = await cli(['get', 'bmh', '-o', 'name']);
  assert.equal(names.out, 'baremetalhost.metal3.io/node-0\nbaremetalhost.metal3.io/node-1\n');
});

test('get hosts with none says so on stderr', async () => {
  rack();
  backend.hosts.clear();
  const { code, out, err } = await cli(['get', 'hosts']);
  assert.equal(code, 0);
  assert.equal(out, '');
  assert.equal(err, 'No resources found.\n');
});

test('apply -f FILE prints one kubectl-style line per object', async () => {
  rack();
  const manifest = 'apiVersion: v1\nkind: Secret\nmetadata: {name: node-5-bmc}\ndata: {username: YQ==, password: Yg==}\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: node-5}\nspec: {online: true}\n';
  const first = await cli(['apply', '-f', 'hosts.yaml'], harness({ files: { 'hosts.yaml': manifest } }));
  assert.equal(first.code, 0, first.err);
  assert.equal(first.out, 'secret/node-5-bmc created\nbaremetalhost.metal3.io/node-5 created\n');
  const again = await cli(['apply', '-f', '-'], harness({ stdin: manifest.replace('online: true', 'online: false') }));
  assert.equal(again.out, 'secret/node-5-bmc unchanged\nbaremetalhost.metal3.io/node-5 configured\n');
});

/** One case per exit code class. */
const exitCases: Record<string, { args: string[]; files?: Record<string, string>; arrange?: () => void; code: number; err: RegExp }> = {
  'invalid input is 5 and names the field': {
    args: ['apply', '-f', 'bad.yaml'], files: { 'bad.yaml': 'kind: BareMetalHost\nmetadata: {name: Bad_Name}\n' }, code: 5, err: /^error: metadata\.name: must be a DNS-1123 subdomain\n$/,
  },
  'malformed YAML is 5 with the line': {
    args: ['apply', '-f', 'bad.yaml'], files: { 'bad.yaml': 'kind: [\n' }, code: 5, err: /^error: body: invalid YAML at line \d+, column \d+/,
  },
  'conflict is 4': {
    args: ['apply', '-f', 'c.yaml'], files: { 'c.yaml': 'kind: BareMetalHost\nmetadata: {name: node-0}\nspec: {bootMACAddress: "52:54:00:ff:ff:ff"}\n' }, code: 4, err: /^error: spec\.bootMACAddress: is immutable\n$/,
  },
  'not found is 3': { args: ['get', 'host', 'ghost'], code: 3, err: /^error: metadata\.name: BareMetalHost "ghost" not found\n$/ },
  'server error is 1': { args: ['get', 'hosts'], arrange: () => { backend.failWith = new Error('boom'); }, code: 1, err: /^error: internal error: boom\n$/ },
  'unreadable file is 2': { args: ['apply', '-f', 'missing.yaml'], code: 2, err: /^error: cannot read missing\.yaml: ENOENT/ },
  'unknown command is 2': { args: ['frobnicate'], code: 2, err: /unknown command "frobnicate"/ },
  'unknown option is 2': { args: ['get', 'hosts', '--colour'], code: 2, err: /Unknown option '--colour'/ },
  'option of another command is 2': { args: ['get', 'hosts', '--hard'], code: 2, err: /option --hard does not apply to "rackside get"/ },
  'missing name is 2': { args: ['reboot'], code: 2, err: /missing NAME: usage: rackside reboot NAME/ },
  'bad output format is 2': { args: ['get', 'hosts', '-o', 'xml'], code: 2, err: /-o must be one of wide, json, yaml, name/ },
  'unknown resource is 2': { args: ['get', 'pods'], code: 2, err: /unknown resource "pods"/ },
  'bad server URL is 2': { args: ['get', 'hosts', '--server', 'ftp://x'], code: 2, err: /--server must be an http/ },
  'bad timeout is 2': { args: ['delete', 'host', 'node-0', '--timeout', 'soon'], code: 2, err: /--timeout must be a duration/ },
  'bad --wait value is 2': { args: ['delete', 'host', 'node-0', '--wait=maybe'], code: 2, err: /--wait must be true or false/ },
  'bad power state is 2': { args: ['power', 'cycle', 'node-0'], code: 2, err: /usage: rackside power on\|off NAME/ },
  'bad delete action is 2': { args: ['detach', 'node-0', '--delete-action', 'never'], code: 2, err: /--delete-action must be delay or delete/ },
};
for (const [name, c] of Object.entries(exitCases)) {
  test(`exit code: ${name}`, async () => {
    rack();
    c.arrange?.();
    const { code, err } = await cli(c.args, harness(c.files === undefined ? {} : { files: c.files }));
    assert.equal(code, c.code, err);
    assert.match(err, c.err);
  });
}

test('exit code: an unreachable server is 6', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => {
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  });
  const { code, err } = await cli(['get', 'hosts', '--server', `http://127.0.0.1:${port}`]);
  assert.equal(code, 6);
  assert.match(err, /^error: cannot reach the rackside agent at http:\/\/127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\)/);
});

test('exit code: a refused token is 1 with a hint; --token and RACKSIDE_TOKEN are sent', async () => {
  rack();
  const secured = await startFakeApi(backend, { requireTokenForMutations: true, token: 'a-token-of-16-chars' });
  try {
    const refused = await cli(['power', 'on', 'node-0', '--server', secured.baseUrl]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /RACKSIDE_TOKEN/);
    const flag = await cli(['power', 'on', 'node-0', '--server', secured.baseUrl, '--token', 'a-token-of-16-chars']);
    assert.equal(flag.code, 0, flag.err);
    const env = await cli(['power', 'off', 'node-0', '--server', secured.baseUrl], harness({ env: { RACKSIDE_TOKEN: 'a-token-of-16-chars' } }));
    assert.equal(env.code, 0, env.err);
    assert.deepEqual(backend.actions.map((a) => a.action.action), ['power-on', 'power-off']);
  } finally {
    await secured.close();
  }
});

const actionCases: Record<string, { args: string[]; out: string; action: unknown }> = {
  'power on': { args: ['power', 'on', 'node-0'], out: 'baremetalhost.metal3.io/node-0 power on requested\n', action: { action: 'power-on' } },
  'power off': { args: ['power', 'off', 'node-0'], out: 'baremetalhost.metal3.io/node-0 power off requested\n', action: { action: 'power-off' } },
  'reboot (soft)': { args: ['reboot', 'node-0'], out: 'baremetalhost.metal3.io/node-0 soft reboot requested\n', action: { action: 'reboot', mode: 'soft' } },
  'reboot --hard': { args: ['reboot', 'node-0', '--hard'], out: 'baremetalhost.metal3.io/node-0 hard reboot requested\n', action: { action: 'reboot', mode: 'hard' } },
  inspect: { args: ['inspect', 'node-0'], out: 'baremetalhost.metal3.io/node-0 inspection requested\n', action: { action: 'inspect' } },
  detach: { args: ['detach', 'node-0', '--force', '--delete-action', 'delay'], out: 'baremetalhost.metal3.io/node-0 detach requested\n', action: { action: 'detach', deleteAction: 'delay', force: true } },
  attach: { args: ['attach', 'node-0'], out: 'baremetalhost.metal3.io/node-0 attach requested\n', action: { action: 'attach' } },
};
for (const [name, c] of Object.entries(actionCases)) {
  test(`action: ${name}`, async () => {
    rack();
    const { code, out, err } = await cli(c.args);
    assert.equal(code, 0, err);
    assert.equal(out, c.out);
    assert.deepEqual(backend.actions, [{ name: 'node-0', action: c.action }]);
  });
}

test('delete host waits until the host is gone', async () => {
  rack();
  backend.deleteAfterGets = 2;
  const { code, out, h } = await cli(['delete', 'host', 'node-1']);
  assert.equal(code, 0);
  assert.equal(out, 'baremetalhost.metal3.io "node-1" deleted\n');
  assert.deepEqual(h.sleeps, [1000, 1000]);
  assert.ok(!backend.hosts.has('node-1'));
});

test('delete host --wait=false returns at once', async () => {
  rack();
  const { code, out, h } = await cli(['delete', 'host', 'node-1', '--wait=false']);
  assert.equal(code, 0);
  assert.equal(out, 'baremetalhost.metal3.io "node-1" deletion requested\n');
  assert.deepEqual(h.sleeps, []);
});

test('delete host times out with exit 7', async () => {
  rack();
  backend.deleteNeverCompletes = true;
  const { code, err, h } = await cli(['delete', 'host', 'node-1', '--wait', '--timeout', '3s']);
  assert.equal(code, 7);
  assert.match(err, /^error: timed out after 3s waiting for baremetalhost\.metal3\.io "node-1" to be deleted \(state: inspecting\)/);
  assert.equal(h.sleeps.length, 3);
});

test('delete secret', async () => {
  rack();
  backend.secrets.set('default/s1', { namespace: 'default', name: 's1', keys: ['password'], resourceVersion: '1' });
  const { code, out } = await cli(['delete', 'secret', 's1']);
  assert.equal(code, 0);
  assert.equal(out, 'secret "s1" deleted\n');
  assert.equal((await cli(['delete', 'secret', 's1', '-n', 'other'])).code, 3);
});

test('get secrets table', async () => {
  rack();
  backend.secrets.set('default/node-0-bmc', { namespace: 'default', name: 'node-0-bmc', type: 'Opaque', keys: ['password', 'username'], resourceVersion: '3' });
  const { out } = await cli(['get', 'secrets']);
  assert.equal(out, 'NAMESPACE   NAME         TYPE     DATA\ndefault     node-0-bmc   Opaque   2\n');
});

test('get events table, filtered by host', async () => {
  rack();
  backend.emit({ reason: 'Registered', host: 'node-0', time: '2026-01-01T00:59:15Z', message: 'Registered new host' });
  backend.emit({ reason: 'DHCPOffer', mac: '52:54:00:00:00:99', time: '2026-01-01T00:59:50Z', source: 'bootsvc:dhcp', message: 'offered 192.0.2.100' });
  backend.emit({ reason: 'InspectionError', host: 'node-1', type: 'Warning', time: '2026-01-01T00:30:00Z', message: 'timeout' });
  const all = await cli(['get', 'events']);
  assert.equal(all.out, [
    'LAST SEEN   TYPE      REASON            OBJECT                  MESSAGE',
    '45s         Normal    Registered        baremetalhost/node-0    Registered new host',
    '10s         Normal    DHCPOffer         mac/52:54:00:00:00:99   offered 192.0.2.100',
    '30m         Warning   InspectionError   baremetalhost/node-1    timeout',
    '',
  ].join('\n'));
  const one = await cli(['get', 'events', '--host', 'node-1', '-o', 'json']);
  assert.deepEqual((JSON.parse(one.out) as { items: { reason: string }[] }).items.map((e) => e.reason), ['InspectionError']);
});

test('get events --watch streams new events until interrupted', async () => {
  rack();
  backend.emit({ reason: 'Old', host: 'node-0', time: '2026-01-01T00:59:00Z' });
  const controller = new AbortController();
  const h = harness({
    signal: controller.signal,
    onStdout: (t) => {
      if (t.includes('Fresh')) controller.abort();
    },
  });
  const running = runCli(['get', 'events', '--watch'], h.io);
  while (backend.subscriberCount === 0) await new Promise((resolve) => setImmediate(resolve));
  backend.emit({ reason: 'Fresh', host: 'node-0', time: '2026-01-01T01:00:00Z', message: 'new' });
  assert.equal(await running, 0, h.err());
  assert.equal(h.out(), [
    'LAST SEEN   TYPE     REASON   OBJECT                 MESSAGE',
    '60s         Normal   Old      baremetalhost/node-0',
    '0s          Normal   Fresh    baremetalhost/node-0   new',
    '',
  ].join('\n'));
});

test('describe host shows spec (with spec.description), status, the diagnosis, hardware, history and events', async () => {
  rack();
  const host = backend.hosts.get('node-0')!;
  host.spec.image = { url: 'http://images/ubuntu.qcow2', format: 'qcow2', checksum: 'abc', checksumType: 'sha256' };
  host.spec.rootDeviceHints = { deviceName: '/dev/sda' };
  host.status.hardware = {
    systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R640', serialNumber: 'ABC123' },
    firmware: { bios: { vendor: 'Dell', version: '2.1.7', date: '2024-01-01' } },
    ramMebibytes: 196608,
    cpu: { arch: 'x86_64', model: 'Xeon Gold 6230', clockMegahertz: 2100, count: 80 },
    nics: [
      { name: 'eno1', mac: '52:54:00:00:00:10', ip: '192.0.2.100', speedGbps: 25, pxe: true, lldp: { switchID: '00:1c:73:aa:bb:cc', portID: 'Ethernet12', switchSystemName: 'leaf-1' } },
      { name: 'eno2', mac: '52:54:00:00:00:11', pxe: false, lldp: { switchID: '00:1c:73:aa:bb:dd', portID: 'Ethernet7' } },
      { name: 'eno3', mac: '52:54:00:00:00:12', pxe: false },
    ],
    storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 480_103_981_056, model: 'MZ7LH480', serialNumber: 'S1' }],
    hostname: 'node-0',
  };
  host.status.operationHistory = {
    register: { start: '2025-12-30T01:00:00Z', end: '2025-12-30T01:00:00.250Z' },
    inspect: { start: '2025-12-30T01:00:05Z', end: '2025-12-30T01:07:35Z' },
    provision: { start: '2026-01-01T00:50:00Z', end: '' },
    deprovision: { start: '', end: '' },
  };
  backend.emit({ reason: 'ProvisioningStarted', host: 'node-0', time: '2026-01-01T00:50:00Z', source: 'host-controller', message: 'Image provisioning started' });
  const { code, out, err } = await cli(['describe', 'host', 'node-0']);
  assert.equal(code, 0, err);
  assert.equal(out, `Name:              node-0
Namespace:         default
UID:               uid-node-0
Resource Version:  1
Created:           2025-12-30T01:00:00Z (2d ago)
Labels:            <none>
Annotations:       <none>
Spec:
  Online:                  true
  BMC Address:             redfish://10.0.0.10/redfish/v1/Systems/1
  BMC Credentials:         node-0-bmc
  Boot MAC Address:        52:54:00:00:00:10
  Boot Mode:               UEFI
  Image:                   http://images/ubuntu.qcow2 (qcow2) checksum sha256
  Root Device Hints:       deviceName=/dev/sda
  Automated Cleaning:      metadata
  Externally Provisioned:  false
  Consumer:                Machine/worker-a
  Description:             rack 4, slot 12
Status:
  Provisioning State:  provisioned
  Operational Status:  OK
  Powered On:          true
  Provisioning ID:     n-0
  Provisioned Image:   http://images/ubuntu.qcow2
  Error:               <none>
  Last Updated:        <none>
Diagnosis:  <nothing found>
Hardware:
  System:    Dell Inc. PowerEdge R640 (serial ABC123)
  Firmware:  Dell 2.1.7 (2024-01-01)
  CPU:       Xeon Gold 6230, 80 x x86_64, 2100 MHz
  RAM:       196608 MiB
  Hostname:  node-0
  NICs:
    NAME   MAC                 IP            SPEED     PXE   SWITCH / PORT
    eno1   52:54:00:00:00:10   192.0.2.100   25 Gbps   yes   leaf-1 / Ethernet12
    eno2   52:54:00:00:00:11                           no    00:1c:73:aa:bb:dd / Ethernet7
    eno3   52:54:00:00:00:12                           no
  Storage:
    NAME       TYPE   SIZE     MODEL      SERIAL
    /dev/sda   SSD    480 GB   MZ7LH480   S1
Operation History:
  OPERATION     START                  END                        DURATION
  register      2025-12-30T01:00:00Z   2025-12-30T01:00:00.250Z   250ms
  inspect       2025-12-30T01:00:05Z   2025-12-30T01:07:35Z       7m30s
  provision     2026-01-01T00:50:00Z   -                          10m (running)
  deprovision   -                      -                          -
Events:
  LAST SEEN   TYPE     REASON                SOURCE            MESSAGE
  10m         Normal   ProvisioningStarted   host-controller   Image provisioning started
`);
});

test('version prints the client and the server version', async () => {
  const { code, out } = await cli(['version']);
  assert.equal(code, 0);
  assert.equal(out, 'Client Version: 1.2.3\nServer Version: 9.8.7 (agent rack-test, provisioner fixture, started 2026-01-01T00:00:00.000Z)\n');
});

test('agent delegates to runAgent; a config error exits 2', async () => {
  const ran = await cli(['agent', '--config', '/etc/r.yaml', '--demo']);
  assert.equal(ran.code, 0);
  assert.deepEqual(ran.h.agentCalls, [{ configPath: '/etc/r.yaml', demo: true }]);
  const exit3 = await cli(['agent'], harness({ runAgent: () => Promise.resolve(3) }));
  assert.equal(exit3.code, 3);
  const bad = await cli(['agent'], harness({
    runAgent: () => Promise.reject(Object.assign(new Error('invalid config /etc/r.yaml (1 problem):\n  bmc.x: ...'), { name: 'ConfigError' })),
  }));
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: invalid config \/etc\/r\.yaml/);
});

test('help documents the exit codes; no command is a usage error', async () => {
  const help = await cli(['--help']);
  assert.equal(help.code, 0);
  for (const line of ['0  success', '2  usage error', '3  not found', '4  conflict', '5  invalid input', '6  cannot reach', '7  timed out']) {
    assert.ok(help.out.includes(line), line);
  }
  const none = await cli([]);
  assert.equal(none.code, 2);
  assert.match(none.err, /Usage:/);
});
