/**
 * @module PXE storm: N simulated firmware clients boot at once against rackside and against
 * dnsmasq (DHCP + TFTP) + nginx (HTTP), one after the other in the same run, same namespaces,
 * same clients, same files (not a test: no assertions). Each client (test/lab/pxe-sim) does DHCP
 * DORA as PXE firmware → TFTP of a 1 MiB first stage → DHCP as iPXE → HTTP script → HTTP kernel
 * (10 MiB) → HTTP initrd (50 MiB), every size checked. Per N and server: completion time (first
 * DISCOVER → last initrd byte), p50/p99 per phase, failures with reasons, retransmissions, the
 * server's CPU seconds, the load average before and after, the machine's busy (softirq) / idle /
 * steal shares over the storm and, for rackside, how often the agent's main thread was preempted
 * (test/lab/pxe-sim/cpu-contention.ts); for rackside also its event loop over the storm and over
 * 5 idle seconds before it, two ways: the agent's own metrics (`nodejs_eventloop_lag_*` of GET
 * /metrics, scraped right before and right after — each scrape starts a new interval; the
 * agent's sampler, agent/loop-lag.ts, records each run's delay beyond its schedule, every 10 ms
 * while the loop has work and every 250 ms while idle)
 * and loop-delay-probe.ts, loaded into the agent with `--import`: a 1 ms timer whose gaps give
 * the wait that ready work exceeded for 1 % of the storm's time. Then rackside's completion time
 * over each reference's (goal ≤ 1.0× with 0 failures) and the event-loop goal (p99 < 20 ms),
 * judged on the probe's time-weighted reading. Each server runs as shipped: rackside at its
 * systemd unit's Nice=-5 (test/helpers/unit-nice.ts; its bulk threads move back to nice 0),
 * dnsmasq and nginx at nice 0 as their Debian units start them.
 *
 * Usage: node dist/test/bench/pxe-storm.bench.js [--clients 50,200,500] [--blksize 1468]
 * [--windowsize 4] [--only rackside|reference] [--nginx-workers 1|auto|both] [--workers 1]
 * [--ramp-ms 0] [--arch efi|bios|mixed] [--mac-order scattered|sequential] [--settle-ms 10000]
 * [--cpu-prof DIR] [--agent-node-arg FLAG ...] [--agent-log FILE] [--client-nice 0] [--split-stalls] [--congestion cubic|bbr|host] [--json] [--keep]
 * `--workers`: client processes (the clients share one namespace either way); `--ramp-ms`:
 * spread the client starts over that long; `--mac-order`: client MACs scattered over 24 bits
 * (default) or sequential (dnsmasq then NAKs chains of them, see pxe-sim/dhcp-messages.ts); `--settle-ms`: wait after the server is up (for
 * rackside: after every host is inspecting; the agent is still finishing registration work for a
 * while, which a 3 s settle let into the 500-client figures) before the storm; `--cpu-prof DIR`: run the agent
 * with `--cpu-prof` and write its profile to DIR when it stops, beside a log of its event-loop
 * stalls of 10 ms or more on the profile's clock (`node dist/test/bench/stall-profile.js
 * DIR/rackside-N-R.cpuprofile DIR/rackside-N-R.stalls` shows what ran inside each); `--agent-node-arg`: a Node flag for
 * the agent process only (repeatable; e.g. `--trace-gc`); `--agent-log FILE`: write the agent's
 * output to FILE.N after the N-client row; `--client-nice`: run the simulated clients at that
 * nice(1) level — on this box they compete with the server for the same 2 cores, in a rack they
 * are other machines; `--split-stalls`: the probe also splits the agent's stalls of 10 ms or more
 * into time running, waiting runnable for a CPU and blocked (its thread's schedstat, read on every
 * 1 ms timer run: ≈ 1 % of a core more for the agent); `--congestion`: TCP congestion
 * control in the lab's namespaces (default cubic, Debian's; `host` keeps the host's — see
 * STORM_CONGESTION_CONTROL in pxe-sim/storm-lab.ts for why it is pinned); `--json`: one JSON document of
 * every figure on stdout after the text; `--keep`: keep the scratch directory (configs, logs).
 * Needs root, ip, dnsmasq and nginx (Debian: iproute2, dnsmasq, nginx-light). Bounded: server
 * start and host registration have timeouts, every storm is killed after 20 minutes; the
 * namespaces, daemons and scratch directory go at the end, on failure and on SIGINT/SIGTERM.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { findTool } from '../helpers/netns.js';
import { formatLoopDelay, loopDelayProbeArg, type LoopDelayWindow } from './loop-delay-probe.js';
import { readLoopDelayWindow } from './loop-delay-reader.js';
import {
  formatStormSummary, machineCpu, machineCpuShares, metricValue, threadSwitches, openStormLab, STORM_CONGESTION_CONTROL, startRacksideServer, startReferenceServer, startStorm, summarizeStorm,
  type BootServer, type FirmwareArch, type MachineCpuShares, type MacOrder, type RacksideServer, type StormLab, type StormSummary,
} from '../lab/pxe-sim/index.js';

const { values: flags } = parseArgs({
  options: {
    clients: { type: 'string', default: '50,200,500' },
    blksize: { type: 'string', default: '1468' },
    windowsize: { type: 'string', default: '4' },
    only: { type: 'string' },
    'nginx-workers': { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
    'ramp-ms': { type: 'string', default: '0' },
    arch: { type: 'string', default: 'efi' },
    'settle-ms': { type: 'string', default: '10000' },
    'mac-order': { type: 'string', default: 'scattered' },
    'cpu-prof': { type: 'string' },
    'agent-node-arg': { type: 'string', multiple: true, default: [] },
    'agent-log': { type: 'string' },
    'client-nice': { type: 'string', default: '0' },
    'split-stalls': { type: 'boolean', default: false },
    congestion: { type: 'string', default: STORM_CONGESTION_CONTROL },
    json: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});

const int = (name: string, text: string, min: number, max: number): number => {
  const v = Number(text);
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`--${name} must be an integer ${min}…${max}, got ${JSON.stringify(text)}`);
  return v;
};
const CLIENT_COUNTS = flags.clients.split(',').map((c) => int('clients', c, 1, 2000));
const BLKSIZE = int('blksize', flags.blksize, 8, 65464);
const WINDOWSIZE = int('windowsize', flags.windowsize, 1, 65535);
const WORKERS = int('workers', flags.workers, 1, 16);
const RAMP_MS = int('ramp-ms', flags['ramp-ms'], 0, 600_000);
const ONLY = flags.only;
if (ONLY !== undefined && ONLY !== 'rackside' && ONLY !== 'reference') throw new RangeError('--only must be rackside or reference');
const NGINX: (1 | 'auto')[] = flags['nginx-workers'] === 'both' ? [1, 'auto'] : flags['nginx-workers'] === 'auto' ? ['auto'] : [1];
if (!['1', 'auto', 'both'].includes(flags['nginx-workers'])) throw new RangeError('--nginx-workers must be 1, auto or both');
const ARCH = flags.arch;
if (ARCH !== 'efi' && ARCH !== 'bios' && ARCH !== 'mixed') throw new RangeError('--arch must be efi, bios or mixed');
const MAC_ORDER: MacOrder = ((order: string): MacOrder => {
  if (order !== 'scattered' && order !== 'sequential') throw new RangeError('--mac-order must be scattered or sequential');
  return order;
})(flags['mac-order']);
const STORM_TIMEOUT_MS = 20 * 60_000;
const SETTLE_MS = int('settle-ms', flags['settle-ms'], 0, 3_600_000);
const CPU_PROF = flags['cpu-prof'];
const AGENT_NODE_ARGS: readonly string[] = flags['agent-node-arg'];
const AGENT_LOG = flags['agent-log'];
const CLIENT_NICE = Number(flags['client-nice']);
if (!Number.isInteger(CLIENT_NICE) || CLIENT_NICE < 0 || CLIENT_NICE > 19) throw new Error(`--client-nice must be an integer 0-19, got ${flags['client-nice']}`);
const IDLE_WINDOW_MS = 5000;

/** One storm against one server. */
interface Row {
  clients: number;
  server: string;
  description: string;
  summary: StormSummary;
  cpuSeconds: number;
  loadBefore: number[];
  loadAfter: number[];
  /** The whole machine over the storm: shares of busy (softirq of it), idle and stolen (hypervisor) CPU time. */
  machine: MachineCpuShares;
  /** rackside only: how often the agent's main thread was switched out over the storm (cpu-contention.ts). */
  mainThreadSwitches?: { voluntary: number; involuntary: number };
  /** rackside only: event-loop figures from /metrics, ms (delay beyond the schedule, agent/loop-lag.ts). */
  eventLoop?: { idleP99Ms: number; stormP99Ms: number; stormMaxMs: number; stormP50Ms: number };
  /**
   * rackside only: the agent's event-loop delay beyond the schedule at 1 ms resolution
   * (loop-delay-probe.ts), over the idle window before the storm and over the storm — what the
   * goal is judged on, as in http.bench and images.bench.
   */
  loopDelay?: { idle: LoopDelayWindow; storm: LoopDelayWindow };
  /** rackside only: what its boot services counted. */
  counters?: Record<string, number>;
  /** rackside only: `bootServices` of GET /api/v1/status after the storm. */
  bootServices?: unknown;
}

