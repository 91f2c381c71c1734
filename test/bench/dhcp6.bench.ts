/**
 * @module DHCPv6 Solicit/Advertise/Request/Reply rate of rackside against Kea (kea-dhcp6) in one
 * run, measured with Kea's `perfdhcp -6` in network namespaces (not a test: no assertions),
 * modelled on `dhcp.bench.ts`. perfdhcp sends from its link-local address to ff02::1:2 on a
 * veth pair; each server gets the same range, the same client population and the same bounded
 * run (rate × seconds), one after the other on a fresh pair. perfdhcp's link-local address is
 * made a stable-privacy one (addr_gen_mode 2), so rackside cannot read one MAC from it for
 * every simulated client: each client is then the MAC inside its own DUID-LLT, one lease each,
 * as Kea keeps one per DUID. Both persist leases: rackside in the agent's LevelDB store (its
 * DHCPv6 lease store, group commit) before each binding Reply, Kea in its memfile CSV.
 *
 * Usage: node dist/test/bench/dhcp6.bench.js [RATE=2000] [SECONDS=10] [CLIENTS=2000] [SERVERS=rackside,kea] [ROUNDS=2]
 * Prints per run and per server (best round) exchanges/s and drops, then rackside / Kea.
 * Needs root, perfdhcp and kea-dhcp6 (scripts/install-test-deps.sh).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Dhcp6ChildConfig } from '../integration/dhcp6-child.js';
import { NetnsLab, waitFor, type LabProcess } from '../helpers/netns.js';

const RATE = Number(process.argv[2] ?? 2000);
const SECONDS = Number(process.argv[3] ?? 10);
const CLIENTS = Number(process.argv[4] ?? 2000);
const SERVERS = (process.argv[5] ?? 'rackside,kea').split(',');
const ROUNDS = Number(process.argv[6] ?? 2);
const CHILD = join(dirname(fileURLToPath(import.meta.url)), '..', 'integration', 'dhcp6-child.js');
const PREFIX = 'fd00:90::';
const SERVER_ADDRESS = 'fd00:90::1';
const RANGE = { first: 'fd00:90::1:0', last: 'fd00:90::ffff:ffff' };

interface Result {
  server: string;
  perSecond: number;
  sent: number;
  received: number;
  drops: string;
  exitCode: number | null;
  note?: string;
}

/** Runs perfdhcp -6 on eth0 of `ns`; returns what it measured. */
async function perfdhcp6(lab: NetnsLab, ns: string, dir: string, server: string): Promise<Result> {
  const env = { ...process.env, KEA_PIDFILE_DIR: dir, KEA_LOCKFILE_DIR: dir };
  const args = ['-6', '-r', String(RATE), '-p', String(SECONDS), '-R', String(CLIENTS), '-l', 'eth0', '-d', '2', '-W', '1000000'];
  const run = await lab.exec(ns, 'perfdhcp', args, { allowFailure: true, env, timeoutMs: (SECONDS + 30) * 1000 });
  const out = run.stdout + run.stderr;
  const rate = /Rate:\s*([\d.]+)\s*4-way exchanges\/second/.exec(out);
  const sum = (re: RegExp): number => [...out.matchAll(re)].map((m) => Number(m[1])).reduce((a, b) => a + b, 0);
  const result: Result = {
    server, perSecond: rate === null ? 0 : Number(rate[1]), sent: sum(/sent packets:\s*(\d+)/g), received: sum(/received packets:\s*(\d+)/g),
    drops: [...out.matchAll(/drops:\s*(\d+)/g)].map((m) => m[1]).join('/'), exitCode: run.code,
  };
  if (rate === null) result.note = out.slice(-800);
  return result;
}

