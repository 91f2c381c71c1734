/**
 * @module Management API under load (issue #10, "Load"): the real agent process in the PXE-storm
 * lab (test/lab/pxe-sim: `local` provisioner, DHCP full + TFTP + boot HTTP in a namespace,
 * `--hosts` BareMetalHosts with emulated Redfish BMCs, all `inspecting`), and wrk from Debian in
 * the agent's namespace sending a paced mix of what operators, the CLI and the status page send,
 * at `--rate` requests/s for `--seconds` s — once on a quiet agent and once while `--storm`
 * simulated firmware clients (the first hosts' MACs) PXE-boot from the same agent: DHCP, 1 MiB
 * over TFTP, iPXE DHCP, script, 10 MiB kernel, 50 MiB initrd. Goal: 1000 requests/s with p99 <
 * 50 ms and no errors while 50 clients boot; the storm must see 0 failures too.
 *
 * ```
 * node dist/test/bench/api-load.bench.js [--rate 1000] [--seconds 30] [--hosts 200] [--storm 50] [--writes-percent 2] [--offer-percent 110] [--cpu-prof DIR]
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
 * Needs root, ip, wrk (Debian: iproute2, wrk). Everything is bounded (wrk by `seconds + 40` s,
 * the storm by its own timeouts, the whole run by 15 min) and cleaned up on exit and on
 * SIGINT/SIGTERM: the agent, the BMC emulator, the storm workers and wrk are ended by PID and
 * the namespaces removed.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import {
  formatStormSummary, openStormLab, startRacksideServer, startStorm, STORM_MANAGEMENT_PORT, summarizeStorm,
  type RacksideServer, type RunningStorm, type StormLab,
} from '../lab/pxe-sim/index.js';
import { runWrk, wrkErrors, WRK_DONE_LUA, type WrkSummary } from './wrk.js';
import { sampleProcess } from './scale/agent-child.js';

const { values: flags } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    hosts: { type: 'string', default: '200' },
    storm: { type: 'string', default: '50' },
    connections: { type: 'string', default: '50' },
    'writes-percent': { type: 'string', default: '2' },
    'offer-percent': { type: 'string', default: '110' },
    'cpu-prof': { type: 'string' },
  },
});
const RATE = Number(flags.rate);
const SECONDS = Number(flags.seconds);
const HOSTS = Number(flags.hosts);
const STORM = Math.min(Number(flags.storm), HOSTS);
const CONNECTIONS = Number(flags.connections);
const WRITES = Number(flags['writes-percent']);
/** How much of the target the connections offer when answers take ≈ 1 ms (closed-loop pacing loses rate as latency grows). */
const OFFER = Number(flags['offer-percent']) / 100;
if (!(OFFER >= 1 && OFFER <= 2)) throw new RangeError('--offer-percent must be 100…200');
const RUN_LIMIT_MS = 15 * 60_000;

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
/** Host names as the storm lab registers them. */
const name = (i: number): string => `storm-${String(i).padStart(4, '0')}`;

/** Lua string literal. */
const lua = (text: string): string => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;

/** Apply bodies for host `i` (its stored spec, a label that changes), made from the agent's own copy. */
async function writeBodies(server: RacksideServer, i: number, count: number): Promise<string[]> {
  const host = await (await fetch(`${server.managementUrl}/api/v1/hosts/${name(i)}`)).json() as { metadata: { name: string; namespace: string }; spec: unknown };
  return Array.from({ length: count }, (_, tick) => JSON.stringify([{
    apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost',
    metadata: { name: host.metadata.name, namespace: host.metadata.namespace, labels: { 'bench.rackside.io/tick': String(tick) } },
    spec: host.spec,
  }]));
}

/** The wrk script: the request mix above, cycled from a per-thread offset, paced by `delayMs`. */
async function mixScript(server: RacksideServer, delayMs: number): Promise<string> {
  const requests: string[] = [];
  let host = 0;
  const next = (): number => (host = (host * 7 + 13) % HOSTS);
  const writes = new Map<number, string[]>();
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
      else if (k < 96 + WRITES) {
        // Writes go to the hosts the storm does not boot (their step is not to be disturbed).
        const target = STORM + (round * WRITES + k - 96) % Math.max(1, HOSTS - STORM);
        if (!writes.has(target)) writes.set(target, await writeBodies(server, target, 4));
        const body = writes.get(target)?.[round % 4] ?? '';
        requests.push(`wrk.format("POST", "/api/v1/apply", { ["Content-Type"] = "application/json" }, ${lua(body)})`);
      } else requests.push('wrk.format("GET", "/api/v1/version")');
    }
  }
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

