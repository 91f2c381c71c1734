import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  SyncWireError,
  decodePushRequest,
  decodePushResponse,
  encodePushRequest,
  idempotencyKey,
  isSyncedEvent,
  sanitizeImageUrl,
  summarizeEvent,
  summarizeHost,
  type PushRequest,
} from '../../../agent/sync/index.js';
import { summarizeLastOperation, truncateText } from '../../../agent/sync/summarize.js';
import type { StoredEvent } from '../../../agent/store/index.js';
import { makeHost } from '../store/fixtures.js';
import { richHost } from './fixtures.js';

function request(overrides: Partial<PushRequest> = {}): PushRequest {
  return {
    version: 1,
    agentId: 'rack1-head',
    streamId: 'stream-1',
    sequence: 7,
    sentAt: '2026-01-02T03:04:05.000Z',
    hosts: [summarizeHost(richHost('node-1'))],
    deletedHosts: [{ namespace: 'default', name: 'gone' }],
    events: [summarizeEvent({ seq: 3, time: '2026-01-02T03:04:05Z', type: 'Normal', reason: 'Registered', message: 'ok', source: 'test', host: 'node-1', data: { password: 'x' } })],
    ...overrides,
  };
}

test('summarizeHost picks the allow-listed fields with hardware and the last operation', () => {
  const s = summarizeHost(richHost('node-1'));
  assert.deepEqual(s, {
    name: 'node-1',
    namespace: 'default',
    uid: 'uid-node-1',
    resourceVersion: '17',
    state: 'provisioned',
    operationalStatus: 'OK',
    poweredOn: true,
    online: true,
    errorType: '',
    errorMessage: '',
    errorCount: 0,
    hardware: {
      cpuArch: 'x86_64', cpuCount: 32, ramMebibytes: 131072, diskCount: 2, diskTotalBytes: 4_320_000_000_000,
      nicCount: 2, manufacturer: 'Dell Inc.', productName: 'PowerEdge R650',
    },
    lastOperation: { name: 'provision', start: '2026-01-02T03:10:00.000Z', end: '2026-01-02T03:21:30.500Z', durationSeconds: 690.5 },
    imageUrl: 'https://images.example/os.qcow2',
    deleting: false,
    lastUpdated: '2026-01-02T03:30:00.000Z',
  });
});

test('summarizeHost of a fresh host has null hardware, operation and image', () => {
  const s = summarizeHost(makeHost('fresh'));
  assert.equal(s.hardware, null);
  assert.equal(s.lastOperation, null);
  assert.equal(s.imageUrl, null);
  assert.equal(s.lastUpdated, null);
});

test('summarizeHost never carries credentials, secret names, BMC address or userData', () => {
  const text = JSON.stringify(summarizeHost(richHost('node-1')));
  for (const needle of ['s3cret', 'X-Amz-Signature', 'node-1-bmc', 'user-data', 'network-data', 'redfish', '192.0.2.', 'SN123', 'frag']) {
    assert.ok(!text.includes(needle), `summary contains ${needle}`);
  }
});

test('summarizeHost marks deleting hosts and cuts long error messages', () => {
  const host = makeHost('bad');
  host.metadata.deletionTimestamp = '2026-01-02T03:04:05Z';
  host.status.errorMessage = 'x'.repeat(5000);
  host.status.errorType = 'provisioning error';
  const s = summarizeHost(host);
  assert.equal(s.deleting, true);
  assert.equal(s.errorMessage.length, 2048);
  assert.ok(s.errorMessage.endsWith('…'));
  assert.equal(s.errorType, 'provisioning error');
});

const lastOperationCases = {
  'running operation has no end': [
    { register: { start: '2026-01-01T00:00:00Z', end: '2026-01-01T00:00:01Z' }, inspect: { start: '2026-01-01T00:01:00Z', end: '' }, provision: { start: '', end: '' }, deprovision: { start: '', end: '' } },
    { name: 'inspect', start: '2026-01-01T00:01:00.000Z', end: null, durationSeconds: null },
  ],
  'latest start wins regardless of order': [
    { register: { start: '2026-01-03T00:00:00Z', end: '2026-01-03T00:00:02Z' }, inspect: { start: '2026-01-01T00:00:00Z', end: '2026-01-01T00:05:00Z' }, provision: { start: '', end: '' }, deprovision: { start: '', end: '' } },
    { name: 'register', start: '2026-01-03T00:00:00.000Z', end: '2026-01-03T00:00:02.000Z', durationSeconds: 2 },
  ],
  'end before start counts as still running': [
    { register: { start: '2026-01-03T00:00:00Z', end: '2026-01-02T00:00:00Z' }, inspect: { start: '', end: '' }, provision: { start: '', end: '' }, deprovision: { start: '', end: '' } },
    { name: 'register', start: '2026-01-03T00:00:00.000Z', end: null, durationSeconds: null },
  ],
  'unparsable start is ignored': [
    { register: { start: 'yesterday', end: '' }, inspect: { start: '', end: '' }, provision: { start: '', end: '' }, deprovision: { start: '', end: '' } },
    null,
  ],
} as const;
for (const [name, [history, expected]] of Object.entries(lastOperationCases)) {
  test(`summarizeLastOperation: ${name}`, () => {
    assert.deepEqual(summarizeLastOperation(history), expected);
  });
}

