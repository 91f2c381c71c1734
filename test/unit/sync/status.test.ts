import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatSyncStatus, syncStatusHandler, type SyncStatus } from '../../../agent/sync/index.js';

const NOW = Date.parse('2026-01-02T03:10:00.000Z');

function status(overrides: Partial<SyncStatus> = {}): SyncStatus {
  return {
    enabled: true,
    running: true,
    url: 'https://controller.example/api/v1/push',
    agentId: 'rack1-head',
    streamId: 'stream-1',
    lastAttemptAt: '2026-01-02T03:09:59.000Z',
    lastAckAt: '2026-01-02T03:07:00.000Z',
    lastAckSequence: 41,
    backlog: { hosts: 3, events: 12 },
    inflight: { sequence: 42, hosts: 3, events: 12, attempts: 4 },
    lastError: { at: '2026-01-02T03:09:59.000Z', code: 'http-status', message: 'controller answered HTTP 500', httpStatus: 500 },
    consecutiveFailures: 4,
    nextAttemptAt: '2026-01-02T03:10:07.000Z',
    nextResyncAt: null,
    droppedEvents: 0,
    ...overrides,
  };
}

test('formatSyncStatus renders ack, backlog, error and next attempt', () => {
  assert.equal(formatSyncStatus(status(), NOW), [
    'controller  https://controller.example/api/v1/push',
    'agent       rack1-head (stream stream-1)',
    'last ack    sequence 41 at 2026-01-02T03:07:00.000Z (3m ago)',
    'backlog     3 hosts, 12 events (in flight: sequence 42, 3 hosts, 12 events, 4 attempts)',
    'last error  2026-01-02T03:09:59.000Z (1s ago) http-status HTTP 500: controller answered HTTP 500',
    'failures    4 in a row',
    'next try    2026-01-02T03:10:07.000Z (in 7s)',
  ].join('\n'));
});

test('formatSyncStatus says when sync is not configured or never acknowledged', () => {
  assert.match(formatSyncStatus(status({ enabled: false }), NOW), /not configured/);
  const fresh = formatSyncStatus(status({ lastAckAt: null, lastAckSequence: null, lastError: null, consecutiveFailures: 0, inflight: null, nextAttemptAt: null, droppedEvents: 5 }), NOW);
  assert.match(fresh, /^last ack {4}never$/m);
  assert.match(fresh, /^dropped {5}5 events/m);
  assert.doesNotMatch(fresh, /last error|failures/);
});

test('syncStatusHandler answers the loop status as JSON', () => {
  const sent: unknown[] = [];
  const handler = syncStatusHandler({ status: () => status() });
  handler({}, { json: (body) => sent.push(body) });
  assert.deepEqual(sent, [status()]);
});
