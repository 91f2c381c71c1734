/**
 * @module DHCP DORA rate of rackside against Kea (kea-dhcp4) and dnsmasq, side by side in one
 * run, measured with Kea's `perfdhcp` (package kea-admin) in network namespaces (not a test: no
 * assertions). perfdhcp acts as a relay (its address is `giaddr`), so every server answers by
 * unicast to it on port 67 — the same path for all three. Each server gets the same /16 pool,
 * the same client population and the same bounded run (rate × seconds), one after the other
 * on a fresh veth pair. Leases are persisted by all three: rackside in LevelDB with a synced
 * write before each ACK, Kea in its memfile CSV, dnsmasq in its lease file.
 *
 * `rackside` is the server as the agent runs it (leases in the agent store's KeyValue: one
 * synced write per binding); `rackside-batch` the same server over a KeyValue that can batch,
 * so the lease writer group-commits (one synced write for all bindings made meanwhile).
 *
 * Usage: node dist/test/bench/dhcp.bench.js [RATE=4000] [SECONDS=10] [CLIENTS=2000]
 *          [SERVERS=rackside,rackside-batch,kea,dnsmasq] [ROUNDS=2]
 * Runs the servers in turn, ROUNDS times, and prints per run and per server (best round): 4-way
 * exchanges/s (DORA/s) and drops, then rackside's ratios (goals: ≥ 1.0× Kea, ≥ 3× dnsmasq).
 * Needs root and perfdhcp, kea-dhcp4, dnsmasq. Env: RACKSIDE_BENCH_UV_THREADS (libuv threads
 * of the rackside child), RACKSIDE_BENCH_PROFILE_DIR (write its CPU profile there).
 *
 * `node dist/test/bench/dhcp.bench.js --decisions [2000,20000]` (no root, no network) measures
 * instead what a rack powering on costs the event loop: N new clients, each a DISCOVER and a
 * REQUEST decided by `respondIndexed` over the server's `LeaseCache` (the /16 pool above, no
 * I/O), and prints the decision time per new client for the first and the last tenth of them —
 * flat when allocation does not depend on the number of leases — and the worst one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Lease, LeaseStore } from '../../bootsvc/boot-lookup.js';
import { respondIndexed } from '../../bootsvc/dhcp/indexed-respond.js';
import { LeaseCache } from '../../bootsvc/dhcp/lease-cache.js';
import type { ResponderContext } from '../../bootsvc/dhcp/responder-context.js';
import { clientPacket } from '../helpers/dhcp-packets.js';
import { LOCAL_DISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab, waitFor, type LabProcess } from '../helpers/netns.js';

const RATE = Number(process.argv[2] ?? 4000);
const SECONDS = Number(process.argv[3] ?? 10);
const CLIENTS = Number(process.argv[4] ?? 2000);
const SERVERS = (process.argv[5] ?? 'rackside,rackside-batch,kea,dnsmasq').split(',');
const ROUNDS = Number(process.argv[6] ?? 2);
/** libuv threads for rackside (LevelDB group commit merges as many synced writes as threads wait); unset = Node's default 4. */
const THREADS = process.env.RACKSIDE_BENCH_UV_THREADS;
/** Write a CPU profile of the rackside server here. */
const PROFILE_DIR = process.env.RACKSIDE_BENCH_PROFILE_DIR;
const SERVER_ADDRESS = '10.90.0.1';
const RELAY_ADDRESS = '10.90.0.2';

interface Result {
  server: string;
  doraPerSecond: number;
  sent: number;
  received: number;
  drops: string;
  exitCode: number | null;
  note?: string;
}

/** Runs perfdhcp in `ns` against the server; returns the rate line it printed. */
async function perfdhcp(lab: NetnsLab, ns: string, dir: string, server: string): Promise<Result> {
  const env = { ...process.env, KEA_PIDFILE_DIR: dir, KEA_LOCKFILE_DIR: dir };
  const args = ['-4', '-r', String(RATE), '-p', String(SECONDS), '-R', String(CLIENTS), '-l', RELAY_ADDRESS, '-d', '2', '-W', '1000000', SERVER_ADDRESS];
  const run = await lab.exec(ns, 'perfdhcp', args, { allowFailure: true, env, timeoutMs: (SECONDS + 30) * 1000 });
  const out = run.stdout + run.stderr;
  const rate = /Rate:\s*([\d.]+)\s*4-way exchanges\/second/.exec(out);
  const sent = [...out.matchAll(/sent packets:\s*(\d+)/g)].map((m) => Number(m[1]));
  const received = [...out.matchAll(/received packets:\s*(\d+)/g)].map((m) => Number(m[1]));
  const drops = [...out.matchAll(/drops:\s*(\d+)/g)].map((m) => m[1]).join('/');
  const result: Result = {
    server,
    doraPerSecond: rate === null ? 0 : Number(rate[1]),
    sent: sent.reduce((a, b) => a + b, 0),
    received: received.reduce((a, b) => a + b, 0),
    drops,
    exitCode: run.code,
  };
  if (rate === null) result.note = out.slice(-800);
  return result;
}