/** prom-client's event-loop delay p99 since the last scrape, in ms (each scrape resets the histogram). */
async function eventLoopP99Ms(server: RacksideServer): Promise<number | undefined> {
  const line = (await server.metrics()).split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_p99_seconds'));
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
  console.log(`  agent CPU ${(cpuMs / s.requests * 1000).toFixed(0)} µs/request (whole agent, boot services included), ${(cpuMs / (s.durationUs / 1000) * 100).toFixed(0)} % of one core`);
}

/** What to end at exit. */
const running: { dir?: string; lab?: StormLab; server?: RacksideServer; storm?: RunningStorm } = {};

/** One wrk phase against the agent, inside its namespace. */
async function phase(label: string, lab: StormLab, server: RacksideServer, script: string): Promise<void> {
  await eventLoopP99Ms(server); // resets the histogram
  const cpu0 = sampleProcess(server.agentPid).cpuMs;
  const s = await runWrk({ url: `http://127.0.0.1:${STORM_MANAGEMENT_PORT}`, seconds: SECONDS, connections: CONNECTIONS, threads: 2, script, prefix: ['ip', 'netns', 'exec', lab.serverNs] });
  report(label, s, await eventLoopP99Ms(server), sampleProcess(server.agentPid).cpuMs - cpu0);
}

/**
 * Storms of `STORM` clients back to back until `until` settles (each client boots again in the
 * next storm: the hosts stay `inspecting`, so the agent serves them the ramdisk again); prints
 * each storm's figures. Rejects when a storm fails to run.
 */
async function stormsUntil(lab: StormLab, until: Promise<unknown>): Promise<void> {
  let finished = false;
  void until.finally(() => { finished = true; });
  const ended = (): boolean => finished;
  for (let n = 1; !ended(); n++) {
    const storm = startStorm({ lab: lab.lab, ns: lab.clientNs, dir: lab.dir, clients: STORM, expected: { firstStage: lab.files.sizes.firstStage, kernel: lab.files.sizes.kernel, initrd: lab.files.sizes.initrd } });
    running.storm = storm;
    const result = await storm.result;
    console.log(`storm ${String(n)}${ended() ? ' (ended after the phase)' : ''}: ${formatStormSummary(summarizeStorm(result))}`);
  }
}

async function main(): Promise<void> {
  const guard = setTimeout(() => { console.error('api-load: run limit reached'); process.exitCode = 1; void cleanUp().then(() => process.exit(1)); }, RUN_LIMIT_MS);
  guard.unref();
  running.dir = await scratchDir('api-load');
  const lab = await openStormLab({ dir: running.dir });
  running.lab = lab;
  const nodeArgs = flags['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${flags['cpu-prof']}`];
  const server = await startRacksideServer({ lab: lab.lab, ns: lab.serverNs, dir: join(lab.dir, 'rackside'), files: lab.files, hosts: { count: HOSTS }, nodeArgs });
  running.server = server;
  const script = join(running.dir, 'mix.lua');
  // Each connection sends one request per (delay + latency): wrk's delay() paces end to start, so
  // the rate falls as the agent's latency grows; the connections offer OFFER × the target and
  // the achieved rate is what is checked.
  const delayMs = Math.max(0, Math.floor((CONNECTIONS * 1000) / (RATE * OFFER)) - 1);
  console.log(`${server.description}; wrk in its namespace: ${String(CONNECTIONS)} connections, ${String(SECONDS)} s per phase, target ${String(RATE)} requests/s (offered up to ${String(Math.round(RATE * OFFER))}/s: ${String(delayMs)} ms between an answer and a connection's next request), ${String(WRITES)} % writes`);
  await writeFile(script, await mixScript(server, delayMs));
  await phase('quiet agent', lab, server, script);
  const loaded = phase(`while ${String(STORM)} clients PXE-boot, storm after storm`, lab, server, script);
  await Promise.all([loaded, stormsUntil(lab, loaded)]);
}

async function cleanUp(): Promise<void> {
  await running.storm?.stop().catch(() => undefined);
  await running.server?.stop().catch(() => undefined);
  await running.lab?.teardown().catch(() => undefined);
  if (running.dir !== undefined) await removeDir(running.dir); // teardown removes it too; this covers a failed open
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void cleanUp().then(() => process.exit(130)); });
main().then(cleanUp, async (err: unknown) => {
  console.error(err);
  process.exitCode = 1;
  await cleanUp();
});