const load = (): number[] => loadavg().map((l) => Number(l.toFixed(2)));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let storm: StormLab | undefined;
let dir: string | undefined;
const live = new Set<BootServer>();
async function cleanUp(): Promise<void> {
  for (const server of live) await server.stop().catch(() => undefined);
  live.clear();
  await storm?.teardown().catch((err: unknown) => { console.error(`teardown: ${String(err)}`); });
  storm = undefined;
  if (dir !== undefined && !flags.keep) await removeDir(dir);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void cleanUp().then(() => process.exit(130)); });

function eventLoopOf(metrics: string): { p50: number; p99: number; max: number } {
  const ms = (name: string): number => (metricValue(metrics, name) ?? Number.NaN) * 1000;
  return { p50: ms('nodejs_eventloop_lag_p50_seconds'), p99: ms('nodejs_eventloop_lag_p99_seconds'), max: ms('nodejs_eventloop_lag_max_seconds') };
}

function countersOf(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    const m = /^(rackside_(?:dhcp|tftp|http)_[a-z_]+(?:\{[^}]*\})?) ([0-9.eE+-]+)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined && Number(m[2]) !== 0) out[m[1]] = Number(m[2]);
  }
  return out;
}

/**
 * One storm against `server`; `rackside` is the same server when it is the agent (for its metrics
 * and its loop-delay probe, which writes to `probeFile`).
 */
