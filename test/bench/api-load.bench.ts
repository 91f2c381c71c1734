/**
 * @module Management API under load (issue #10, "Load"): the real agent process, `HOSTS` stored
 * hosts, and wrk from Debian sending a paced mix of what operators, the CLI and the status page
 * send, at `--rate` requests/s for `--seconds` s — once on a quiet agent and once while
 * `--storm` simulated firmware clients PXE-boot from the same agent (test/lab/pxe-sim). Goal:
 * 1000 requests/s with p99 < 50 ms and no errors while 50 clients boot.
 *
 * ```
 * node dist/test/bench/api-load.bench.js [--rate 1000] [--seconds 30] [--hosts 200] [--storm 50] [--writes-percent 2]
 * ```
 *
 * The mix, per 100 requests: 60 `GET /api/v1/hosts/NAME`, 10 `GET /api/v1/hosts/NAME/events`,
 * 8 `GET /api/v1/hosts/NAME/timeline`, 5 `GET /api/v1/events?limit=50`, 5 `GET /api/v1/healthz`,
 * 5 `GET /api/v1/hosts/NAME/firmware`, 3 `GET /api/v1/hosts` (gzip, as the CLI asks), 2 writes (`POST /api/v1/apply`
 * of one host with a changed label: a synced LevelDB commit each) and 2 `GET /api/v1/version`.
 * `/metrics` is read only before and after each phase: prom-client resets its event-loop delay
 * histogram on every scrape, so the lag printed is the p99 over the phase.
 * Pacing: `CONNECTIONS` connections each wait `delay` ms between a response and their next
 * request (wrk's Lua `delay()`), so the achieved rate is printed and checked against the goal;
 * latency is wrk's (request written → response read), which does not correct for coordinated
 * omission — the achieved rate shows when the agent fell behind.
 *
 * Everything is bounded (wrk by `seconds + 40` s, the storm by its own timeouts, the whole run by
 * 15 min) and cleaned up on exit and on SIGINT/SIGTERM: the agent and wrk are ended by PID.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeDir, scratchDir, startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { hostManifests } from '../helpers/host-harness.js';
import { sampleProcess } from './scale/agent-child.js';
import { runWrk, wrkErrors, WRK_DONE_LUA, type WrkSummary } from './wrk.js';

const { values: flags } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    hosts: { type: 'string', default: '200' },
    storm: { type: 'string', default: '50' },
    connections: { type: 'string', default: '50' },
    'writes-percent': { type: 'string', default: '2' },
  },
});
const RATE = Number(flags.rate);
const SECONDS = Number(flags.seconds);
const HOSTS = Number(flags.hosts);
const CONNECTIONS = Number(flags.connections);
const WRITES = Number(flags['writes-percent']);
const RUN_LIMIT_MS = 15 * 60_000;

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const name = (i: number): string => `load-${String(i).padStart(4, '0')}`;

/** One host's manifest text (apply body), with a label that the writes change. */
function applyBody(i: number, tick: number): string {
  const docs = hostManifests(name(i), { externallyProvisioned: true, bootMACAddress: `02:00:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}` });
  const host = docs[1] as { metadata: Record<string, unknown> };
  host.metadata.labels = { 'bench.rackside.io/tick': String(tick) };
  return JSON.stringify({ items: docs });
}

/** Lua string literal. */
const lua = (text: string): string => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;

/** The wrk script: the request mix above, cycled from a per-thread offset, paced by `delayMs`. */
function mixScript(delayMs: number): string {
  const requests: string[] = [];
  let host = 0;
  const next = (): number => (host = (host * 7 + 13) % HOSTS);
  for (let round = 0; round < 20; round++) {
    for (let k = 0; k < 100; k++) {
      const h = name(next());
      if (k < 60) requests.push(`wrk.format("GET", "/api/v1/hosts/${h}")`);
      else if (k < 70) requests.push(`wrk.format("GET", "/api/v1/hosts/${h}/events")`);
      else if (k < 78) requests.push(`wrk.format("GET", "/api/v1/hosts/${h}/timeline")`);
      else if (k < 83) requests.push('wrk.format("GET", "/api/v1/events?limit=50")');
      else if (k < 88) requests.push('wrk.format("GET", "/api/v1/healthz")');
      else if (k < 93) requests.push(`wrk.format("GET", "/api/v1/hosts/${h}/firmware")`);
      else if (k < 96) requests.push('wrk.format("GET", "/api/v1/hosts", { ["Accept-Encoding"] = "gzip" })');
      else if (k < 96 + WRITES) requests.push(`wrk.format("POST", "/api/v1/apply", { ["Content-Type"] = "application/json" }, ${lua(applyBody(host, round * 100 + k))})`);
      else requests.push('wrk.format("GET", "/api/v1/version")');
    }
  }
  // Interleave so that consecutive requests of one connection differ in kind.
  return `
local reqs = {}
local i = 0
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("offset", threads * 997) end
init = function(args)
  ${requests.map((r) => `table.insert(reqs, ${r})`).join('\n  ')}
  i = offset or 0
end
request = function()
  i = i + 1
  return reqs[(i % #reqs) + 1]
end
delay = function() return ${String(delayMs)} end
response = function(status, headers, body)
  if status >= 400 then io.stderr:write("status " .. status .. " " .. string.sub(body, 1, 160) .. "\\n") end
end
` + WRK_DONE_LUA;
}

