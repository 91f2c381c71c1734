/**
 * @module The fleet controller at scale (issue #31, "Performance"): a private PostgreSQL 15
 * cluster (test/helpers/postgres.ts), one controller *process* (`rackside controller`), and
 * simulated racks speaking the wire format (version 2, gzip, real rack tokens):
 * 1. initial full sync: every rack pushes all its hosts at once (goal: drained within 60 s);
 * 2. steady churn: one push per rack per `--churn-seconds` with 5 changed hosts and 5 events
 *    each, spread evenly (goal: controller CPU < 25 % of one core, push p99 < 200 ms);
 * 3. fleet host search p99 over `--searches` queries (name substring, MAC, serial, error text;
 *    goal < 100 ms);
 * 4. the fleet page's first load (goal < 1 s);
 * 5. the database's size, per 100,000 hosts.
 *
 * ```
 * node dist/test/bench/fleet.bench.js [--racks 500] [--hosts 200] [--churn-seconds 60] [--searches 200] [--concurrency 64]
 * ```
 * Everything it starts (the controller process, the cluster) is removed at the end and on SIGINT.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { addRack } from '../../controller/racks.js';
import type { PushRequest } from '../../wire/index.js';
import { createPgCluster, type PgCluster } from '../helpers/postgres.js';
import { hostSummary } from '../integration/controller/fleet-fixtures.js';
import { freePort, Proc } from '../integration/controller/processes.js';

const CLI = fileURLToPath(new URL('../../agent/cli.js', import.meta.url));
const argv = process.argv.slice(2);
const opt = (name: string, fallback: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const RACKS = opt('racks', 500);
const HOSTS = opt('hosts', 200);
const CHURN_SECONDS = opt('churn-seconds', 60);
const SEARCHES = opt('searches', 200);
const CONCURRENCY = opt('concurrency', 64);

function mac(rack: number, host: number): string {
  const b = [0x52, 0x54, (rack >> 8) & 0xff, rack & 0xff, (host >> 8) & 0xff, host & 0xff];
  return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
}

function hosts(rack: number, ids: number[], rv: number): PushRequest['hosts'] {
  return ids.map((h) => hostSummary(`r${rack}-node-${h}`, rv, {
    bootMACAddress: mac(rack, h), serialNumber: `SN-${rack}-${h}`, state: h % 50 === 0 ? 'inspecting' : 'provisioned',
    ...(h % 97 === 0 ? { errorType: 'inspection error', errorMessage: `disk ${h} on rack ${rack} not found` } : {}),
  }));
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function post(url: string, token: string, request: PushRequest): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/api/v1/racks/push`, {
    method: 'POST', body: gzipSync(Buffer.from(JSON.stringify(request))),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
  });
  await res.text();
  if (res.status !== 200) throw new Error(`push of ${request.rack ?? ''} answered ${res.status}`);
  return performance.now() - started;
}

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  }));
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (USER_HZ = 100)
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-fleet-bench-'));
  let cluster: PgCluster | undefined;
  let controller: Proc | undefined;
  const stop = async (): Promise<void> => {
    controller?.kill9();
    await cluster?.remove();
    await rm(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => { void stop().then(() => process.exit(130)); });
  try {
    cluster = await createPgCluster();
    const port = await freePort();
    const config = join(dir, 'controller.yaml');
    await writeFile(config, `listen: 127.0.0.1:${port}\ndatabase:\n  url: ${JSON.stringify(cluster.url)}\n  poolSize: 20\n`);
    controller = new Proc([CLI, 'controller', '--config', config]);
    await controller.waitFor(/controller listening/, 60_000, 'controller');
    const pid = controller.child.pid ?? 0;
    const url = `http://127.0.0.1:${port}`;
    const db = new pg.Pool({ connectionString: cluster.url, max: 4 });
    const tokens: string[] = [];
    for (let r = 0; r < RACKS; r++) tokens.push(await addRack(db, `rack${r}`));
    const ids = Array.from({ length: HOSTS }, (_, i) => i);
    const seq = new Array<number>(RACKS).fill(0);
    const push = (r: number, extra: Partial<PushRequest>): PushRequest => ({
      version: 2, agentId: `rack${r}-head`, rack: `rack${r}`, streamId: `s${r}`, sequence: ++seq[r]!, sentAt: new Date().toISOString(), hosts: [], deletedHosts: [], events: [], ...extra,
    });
    // 1. initial full sync (500 host records per push, the agent's default batch)
    const racks = Array.from({ length: RACKS }, (_, r) => r);
    let t0 = performance.now();
    await pool(racks, CONCURRENCY, async (r) => {
      for (let i = 0; i < HOSTS; i += 500) await post(url, tokens[r]!, push(r, { hosts: hosts(r, ids.slice(i, i + 500), 1) }));
    });
    const initialS = (performance.now() - t0) / 1000;
    console.log(`initial sync: ${RACKS} racks × ${HOSTS} hosts = ${RACKS * HOSTS} hosts drained in ${initialS.toFixed(1)} s (goal 60 s)`);
    // 2. churn
    const latencies: number[] = [];
    const cpu0 = cpuSeconds(pid);
    t0 = performance.now();
    const gapMs = (CHURN_SECONDS * 1000) / RACKS;
    const inflight: Promise<void>[] = [];
    for (const r of racks) {
      const due = t0 + r * gapMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
      const changed = Array.from({ length: 5 }, (_, k) => (r * 7 + k * 31) % HOSTS);
      const events = changed.map((h, k) => ({ seq: k + 1 + seq[r]! * 10, time: new Date().toISOString(), type: 'Normal' as const, reason: 'Churn', message: 'changed', host: `r${r}-node-${h}`, mac: null, source: 'bench' }));
      inflight.push(post(url, tokens[r]!, push(r, { hosts: hosts(r, changed, 2 + seq[r]!), events })).then((ms) => { latencies.push(ms); }));
    }
    await Promise.all(inflight);
    const wallS = (performance.now() - t0) / 1000;
    const cpuPct = ((cpuSeconds(pid) - cpu0) / wallS) * 100;
    console.log(`churn: ${RACKS} pushes × 5 hosts over ${wallS.toFixed(1)} s: controller CPU ${cpuPct.toFixed(1)} % of one core (goal < 25 %), push p50 ${quantile(latencies, 0.5).toFixed(1)} ms p99 ${quantile(latencies, 0.99).toFixed(1)} ms (goal < 200 ms)`);
    // 3. search
    const searches: number[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const r = (i * 37) % RACKS;
      const h = (i * 53) % HOSTS;
      const q = [`r${r}-node-${h}`, mac(r, h), `SN-${r}-${h}`, `disk ${h % 97 === 0 ? h : 97} on rack`][i % 4] ?? '';
      const started = performance.now();
      const res = await fetch(`${url}/api/v1/hosts?q=${encodeURIComponent(q)}&limit=100`);
      await res.text();
      searches.push(performance.now() - started);
    }
    console.log(`search: ${SEARCHES} queries over ${RACKS * HOSTS} hosts: p50 ${quantile(searches, 0.5).toFixed(1)} ms p99 ${quantile(searches, 0.99).toFixed(1)} ms (goal < 100 ms)`);
    // 4. page
    const pages: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await fetch(`${url}/`);
      await res.text();
      pages.push(performance.now() - started);
    }
    console.log(`fleet page with ${RACKS} racks: first ${pages[0]?.toFixed(0) ?? '?'} ms, median ${quantile(pages, 0.5).toFixed(0)} ms (goal < 1000 ms)`);
    // 5. size
    const size = await db.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
    const bytes = Number(size.rows[0]?.bytes ?? 0);
    console.log(`database: ${(bytes / 1048576).toFixed(0)} MiB for ${RACKS * HOSTS} hosts = ${((bytes / (RACKS * HOSTS)) * 100_000 / 1048576).toFixed(0)} MiB per 100,000 hosts`);
    await db.end();
  } finally {
    await stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
