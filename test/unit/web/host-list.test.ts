// Coalescing of host listings (agent/web/host-list.ts): calls share a run that has not started
// yet, and every caller gets a run that started after its call (so it sees writes acknowledged
// before it asked). The deferral is manual here: `release()` lets scheduled runs start. Then
// GET /hosts through a backend that offers the list as JSON text (ManagementBackend.listHostsJson).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coalesceAfterArrival } from '../../../agent/web/host-list.js';
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
