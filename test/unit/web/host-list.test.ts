// Coalescing of host listings (agent/web/host-list.ts): calls share a run that has not started
// yet, and every caller gets a run that started after its call (so it sees writes acknowledged
// before it asked). The deferral is manual here: `release()` lets scheduled runs start. Then
// GET /hosts through a backend that offers the list as JSON text (ManagementBackend.listHostsJson).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { get } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { coalesceAfterArrival, hostListBodies } from '../../../agent/web/host-list.js';
import { FakeBackend, sampleHost, startFakeApi } from '../../helpers/fake-backend.js';

/** A build function whose runs finish only when the test says; `started` counts runs. */
function gatedBuild(): { build: () => Promise<number>; started: () => number; finish: (error?: Error) => void } {
  let runs = 0;
  const pending: { resolve: (n: number) => void; reject: (e: Error) => void; n: number }[] = [];
  return {
    build: () => {
      runs += 1;
      const n = runs;
      return new Promise<number>((resolve, reject) => pending.push({ resolve, reject, n }));
    },
    started: () => runs,
    finish: (error) => {
      const run = pending.shift();
      if (run === undefined) throw new Error('no run in progress');
      if (error === undefined) run.resolve(run.n);
      else run.reject(error);
    },
  };
}

/** A deferral that holds callbacks until `release()`. */
function manualDefer(): { defer: (callback: () => void) => void; release: () => Promise<void> } {
  const held: (() => void)[] = [];
  const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    defer: (callback) => { held.push(callback); },
    release: async () => {
      await settle();
      for (const callback of held.splice(0)) callback();
      await settle();
    },
  };
}

test('calls made before a run starts share it; the run starts only after the deferral', async () => {
  const gate = gatedBuild();
  const turn = manualDefer();
  const list = coalesceAfterArrival(gate.build, turn.defer);
  const calls = [list(), list(), list()];
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(gate.started(), 0);
  await turn.release();
  assert.equal(gate.started(), 1);
  gate.finish();
  assert.deepEqual(await Promise.all(calls), [1, 1, 1]);
});

test('calls made during a run get the run after it, never the run in progress', async () => {
  const gate = gatedBuild();
  const turn = manualDefer();
  const list = coalesceAfterArrival(gate.build, turn.defer);
  const first = list();
  await turn.release();
  assert.equal(gate.started(), 1);
  const during = [list(), list()];
  await turn.release();
  assert.equal(gate.started(), 1, 'the next run waits for the current one');
  gate.finish();
  assert.equal(await first, 1);
  await turn.release();
  assert.equal(gate.started(), 2);
  const late = list(); // arrives while run 2 is in progress: gets run 3
  gate.finish();
  assert.deepEqual(await Promise.all(during), [2, 2]);
  await turn.release();
  assert.equal(gate.started(), 3);
  gate.finish();
  assert.equal(await late, 3);
});

test('a failed run rejects every call that shared it; later calls run again', async () => {
  const gate = gatedBuild();
  const turn = manualDefer();
  const list = coalesceAfterArrival(gate.build, turn.defer);
  const shared = [list(), list()];
  await turn.release();
  gate.finish(new Error('store closed'));
  for (const call of shared) await assert.rejects(call, /store closed/);
  const again = list();
  await turn.release();
  assert.equal(gate.started(), 2);
  gate.finish();
  assert.equal(await again, 2);
});

test('with the default deferral a lone call is answered', async () => {
  const list = coalesceAfterArrival(() => Promise.resolve('body'));
  assert.equal(await list(), 'body');
  assert.deepEqual(await Promise.all([list(), list()]), ['body', 'body']);
});

/** A fake backend that also offers the host list as JSON text, counting the calls. */
class JsonListingBackend extends FakeBackend {
  jsonCalls = 0;
  listHostsJson(): Promise<string> {
    this.jsonCalls += 1;
    return this.listHosts().then((hosts) => JSON.stringify(hosts));
  }
}

