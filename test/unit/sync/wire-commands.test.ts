import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodePushRequest, decodePushResponse } from '../../../wire/index.js';

const ID = '0b7b0ad1-2a4c-4f5e-9b1e-1d7a2f3c4b5d';

test('a version-2 answer carries commands; a bad command is set aside with its id, the rest kept', () => {
  const text = JSON.stringify({
    acknowledged: 3,
    commands: [
      { id: ID, kind: 'power-off', host: { namespace: 'default', name: 'n1' }, expiresAt: '2026-01-02T03:04:05Z' },
      { id: '1b7b0ad1-2a4c-4f5e-9b1e-1d7a2f3c4b5d', kind: 'format', host: { namespace: 'default', name: 'n1' }, expiresAt: '2026-01-02T03:04:05Z' },
      { id: 'not-a-uuid', kind: 'apply', manifest: 'a: 1', expiresAt: '2026-01-02T03:04:05Z' },
    ],
  });
  const ack = decodePushResponse(text, 3);
  assert.deepEqual(ack.commands, [{ id: ID, kind: 'power-off', host: { namespace: 'default', name: 'n1' }, expiresAt: '2026-01-02T03:04:05Z' }]);
  assert.deepEqual(ack.rejected.map((r) => r.id), ['1b7b0ad1-2a4c-4f5e-9b1e-1d7a2f3c4b5d', null]);
  assert.match(ack.rejected[0]?.reason ?? '', /commands\[1\]\.kind/);
});

test('version-2 push fields are read and checked; version 1 ignores them', () => {
  const base = { agentId: 'a', streamId: 's', sequence: 1, sentAt: '2026-01-02T03:04:05Z', hosts: [], deletedHosts: [], events: [] };
  const results = [{ id: ID, outcome: 'done', message: 'ok', finishedAt: '2026-01-02T03:04:05Z' }];
  const v2 = decodePushRequest({ ...base, version: 2, commandResults: results, statusUrl: 'http://r1:8080/', backlog: { hosts: 1, events: 2 } });
  assert.deepEqual(v2.commandResults, results);
  assert.equal(v2.statusUrl, 'http://r1:8080/');
  assert.deepEqual(v2.backlog, { hosts: 1, events: 2 });
  assert.throws(() => decodePushRequest({ ...base, version: 2, statusUrl: 'javascript:x' }), /statusUrl/);
  assert.throws(() => decodePushRequest({ ...base, version: 2, commandResults: [{ ...results[0], outcome: 'maybe' }] }), /commandResults\[0\]\.outcome/);
  const v1 = decodePushRequest({ ...base, version: 1, commandResults: 'ignored' });
  assert.equal(v1.commandResults, undefined);
});