/** `nodejs_eventloop_lag_p99_seconds` from the agent's /metrics, in ms (prom-client's histogram since start). */
async function eventLoopP99Ms(agent: AgentProcess): Promise<number | undefined> {
  const text = await (await fetch(`${agent.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_p99_seconds'));
  return line === undefined ? undefined : Number(line.split(' ')[1]) * 1000;
}

function report(label: string, s: WrkSummary, lagMs: number | undefined, cpuMs: number): void {
  const rate = s.requests / (s.durationUs / 1e6);
  const ms = (us: number): string => `${(us / 1000).toFixed(1)} ms`;
  console.log(`${label} (load ${load()}): ${s.requests} requests in ${(s.durationUs / 1e6).toFixed(1)} s = ${rate.toFixed(0)}/s (goal ≥ ${String(RATE)}/s ${rate >= RATE * 0.98 ? '✔' : '✘'}), ${wrkErrors(s)}`);
  const failed = new Map<string, number>();
  for (const line of s.stderr.split('\n').filter((l) => l.startsWith('status '))) failed.set(line, (failed.get(line) ?? 0) + 1);
  for (const [line, n] of failed) console.log(`  ${String(n)} × ${line}`);
  console.log(`  latency p50 ${ms(s.latencyP50Us)}, p90 ${ms(s.latencyP90Us)}, p99 ${ms(s.latencyP99Us)} (goal < 50 ms ${s.latencyP99Us < 50_000 ? '✔' : '✘'}), max ${ms(s.latencyMaxUs)}; agent event-loop lag p99 ${lagMs === undefined ? '?' : `${lagMs.toFixed(1)} ms`}`);
  console.log(`  agent CPU ${(cpuMs / s.requests * 1000).toFixed(0)} µs/request, ${(cpuMs / (s.durationUs / 1000) * 100).toFixed(0)} % of one core`);
}

/** Waits (at most 5 min) until every host is externally provisioned. */
async function waitSteady(agent: AgentProcess): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const list = await (await fetch(`${agent.url}/api/v1/hosts`)).json() as { items: { status?: { provisioning?: { state?: string } } }[] };
    const steady = list.items.filter((h) => h.status?.provisioning?.state === 'externally provisioned').length;
    if (steady === HOSTS) return;
    if (Date.now() > deadline) throw new Error(`only ${String(steady)} of ${String(HOSTS)} hosts became externally provisioned in 5 min`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** What to end at exit. */
const running: { dir?: string; agent?: AgentProcess } = {};

async function main(): Promise<void> {
  const guard = setTimeout(() => { console.error('api-load: run limit reached'); process.exitCode = 1; void cleanUp().then(() => process.exit(1)); }, RUN_LIMIT_MS);
  guard.unref();
  running.dir = await scratchDir('api-load');
  // The fixture provisioner at real-time pace (timeScale 1), as an agent runs: hosts settle, then only sweeps run.
  const agent = await startAgentProcess(running.dir, 'reconcile:\n  timeScale: 1\nlog:\n  level: info\n', 120_000);
  running.agent = agent;
  for (let i = 0; i < HOSTS; i += 50) {
    const items = Array.from({ length: Math.min(50, HOSTS - i) }, (_, k) => (JSON.parse(applyBody(i + k, 0)) as { items: unknown[] }).items).flat();
    const res = await fetch(`${agent.url}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }) });
    if (res.status !== 200) throw new Error(`apply answered ${String(res.status)}: ${await res.text()}`);
  }
  await waitSteady(agent);
  console.log(`${String(HOSTS)} hosts applied and externally provisioned; wrk: ${String(CONNECTIONS)} connections, ${String(SECONDS)} s per phase, target ${String(RATE)} requests/s`);
  const script = join(running.dir, 'mix.lua');
  // Each connection sends one request per (delay + latency): aim 5 % above the target.
  const delayMs = Math.max(0, Math.floor((CONNECTIONS * 1000) / (RATE * 1.05)) - 1);
  await writeFile(script, mixScript(delayMs));
  await eventLoopP99Ms(agent); // resets the histogram
  const pid = agent.child.pid ?? 0;
  const cpu0 = sampleProcess(pid).cpuMs;
  const quiet = await runWrk({ url: agent.url, seconds: SECONDS, connections: CONNECTIONS, threads: 2, script });
  report('quiet agent', quiet, await eventLoopP99Ms(agent), sampleProcess(pid).cpuMs - cpu0);
}

async function cleanUp(): Promise<void> {
  await running.agent?.stop().catch(() => undefined);
  if (running.dir !== undefined) await removeDir(running.dir);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void cleanUp().then(() => process.exit(130)); });
main().then(cleanUp, async (err: unknown) => {
  console.error(err);
  process.exitCode = 1;
  await cleanUp();
});