test('GET /hosts sends the same body whether the backend offers the JSON text or only objects', async () => {
  const plain = new FakeBackend();
  const withJson = new JsonListingBackend();
  for (const backend of [plain, withJson]) {
    for (const name of ['node-1', 'node-0']) backend.hosts.set(name, sampleHost(name, { resourceVersion: '7' }));
  }
  const apis = [await startFakeApi(plain), await startFakeApi(withJson)];
  try {
    const [a, b] = await Promise.all(apis.map(async (api) => {
      const res = await fetch(`${api.baseUrl}/api/v1/hosts`);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      return res.text();
    }));
    assert.equal(b, a);
    assert.equal(withJson.jsonCalls, 1);
    const list = JSON.parse(a ?? '') as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(list.kind, 'BareMetalHostList');
    assert.equal(list.items.length, 2);
  } finally {
    for (const api of apis) await api.close();
  }
});

test('a listing body is kept while the items text is unchanged; gzip is made once, on demand', async () => {
  let compressions = 0;
  const bodies = hostListBodies('run1', (json) => { compressions += 1; return Promise.resolve(gzipSync(json)); });
  const a = bodies('[{"n":1}]');
  assert.equal(bodies('[{"n":1}]'), a, 'same text, same body');
  assert.equal(compressions, 0, 'nothing compressed before a client asks');
  assert.equal(gunzipSync(await a.gzip()).toString(), a.json.toString());
  await a.gzip();
  assert.equal(compressions, 1);
  assert.deepEqual(JSON.parse(a.json.toString()), { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHostList', items: [{ n: 1 }] });
  const b = bodies('[{"n":2}]');
  assert.notEqual(b.etag, a.etag, 'a changed text gets a new tag');
  assert.match(b.etag, /^"run1-\d+"$/);
  assert.notEqual(hostListBodies('run2', () => Promise.resolve(Buffer.alloc(0)))('[{"n":1}]').etag, a.etag, 'tags differ across runs');
});

test('a failed compression is tried again by the next request', async () => {
  let calls = 0;
  const bodies = hostListBodies('r', (json) => { calls += 1; return calls === 1 ? Promise.reject(new Error('zlib')) : Promise.resolve(json); });
  const body = bodies('[]');
  await assert.rejects(body.gzip(), /zlib/);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal((await body.gzip()).toString(), body.json.toString());
});

/** GET with exactly the given headers (no implicit Accept-Encoding), the body left raw. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }); });
      res.on('error', reject);
    }).on('error', reject);
  });
}

test('GET /hosts: gzip when accepted, identity otherwise, 304 for a matching If-None-Match, new tag after a change', async () => {
  const backend = new JsonListingBackend();
  backend.hosts.set('node-0', sampleHost('node-0', { resourceVersion: '1' }));
  const api = await startFakeApi(backend);
  try {
    const url = `${api.baseUrl}/api/v1/hosts`;
    const plain = await rawGet(url, {});
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    const etag = plain.headers.etag;
    assert.equal(typeof etag, 'string');
    const zipped = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(zipped.body).toString(), plain.body.toString());
    assert.equal(zipped.headers.etag, etag);
    const refused = await rawGet(url, { 'accept-encoding': 'gzip;q=0' });
    assert.equal(refused.headers['content-encoding'], undefined);
    const again = await rawGet(url, { 'if-none-match': String(etag) });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    backend.hosts.set('node-1', sampleHost('node-1', { resourceVersion: '2' }));
    const changed = await rawGet(url, { 'if-none-match': String(etag) });
    assert.equal(changed.status, 200, 'a changed list is sent in full');
    assert.notEqual(changed.headers.etag, etag);
    assert.equal((JSON.parse(changed.body.toString()) as { items: unknown[] }).items.length, 2);
  } finally {
    await api.close();
  }
});