async function runRackside(lab: NetnsLab, srv: string, dir: string): Promise<{ stop: () => Promise<string> }> {
  const config: Dhcp6ChildConfig = {
    interface: 'eth0', serverAddress: SERVER_ADDRESS, ranges: [{ subnet: `${PREFIX}/64`, ...RANGE }], stateDir: join(dir, 'state'),
    defaultTarget: { plan: { kind: 'local-disk' } }, events: false,
  };
  const p = lab.spawn(srv, process.execPath, [CHILD, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: { type: string; stats?: unknown; message?: string }[] = [];
  if (p.child.stdout !== null) createInterface({ input: p.child.stdout }).on('line', (l) => { lines.push(JSON.parse(l) as { type: string }); });
  const first = await waitFor(() => lines.find((l) => l.type === 'ready' || l.type === 'error'), 'the rackside DHCPv6 server');
  if (first.type === 'error') throw new Error(`rackside failed: ${first.message ?? ''} ${p.stderr()}`);
  return {
    async stop() {
      p.child.stdin?.write('stop\n');
      const stopped = await waitFor(() => lines.find((l) => l.type === 'stopped'), 'rackside to stop', 15_000);
      await p.exited;
      return `stats ${JSON.stringify(stopped.stats)}`;
    },
  };
}

async function waitStarted(p: LabProcess, text: RegExp, what: string): Promise<void> {
  await waitFor(() => text.test(p.stdout() + p.stderr()) || p.child.exitCode !== null, what, 15_000);
  if (p.child.exitCode !== null) throw new Error(`${what} failed: ${p.stdout()}${p.stderr()}`);
}

async function runKea(lab: NetnsLab, srv: string, dir: string): Promise<{ stop: () => Promise<string> }> {
  const config = join(dir, 'kea-dhcp6.json');
  await writeFile(config, JSON.stringify({
    Dhcp6: {
      'interfaces-config': { interfaces: ['eth0'] },
      'lease-database': { type: 'memfile', persist: true, name: join(dir, 'kea-leases6.csv'), 'lfc-interval': 0 },
      'valid-lifetime': 3600, 'preferred-lifetime': 3600, 'server-id': { type: 'LL', persist: false },
      subnet6: [{ id: 1, subnet: `${PREFIX}/64`, interface: 'eth0', pools: [{ pool: `${RANGE.first} - ${RANGE.last}` }] }],
      loggers: [{ name: 'kea-dhcp6', output_options: [{ output: 'stdout' }], severity: 'INFO' }],
    },
  }));
  const p = lab.spawn(srv, 'kea-dhcp6', ['-c', config], { env: { ...process.env, KEA_PIDFILE_DIR: dir, KEA_LOCKFILE_DIR: dir } });
  await waitStarted(p, /DHCP6_STARTED|server version .* started/, 'kea-dhcp6');
  return { stop: async () => `exit ${String(await p.stop())}` };
}

const starters: Record<string, (lab: NetnsLab, srv: string, dir: string) => Promise<{ stop: () => Promise<string> }>> = { rackside: runRackside, kea: runKea };

/** IPv6 on in `ns` with DAD off, and the link-local address generated in `mode` (0 EUI-64, 2 stable privacy). */
async function ipv6On(lab: NetnsLab, ns: string, addrGenMode: number): Promise<void> {
  await lab.sysctl(ns, { 'net.ipv6.conf.all.accept_dad': '0', 'net.ipv6.conf.default.accept_dad': '0', 'net.ipv6.conf.default.addr_gen_mode': String(addrGenMode) });
  if (addrGenMode === 2) await lab.sysctl(ns, { 'net.ipv6.conf.default.stable_secret': '::1:2:3:4' });
  await lab.sysctl(ns, { 'net.ipv6.conf.all.disable_ipv6': '0', 'net.ipv6.conf.default.disable_ipv6': '0' });
}

async function main(): Promise<void> {
  const lab = await NetnsLab.open({ tools: ['perfdhcp', ...(SERVERS.includes('kea') ? ['kea-dhcp6'] : [])] });
  const results: Result[] = [];
  try {
    console.log(`perfdhcp -6: ${RATE}/s target for ${SECONDS} s, ${CLIENTS} simulated clients on the link; range ${RANGE.first}-${RANGE.last}; ${ROUNDS} round(s)`);
    for (let round = 1; round <= ROUNDS; round++) for (const name of SERVERS) {
      const start = starters[name];
      if (start === undefined) throw new Error(`unknown server ${name} (${Object.keys(starters).join(', ')})`);
      const dir = await mkdtemp(join(tmpdir(), `rackside-bench-dhcp6-${name}-`));
      const srv = await lab.namespace(`${name}-s6${round}`);
      const cli = await lab.namespace(`${name}-c6${round}`);
      await ipv6On(lab, srv, 0);
      await ipv6On(lab, cli, 2);
      await lab.link(srv, 'eth0', cli, 'eth0');
      await lab.exec(srv, 'ip', ['addr', 'add', `${SERVER_ADDRESS}/64`, 'dev', 'eth0', 'nodad']);
      await lab.exec(cli, 'ip', ['addr', 'add', 'fd00:90::2/64', 'dev', 'eth0', 'nodad']);
      try {
        const server = await start(lab, srv, dir);
        const result = await perfdhcp6(lab, cli, dir, name);
        result.note = [result.note, await server.stop()].filter((s) => s !== undefined).join(' | ');
        results.push(result);
        console.log(`round ${round} ${name}: ${result.perSecond.toFixed(0)} exchanges/s (perfdhcp exit ${String(result.exitCode)}, sent ${result.sent}, received ${result.received}, drops ${result.drops}) ${result.note}`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await lab.teardown();
  }
  const best = new Map<string, Result>();
  for (const r of results) if ((best.get(r.server)?.perSecond ?? -1) < r.perSecond) best.set(r.server, r);
  for (const [name, r] of best) console.log(`best ${name}: ${r.perSecond.toFixed(0)} exchanges/s, drops ${r.drops} (all rounds: ${results.filter((x) => x.server === name).map((x) => x.perSecond.toFixed(0)).join(', ')})`);
  const mine = best.get('rackside');
  const kea = best.get('kea');
  if (mine !== undefined && kea !== undefined && kea.perSecond > 0) {
    const ratio = mine.perSecond / kea.perSecond;
    console.log(`rackside / kea: ${ratio.toFixed(2)}× (goal ≥ 1.0×: ${ratio >= 1 ? 'met' : 'NOT met'})`);
  }
}

await main();
