import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { FakeBackend, sampleHost, startFakeApi, type FakeApi } from '../../helpers/fake-backend.js';
import { bearerTokenOf, tokensEqual } from '../../../agent/web/auth.js';
import { buildOpenApiDocument } from '../../../agent/web/openapi.js';

const HOST_YAML = `apiVersion: v1
kind: Secret
metadata:
  name: node-0-bmc
type: Opaque
data:
  username: YWRtaW4=
  password: cGFzc3dvcmQ=
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-0
spec:
  online: true
  bootMACAddress: 52:54:00:aa:bb:cc
  bmc:
    address: ipmi://192.0.2.10
    credentialsName: node-0-bmc
---
`;

interface ErrorJson { error: { code: string; message: string; field: string } }

let backend: FakeBackend;
let api: FakeApi;

before(async () => {
  backend = new FakeBackend();
  api = await startFakeApi(backend, { sseHeartbeatMs: 60_000 });
});
after(async () => {
  await api.close();
});

function reset(): void {
  backend.reset();
}

async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const res = await fetch(`${api.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

function assertError(res: { status: number; json: unknown; headers: Headers }, status: number, field: string, messagePart?: RegExp): ErrorJson {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = res.json as ErrorJson;
  assert.equal(typeof body.error.code, 'string');
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.error.field, field);
  if (messagePart !== undefined) assert.match(body.error.message, messagePart);
  return body;
}

const yamlHeaders = { 'content-type': 'application/yaml' };
const jsonHeaders = { 'content-type': 'application/json' };

test('healthz and version answer JSON', async () => {
  const health = await call('GET', '/api/v1/healthz');
  assert.deepEqual(health.json, { status: 'ok' });
  const version = await call('GET', '/api/v1/version');
  assert.deepEqual(version.json, { ...backend.info(), apiVersion: 'v1' });
});

test('apply takes multi-document YAML and reports each outcome', async () => {
  reset();
  const first = await call('POST', '/api/v1/apply', HOST_YAML, yamlHeaders);
  assert.equal(first.status, 200);
  const items = (first.json as { items: { kind: string; name: string; action: string }[] }).items;
  assert.deepEqual(items.map((i) => [i.kind, i.name, i.action]), [['Secret', 'node-0-bmc', 'created'], ['BareMetalHost', 'node-0', 'created']]);
  assert.equal(backend.applied.at(-1)?.length, 2, 'trailing --- adds no document');
  const again = await call('POST', '/api/v1/apply', HOST_YAML, yamlHeaders);
  assert.deepEqual((again.json as { items: { action: string }[] }).items.map((i) => i.action), ['unchanged', 'unchanged']);
});

const jsonForms: Record<string, unknown> = {
  'a single object': { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: 'j1' }, spec: { online: false } },
  'an array': [{ apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: 'j1' }, spec: {} }, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: {} }],
  'an items list': { kind: 'List', items: [{ apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name: 'j1' }, spec: {} }] },
};
for (const [name, body] of Object.entries(jsonForms)) {
  test(`apply takes JSON as ${name}`, async () => {
    reset();
    const res = await call('POST', '/api/v1/apply', JSON.stringify(body), jsonHeaders);
    assert.equal(res.status, 200, res.text);
    const expected = Array.isArray(body) ? body.length : 1;
    assert.equal((res.json as { items: unknown[] }).items.length, expected);
    assert.ok(backend.hosts.has('j1'));
  });
}

test('malformed YAML is a 400 naming line and column', async () => {
  const res = await call('POST', '/api/v1/apply', 'kind: BareMetalHost\nmetadata:\n  name: [x\nspec: {}\n', yamlHeaders);
  assertError(res, 400, 'body', /invalid YAML at line \d+, column \d+/);
});

test('YAML syntax error in the second document names that document', async () => {
  const res = await call('POST', '/api/v1/apply', 'kind: Secret\n---\nkind: BareMetalHost\n  bad: indent\n', yamlHeaders);
  assertError(res, 400, 'body', /line 3, column \d+ \(document 2\)/);
});

test('invalid JSON is a 400', async () => {
  assertError(await call('POST', '/api/v1/apply', '{"kind": ', jsonHeaders), 400, 'body', /invalid JSON/);
});

test('an empty body is a 400', async () => {
  assertError(await call('POST', '/api/v1/apply', '---\n', yamlHeaders), 400, 'body', /no manifests/);
});

test('an unsupported content type is a 415', async () => {
  assertError(await call('POST', '/api/v1/apply', '<xml/>', { 'content-type': 'application/xml' }), 415, 'body');
});

test('backend validation errors keep their field path (items[i] for multi-doc)', async () => {
  reset();
  const res = await call('POST', '/api/v1/apply', 'kind: Secret\nmetadata: {name: ok}\n---\nkind: BareMetalHost\nmetadata: {name: Bad_Name}\n', yamlHeaders);
  assertError(res, 400, 'items[1].metadata.name', /DNS-1123/);
});

test('stale resourceVersion and immutable fields are 409 naming the field', async () => {
  reset();
  backend.hosts.set('node-1', sampleHost('node-1', { resourceVersion: '5' }));
  const stale = await call('POST', '/api/v1/apply', 'kind: BareMetalHost\nmetadata: {name: node-1, resourceVersion: "4"}\nspec: {}\n', yamlHeaders);
  assertError(stale, 409, 'metadata.resourceVersion');
  const mac = await call('POST', '/api/v1/apply', 'kind: BareMetalHost\nmetadata: {name: node-1}\nspec: {bootMACAddress: "52:54:00:ff:ff:ff"}\n', yamlHeaders);
  assertError(mac, 409, 'spec.bootMACAddress', /immutable/);
});

test('GET hosts lists and gets; a missing host is a 404', async () => {
  reset();
  backend.hosts.set('b', sampleHost('b'));
  backend.hosts.set('a', sampleHost('a'));
  const list = await call('GET', '/api/v1/hosts');
  const listBody = list.json as { kind: string; items: { metadata: { name: string } }[] };
  assert.equal(listBody.kind, 'BareMetalHostList');
  assert.deepEqual(listBody.items.map((h) => h.metadata.name), ['a', 'b']);
  const one = await call('GET', '/api/v1/hosts/a');
  assert.equal((one.json as { metadata: { name: string } }).metadata.name, 'a');
  assertError(await call('GET', '/api/v1/hosts/zzz'), 404, 'metadata.name', /"zzz" not found/);
});

test('PUT creates (201), updates (200) and checks the name and kind', async () => {
  reset();
  const manifest = 'apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: p1}\nspec: {online: true}\n';
  assert.equal((await call('PUT', '/api/v1/hosts/p1', manifest, yamlHeaders)).status, 201);
  const updated = await call('PUT', '/api/v1/hosts/p1', manifest.replace('online: true', 'online: false'), yamlHeaders);
  assert.equal(updated.status, 200);
  assert.equal((updated.json as { spec: { online: boolean } }).spec.online, false);
  assertError(await call('PUT', '/api/v1/hosts/other', manifest, yamlHeaders), 400, 'metadata.name', /does not match/);
  assertError(await call('PUT', '/api/v1/hosts/p1', 'kind: Secret\nmetadata: {name: p1}\n', yamlHeaders), 400, 'kind');
  assertError(await call('PUT', '/api/v1/hosts/p1', `${manifest}---\n${manifest}`, yamlHeaders), 400, 'body', /exactly one/);
  const nameless = await call('PUT', '/api/v1/hosts/p2', JSON.stringify({ kind: 'BareMetalHost', spec: {} }), jsonHeaders);
  assert.equal(nameless.status, 201, 'the name comes from the URL when absent');
});

test('DELETE starts deletion (202) and the host then disappears', async () => {
  reset();
  backend.hosts.set('d1', sampleHost('d1'));
  backend.deleteAfterGets = 0;
  const res = await call('DELETE', '/api/v1/hosts/d1');
  assert.equal(res.status, 202);
  assert.equal((res.json as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp, '2026-01-01T01:00:00Z');
  assert.equal((await call('GET', '/api/v1/hosts/d1')).status, 404);
  assertError(await call('DELETE', '/api/v1/hosts/d1'), 404, 'metadata.name');
  backend.deleteAfterGets = 1;
});

const actionCases: Record<string, { action: string; body?: unknown; expected: unknown }> = {
  'power-on': { action: 'power-on', expected: { action: 'power-on' } },
  'power-off': { action: 'power-off', expected: { action: 'power-off' } },
  'reboot defaults to soft': { action: 'reboot', expected: { action: 'reboot', mode: 'soft' } },
  'reboot hard': { action: 'reboot', body: { mode: 'hard' }, expected: { action: 'reboot', mode: 'hard' } },
  inspect: { action: 'inspect', expected: { action: 'inspect' } },
  'detach with options': { action: 'detach', body: { deleteAction: 'delay', force: true }, expected: { action: 'detach', deleteAction: 'delay', force: true } },
  attach: { action: 'attach', body: {}, expected: { action: 'attach' } },
};
for (const [name, c] of Object.entries(actionCases)) {
  test(`action ${name} reaches the backend`, async () => {
    reset();
    backend.hosts.set('n', sampleHost('n'));
    const res = await call('POST', `/api/v1/hosts/n/actions/${c.action}`, c.body === undefined ? undefined : JSON.stringify(c.body), jsonHeaders);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(backend.actions, [{ name: 'n', action: c.expected }]);
  });
}

const badActions: Record<string, { path: string; body?: string; status: number; field: string }> = {
  'unknown action': { path: '/api/v1/hosts/n/actions/explode', status: 400, field: 'action' },
  'bad reboot mode': { path: '/api/v1/hosts/n/actions/reboot', body: '{"mode":"gentle"}', status: 400, field: 'mode' },
  'unknown field': { path: '/api/v1/hosts/n/actions/power-on', body: '{"force":true}', status: 400, field: 'force' },
  'bad deleteAction': { path: '/api/v1/hosts/n/actions/detach', body: '{"deleteAction":"later"}', status: 400, field: 'deleteAction' },
  'bad force type': { path: '/api/v1/hosts/n/actions/detach', body: '{"force":"yes"}', status: 400, field: 'force' },
  'invalid JSON': { path: '/api/v1/hosts/n/actions/reboot', body: '{mode:', status: 400, field: 'body' },
  'missing host': { path: '/api/v1/hosts/nope/actions/inspect', status: 404, field: 'metadata.name' },
};
for (const [name, c] of Object.entries(badActions)) {
  test(`action error: ${name}`, async () => {
    reset();
    backend.hosts.set('n', sampleHost('n'));
    assertError(await call('POST', c.path, c.body, jsonHeaders), c.status, c.field);
    assert.equal(backend.actions.length, 0);
  });
}

test('secrets list keys only and delete (204, then 404)', async () => {
  reset();
  await call('POST', '/api/v1/apply', HOST_YAML, yamlHeaders);
  const list = await call('GET', '/api/v1/secrets');
  const items = (list.json as { items: Record<string, unknown>[] }).items.map(({ resourceVersion: _rv, ...rest }) => rest);
  assert.deepEqual(items, [{ namespace: 'default', name: 'node-0-bmc', type: 'Opaque', keys: ['password', 'username'] }]);
  assert.ok(!list.text.includes('cGFzc3dvcmQ='), 'values never listed');
  assert.equal((await call('DELETE', '/api/v1/secrets/default/node-0-bmc')).status, 204);
  assertError(await call('DELETE', '/api/v1/secrets/default/node-0-bmc'), 404, 'metadata.name');
});

test('events filter by host, mac, after and limit; bad numbers are 400', async () => {
  reset();
  backend.hosts.set('h1', sampleHost('h1'));
  backend.emit({ reason: 'A', host: 'h1' });
  backend.emit({ reason: 'B', host: 'h2', mac: '52:54:00:00:00:02' });
  backend.emit({ reason: 'C', host: 'h1' });
  const reasons = async (path: string): Promise<string[]> => ((await call('GET', path)).json as { items: { reason: string }[] }).items.map((e) => e.reason);
  assert.deepEqual(await reasons('/api/v1/events'), ['A', 'B', 'C']);
  assert.deepEqual(await reasons('/api/v1/events?host=h1'), ['A', 'C']);
  assert.deepEqual(await reasons('/api/v1/events?mac=52-54-00-00-00-02'), ['B']);
  assert.deepEqual(await reasons('/api/v1/events?after=1&limit=1'), ['C']);
  assert.deepEqual(await reasons('/api/v1/hosts/h1/events?after=1'), ['C']);
  assertError(await call('GET', '/api/v1/events?limit=0'), 400, 'query.limit');
  assertError(await call('GET', '/api/v1/events?after=-3'), 400, 'query.after');
  assertError(await call('GET', '/api/v1/events?mac=nope'), 400, 'query.mac');
  assertError(await call('GET', '/api/v1/events?host=a&host=b'), 400, 'query.host');
  assertError(await call('GET', '/api/v1/hosts/ghost/events'), 404, 'metadata.name');
});

/** Reads an SSE response until `count` events arrived; returns their parsed data and ids. */
async function readEvents(res: Response, count: number): Promise<{ id: string; reason: string }[]> {
  assert.ok(res.body);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const events: { id: string; reason: string }[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id !== undefined && data !== undefined) events.push({ id, reason: (JSON.parse(data) as { reason: string }).reason });
    }
  }
  await reader.cancel();
  return events;
}

test('the event stream delivers live events as SSE', async () => {
  reset();
  const controller = new AbortController();
  const res = await fetch(`${api.baseUrl}/api/v1/events/stream?host=h1`, { signal: controller.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reading = readEvents(res, 1);
  // The subscription is registered before the headers are flushed, so emitting now is safe.
  backend.emit({ reason: 'Other', host: 'h2' });
  const wanted = backend.emit({ reason: 'Live', host: 'h1' });
  assert.deepEqual(await reading, [{ id: String(wanted.seq), reason: 'Live' }]);
  controller.abort();
});

test('the event stream replays after Last-Event-ID without duplicates', async () => {
  reset();
  backend.emit({ reason: 'One' });
  backend.emit({ reason: 'Two' });
  backend.emit({ reason: 'Three' });
  const controller = new AbortController();
  const res = await fetch(`${api.baseUrl}/api/v1/events/stream`, { headers: { 'last-event-id': '1' }, signal: controller.signal });
  const reading = readEvents(res, 3);
  backend.emit({ reason: 'Four' });
  assert.deepEqual((await reading).map((e) => e.reason), ['Two', 'Three', 'Four']);
  controller.abort();
});

test('unknown routes are JSON 404s', async () => {
  assertError(await call('GET', '/api/v1/nothing-here'), 404, '', /no route/);
  assertError(await call('GET', '/'), 404, '');
});

test('unexpected failures are JSON 500s without a stack', async () => {
  reset();
  backend.failWith = new Error('disk on fire');
  const res = await call('GET', '/api/v1/hosts');
  assertError(res, 500, '', /disk on fire/);
  assert.ok(!res.text.includes('at '), 'no stack frames');
  backend.failWith = undefined;
});

test('bodies over the limit get a JSON 413', async () => {
  const big = `kind: Secret\nmetadata: {name: big}\ndata: {x: "${'a'.repeat(1024 * 1024 + 10)}"}\n`;
  assertError(await call('POST', '/api/v1/apply', big, yamlHeaders), 413, 'body', /too large/);
});

test('the OpenAPI document covers every route', async () => {
  const res = await call('GET', '/api/openapi.json');
  const doc = res.json as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };
  assert.equal(doc.openapi, '3.1.0');
  const routes = [
    ['get', '/api/v1/hosts'], ['get', '/api/v1/hosts/{name}'], ['put', '/api/v1/hosts/{name}'], ['delete', '/api/v1/hosts/{name}'],
    ['post', '/api/v1/apply'], ['post', '/api/v1/hosts/{name}/actions/{action}'], ['get', '/api/v1/hosts/{name}/events'],
    ['get', '/api/v1/secrets'], ['delete', '/api/v1/secrets/{namespace}/{name}'], ['get', '/api/v1/events'],
    ['get', '/api/v1/events/stream'], ['get', '/api/v1/version'], ['get', '/api/v1/healthz'], ['get', '/api/openapi.json'],
    ['get', '/api/v1/erase-records'], ['get', '/api/v1/erase-records/signing-key'], ['get', '/api/v1/erase-records/{id}'], ['get', '/api/v1/erase-records/{id}/signature'],
  ];
  for (const [method, path] of routes) assert.ok(doc.paths[path!]?.[method!], `${method} ${path} documented`);
  for (const name of ['Error', 'BareMetalHost', 'BareMetalHostSpec', 'BareMetalHostStatus', 'StoredEvent', 'ApplyOutcome', 'EraseRecord']) {
    assert.ok(doc.components.schemas[name], `schema ${name}`);
  }
  // Every $ref resolves.
  const refs = JSON.stringify(buildOpenApiDocument('x')).match(/#\/components\/(schemas|responses)\/[A-Za-z]+/g) ?? [];
  const full = buildOpenApiDocument('x') as { components: Record<string, Record<string, unknown>> };
  for (const r of refs) {
    const [, , kind, name] = r.split('/');
    assert.ok(full.components[kind!]?.[name!], `${r} resolves`);
  }
});

test('tokens compare by value and parse from the Authorization header', () => {
  assert.equal(tokensEqual('abc', 'abc'), true);
  assert.equal(tokensEqual('abc', 'abd'), false);
  assert.equal(tokensEqual('abc', 'abcd'), false);
  assert.equal(bearerTokenOf('Bearer xyz'), 'xyz');
  assert.equal(bearerTokenOf('bearer  xyz '), 'xyz');
  assert.equal(bearerTokenOf('Basic xyz'), undefined);
  assert.equal(bearerTokenOf(undefined), undefined);
});

test('mutations need the bearer token when required; reads do not', async () => {
  const secured = await startFakeApi(backend, { requireTokenForMutations: true, token: 'sixteen-chars-token' });
  try {
    reset();
    backend.hosts.set('n', sampleHost('n'));
    const post = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${secured.baseUrl}/api/v1/hosts/n/actions/power-on`, { method: 'POST', headers });
    const missing = await post({});
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal(((await missing.json()) as ErrorJson).error.code, 'RACKSIDE_ERR_API_UNAUTHORIZED');
    assert.equal((await post({ authorization: 'Bearer wrong-token' })).status, 401);
    assert.equal((await post({ authorization: 'Bearer sixteen-chars-token' })).status, 202);
    assert.equal((await fetch(`${secured.baseUrl}/api/v1/hosts`)).status, 200);
    assert.equal(backend.actions.length, 1);
  } finally {
    await secured.close();
  }
});

test('with the token required but none configured, every mutation is refused', async () => {
  const locked = await startFakeApi(backend, { requireTokenForMutations: true });
  try {
    const res = await fetch(`${locked.baseUrl}/api/v1/apply`, { method: 'POST', body: HOST_YAML, headers: { ...yamlHeaders, authorization: 'Bearer anything' } });
    assert.equal(res.status, 401);
    assert.match(((await res.json()) as ErrorJson).error.message, /management\.token is not set/);
  } finally {
    await locked.close();
  }
});