async function runRackside(lab: NetnsLab, srv: string, dir: string, leaseBackend: 'store' | 'level-batch' = 'store'): Promise<{ stop: () => Promise<string> }> {
  const server = await startDhcpServerProcess(lab, srv, {
    leaseBackend,
    mode: 'full',
    interface: 'eth0',
    serverAddress: SERVER_ADDRESS,
    ranges: [{ subnet: '10.90.0.0/16', first: '10.90.1.0', last: '10.90.255.254' }],
    leaseSeconds: 3600,
    stateDir: join(dir, 'rackside-state'),
    defaultTarget: LOCAL_DISK_BOOT,
    events: false,
    ...(THREADS === undefined ? {} : { leaseWriteConcurrency: Number(THREADS) * 2 }),
  }, { env: THREADS === undefined ? {} : { UV_THREADPOOL_SIZE: THREADS }, nodeArgs: PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`], ...(process.env.RACKSIDE_BENCH_CHILD === undefined ? {} : { script: process.env.RACKSIDE_BENCH_CHILD }) });
  return {
    async stop() {
      const s = await server.stop();
      const loop = server.eventLoop();
      return `event loop p99 ${loop?.p99Ms ?? '?'} ms (max ${loop?.maxMs ?? '?'}), replies ${JSON.stringify(s.replies)}, ignored ${JSON.stringify(s.ignored)}, dropped ${JSON.stringify(s.dropped)}, lease writes ${s.leases.writes} (coalesced ${s.leases.coalesced}, errors ${s.leases.writeErrors})`;
    },
  };
}

async function waitStarted(p: LabProcess, text: RegExp, what: string): Promise<void> {
  await waitFor(() => text.test(p.stdout() + p.stderr()) || p.child.exitCode !== null, what, 15_000);
  if (p.child.exitCode !== null) throw new Error(`${what} failed: ${p.stdout()}${p.stderr()}`);
}

async function runKea(lab: NetnsLab, srv: string, dir: string): Promise<{ stop: () => Promise<string> }> {
  const config = join(dir, 'kea-dhcp4.json');
  await writeFile(
    config,
    JSON.stringify({
      Dhcp4: {
        'interfaces-config': { interfaces: ['eth0'], 'dhcp-socket-type': 'udp' },
        'lease-database': { type: 'memfile', persist: true, name: join(dir, 'kea-leases4.csv'), 'lfc-interval': 0 },
        'valid-lifetime': 3600,
        subnet4: [{ id: 1, subnet: '10.90.0.0/16', pools: [{ pool: '10.90.1.0 - 10.90.255.254' }] }],
        loggers: [{ name: 'kea-dhcp4', output_options: [{ output: 'stdout' }], severity: 'INFO' }],
      },
    }),
  );
  const p = lab.spawn(srv, 'kea-dhcp4', ['-c', config], { env: { ...process.env, KEA_PIDFILE_DIR: dir, KEA_LOCKFILE_DIR: dir } });
  await waitStarted(p, /DHCP4_STARTED|server version .* started/, 'kea-dhcp4');
  return { stop: async () => `exit ${String(await p.stop())}` };
}

async function runDnsmasq(lab: NetnsLab, srv: string, dir: string): Promise<{ stop: () => Promise<string> }> {
  const p = lab.spawn(srv, 'dnsmasq', [
    '--no-daemon', '--conf-file=/dev/null', '--port=0', '--bind-interfaces', '--interface=eth0', '--user=root', '--group=root',
    '--dhcp-range=10.90.1.0,10.90.255.254,255.255.0.0,1h', '--no-ping', '--dhcp-lease-max=1000000', '--dhcp-authoritative',
    `--dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`, `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--log-facility=-',
  ]);
  await waitStarted(p, /DHCP, IP range/, 'dnsmasq');
  return { stop: async () => `exit ${String(await p.stop())}` };
}

const starters: Record<string, (lab: NetnsLab, srv: string, dir: string) => Promise<{ stop: () => Promise<string> }>> = {
  rackside: (lab, srv, dir) => runRackside(lab, srv, dir, 'store'),
  'rackside-batch': (lab, srv, dir) => runRackside(lab, srv, dir, 'level-batch'),
  kea: runKea,
  dnsmasq: runDnsmasq,
};

/** A lease store that keeps nothing (the decision cost is measured without I/O). */
const NULL_STORE: LeaseStore = {
  get: () => Promise.resolve(undefined),
  put: () => Promise.resolve(),
  delete: () => Promise.resolve(),
  list: () => Promise.resolve([] as Lease[]),
};

