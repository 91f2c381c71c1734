import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createFlightRecorder } from '../../../agent/boot/flight-recorder.js';
import { createMemoryStore } from '../../../agent/store/memory-store.js';
import type { Store, StoredEvent } from '../../../agent/store/types.js';
import { mergeTimelines, mountTimelineRoutes } from '../../../agent/web/boot-routes.js';
import { FakeBackend, sampleHost, startFakeApi, type FakeApi } from '../../helpers/fake-backend.js';

const MAC = '52:54:00:aa:bb:01';
let store: Store;
let api: FakeApi;

before(async () => {
  store = createMemoryStore();
  await store.commit([
    { kind: 'host', op: 'put', object: sampleHost('node-0', { spec: { bootMACAddress: MAC } }) },
    { kind: 'host', op: 'put', object: sampleHost('node-1', { spec: { bootMACAddress: '52:54:00:aa:bb:02' } }) },
  ]);
  const recorder = createFlightRecorder({ store });
  recorder.record({ kind: 'dhcp', message: 'discover', mac: MAC });
  recorder.record({ kind: 'dhcp', message: 'ack', mac: MAC, address: '10.0.0.5' });
  recorder.record({ kind: 'tftp', phase: 'done', clientAddress: '10.0.0.5', file: 'ipxe.efi', bytes: 1 });
  recorder.record({ kind: 'dhcp', message: 'discover', mac: '52:54:00:aa:bb:02' });
  await recorder.close();
  await store.appendEvents([{ time: '2026-01-01T00:00:00Z', type: 'Normal', reason: 'InspectionStarted', message: 'inspecting', host: 'node-0', source: 'host-controller' }]);
  api = await startFakeApi(new FakeBackend(), { extraRoutes: (router) => { mountTimelineRoutes(router, store); } });
});

after(async () => {
  await api.close();
});

async function get(path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${api.baseUrl}${path}`);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function reasons(json: Record<string, unknown>): string[] {
  return (json.items as StoredEvent[]).map((e) => e.reason);
}

test('GET /api/v1/boot/:mac/timeline: that MAC\'s boot steps, newest last (any MAC spelling)', async () => {
  const r = await get('/api/v1/boot/52-54-00-AA-BB-01/timeline');
  assert.equal(r.status, 200);
  assert.equal(r.json.mac, MAC);
  assert.deepEqual(reasons(r.json), ['DHCPDiscover', 'DHCPAck', 'TFTPTransferDone']);
});

test('GET /api/v1/hosts/:name/timeline: boot steps merged with the host\'s events', async () => {
  const r = await get('/api/v1/hosts/node-0/timeline');
  assert.equal(r.status, 200);
  assert.equal(r.json.host, 'node-0');
  assert.equal(r.json.mac, MAC);
  assert.deepEqual(reasons(r.json), ['DHCPDiscover', 'DHCPAck', 'TFTPTransferDone', 'InspectionStarted']);
});

test('limit keeps the newest; after pages forward', async () => {
  assert.deepEqual(reasons((await get('/api/v1/hosts/node-0/timeline?limit=2')).json), ['TFTPTransferDone', 'InspectionStarted']);
  const all = (await get('/api/v1/boot/52:54:00:aa:bb:01/timeline')).json.items as StoredEvent[];
  const first = all[0]?.seq ?? 0;
  assert.deepEqual(reasons((await get(`/api/v1/boot/52:54:00:aa:bb:01/timeline?after=${first}`)).json), ['DHCPAck', 'TFTPTransferDone']);
});

test('errors: a bad MAC is a 400, an unknown host a 404, a bad limit a 400', async () => {
  const bad = await get('/api/v1/boot/not-a-mac/timeline');
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.json), /must be a MAC address/);
  assert.equal((await get('/api/v1/hosts/nope/timeline')).status, 404);
  assert.equal((await get('/api/v1/boot/52:54:00:aa:bb:01/timeline?limit=0')).status, 400);
  assert.equal((await get('/api/v1/boot/52:54:00:aa:bb:01/timeline?limit=abc')).status, 400);
});

test('mergeTimelines de-duplicates by seq and keeps the newest', () => {
  const e = (seq: number): StoredEvent => ({ seq, time: '', type: 'Normal', reason: `R${seq}`, message: '', source: 's' });
  assert.deepEqual(mergeTimelines([[e(1), e(3)], [e(2), e(3), e(4)]], 3).map((x) => x.seq), [2, 3, 4]);
});
