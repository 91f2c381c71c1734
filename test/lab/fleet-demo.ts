/**
 * @module `npm run demo:fleet`: a private PostgreSQL cluster in a temporary directory (initdb as
 * nobody, a Unix socket only, test/helpers/postgres.ts), a fleet controller on 127.0.0.1, and
 * three demo racks — `rackside agent` processes with the embedded demo provisioner, each with its
 * own rack token — syncing to it. It prints the fleet page's address and the operator token file
 * for `rackside fleet`. Without PostgreSQL it says what to install. Ctrl-C removes everything.
 *
 * Usage: node dist/test/lab/fleet-demo.js [--port N] [--exit-after-sync]
 *   --port N           controller port on 127.0.0.1 (default 9300)
 *   --exit-after-sync  exit 0 once every rack has pushed its hosts (CI), 1 if not within 2 min
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startController, type RunningController } from '../../controller/controller.js';
import { addRack } from '../../controller/racks.js';
import { createPgCluster, findPgBin, type PgCluster } from '../helpers/postgres.js';
import { freePort } from '../integration/controller/processes.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../agent/cli.js');
const args = process.argv.slice(2);
const portArg = args.indexOf('--port');
const port = portArg >= 0 ? Number(args[portArg + 1]) : 9300;
const exitAfterSync = args.includes('--exit-after-sync');
const RACKS = ['rack1', 'rack2', 'rack3'];

async function main(): Promise<number> {
  if (findPgBin() === undefined) {
    process.stderr.write('demo:fleet needs PostgreSQL 15 (its server programs, not a running service):\n  sudo apt-get install postgresql-15\n(or run scripts/install-test-deps.sh)\n');
    return 1;
  }
  const dir = await mkdtemp(join(tmpdir(), 'rackside-fleet-demo-'));
  const children: ChildProcess[] = [];
  let cluster: PgCluster | undefined;
  let controller: RunningController | undefined;
  const cleanup = async (): Promise<void> => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await controller?.stop();
    await cluster?.remove();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    process.stdout.write('starting a private PostgreSQL cluster…\n');
    cluster = await createPgCluster();
    const operatorTokenFile = join(dir, 'operator.token');
    await writeFile(operatorTokenFile, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
    controller = await startController({
      listen: { host: '127.0.0.1', port }, database: { url: cluster.url, poolSize: 10 }, operatorTokenFile, offlineAfterSeconds: 60,
      retention: { eventMaxAgeDays: 30, eventsPerRack: 100_000, batchLedgerDays: 30, commandDays: 90 },
      commands: { defaultExpirySeconds: 86_400, maxManifestBytes: 262_144 },
    }, { log: pino({ name: 'rackside-controller', level: 'warn' }) });
    for (const rack of RACKS) {
      const token = await addRack(controller.pool, rack);
      const agentPort = await freePort();
      const config = join(dir, `${rack}.yaml`);
      await writeFile(config, [
        'agent:', `  id: ${rack}-head`, `  stateDir: ${join(dir, rack)}`, `  rack: ${rack}`, `  statusUrl: http://127.0.0.1:${agentPort}/`,
        'provisioner: demo', 'management:', `  listen: 127.0.0.1:${agentPort}`,
        'controller:', `  url: ${controller.url}/api/v1/racks/push`, `  token: ${token}`, '  intervalSeconds: 15', 'log:', '  level: warn', '',
      ].join('\n'), { mode: 0o600 });
      const child = spawn(process.execPath, [CLI, 'agent', '--config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
      children.push(child);
      process.stdout.write(`${rack}: demo agent, status page http://127.0.0.1:${agentPort}/\n`);
    }
    process.stdout.write(`\nfleet page: ${controller.url}/\noperator token: ${operatorTokenFile}\n`);
    process.stdout.write(`try: rackside fleet get racks --server ${controller.url}\n     rackside fleet power off rack1/<host> --server ${controller.url} --token "$(cat ${operatorTokenFile})"\nCtrl-C stops it and removes everything.\n`);
    if (exitAfterSync) return await waitForSync(controller);
    await new Promise<void>((done) => {
      process.once('SIGINT', () => { done(); });
      process.once('SIGTERM', () => { done(); });
    });
    return 0;
  } finally {
    await cleanup();
  }
}

/** Waits (2 min at most) until every rack has pushed at least one host. */
async function waitForSync(controller: RunningController): Promise<number> {
  for (let i = 0; i < 240; i++) {
    const res = await controller.pool.query<{ n: string }>('SELECT count(DISTINCT rack_id)::text AS n FROM hosts');
    if (Number(res.rows[0]?.n ?? 0) === RACKS.length) {
      process.stdout.write('every rack has synced\n');
      return 0;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  process.stderr.write('not every rack synced within 2 minutes\n');
  return 1;
}

main().then((code) => { process.exitCode = code; }, (err: unknown) => {
  process.stderr.write(`demo:fleet: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
