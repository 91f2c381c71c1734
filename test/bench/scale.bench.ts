/**
 * @module "1000 hosts per agent" (the rack-scale performance issue; not a test: no assertions).
 * Usage: node dist/test/bench/scale.bench.js [--hosts 1000] [--latency-ms 50] [--poll-seconds 60]
 * [--bmc-concurrency N] [--reconcile-concurrency N (both default: the agent's)] [--available-percent 2] [--window-seconds 120]
 * [--settle-seconds 900] [--restarts 3] [--cpu-prof DIR] [--keep]
 *
 * The real agent runs as a child process (`node dist/agent/cli.js agent`, `local` provisioner,
 * config defaults unless a flag says otherwise, at the systemd unit's Nice=: test/helpers/unit-nice.ts) beside one child process of light Redfish BMCs
 * on loopback (scale/bmc-emulator.ts: one System per BMC, answers after `--latency-ms` ± 50 %,
 * counts requests in flight per BMC). The bench registers HOSTS BareMetalHosts through
 * `POST /api/v1/apply` in batches of 100 (BMC secret first): most with `externallyProvisioned:
 * true` (registering → externally provisioned, metal3's path for hosts already running), and
 * `--available-percent` of them with `inspectionMode: fast` and `online: false` (registering →
 * out-of-band inspection through Redfish → preparing → available, powered off), so no host
 * needs a ramdisk or QEMU. The default 2 % keeps those at 20, the provisioning limit: with more,
 * 21 hosts can enter inspecting at once and then each waits for capacity forever (see
 * docs/PERFORMANCE.md), which the bench reports as a stall. It waits (bounded, with progress) until every host is steady
 * (state settled, power as `spec.online` asks, no error), lets one power sweep pass, then measures:
 *
 * 1. power-state freshness over the window: how old each BMC's last power read is (every 1 s,
 *    from the read times the emulator logged) and the oldest it got per BMC, against the goal
 *    ≤ 60 s; requests in flight per
 *    BMC at most (goal 1) over the window and during registration; BMC requests per host per minute;
 * 2. agent CPU over the first 60 s of the window from /proc/<pid>/stat (goal < 5 % of one core)
 *    and RSS (goal < 300 MB);
 * 3. `GET /api/v1/hosts` latency, 200 sequential and 200 more from 8 concurrent clients in this
 *    process, then 5 s of wrk with 8 connections (a C client: the agent's latency without this
 *    process's own event loop and GC in it; Debian `wrk`), plain and gzip (goal p99 < 50 ms);
 * 4. start-up: SIGTERM, then spawn → "rackside agent ready" with the hosts in the store, RESTARTS
 *    times (goal < 2 s).
 * With `--cpu-prof DIR` the measured agent runs with `--cpu-prof` and writes its profile to DIR
 * when stopped. Both children are stopped and the scratch directory removed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeFile } from 'node:fs/promises';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { findTool } from '../helpers/netns.js';
import { runWrk, wrkErrors, WRK_DONE_LUA } from './wrk.js';
import { sampleProcess, spawnScaleAgent, writeScaleConfig, type ScaleAgent } from './scale/agent-child.js';
import { BIOS_FOLLOW_MS, emulatedMac, type EmulatorHello, type EmulatorStats } from './scale/bmc-emulator.js';
import { powerAgesOverWindow, summarize, verdict } from './scale/figures.js';

const { values: flags } = parseArgs({
  options: {
    hosts: { type: 'string', default: '1000' },
    servers: { type: 'string', default: '4' },
    'latency-ms': { type: 'string', default: '50' },
    'poll-seconds': { type: 'string', default: '60' },
    'bmc-concurrency': { type: 'string' },
    'reconcile-concurrency': { type: 'string' },
    'available-percent': { type: 'string', default: '2' },
    'window-seconds': { type: 'string', default: '120' },
    'settle-seconds': { type: 'string', default: '900' },
    restarts: { type: 'string', default: '3' },
    'cpu-prof': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const HOSTS = Number(flags.hosts);
/** Seconds of each wrk measurement of `GET /api/v1/hosts`. */
const WRK_SECONDS = 5;
const POLL_SECONDS = Number(flags['poll-seconds']);
const AVAILABLE_EVERY = Number(flags['available-percent']) > 0 ? Math.round(100 / Number(flags['available-percent'])) : 0;
const WINDOW_MS = Math.max(Number(flags['window-seconds']), 60) * 1000;
const SETTLE_MS = Number(flags['settle-seconds']) * 1000;
const BATCH = 100;

