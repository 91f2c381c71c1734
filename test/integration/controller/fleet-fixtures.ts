/**
 * @module Shared pieces of the controller tests: wire-format host summaries and pushes, a
 * gzip push over HTTP with a rack token, a controller started in-process on a private
 * PostgreSQL cluster, and row counts of every controller table (to prove "nothing written").
 */
import type { TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import type { ControllerConfig } from '../../../controller/config.js';
import { startController, type RunningController } from '../../../controller/controller.js';
import { SILENT_LOG } from '../../../controller/log.js';
import type { EventSummary, HostSummary, PushRequest } from '../../../wire/index.js';
import { pgClusterFor, type PgCluster } from '../../helpers/postgres.js';

/** A host summary with the given name, revision and state (every field present). */
export function hostSummary(name: string, resourceVersion: number, extra: Partial<HostSummary> = {}): HostSummary {
  return {
    name, namespace: 'default', uid: `uid-${name}`, resourceVersion: String(resourceVersion), state: 'available', operationalStatus: 'OK',
    poweredOn: false, online: false, errorType: '', errorMessage: '', errorCount: 0, hardware: null, lastOperation: null, imageUrl: null,
    deleting: false, lastUpdated: '2026-01-02T03:04:05.000Z', bootMACAddress: null, serialNumber: null, ...extra,
  };
}

/** An event about `host` with agent sequence `seq`. */
export function eventSummary(seq: number, host: string, reason = 'Registered'): EventSummary {
  return { seq, time: '2026-01-02T03:04:05.000Z', type: 'Normal', reason, message: `event ${seq}`, host, mac: null, source: 'test' };
}

/** A push request (version 2 unless told). */
export function push(rack: string, sequence: number, extra: Partial<PushRequest> = {}): PushRequest {
  return {
    version: 2, agentId: `${rack}-head`, rack, streamId: `${rack}-stream-1`, sequence, sentAt: '2026-01-02T03:04:05.000Z',
    hosts: [], deletedHosts: [], events: [], ...extra,
  };
}

/** The answer to a push. */
export interface PushAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** POSTs `request` gzip-compressed to `baseUrl`'s push endpoint with `token`. */
export async function postPush(baseUrl: string, token: string | undefined, request: unknown, raw?: Buffer): Promise<PushAnswer> {
  const res = await fetch(`${baseUrl}/api/v1/racks/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: raw ?? gzipSync(Buffer.from(JSON.stringify(request))),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, body };
}

/** A controller configuration for `url` on an ephemeral loopback port. */
export function testConfig(url: string, extra: Partial<ControllerConfig> = {}): ControllerConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    database: { url, poolSize: 10 },
    offlineAfterSeconds: 60,
    retention: { eventMaxAgeDays: 30, eventsPerRack: 100_000, batchLedgerDays: 30, commandDays: 90 },
    commands: { defaultExpirySeconds: 3600, maxManifestBytes: 262_144 },
    ...extra,
  };
}

/** A private cluster and a controller on it, both gone after `t`; undefined when skipped. */
export async function controllerFor(t: TestContext, extra: Partial<ControllerConfig> = {}): Promise<{ cluster: PgCluster; controller: RunningController; pool: pg.Pool; config: ControllerConfig } | undefined> {
  const cluster = await pgClusterFor(t);
  if (cluster === undefined) return undefined;
  const config = testConfig(cluster.url, extra);
  const controller = await startController(config, { log: SILENT_LOG });
  const pool = new pg.Pool({ connectionString: cluster.url, max: 3 });
  pool.on('error', () => undefined);
  t.after(async () => {
    await pool.end();
    await controller.stop();
  });
  return { cluster, controller, pool, config };
}

/** Row counts of every controller table and the sum of the racks' push counters. */
export async function tableCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['racks', 'rack_streams', 'applied_batches', 'hosts', 'events', 'commands']) {
    const res = await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`);
    out[table] = Number(res.rows[0]?.n ?? -1);
  }
  const pushes = await pool.query<{ n: string | null }>('SELECT sum(pushes)::text AS n FROM racks');
  out.pushes = Number(pushes.rows[0]?.n ?? 0);
  return out;
}