const imageUrlCases: Record<string, [string | undefined, string | null]> = {
  'plain http': ['http://img.example/a.raw', 'http://img.example/a.raw'],
  'user-info removed': ['https://u:p@img.example/a.raw', 'https://img.example/a.raw'],
  'query and fragment removed': ['https://img.example/a.raw?token=t#x', 'https://img.example/a.raw'],
  'empty': ['', null],
  'absent': [undefined, null],
  'not a URL': ['user:password img', null],
  'OCI reference kept': ['oci://registry.example/os:1.0', 'oci://registry.example/os:1.0'],
  'javascript scheme refused': ['javascript:alert(1)', null],
};
for (const [name, [input, expected]] of Object.entries(imageUrlCases)) {
  test(`sanitizeImageUrl: ${name}`, () => {
    assert.equal(sanitizeImageUrl(input), expected);
  });
}

test('summarizeEvent drops data and fills nulls', () => {
  const event: StoredEvent = { seq: 9, time: '2026-01-02T03:04:05Z', type: 'Warning', reason: 'BMCFailed', message: 'm', source: 'bmc', data: { password: 'hunter2' } };
  assert.deepEqual(summarizeEvent(event), { seq: 9, time: '2026-01-02T03:04:05.000Z', type: 'Warning', reason: 'BMCFailed', message: 'm', host: null, mac: null, source: 'bmc' });
});

test('isSyncedEvent keeps host events and warnings, not per-packet records', () => {
  const base = { seq: 1, time: '2026-01-02T03:04:05Z', reason: 'r', message: 'm', source: 'bootsvc:dhcp' } as const;
  assert.equal(isSyncedEvent({ ...base, type: 'Normal', host: 'a' }), true);
  assert.equal(isSyncedEvent({ ...base, type: 'Warning' }), true);
  assert.equal(isSyncedEvent({ ...base, type: 'Normal', mac: '52:54:00:00:00:01' }), false);
});

test('truncateText keeps short text and marks cuts', () => {
  assert.equal(truncateText('abc', 3), 'abc');
  assert.equal(truncateText('abcd', 3), 'ab…');
});

test('idempotencyKey is agent id and sequence', () => {
  assert.equal(idempotencyKey('rack1-head', 42), 'rack1-head:42');
});

test('encodePushRequest round-trips through decodePushRequest and is stable', () => {
  const r = request({ rack: 'rack1', bootServices: { dhcp: { healthy: true, counters: { offers: 3 } } } });
  assert.deepEqual(decodePushRequest(encodePushRequest(r)), r);
  const canonical = encodePushRequest(decodePushRequest(r));
  assert.equal(encodePushRequest(decodePushRequest(canonical)), canonical);
});

const badRequests: Record<string, [unknown, RegExp]> = {
  'not JSON': ['{', /push request: \(top level\): expected JSON/],
  'wrong version': [{ ...request(), version: 3 }, /version: expected 1 or 2, got 3/],
  'sequence zero': [{ ...request(), sequence: 0 }, /sequence: expected an integer ≥ 1/],
  'host with string poweredOn': [{ ...request(), hosts: [{ ...summarizeHost(makeHost('a')), poweredOn: 'yes' }] }, /hosts\[0\]\.poweredOn: expected a boolean, got "yes"/],
  'event with bad time': [{ ...request(), events: [{ ...request().events[0], time: 'noon' }] }, /events\[0\]\.time: expected an RFC 3339 date-time/],
  'missing deletedHosts': [{ ...request(), deletedHosts: undefined }, /deletedHosts: expected an array, got nothing/],
  'negative counter': [{ ...request(), bootServices: { tftp: { healthy: true, counters: { sent: -1 } } } }, /bootServices\.tftp\.counters\.sent: expected a non-negative integer/],
};
for (const [name, [input, message]] of Object.entries(badRequests)) {
  test(`decodePushRequest refuses ${name}`, () => {
    assert.throws(() => decodePushRequest(input), (err: unknown) => err instanceof SyncWireError && message.test(err.message));
  });
}

const responses: Record<string, [string, RegExp | number]> = {
  'the acknowledgement': ['{"acknowledged":7}', 7],
  'extra fields ignored': ['{"acknowledged":7,"note":"dup"}', 7],
  'not JSON': ['<html>ok</html>', /controller response: \(top level\): expected JSON/],
  'not an object': ['[7]', /expected an object, got an array of 1/],
  'missing acknowledged': ['{}', /acknowledged: expected a non-negative integer, got nothing/],
  'stale duplicate acknowledgement': ['{"acknowledged":6}', /acknowledged: expected the pushed sequence 7, got 6/],
  'string acknowledged': ['{"acknowledged":"7"}', /acknowledged: expected a non-negative integer, got "7"/],
};
for (const [name, [text, expected]] of Object.entries(responses)) {
  test(`decodePushResponse: ${name}`, () => {
    if (typeof expected === 'number') assert.deepEqual(decodePushResponse(text, 7), { acknowledged: expected, commands: [], rejected: [] });
    else assert.throws(() => decodePushResponse(text, 7), (err: unknown) => err instanceof SyncWireError && expected.test(err.message));
  });
}