const http = new Agent({ keepAlive: true, maxSockets: 16 });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const ms = (v: number): string => `${v.toFixed(1)} ms`;
const s = (v: number): string => `${(v / 1000).toFixed(1)} s`;

/**
 * One HTTP exchange on loopback; resolves with the status, body and wall time. A GET is sent
 * again once when the kept-alive socket it went out on was closed under it (ECONNRESET: the
 * server's 5 s keep-alive timeout racing the 5 s progress poll).
 */
async function call(method: string, url: string, body?: string): Promise<{ status: number; text: string; ms: number }> {
  try {
    return await callOnce(method, url, body);
  } catch (error) {
    if (method !== 'GET' || (error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return callOnce(method, url, body);
  }
}

function callOnce(method: string, url: string, body?: string): Promise<{ status: number; text: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: http, headers: body === undefined ? {} : { 'content-type': 'application/json' }, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }); });
      res.on('error', reject);
    });
    req.on('timeout', () => { req.destroy(new Error(`${method} ${url} timed out`)); });
    req.on('error', reject);
    req.end(body);
  });
}

/** A GET that counts the body's bytes and keeps none of it (the client's own work stays out of the latency). */
function timedGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: http, timeout: 60_000, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => { bytes += c.length; });
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t0 }); });
      res.on('error', reject);
    });
    req.on('timeout', () => { req.destroy(new Error(`GET ${url} timed out`)); });
    req.on('error', reject);
    req.end();
  });
}

interface Emulator {
  hello: EmulatorHello;
  child: ChildProcess;
  stats(): Promise<EmulatorStats>;
  reset(): Promise<void>;
}

async function startEmulator(): Promise<Emulator> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'scale/bmc-emulator.js');
  const child = spawn(process.execPath, [script, '--bmcs', String(HOSTS), '--servers', flags.servers, '--latency-ms', flags['latency-ms']], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  const hello = JSON.parse(String(first.value)) as EmulatorHello;
  const control = `http://127.0.0.1:${String(hello.controlPort)}`;
  return {
    hello, child,
    stats: async () => JSON.parse((await call('GET', `${control}/stats`)).text) as EmulatorStats,
    reset: async () => { await call('POST', `${control}/reset`); },
  };
}

/** BareMetalHost `n` (1…HOSTS) and the BMC secret, as JSON manifests. */
function manifest(n: number, hello: EmulatorHello): unknown {
  const port = hello.ports[(n - 1) % hello.ports.length] ?? 0;
  const available = AVAILABLE_EVERY > 0 && n % AVAILABLE_EVERY === 0;
  return {
    apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost',
    metadata: { name: `scale-${String(n).padStart(4, '0')}`, namespace: 'default' },
    spec: {
      online: !available, bootMACAddress: emulatedMac(n), bootMode: 'UEFI',
      bmc: { address: `redfish+http://127.0.0.1:${String(port)}/redfish/v1/Systems/${String(n)}`, credentialsName: 'scale-bmc' },
      ...(available ? { inspectionMode: 'fast' } : { externallyProvisioned: true }),
    },
  };
}

const SECRET = {
  apiVersion: 'v1', kind: 'Secret', metadata: { name: 'scale-bmc', namespace: 'default' }, type: 'Opaque',
  data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') },
};

interface HostView {
  spec: { online?: boolean };
  status: { provisioning: { state: string }; poweredOn?: boolean; errorType?: string; operationalStatus?: string };
}

