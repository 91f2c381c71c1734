/**
 * @module A private PostgreSQL 15 cluster for the controller tests and `npm run demo:fleet`:
 * `initdb` in a temporary directory as an unprivileged user (nobody, through setpriv, when run
 * as root: PostgreSQL refuses to run as root), `pg_ctl start` listening only on a Unix socket in
 * that directory (no TCP port at all), trust authentication for the one local role `rackside`.
 * `stop`/`start` simulate a database outage; `remove` stops it and deletes the directory. With
 * RACKSIDE_REQUIRE_INTEGRATION=1 a missing PostgreSQL fails the test instead of skipping it.
 *
 * A stop is a fast shutdown: the server ends every session with FATAL 57P01, which node-postgres
 * emits as `error` on the client (and a pool re-emits for an idle client), so a test's own
 * connection without an `error` listener dies as an uncaught exception that names no test. And
 * node:test runs `t.after` hooks in the order they were added, so the cluster (added first by
 * {@link pgClusterFor}) stops before the test's own clients end: take test connections from
 * {@link PgCluster.pool}, which listens for `error` and which `remove` ends before it stops.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { findTool, REQUIRE_INTEGRATION } from './netns.js';

/** Where Debian's postgresql-15 puts its server programs. */
export const PG_BIN_DIRS = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];
const NOBODY = 65534;

/** A running private cluster. */
export interface PgCluster {
  /** `postgres://rackside@/postgres?host=<socket dir>`. */
  url: string;
  dir: string;
  /** Fast shutdown (the database is unreachable until {@link start}). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it (if running) and deletes the directory; ends the pools of {@link pool} first. Idempotent. */
  remove(): Promise<void>;
  /**
   * A pool for the test's own queries: errors of idle clients (the server stopped or restarted by
   * the test) are ignored, the pool reconnects; ended by {@link remove} before the server stops,
   * unless the test ended it already.
   */
  pool(max?: number): pg.Pool;
}

/** The folder holding initdb and pg_ctl, or undefined. */
export function findPgBin(): string | undefined {
  for (const dir of PG_BIN_DIRS) {
    try {
      accessSync(join(dir, 'pg_ctl'), constants.X_OK);
      return dir;
    } catch {
      // not this version
    }
  }
  const initdb = findTool('initdb');
  return initdb === undefined ? undefined : join(initdb, '..');
}

function run(command: string, args: readonly string[], asNobody: boolean): Promise<string> {
  const [cmd, argv] = asNobody ? ['setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} exited ${String(code)}: ${out.slice(-2000)}`));
    });
  });
}

/** Creates and starts a cluster. @throws when PostgreSQL is not installed or does not start */
export async function createPgCluster(): Promise<PgCluster> {
  const bin = findPgBin();
  if (bin === undefined) throw new Error('PostgreSQL is not installed (apt-get install postgresql-15; scripts/install-test-deps.sh)');
  const asNobody = process.getuid?.() === 0;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-pg-'));
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  await mkdir(sock);
  if (asNobody) {
    await chown(dir, NOBODY, NOBODY);
    await chown(sock, NOBODY, NOBODY);
  }
  let running = false;
  const pools: pg.Pool[] = [];
  const ctl = (...args: string[]) => run(join(bin, 'pg_ctl'), ['-D', data, ...args], asNobody);
  const cluster: PgCluster = {
    url: `postgres://rackside@/postgres?host=${encodeURIComponent(sock)}`,
    dir,
    async start() {
      // No TCP listener; fsync off: the tests stop the server cleanly, never crash it.
      await ctl('-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-c listen_addresses='' -c unix_socket_directories='${sock}' -c fsync=off -c max_connections=200`, 'start');
      running = true;
    },
    async stop() {
      if (!running) return;
      await ctl('-m', 'fast', '-w', '-t', '60', 'stop');
      running = false;
    },
    pool(max = 2) {
      const pool = new pg.Pool({ connectionString: cluster.url, max });
      pool.on('error', () => undefined);
      pools.push(pool);
      return pool;
    },
    async remove() {
      try {
        await Promise.all(pools.splice(0).filter((p) => !p.ended).map((p) => p.end()));
        await cluster.stop();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    await run(join(bin, 'initdb'), ['-D', data, '-U', 'rackside', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], asNobody);
    await cluster.start();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return cluster;
}

/**
 * A cluster for test `t`, removed after it (also when it fails); undefined (and `t` skipped)
 * when PostgreSQL is missing, unless RACKSIDE_REQUIRE_INTEGRATION=1 (then it throws).
 */
export async function pgClusterFor(t: TestContext): Promise<PgCluster | undefined> {
  if (findPgBin() === undefined) {
    const reason = 'PostgreSQL 15 is not installed (scripts/install-test-deps.sh)';
    if (REQUIRE_INTEGRATION) throw new Error(`integration prerequisites missing under RACKSIDE_REQUIRE_INTEGRATION=1: ${reason}`);
    t.skip(reason);
    return undefined;
  }
  if (findTool('setpriv') === undefined && process.getuid?.() === 0) throw new Error('setpriv (util-linux) is needed to run PostgreSQL as nobody');
  const cluster = await createPgCluster();
  t.after(() => cluster.remove());
  return cluster;
}