/** DISCOVER + REQUEST for `clients` new MACs through respondIndexed over a LeaseCache; prints the cost per client. */
async function decisionCost(clients: number): Promise<void> {
  const cache = await LeaseCache.load(NULL_STORE);
  const ctx: Omit<ResponderContext, 'leases'> = {
    mode: 'full',
    serverAddress: SERVER_ADDRESS,
    serverPort: 67,
    subnets: [{ network: '10.90.0.0', prefixLength: 16, rangeStart: '10.90.1.0', rangeEnd: '10.90.255.254' }],
    reservations: [],
    leaseSeconds: 3600,
    bootDecision: { kind: 'local-disk' },
    unknownHosts: 'ignore',
    nowMs: Date.now(),
  };
  const perClientMs: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < clients; i++) {
    const mac = `02:00:00:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
    const started = performance.now();
    const offer = respondIndexed(clientPacket({ type: 'discover', mac, giaddr: RELAY_ADDRESS }), ctx, cache);
    void cache.apply(offer.leaseChanges);
    if (offer.kind !== 'reply') throw new Error(`client ${i}: no offer (${offer.kind === 'ignore' ? offer.reason : offer.kind})`);
    const ack = respondIndexed(clientPacket({ type: 'request', mac, giaddr: RELAY_ADDRESS, serverId: SERVER_ADDRESS, requestedAddress: offer.packet.yiaddr }), ctx, cache);
    void cache.apply(ack.leaseChanges);
    perClientMs.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  const tenth = Math.max(1, Math.floor(clients / 10));
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sorted = [...perClientMs].sort((a, b) => a - b);
  const head = mean(perClientMs.slice(0, tenth));
  const tail = mean(perClientMs.slice(-tenth));
  console.log(
    `${String(clients).padStart(6)} new clients: ${((used.user + used.system) / 1000).toFixed(0)} ms CPU; DISCOVER+REQUEST per client: first tenth ${(head * 1000).toFixed(0)} µs, ` +
      `last tenth ${(tail * 1000).toFixed(0)} µs (×${(tail / head).toFixed(1)}), p99 ${((sorted[Math.floor(clients * 0.99)] ?? 0) * 1000).toFixed(0)} µs, max ${((sorted[clients - 1] ?? 0) * 1000).toFixed(0)} µs`,
  );
  await cache.flush();
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--decisions');
  if (at >= 0) {
    const sizes = (process.argv[at + 1] ?? '2000,20000').split(',').map(Number);
    console.log(`decision cost of new clients (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
    for (const n of sizes) await decisionCost(n);
    return;
  }
  const lab = await NetnsLab.open({ tools: ['perfdhcp', ...(SERVERS.includes('kea') ? ['kea-dhcp4'] : []), ...(SERVERS.includes('dnsmasq') ? ['dnsmasq'] : [])] });
  const results: Result[] = [];
  try {
    console.log(`perfdhcp: ${RATE}/s target for ${SECONDS} s, ${CLIENTS} simulated clients, relayed (giaddr ${RELAY_ADDRESS}); /16 pool; ${ROUNDS} round(s)`);
    for (let round = 1; round <= ROUNDS; round++) for (const name of SERVERS) {
      const start = starters[name];
      if (start === undefined) throw new Error(`unknown server ${name} (${Object.keys(starters).join(', ')})`);
      const dir = await mkdtemp(join(tmpdir(), `rackside-bench-dhcp-${name}-`));
      const srv = await lab.namespace(`${name}-srv${round}`);
      const cli = await lab.namespace(`${name}-cli${round}`);
      await lab.link(srv, 'eth0', cli, 'eth0', { a: `${SERVER_ADDRESS}/16`, b: `${RELAY_ADDRESS}/16` });
      try {
        const server = await start(lab, srv, dir);
        const result = await perfdhcp(lab, cli, dir, name);
        result.note = [result.note, await server.stop()].filter((s) => s !== undefined).join(' | ');
        results.push(result);
        console.log(`round ${round} ${name}: ${result.doraPerSecond.toFixed(0)} DORA/s (perfdhcp exit ${String(result.exitCode)}, sent ${result.sent}, received ${result.received}, drops ${result.drops}) ${result.note}`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await lab.teardown();
  }
  const best = new Map<string, Result>();
  for (const r of results) if ((best.get(r.server)?.doraPerSecond ?? -1) < r.doraPerSecond) best.set(r.server, r);
  for (const [name, r] of best) console.log(`best ${name}: ${r.doraPerSecond.toFixed(0)} DORA/s (all rounds: ${results.filter((x) => x.server === name).map((x) => x.doraPerSecond.toFixed(0)).join(', ')})`);
  for (const ours of ['rackside', 'rackside-batch']) {
    const mine = best.get(ours);
    if (mine === undefined) continue;
    for (const [other, goal] of [['kea', 1], ['dnsmasq', 3]] as const) {
      const theirs = best.get(other);
      if (theirs === undefined || theirs.doraPerSecond === 0) continue;
      // The verdict reads the printed (rounded) ratio: at the offered rate both servers answer
      // every exchange and differ only in the last timer tick of perfdhcp's run.
      const ratio = Number((mine.doraPerSecond / theirs.doraPerSecond).toFixed(2));
      console.log(`${ours} / ${other}: ${ratio.toFixed(2)}× (goal ≥ ${goal}×: ${ratio >= goal ? 'met' : 'NOT met'})`);
    }
  }
}

await main();
