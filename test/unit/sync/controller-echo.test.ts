/**
 * @module A controller that echoes the credentials it was sent never gets them shown (found by
 * test/integration/secret-scan.test.ts: a 401 whose body said "invalid credentials: Bearer <token>"
 * put the controller token into `rackside sync status`, `GET /api/v1/sync` and the log through
 * the answer excerpt). Also `redactKnownSecrets`.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { redactKnownSecrets } from '../../../agent/redact-text.js';
import { ControllerClient, SyncFailure } from '../../../agent/sync/http-push.js';
import type { PushRequest } from '../../../wire/index.js';

const TOKEN = 'canary-ctl-4b1e92d07f';
const URL_PASSWORD = 'canary-urlpw-19ac';

test('redactKnownSecrets replaces each secret, ignores short and absent ones', () => {
  assert.equal(redactKnownSecrets(`a ${TOKEN} b ${TOKEN}`, [TOKEN]), 'a [redacted] b [redacted]');
  assert.equal(redactKnownSecrets('the word admin', ['admin', undefined]), 'the word admin');
});

for (const status of [401, 403, 500]) {
  test(`HTTP ${status} echoing the Authorization header and the URL password: the failure says what the controller said, without them`, async () => {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `invalid credentials: ${String(req.headers.authorization)} (${URL_PASSWORD})` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = new ControllerClient(
      { url: `http://ops:${URL_PASSWORD}@127.0.0.1:${port}/push`, token: TOKEN, intervalSeconds: 30 },
      { requestTimeoutMs: 5000, maxResponseBytes: 65_536, userAgent: 'test', nowMs: () => 0 },
    );
    const push: PushRequest = { version: 1, agentId: 'rack1-head', rack: 'rack1', streamId: 's', sequence: 1, sentAt: '2026-01-02T03:04:05.000Z', hosts: [], deletedHosts: [], events: [] };
    try {
      await assert.rejects(client.push(push, new AbortController().signal), (err: unknown) => {
        assert.ok(err instanceof SyncFailure);
        assert.match(err.message, /invalid credentials: Bearer \[redacted\] \(\[redacted\]\)/);
        assert.ok(!err.message.includes(TOKEN) && !err.message.includes(URL_PASSWORD), err.message);
        return true;
      });
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
}
