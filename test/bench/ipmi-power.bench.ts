/**
 * @module Native IPMI power query vs spawning `ipmitool -I lanplus` (not a test: no assertions).
 * Starts N ipmi_sim BMCs on loopback (default 50), then sweeps "chassis power status" over all of
 * them with bounded concurrency: (1) the native driver with one reused session per BMC, (2) one
 * `ipmitool -I lanplus -C 3 chassis power status` process per query (a full RMCP+ session each),
 * and prints per-query cost and the ratio side by side. Also prints the native cold cost
 * (session setup included) and a sequential single-BMC latency.
 * Usage: node dist/test/bench/ipmi-power.bench.js [BMCS=50] [ROUNDS=5] [CONCURRENCY=8]
 */
import { performance } from 'node:perf_hooks';
import { parseBmcAddress } from '../../drivers/bmc-address.js';
import { createIpmiDriver, type IpmiDriverImplementation } from '../../drivers/ipmi/ipmi-driver.js';
import { startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool, missingIpmiTools } from '../lab/ipmi/ipmitool.js';

async function boundedAll<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  });
  await Promise.all(runners);
}

async function timed(label: string, queries: number, body: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await body();
  const ms = performance.now() - start;
  const perQuery = ms / queries;
  console.log(`${label.padEnd(58)} ${queries.toString().padStart(5)} queries in ${(ms / 1000).toFixed(2).padStart(6)} s = ${perQuery.toFixed(2).padStart(7)} ms/query, ${(1000 / perQuery).toFixed(0).padStart(5)} queries/s`);
  return perQuery;
}

async function main(): Promise<void> {
  const missing = missingIpmiTools();
  if (missing.length > 0) {
    console.log(`skipped: missing ${missing.join(', ')}`);
    return;
  }
  const count = Number(process.argv[2] ?? 50);
  const rounds = Number(process.argv[3] ?? 5);
  const concurrency = Number(process.argv[4] ?? 8);
  const sims: IpmiSim[] = [];
  const drivers: IpmiDriverImplementation[] = [];
  try {
    const startAt = performance.now();
    await boundedAll(Array.from({ length: count }, (_, i) => i), 8, async () => { sims.push(await startIpmiSim({ initialPower: 1 })); });
    console.log(`started ${sims.length} ipmi_sim BMCs in ${((performance.now() - startAt) / 1000).toFixed(1)} s; concurrency ${concurrency}, ${rounds} rounds`);
    for (const sim of sims) {
      drivers.push(createIpmiDriver(parseBmcAddress(`ipmi://${sim.host}:${sim.port}`), { username: sim.username, password: sim.password }, { keepaliveMs: 0 }));
    }

    const cold = await timed('native, first query per BMC (session setup included)', drivers.length, () =>
      boundedAll(drivers, concurrency, (d) => d.power.getPowerState()));
    const all = Array.from({ length: rounds }, () => drivers).flat();
    const warm = await timed('native, reused session', all.length, () =>
      boundedAll(all, concurrency, (d) => d.power.getPowerState()));
    const ipmitoolRuns = Array.from({ length: Math.max(1, Math.ceil(rounds / 2)) }, () => sims).flat();
    const spawned = await timed('ipmitool -I lanplus -C 3 chassis power status (spawned)', ipmitoolRuns.length, () =>
      boundedAll(ipmitoolRuns, concurrency, (s) => ipmitool(s, ['chassis', 'power', 'status'])));

    const one = drivers[0];
    const oneSim = sims[0];
    if (one !== undefined && oneSim !== undefined) {
      const n = 200;
      const seqNative = await timed('native, sequential on one BMC', n, async () => { for (let i = 0; i < n; i++) await one.power.getPowerState(); });
      const m = 20;
      const seqTool = await timed('ipmitool, sequential on one BMC', m, async () => { for (let i = 0; i < m; i++) await ipmitool(oneSim, ['chassis', 'power', 'status']); });
      console.log(`ratio (sequential latency): ipmitool / native = ${(seqTool / seqNative).toFixed(1)}x`);
    }
    console.log(`ratio (sweep, reused session): ipmitool / native = ${(spawned / warm).toFixed(1)}x  (goal ≥ 5x)`);
    console.log(`ratio (sweep, native cold):    ipmitool / native = ${(spawned / cold).toFixed(1)}x`);
    const stats = drivers.map((d) => d.stats());
    console.log(`native sessions opened: ${stats.reduce((a, s) => a + s.sessionsOpened, 0)}, retransmits: ${stats.reduce((a, s) => a + s.retransmits, 0)}, `
      + `cipher suites: ${[...new Set(stats.map((s) => s.cipherSuite))].join(',')}`);
  } finally {
    await Promise.all(drivers.map((d) => d.close()));
    await Promise.all(sims.map((s) => s.stop()));
  }
}

await main();
