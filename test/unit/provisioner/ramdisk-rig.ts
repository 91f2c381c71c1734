/**
 * @module A ramdisk router (agent/provisioner/local/ramdisk-service.ts) on loopback over a memory
 * store holding one host, `uid-1`, booted into the ramdisk with an operation in phase `sent`
 * (command id `cmd-1`); requests carry that host's token.
 */
import type { TestContext } from 'node:test';
import express from 'express';
import { createMemoryStore } from '../../../agent/store/index.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { RAMDISK_TOKEN_GRACE_MS, type NodeOperation } from '../../../agent/provisioner/local/node.js';
import { createRamdiskRouter, type RamdiskServiceStats } from '../../../agent/provisioner/local/ramdisk-service.js';
import { listenOnLoopback } from '../../helpers/listen.js';

/** The rig: POST to an endpoint under /ramdisk/v1/, and what the router wrote. */
export interface RamdiskRig {
  post(endpoint: 'heartbeat' | 'inventory' | 'result', body: unknown): Promise<{ status: number; text: string }>;
  stats: RamdiskServiceStats;
  store: ReturnType<typeof createMemoryStore>;
  nodes: NodeTable;
}

/** Starts the rig with an operation of `kind`; the server closes when the test ends. */
export async function ramdiskRig(t: TestContext, kind: NodeOperation['kind']): Promise<RamdiskRig> {
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  const nowMs = 1_000_000;
  const token = 'tok-abcdefghijklmnopqrstuvwxyz012345';
  await store.nodes.put('uid-1', {
    boot: 'ramdisk', token, tokenExpiresAtMs: nowMs + RAMDISK_TOKEN_GRACE_MS,
    local: { provID: 'p1', name: 'cap-0', bootMACAddress: '52:54:00:00:00:01', state: 'available', op: { kind, commandId: 'cmd-1', startedAtMs: nowMs, deadlineMs: nowMs + 60_000, phase: 'sent' } },
  });
  const stats: RamdiskServiceStats = { resultsTruncated: 0 };
  const app = express();
  app.use(createRamdiskRouter({ store, nodes, nowMs: () => nowMs, stats }));
  const base = `${await listenOnLoopback(t, app)}/ramdisk/v1/`;
  return {
    stats, store, nodes,
    post: async (endpoint, body) => {
      const res = await fetch(base + endpoint, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, text: await res.text() };
    },
  };
}
