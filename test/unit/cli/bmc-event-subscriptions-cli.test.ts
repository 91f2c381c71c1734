/**
 * The CLI and API for BMCEventSubscription and the BMC probe, end to end over the real API and
 * HostService on a memory store: `rackside apply -f` of the kind, `get bmceventsubscriptions`,
 * `get bmceventsubscription NAME`, `delete bmceventsubscription NAME`; `POST /api/v1/bmc/probe`
 * with a stored Secret's credentials; `rackside bmc probe` against the fake lanplus BMC.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from '../../../agent/cli/run.js';
import type { CliIo } from '../../../agent/cli/io.js';
import { HostService } from '../../../agent/host/service.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { startFakeApi, type FakeApi } from '../../helpers/fake-backend.js';
import { FakeLanplusBmc } from '../../lab/ipmi/fake-lanplus-bmc.js';

let api: FakeApi;
let service: HostService;

before(async () => {
  service = new HostService({ store: createMemoryStore(), info: { version: 't', agentId: 't', provisioner: 'fixture', startedAt: '' } });
  api = await startFakeApi(service);
});
after(async () => {
  await api.close();
});

async function cli(args: string[], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => { out += t; },
    stderr: (t) => { err += t; },
    env: { RACKSIDE_SERVER: api.baseUrl },
    readStdin: () => Promise.resolve(''),
    readFile: (path) => (files[path] === undefined ? Promise.reject(new Error(`ENOENT ${path}`)) : Promise.resolve(files[path])),
    fetch: globalThis.fetch,
    now: () => Date.parse('2026-01-01T00:00:00Z'),
    sleep: () => Promise.resolve(),
    clientVersion: '1',
    runAgent: () => Promise.resolve(0),
  };
  const code = await runCli(args, io);
  return { code, out, err };
}

const MANIFEST = `apiVersion: metal3.io/v1alpha1
kind: BMCEventSubscription
metadata:
  name: worker-1-events
  namespace: default
spec:
  hostName: worker-1
  destination: https://events.example.com/hook
  context: SomeUserContext
`;

test('apply, get and delete a BMCEventSubscription through the CLI', async () => {
  const applied = await cli(['apply', '-f', 'sub.yaml'], { 'sub.yaml': MANIFEST });
  assert.equal(applied.code, 0, applied.err);
  assert.match(applied.out, /bmceventsubscription\.metal3\.io\/worker-1-events created/);
  const bad = await cli(['apply', '-f', 'bad.yaml'], { 'bad.yaml': MANIFEST.replace('https://events.example.com/hook', 'events.example.com') });
  assert.notEqual(bad.code, 0);
  assert.match(bad.err, /spec\.destination/);

  const table = await cli(['get', 'bmceventsubscriptions']);
  assert.equal(table.code, 0, table.err);
  assert.match(table.out, /^NAMESPACE\s+NAME\s+HOST\s+DESTINATION\s+SUBSCRIPTION\s+ERROR\n/);
  assert.match(table.out, /default\s+worker-1-events\s+worker-1\s+https:\/\/events\.example\.com\/hook/);
  const one = await cli(['get', 'bmceventsubscription', 'worker-1-events', '-o', 'json']);
  assert.equal(one.code, 0, one.err);
  assert.equal((JSON.parse(one.out) as { spec: { context: string } }).spec.context, 'SomeUserContext');
  assert.equal((await cli(['get', 'bmceventsubscription', 'nope'])).code, 3);

  const deleted = await cli(['delete', 'bmceventsubscription', 'worker-1-events']);
  assert.equal(deleted.code, 0, deleted.err);
  const after = await cli(['get', 'bmceventsubscriptions']);
  assert.match(after.out, /worker-1-events \(deleting\)/, 'stays until the reconciler removed it from the BMC');
});

test('POST /api/v1/bmc/probe: a stored Secret for credentials, a bad address is a 400, the OpenAPI document lists the path', async () => {
  const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: 'pw' }] });
  try {
    await service.apply([{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bmc-creds', namespace: 'default' }, data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('pw').toString('base64') } }]);
    const res = await fetch(`${api.baseUrl}/api/v1/bmc/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: `ipmi://127.0.0.1:${bmc.port}`, credentialsName: 'bmc-creds' }) });
    assert.equal(res.status, 200);
    const report = (await res.json()) as { recommendedAddress?: string; answered: boolean };
    assert.equal(report.recommendedAddress, `ipmi://127.0.0.1:${bmc.port}`);
    const missing = await fetch(`${api.baseUrl}/api/v1/bmc/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: 'ipmi://127.0.0.1:1', credentialsName: 'nope' }) });
    assert.equal(missing.status, 404);
    const bad = await fetch(`${api.baseUrl}/api/v1/bmc/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: 'fe80::1' }) });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { field: string } }).error.field, 'address');
    const doc = (await (await fetch(`${api.baseUrl}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [method, path] of [['post', '/api/v1/bmc/probe'], ['get', '/api/v1/bmceventsubscriptions'], ['get', '/api/v1/bmceventsubscriptions/{namespace}/{name}'], ['delete', '/api/v1/bmceventsubscriptions/{namespace}/{name}']] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path} documented`);
    }
  } finally {
    await bmc.stop();
  }
});

test('rackside bmc probe: text report with the recommendation; -o json; exit 6 when nothing answers', async () => {
  const bmc = await FakeLanplusBmc.start();
  try {
    const text = await cli(['bmc', 'probe', `ipmi://127.0.0.1:${bmc.port}`]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`recommended: ipmi://127\\.0\\.0\\.1:${bmc.port}\\n`));
    assert.match(text.out, /ok {3}Get Channel Authentication Capabilities/);
    const json = await cli(['bmc', 'probe', `ipmi://127.0.0.1:${bmc.port}`, '-o', 'json']);
    assert.equal((JSON.parse(json.out) as { answered: boolean }).answered, true);
  } finally {
    await bmc.stop();
  }
  assert.equal((await cli(['bmc', 'probe'])).code, 2);
});
