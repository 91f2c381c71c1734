/**
 * @module Power-state sweep of many Redfish BMCs on loopback (not a test: no assertions).
 * Usage: node dist/test/bench/redfish-sweep.bench.js [ENDPOINTS=500] [CONCURRENCY=50] [SERVERS=4]
 * The endpoints are virtual Redfish systems over HTTPS (self-signed, verification off), spread
 * over SERVERS virtual BMC servers and told apart by their system path; the servers run in a
 * child process (test/lab/redfish/serve.ts), so client and servers use both cores as a real
 * agent and real BMCs would. One driver per endpoint
 * (own undici Agent, own session). Prints the cold sweep (TLS handshake, service root, session
 * login, System GET), the warm sweep (one GET per endpoint over kept-alive connections), and the
 * same with basic auth. Goal: 500 endpoints in < 5 s on the 2-core build machine.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DriverRegistry, type BmcDriver } from '../../drivers/index.js';
import { createRedfishDriverFactory } from '../../drivers/redfish/redfish-driver.js';
import { sweepPowerStates } from '../../drivers/power-helpers.js';
import type { RedfishAuthMode } from '../../drivers/redfish/client.js';

async function sweep(label: string, drivers: readonly BmcDriver[], concurrency: number): Promise<void> {
  const start = performance.now();
  const results = await sweepPowerStates(drivers.map((d) => ({ key: d.address.raw, power: d.power })), concurrency);
  const seconds = (performance.now() - start) / 1000;
  const failed = results.filter((r) => !r.ok);
  const perSecond = (drivers.length / seconds).toFixed(0);
  console.log(`${label}: ${drivers.length} endpoints in ${seconds.toFixed(2)} s (${perSecond}/s, concurrency ${concurrency})${failed.length > 0 ? `, ${failed.length} FAILED` : ''}`);
  const [firstFailure] = failed;
  if (firstFailure !== undefined) console.log(`  first failure: ${String(firstFailure.error)}`);
}

async function run(auth: RedfishAuthMode, hosts: readonly string[], perServer: number, endpoints: number, concurrency: number): Promise<void> {
  const registry = new DriverRegistry();
  registry.register('redfish', createRedfishDriverFactory({ auth }));
  const drivers: BmcDriver[] = [];
  for (let i = 0; i < endpoints; i++) {
    const host = hosts[Math.floor(i / perServer)];
    if (host === undefined) throw new Error('not enough servers');
    const system = (i % perServer) + 1;
    drivers.push(registry.create(`redfish://${host}/redfish/v1/Systems/${system}`, { username: 'admin', password: 'password' },
      { disableCertificateVerification: true, timeoutMs: 10_000 }));
  }
  await sweep(`${auth} auth, cold (handshake + root + ${auth === 'basic' ? '' : 'login + '}GET)`, drivers, concurrency);
  await sweep(`${auth} auth, warm (one GET each)`, drivers, concurrency);
  await sweep(`${auth} auth, warm again`, drivers, concurrency);
  const closing = performance.now();
  await Promise.all(drivers.map((d) => d.close()));
  console.log(`  closed ${drivers.length} drivers${auth === 'basic' ? '' : ' (session logout)'} in ${((performance.now() - closing) / 1000).toFixed(2)} s`);
}

async function main(): Promise<void> {
  const endpoints = Number(process.argv[2] ?? 500);
  const concurrency = Number(process.argv[3] ?? 50);
  const servers = Number(process.argv[4] ?? 4);
  const perServer = Math.ceil(endpoints / servers);
  const serve = join(dirname(fileURLToPath(import.meta.url)), '../lab/redfish/serve.js');
  const child = spawn(process.execPath, [serve, '--servers', String(servers), '--systems', String(perServer)], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const [line] = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value as string | undefined]);
    const { hosts } = JSON.parse(line ?? '{}') as { hosts: string[] };
    console.log(`${endpoints} virtual Redfish endpoints on ${servers} HTTPS servers (${perServer} systems each) in child process ${child.pid ?? '?'}`);
    await run('session', hosts, perServer, endpoints, concurrency);
    await run('basic', hosts, perServer, endpoints, concurrency);
  } finally {
    child.kill('SIGTERM');
  }
}

await main();