async function runOne(lab: StormLab, clients: number, server: BootServer, rackside?: { server: RacksideServer; probeFile: string }): Promise<Row> {
  live.add(server);
  try {
    await sleep(SETTLE_MS);
    let idleP99Ms = Number.NaN;
    let idleDelay: LoopDelayWindow | undefined;
    if (rackside !== undefined) {
      await rackside.server.metrics();
      await readLoopDelayWindow(rackside.server.agentPid, rackside.probeFile);
      await sleep(IDLE_WINDOW_MS);
      idleP99Ms = eventLoopOf(await rackside.server.metrics()).p99;
      idleDelay = await readLoopDelayWindow(rackside.server.agentPid, rackside.probeFile);
    }
    const cpuBefore = server.cpuSeconds();
    const loadBefore = load();
    const machineBefore = machineCpu();
    const switchesBefore = rackside === undefined ? undefined : threadSwitches(rackside.server.agentPid);
    const running = startStorm({
      lab: lab.lab, ns: lab.clientNs, dir: lab.dir, clients, workers: WORKERS, timeoutMs: STORM_TIMEOUT_MS, nice: CLIENT_NICE,
      blksize: BLKSIZE, windowsize: WINDOWSIZE, rampMs: RAMP_MS, arch: ARCH as FirmwareArch | 'mixed', macOrder: MAC_ORDER,
      expected: { firstStage: lab.files.sizes.firstStage, kernel: lab.files.sizes.kernel, initrd: lab.files.sizes.initrd },
    });
    const result = await running.result;
    const machine = machineCpuShares(machineBefore, machineCpu());
    const switchesAfter = rackside === undefined ? undefined : threadSwitches(rackside.server.agentPid);
    const metrics = rackside === undefined ? undefined : await rackside.server.metrics();
    const stormDelay = rackside === undefined ? undefined : await readLoopDelayWindow(rackside.server.agentPid, rackside.probeFile);
    const row: Row = {
      clients, server: server.name, description: server.description, summary: summarizeStorm(result),
      cpuSeconds: Number((server.cpuSeconds() - cpuBefore).toFixed(2)), loadBefore, loadAfter: load(), machine,
    };
    if (switchesBefore !== undefined && switchesAfter !== undefined) {
      row.mainThreadSwitches = { voluntary: switchesAfter.voluntary - switchesBefore.voluntary, involuntary: switchesAfter.involuntary - switchesBefore.involuntary };
    }
    if (rackside !== undefined && metrics !== undefined) {
      const loop = eventLoopOf(metrics);
      row.eventLoop = { idleP99Ms: idleP99Ms, stormP99Ms: loop.p99, stormMaxMs: loop.max, stormP50Ms: loop.p50 };
      row.counters = countersOf(metrics);
      row.bootServices = ((await rackside.server.status()) as { bootServices?: unknown }).bootServices;
      if (idleDelay !== undefined && stormDelay !== undefined) row.loopDelay = { idle: idleDelay, storm: stormDelay };
    }
    return row;
  } finally {
    // --agent-log: the agent's own output (its log, and whatever --agent-node-arg flags print).
    if (AGENT_LOG !== undefined && rackside !== undefined) await writeFile(`${AGENT_LOG}.${String(clients)}`, rackside.server.output());
    await server.stop();
    live.delete(server);
  }
}

