/**
 * @module The rackside DHCP server as a child process for tests with real peers: a process
 * cannot switch network namespaces itself, so tests start this script with
 * `ip netns exec NS node dist/test/helpers/dhcp-server-child.js CONFIG_JSON`. It opens the
 * LevelDB store in `stateDir` (full mode) and serves with `agent/boot/lease-store.ts` and a
 * fake in-memory BootLookup (MAC → target, else `defaultTarget`).
 *
 * Protocol, one JSON object per line on stdout: `{"type":"ready"}` once serving; `{"type":
 * "event","event":…}` per DHCP event (unless `events: false`); `{"type":"log",…}`;
 * `{"type":"stats","stats":…}` after a `stats` line on stdin; `{"type":"stopped","stats":…,
 * "eventLoop":{p50Ms,p99Ms,maxMs}}` (event-loop delay while serving) after `stop` on stdin or
 * SIGTERM, then exit 0. `{"type":"error","message":…}` and exit 1 when
 * it cannot start.
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { Level } from 'level';
import { createLeaseStore } from '../../agent/boot/lease-store.js';
import type { KeyValue } from '../../agent/store/types.js';
import { openStore, type Store } from '../../agent/store/index.js';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { startDhcpServer, type DhcpServer, type DhcpServerOptions } from '../../bootsvc/dhcp/dhcp-server.js';
import type { DhcpRangeConfig } from '../../bootsvc/dhcp/server-events.js';

/** The child's configuration (argv[2], JSON). */
export interface DhcpChildConfig {
  mode: 'full' | 'proxy' | 'off';
  interface: string;
  serverAddress: string;
  ranges?: DhcpRangeConfig[];
  leaseSeconds?: number;
  unknownHosts?: 'ignore' | 'discover';
  offerHoldSeconds?: number;
  linkLayerUnicast?: boolean;
  maxInFlight?: number;
  leaseWriteConcurrency?: number;
  /** LevelDB state directory for leases (full mode). */
  stateDir?: string;
  /**
   * `store` (default): the agent's store and its `leases` KeyValue (one synced write per
   * change). `level-batch`: a LevelDB of its own in `<stateDir>/leases-db` whose KeyValue can
   * batch, so the server group-commits — what the agent's store gives once its KeyValue can batch.
   */
  leaseBackend?: 'store' | 'level-batch';
  /** What each MAC boots (the server derives its DHCP decision from it), else `defaultTarget`. */
  targets?: Record<string, BootTarget>;
  defaultTarget?: BootTarget;
  /** Boot HTTP's base URL in script URLs (default `http://<serverAddress>:8081`). */
  httpBaseUrl?: string;
  /** Report events on stdout (default true; off for benchmarks). */
  events?: boolean;
}

function print(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** A synced, batching JSON KeyValue over a LevelDB of its own. */
async function openBatchKeyValue(dir: string): Promise<{ kv: KeyValue<unknown>; close: () => Promise<void> }> {
  const db = new Level<string, unknown>(dir, { valueEncoding: 'json' });
  await db.open();
  const kv: KeyValue<unknown> = {
    get: (key) => db.get(key),
    put: (key, value) => db.batch([{ type: 'put', key, value }], { sync: true }),
    del: (key) => db.batch([{ type: 'del', key }], { sync: true }),
    entries: () => db.iterator().all(),
    batch: (operations) => db.batch(operations.map((o) => (o.type === 'put' ? { type: 'put' as const, key: o.key, value: o.value } : { type: 'del' as const, key: o.key })), { sync: true }),
  };
  return { kv, close: () => db.close() };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as DhcpChildConfig;
  let store: Store | undefined;
  let server: DhcpServer | undefined;
  let closeBatch: (() => Promise<void>) | undefined;
  try {
    let batchKv: KeyValue<unknown> | undefined;
    if (config.stateDir !== undefined && config.leaseBackend === 'level-batch') {
      const opened = await openBatchKeyValue(join(config.stateDir, 'leases-db'));
      batchKv = opened.kv;
      closeBatch = opened.close;
    } else if (config.stateDir !== undefined) {
      store = await openStore({ stateDir: config.stateDir });
    }
    const targets = new Map(Object.entries(config.targets ?? {}));
    const options: DhcpServerOptions = {
      mode: config.mode,
      interface: config.interface,
      serverAddress: config.serverAddress,
      ranges: config.ranges ?? [],
      bootLookup: { target: (q) => Promise.resolve(targets.get(q.mac) ?? config.defaultTarget) },
      bootFiles: { httpBaseUrl: config.httpBaseUrl ?? `http://${config.serverAddress}:8081` },
      log: (level, message, fields) => {
        if (level !== 'debug') print({ type: 'log', level, message, fields: fields === undefined ? undefined : JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.message : v)) });
      },
    };
    const leases = batchKv ?? store?.leases;
    if (leases !== undefined) options.leaseStore = createLeaseStore(leases, { onInvalid: (key, why) => { print({ type: 'log', level: 'warn', message: `bad lease ${key}: ${why}` }); } });
    if (config.events !== false) options.onEvent = (event) => {
      print({ type: 'event', event });
    };
    if (config.leaseSeconds !== undefined) options.leaseSeconds = config.leaseSeconds;
    if (config.unknownHosts !== undefined) options.unknownHosts = config.unknownHosts;
    if (config.offerHoldSeconds !== undefined) options.offerHoldSeconds = config.offerHoldSeconds;
    if (config.linkLayerUnicast !== undefined) options.linkLayerUnicast = config.linkLayerUnicast;
    if (config.maxInFlight !== undefined) options.maxInFlight = config.maxInFlight;
    if (config.leaseWriteConcurrency !== undefined) options.leaseWriteConcurrency = config.leaseWriteConcurrency;
    server = await startDhcpServer(options);
  } catch (err) {
    print({ type: 'error', message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown }).code });
    await store?.close();
    await closeBatch?.();
    process.exit(1);
  }
  const running = server;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await running.stop();
    const stats = running.stats();
    loop.disable();
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const eventLoop = { p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max) };
    await store?.close();
    await closeBatch?.();
    print({ type: 'stopped', stats, eventLoop });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'stats') print({ type: 'stats', stats: running.stats() });
    if (line.trim() === 'stop') void stop();
  });
  print({ type: 'ready' });
}

await main();
