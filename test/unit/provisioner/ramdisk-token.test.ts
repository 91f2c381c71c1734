/** Ramdisk tokens are per boot and expire: the ramdisk API refuses an expired token, and says so. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import express from 'express';
import { createMemoryStore } from '../../../agent/store/index.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { RAMDISK_TOKEN_GRACE_MS, ramdiskTokenLive, type NodeEntry } from '../../../agent/provisioner/local/node.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const local = { provID: 'p1', name: 'tok-0', bootMACAddress: '52:54:00:00:00:01', state: 'deploying' as const };

const liveness: Record<string, { entry: NodeEntry; nowMs: number; live: boolean }> = {
  'before expiry': { entry: { token: 't', tokenExpiresAtMs: 1000, local }, nowMs: 1000, live: true },
  'after expiry': { entry: { token: 't', tokenExpiresAtMs: 1000, local }, nowMs: 1001, live: false },
  'older record, operation in flight': { entry: { token: 't', local: { ...local, op: { kind: 'deploy', commandId: 'c', startedAtMs: 0, deadlineMs: 1, phase: 'sent' } } }, nowMs: 5, live: true },
  'older record, operation done': { entry: { token: 't', local: { ...local, op: { kind: 'deploy', commandId: 'c', startedAtMs: 0, deadlineMs: 1, phase: 'done' } } }, nowMs: 5, live: false },
  'older record, no operation': { entry: { token: 't', local }, nowMs: 5, live: false },
};
for (const [name, c] of Object.entries(liveness)) {
  test(`token liveness: ${name}`, () => {
    assert.equal(ramdiskTokenLive(c.entry, c.nowMs), c.live);
  });
}

test('the ramdisk API answers an expired token 401 and records why', async (t) => {
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  const clock = { nowMs: 1_000_000 };
  await store.nodes.put('uid-1', {
    boot: 'ramdisk', token: 'tok-abcdefghijklmnopqrstuvwxyz', tokenExpiresAtMs: clock.nowMs + RAMDISK_TOKEN_GRACE_MS,
    local: { ...local, op: { kind: 'deploy', commandId: 'deploy-1', startedAtMs: clock.nowMs, deadlineMs: clock.nowMs, phase: 'sent' } },
  });
  const app = express();
  app.use(createRamdiskRouter({ store, nodes, nowMs: () => clock.nowMs }));
  const url = `${await listenOnLoopback(t, app)}/ramdisk/v1/heartbeat`;
  const heartbeat = (): Promise<Response> => fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer tok-abcdefghijklmnopqrstuvwxyz', 'content-type': 'application/json' },
    body: JSON.stringify({ version: 't', boot_mac: null, ip: null, uptime_seconds: 1, last_command_id: null }),
  });
  assert.equal((await heartbeat()).status, 200, 'accepted before it expires');
  clock.nowMs += RAMDISK_TOKEN_GRACE_MS + 1;
  const late = await heartbeat();
  assert.equal(late.status, 401);
  const [event] = (await store.listEvents()).filter((e) => e.reason === 'RamdiskTokenRejected');
  assert.match(event?.message ?? '', /expired token/);
  assert.equal(event?.host, 'tok-0');
});