function printRow(row: Row): void {
  console.log(formatStormSummary(row.summary, `${row.server}: `));
  console.log(`  server CPU ${row.cpuSeconds.toFixed(1)} s; load average ${row.loadBefore.join(' ')} before, ${row.loadAfter.join(' ')} after`);
  const share = (x: number): string => `${(x * 100).toFixed(0)} %`;
  const switches = row.mainThreadSwitches === undefined ? '' : `; agent main thread switched out ${String(row.mainThreadSwitches.involuntary)} times while runnable (preempted), ${String(row.mainThreadSwitches.voluntary)} times waiting`;
  console.log(`  machine over the storm: busy ${share(row.machine.busy)} (softirq ${share(row.machine.softirq)}), idle ${share(row.machine.idle)}, stolen by the hypervisor ${share(row.machine.steal)}${switches}`);
  if (row.eventLoop !== undefined) {
    const e = row.eventLoop;
    console.log(`  event loop (nodejs_eventloop_lag_*, beyond the schedule, sampled every 10 ms while busy): storm p50 ${e.stormP50Ms.toFixed(1)} ms, p99 ${e.stormP99Ms.toFixed(1)} ms, max ${e.stormMaxMs.toFixed(1)} ms; idle p99 ${e.idleP99Ms.toFixed(1)} ms`);
  }
  if (row.loopDelay !== undefined) {
    const { idle, storm: during } = row.loopDelay;
    console.log(`  event-loop delay beyond the schedule (1 ms probe, loop-delay-probe.ts), storm: ${formatLoopDelay(during)}; idle before it: ${formatLoopDelay(idle)}`);
  }
  if (row.counters !== undefined) console.log(`  rackside counters: ${Object.entries(row.counters).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (row.bootServices !== undefined) console.log(`  rackside boot services (GET /api/v1/status): ${JSON.stringify(row.bootServices)}`);
}

async function main(): Promise<void> {
  const tools = ['ip', ...(ONLY === 'rackside' ? [] : ['dnsmasq', 'nginx'])];
  const missing = tools.filter((t) => findTool(t) === undefined);
  if (process.getuid?.() !== 0 || missing.length > 0) throw new Error(`needs root and ${tools.join(', ')} (missing: ${missing.join(', ') || 'root'})`);
  dir = await scratchDir('pxe-storm');
  storm = await openStormLab({ dir, congestionControl: flags.congestion });
  const lab = storm;
  console.log(`PXE storm: clients ${CLIENT_COUNTS.join(', ')}; ${ARCH} firmware, ${MAC_ORDER} MACs; TFTP blksize ${BLKSIZE}, windowsize ${WINDOWSIZE}; ${WORKERS} client process(es) in one namespace (${lab.clientNs}), nice ${String(CLIENT_NICE)}; ramp ${RAMP_MS} ms; TCP congestion control ${flags.congestion}`);
  console.log(`files: first stage ${lab.files.sizes.firstStage} B, kernel ${lab.files.sizes.kernel} B, initrd ${lab.files.sizes.initrd} B (random); load average ${load().join(' ')}\n`);
  const rows: Row[] = [];
  // The stall logs go there from the agent's first stall; Node creates it only for the profile, at exit.
  if (CPU_PROF !== undefined) await mkdir(CPU_PROF, { recursive: true });
  for (const [run, clients] of CLIENT_COUNTS.entries()) {
    console.log(`=== ${clients} clients ===`);
    let racksideRow: Row | undefined;
    if (ONLY !== 'reference') {
      const probeFile = join(lab.dir, `loop-delay-${clients}-${run}.json`);
      const rackside = await startRacksideServer({
        lab: lab.lab, ns: lab.serverNs, dir: join(lab.dir, `rackside-${clients}-${run}`), files: lab.files, hosts: { count: clients, macOrder: MAC_ORDER },
        nodeArgs: [
          loopDelayProbeArg(probeFile, { splitStalls: flags['split-stalls'], ...(CPU_PROF === undefined ? {} : { stallLog: join(CPU_PROF, `rackside-${String(clients)}-${String(run)}.stalls`) }) }), ...AGENT_NODE_ARGS,
          ...(CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, `--cpu-prof-name=rackside-${String(clients)}-${String(run)}.cpuprofile`]),
        ],
      });
      racksideRow = await runOne(lab, clients, rackside, { server: rackside, probeFile });
    }
    if (racksideRow !== undefined) {
      rows.push(racksideRow);
      printRow(racksideRow);
    }
    for (const workers of ONLY === 'rackside' ? [] : NGINX) {
      const row = await runOne(lab, clients, await startReferenceServer({
        lab: lab.lab, ns: lab.serverNs, dir: join(lab.dir, `reference-${clients}-${String(workers)}-${run}`), files: lab.files, clients, nginxWorkers: workers,
      }));
      rows.push(row);
      printRow(row);
      if (racksideRow !== undefined) {
        const ratio = racksideRow.summary.completionMs / row.summary.completionMs;
        const ok = ratio <= 1 && racksideRow.summary.failed === 0;
        console.log(`  → rackside / ${row.server} completion: ${ratio.toFixed(2)}× (goal ≤ 1.0× with 0 failures: ${ok ? 'met' : 'NOT met'})`);
      }
    }
    if (racksideRow?.loopDelay !== undefined) {
      const p99 = racksideRow.loopDelay.storm.waitP99Ms;
      const reported = racksideRow.eventLoop?.stormP99Ms ?? Number.NaN;
      console.log(`  → rackside event-loop lag p99 during the storm, over time: ${p99.toFixed(1)} ms (goal < 20 ms: ${p99 < 20 ? 'met' : 'NOT met'}); per timer run ${racksideRow.loopDelay.storm.p99Ms.toFixed(1)} ms; its metric nodejs_eventloop_lag_p99_seconds read ${reported.toFixed(1)} ms`);
    }
    console.log('');
  }
  if (flags.json) console.log(JSON.stringify({ macOrder: MAC_ORDER, blksize: BLKSIZE, windowsize: WINDOWSIZE, workers: WORKERS, rampMs: RAMP_MS, arch: ARCH, rows }));
}

try {
  await main();
} catch (err) {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exitCode = 1;
} finally {
  await cleanUp();
}