const STEADY = new Set(['externally provisioned', 'available', 'provisioned']);

/** How long the host states may stay exactly the same, short of the steady state, before the bench gives up. */
const STALL_MS = 180_000;

/**
 * Polls the host list until every host is steady; prints progress. Gives up after the settle
 * bound, or when the counts of hosts per state and the steady count stay the same for
 * {@link STALL_MS} (a stuck agent): resolves with why, or undefined once steady.
 */
async function waitSteady(api: string, t0: number): Promise<string | undefined> {
  let last = '';
  let sameSince = performance.now();
  for (;;) {
    const res = await call('GET', `${api}/api/v1/hosts`);
    const items = (JSON.parse(res.text) as { items: HostView[] }).items;
    const counts = new Map<string, number>();
    let steady = 0;
    let errors = 0;
    for (const h of items) {
      const st = h.status.provisioning.state || 'none';
      counts.set(st, (counts.get(st) ?? 0) + 1);
      if ((h.status.errorType ?? '') !== '') errors += 1;
      else if (STEADY.has(st) && h.status.poweredOn === (h.spec.online ?? false)) steady += 1;
    }
    const now = performance.now();
    const summary = `${[...counts].map(([k, v]) => `${k} ${String(v)}`).join(', ')}; steady ${String(steady)}/${String(HOSTS)}${errors > 0 ? `, errors ${String(errors)}` : ''}`;
    console.log(`  ${s(now - t0)}: ${summary} (list ${ms(res.ms)}, load ${load()})`);
    if (steady === HOSTS) return undefined;
    if (summary !== last) {
      last = summary;
      sameSince = now;
    }
    if (now - sameSince > STALL_MS) return `no host changed state for ${s(now - sameSince)} (${summary})`;
    if (now - t0 > SETTLE_MS) return `not steady after ${s(SETTLE_MS)} (${summary})`;
    await sleep(5000);
  }
}

/**
 * Counters from the agent's /metrics: BMC calls by `operation` (`/outcome` unless ok) from
 * `rackside_bmc_call_duration_seconds_count`, and reconcile steps as `reconcile/<result>`.
 */
async function agentCounters(agent: ScaleAgent): Promise<Map<string, number>> {
  const text = (await call('GET', `${agent.url}/metrics`)).text;
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^rackside_(bmc_call|reconcile)_duration_seconds_count\{([^}]*)\} ([0-9.e+]+)$/gm)) {
    const labels = m[2] ?? '';
    const label = (name: string): string => new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1] ?? '?';
    const key = m[1] === 'reconcile' ? `reconcile/${label('result')}` : label('outcome') === 'ok' ? label('operation') : `${label('operation')}/${label('outcome')}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[3]));
  }
  return counts;
}

/** The steady-state window: CPU per 10 s, RSS, power-state ages from the emulator's read times, BMC calls. */
async function measureWindow(agent: ScaleAgent, emulator: Emulator): Promise<void> {
  const callsBefore = await agentCounters(agent);
  await emulator.reset();
  const fromMs = Date.now();
  const start = sampleProcess(agent.pid);
  const t0 = performance.now();
  const slices: number[] = [];
  let sliceStart = start;
  let firstMinuteCpuMs = 0;
  while (performance.now() - t0 < WINDOW_MS) {
    await sleep(10_000);
    const now = sampleProcess(agent.pid);
    slices.push(now.cpuMs - sliceStart.cpuMs);
    sliceStart = now;
    if (slices.length === 6) firstMinuteCpuMs = now.cpuMs - start.cpuMs;
  }
  const end = sampleProcess(agent.pid);
  const toMs = Date.now();
  const wallMs = performance.now() - t0;
  const callsAfter = await agentCounters(agent);
  await sleep(BIOS_FOLLOW_MS + 500); // reads up to the window's end are classified by now
  const stats = await emulator.stats();
  const callDeltas = [...callsAfter].map(([k, v]) => [k, v - (callsBefore.get(k) ?? 0)] as const).filter(([, d]) => d > 0);
  const ages = powerAgesOverWindow(stats.powerReadsMs, fromMs, toMs, 1000);
  const sampled = summarize(ages.sampledAgesMs);
  const oldest = summarize(ages.oldestPerBmcMs);
  const maxInFlight = Math.max(...stats.maxInFlight);
  const total = stats.requests.reduce((a, b) => a + b, 0);
  const minutes = (stats.nowMs - stats.sinceMs) / 60_000;
  const cpuPercent = (firstMinuteCpuMs / 60_000) * 100;
  const windowCpuPercent = ((end.cpuMs - start.cpuMs) / wallMs) * 100;
  const maxSlice = (Math.max(...slices) / 10_000) * 100;
  const rssMb = end.rssBytes / 1e6;
  console.log(`\nsteady state, ${s(wallMs)} window (load ${load()}):`);
  console.log(`  power state age, every 1 s × ${String(HOSTS)} BMCs: p50 ${s(sampled.p50)}, p99 ${s(sampled.p99)}, max ${s(sampled.max)}${ages.neverRead > 0 ? `; ${String(ages.neverRead)} BMCs never read` : ''}`);
  console.log(`  oldest power state per BMC in the window: p50 ${s(oldest.p50)}, p99 ${s(oldest.p99)}, max ${s(oldest.max)}   goal ≤ 60 s ${verdict(oldest.max <= 60_000 && ages.neverRead === 0)}`);
  console.log(`  requests in flight per BMC, at most: ${String(maxInFlight)}   goal 1 ${verdict(maxInFlight <= 1)}`);
  const kinds = Object.entries(stats.byKind).filter(([k]) => k !== 'power-read').map(([k, v]) => `${k} ${String(v)}`).join(', ');
  console.log(`  BMC requests: ${(total / HOSTS / minutes).toFixed(2)} per host per minute (${kinds}; ${String(stats.byKind['power-read'] ?? 0)} of the system GETs were power reads)`);
  console.log(`  agent BMC calls and reconcile steps in the window: ${callDeltas.map(([k, d]) => `${k} ${String(d)}`).join(', ') || 'none'}`);
  console.log(`  agent CPU, first 60 s: ${cpuPercent.toFixed(2)} % of one core   goal < 5 % ${verdict(cpuPercent < 5)}`);
  const mainShare = (end.mainThreadCpuMs - start.mainThreadCpuMs) / Math.max(1, end.cpuMs - start.cpuMs);
  const kernelShare = (end.systemCpuMs - start.systemCpuMs) / Math.max(1, end.cpuMs - start.cpuMs);
  console.log(`  agent CPU, whole window: ${windowCpuPercent.toFixed(2)} % (${(mainShare * 100).toFixed(0)} % of it on the main thread, ${(kernelShare * 100).toFixed(0)} % in the kernel); busiest 10 s: ${maxSlice.toFixed(1)} %; per 10 s: ${slices.map((c) => (c / 100).toFixed(1)).join(' ')} %`);
  console.log(`  agent RSS: ${rssMb.toFixed(0)} MB (peak ${(end.peakRssBytes / 1e6).toFixed(0)} MB)   goal < 300 MB ${verdict(rssMb < 300)}`);
}

/**
 * `GET /api/v1/hosts` latency, sequential and from `clients` concurrent clients: once as a plain
 * client (no Accept-Encoding: the whole 1.3 MB) and once as the CLI and browsers ask (gzip).
 */
async function measureApi(agent: ScaleAgent, requests: number, clients: number): Promise<void> {
  await measureApiAs(agent, requests, clients, 'identity', {});
  await measureApiAs(agent, requests, clients, 'gzip', { 'accept-encoding': 'gzip, deflate' });
}

async function measureApiAs(agent: ScaleAgent, requests: number, clients: number, label: string, headers: Record<string, string>): Promise<void> {
  const url = `${agent.url}/api/v1/hosts`;
  await call('GET', url);
  const cpu0 = sampleProcess(agent.pid).cpuMs;
  const sequential: number[] = [];
  let bytes = 0;
  for (let i = 0; i < requests; i++) {
    const res = await timedGet(url, headers);
    if (res.status !== 200) throw new Error(`GET /api/v1/hosts answered ${String(res.status)}`);
    bytes = res.bytes;
    sequential.push(res.ms);
  }
  const cpu1 = sampleProcess(agent.pid).cpuMs;
  const concurrent: number[] = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < Math.ceil(requests / clients); i++) concurrent.push((await timedGet(url, headers)).ms);
  }));
  const wall = performance.now() - t0;
  const cpu2 = sampleProcess(agent.pid).cpuMs;
  const a = summarize(sequential);
  const b = summarize(concurrent);
  console.log(`\nGET /api/v1/hosts, ${label} (${String(HOSTS)} hosts, ${(bytes / 1e6).toFixed(2)} MB sent; load ${load()}):`);
  console.log(`  sequential, ${String(a.n)}: p50 ${ms(a.p50)}, p99 ${ms(a.p99)}, max ${ms(a.max)}; agent CPU ${((cpu1 - cpu0) / a.n).toFixed(1)} ms/request   goal p99 < 50 ms ${verdict(a.p99 < 50)}`);
  console.log(`  ${String(clients)} concurrent, ${String(b.n)}: p50 ${ms(b.p50)}, p99 ${ms(b.p99)}, max ${ms(b.max)}; ${(b.n / (wall / 1000)).toFixed(0)} requests/s; agent CPU ${((cpu2 - cpu1) / b.n).toFixed(1)} ms/request   goal p99 < 50 ms ${verdict(b.p99 < 50)}`);
  // The clients above share this Node process (8 × 1.3 MB bodies a round through its own event
  // loop and GC, on the same cores as the agent): wrk, a C client, measures the agent alone.
  if (findTool('wrk') === undefined) {
    console.log('  wrk: not installed (Debian: wrk), no C-client figure');
    return;
  }
  if (running.dir === undefined) throw new Error('no scratch directory for the wrk script');
  const script = join(running.dir, `hosts-${label}.lua`);
  await writeFile(script, `${Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join('\n')}\n${WRK_DONE_LUA}`);
  const cpu3 = sampleProcess(agent.pid).cpuMs;
  const w = await runWrk({ url, seconds: WRK_SECONDS, connections: clients, script });
  const cpu4 = sampleProcess(agent.pid).cpuMs;
  const wms = (us: number): string => `${(us / 1000).toFixed(1)} ms`;
  console.log(`  wrk, ${String(clients)} connections, ${String(WRK_SECONDS)} s, ${String(w.requests)} requests: p50 ${wms(w.latencyP50Us)}, p99 ${wms(w.latencyP99Us)}, max ${wms(w.latencyMaxUs)}; ${(w.requests / (w.durationUs / 1e6)).toFixed(0)} requests/s, ${wrkErrors(w)}; agent CPU ${((cpu4 - cpu3) / Math.max(1, w.requests)).toFixed(1)} ms/request   goal p99 < 50 ms ${verdict(w.latencyP99Us < 50_000)}`);
}

/** What to stop and remove at the end, or on SIGINT/SIGTERM. */
const running: { dir?: string; emulator?: Emulator; agent?: ScaleAgent; cleaning?: Promise<void> } = {};

/** Stops the agent and the emulator (each by its own pid) and removes the scratch directory; once. */
function cleanUp(): Promise<void> {
  running.cleaning ??= (async () => {
    await running.agent?.stop(10_000);
    const child = running.emulator?.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    http.destroy();
    if (running.dir === undefined) return;
    if (flags.keep) console.log(`kept ${running.dir}`);
    else await removeDir(running.dir);
  })();
  return running.cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`\n${signal}: stopping the agent and the BMC emulator`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const dir = await scratchDir('scale');
  running.dir = dir;
  let emulator: Emulator | undefined;
  let agent: ScaleAgent | undefined;
  console.log(`1000 hosts per agent: ${String(HOSTS)} hosts, BMC latency ${flags['latency-ms']} ms ± 50 %, bmc.powerPollSeconds ${String(POLL_SECONDS)}, ` +
    `bmc.concurrency ${flags['bmc-concurrency'] ?? 'default'}, reconcile.concurrency ${flags['reconcile-concurrency'] ?? 'default'}; load average ${load()}`);
  try {
    emulator = await startEmulator();
    running.emulator = emulator;
    console.log(`BMC emulator: pid ${String(emulator.child.pid)}, ${String(HOSTS)} Redfish BMCs on ports ${emulator.hello.ports.join(', ')}`);
    const configPath = await writeScaleConfig({
      dir, powerPollSeconds: POLL_SECONDS, ...(flags['bmc-concurrency'] === undefined ? {} : { bmcConcurrency: Number(flags['bmc-concurrency']) }), ...(flags['reconcile-concurrency'] === undefined ? {} : { reconcileConcurrency: Number(flags['reconcile-concurrency']) }),
    });
    const profile = flags['cpu-prof'];
    agent = await spawnScaleAgent(configPath, profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`]);
    running.agent = agent;
    console.log(`agent: pid ${String(agent.pid)}, ready in ${ms(agent.readyMs)} with an empty store`);

    const t0 = performance.now();
    const applyMs: number[] = [];
    for (let first = 0; first < HOSTS; first += BATCH) {
      const docs: unknown[] = first === 0 ? [SECRET] : [];
      for (let n = first + 1; n <= Math.min(HOSTS, first + BATCH); n++) docs.push(manifest(n, emulator.hello));
      const res = await call('POST', `${agent.url}/api/v1/apply`, JSON.stringify(docs));
      if (res.status !== 200) throw new Error(`apply answered ${String(res.status)}: ${res.text.slice(0, 500)}`);
      applyMs.push(res.ms);
    }
    const applied = summarize(applyMs);
    console.log(`applied ${String(HOSTS)} hosts in ${String(applyMs.length)} batches in ${s(performance.now() - t0)} (per batch p50 ${ms(applied.p50)}, max ${ms(applied.max)}); waiting for the steady state (≤ ${s(SETTLE_MS)}):`);
    const stuck = await waitSteady(agent.url, t0);
    if (stuck !== undefined) throw new Error(`${stuck}; agent log tail:\n${agent.tail()}`);
    const registration = await emulator.stats();
    console.log(`steady after ${s(performance.now() - t0)}; during registration at most ${String(Math.max(...registration.maxInFlight))} request(s) in flight per BMC; ` +
      `${String(registration.poweredOn)} BMCs powered on`);
    console.log(`letting one power sweep pass (${String(POLL_SECONDS + 5)} s) …`);
    await sleep((POLL_SECONDS + 5) * 1000);
    await measureWindow(agent, emulator);
    await measureApi(agent, 200, 8);

    const stopped = await agent.stop();
    agent = undefined;
    delete running.agent;
    console.log(`\nstop (SIGTERM) took ${ms(stopped.ms)}, exit code ${String(stopped.code)}${profile === undefined ? '' : `; CPU profile in ${profile}`}`);
    const readies: number[] = [];
    for (let i = 0; i < Number(flags.restarts); i++) {
      agent = await spawnScaleAgent(configPath);
      running.agent = agent;
      readies.push(agent.readyMs);
      await sleep(2000);
      await agent.stop();
      agent = undefined;
      delete running.agent;
    }
    const ready = summarize(readies);
    if (readies.length > 0) console.log(`start-up to ready with ${String(HOSTS)} hosts in the store (load ${load()}): ${readies.map(ms).join(', ')}; max ${ms(ready.max)}   goal < 2 s ${verdict(ready.max < 2000)}`);
  } finally {
    await cleanUp();
  }
}

await main();
