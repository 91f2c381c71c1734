/**
 * @module One fleet controller process, composed: the PostgreSQL pool, the migrations (applied
 * before the listener opens), the HTTP(S) listener with every route, and the retention timer.
 * It keeps no state of its own outside PostgreSQL, so any number of them can serve one database.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { createRequestHandler } from './api.js';
import type { ControllerConfig } from './config.js';
import { defaultMigrationsDir, migrate, readMigrations } from './db/migrate.js';
import { openPool } from './db/pool.js';
import type { ControllerLog } from './log.js';
import { createControllerMetrics } from './metrics.js';
import { runRetention } from './retention.js';

/** Options of {@link startController}. */
export interface StartOptions {
  log: ControllerLog;
  now?: () => Date;
  /** Retention round period (default 5 min). */
  retentionIntervalMs?: number;
}

/** A running controller. */
export interface RunningController {
  /** Base URL of the listener (`http://127.0.0.1:9300`). */
  url: string;
  pool: pg.Pool;
  /** Closes the listener (in-flight requests finish), stops the timer and the pool. Idempotent. */
  stop(): Promise<void>;
}

async function readSecretFile(path: string, what: string): Promise<string> {
  const text = (await readFile(path, 'utf8')).trim();
  if (text === '') throw new Error(`${what} ${path} is empty`);
  return text;
}

/**
 * The HTTPS listener's options. With `clientCA` every client is asked for a certificate, but the
 * handshake completes without one or with one that does not verify (`rejectUnauthorized: false`):
 * token racks, operators and readers need none, and the push route accepts a certificate only
 * when the TLS layer verified it (`socket.authorized`, push-route.ts).
 */
async function httpsOptions(tls: NonNullable<ControllerConfig['tls']>): Promise<HttpsServerOptions> {
  const base = { cert: await readFile(tls.cert), key: await readFile(tls.key) };
  if (tls.clientCA === undefined) return base;
  return { ...base, ca: await readFile(tls.clientCA), requestCert: true, rejectUnauthorized: false };
}

/** Starts a controller from `config`. @throws when the database cannot be reached or migrated, or the listener cannot bind */
export async function startController(config: ControllerConfig, options: StartOptions): Promise<RunningController> {
  const { log } = options;
  const operatorToken = config.operatorTokenFile === undefined ? undefined : await readSecretFile(config.operatorTokenFile, 'operatorTokenFile');
  if (operatorToken === undefined) log.warn({}, 'operatorTokenFile is not set: commands cannot be queued (the fleet view is read-only)');
  const pool = await openPool(config.database, (err) => { log.warn({ err: err.message }, 'database connection lost (the pool reconnects)'); });
  let server: Server | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const report = await migrate(pool, await readMigrations(defaultMigrationsDir()));
    log.info({ applied: report.applied, version: report.version }, 'database schema ready');
    const metrics = createControllerMetrics(pool, config.offlineAfterSeconds);
    const handler = createRequestHandler({ pool, config, metrics, log, operatorToken, now: options.now ?? (() => new Date()) });
    server = config.tls === undefined ? createHttpServer(handler) : createHttpsServer(await httpsOptions(config.tls), handler);
    server.requestTimeout = 60_000;
    server.headersTimeout = 30_000;
    server.on('clientError', (_err, socket) => { socket.destroy(); });
    const listening = server;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(config.listen.port, config.listen.host, () => { listening.off('error', reject); resolve(); });
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `${config.tls === undefined ? 'http' : 'https'}://${host}:${address.port}`;
    const retention = async (): Promise<void> => {
      try {
        const r = await runRetention(pool, config.retention);
        if (r.ran && r.eventsByAge + r.eventsByCount + r.batches + r.commandsExpired + r.commandsDeleted > 0) log.info({ ...r }, 'retention round');
      } catch (err) {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'retention round failed (retried next period)');
      }
    };
    timer = setInterval(() => { void retention(); }, options.retentionIntervalMs ?? 300_000);
    timer.unref();
    log.info({ url }, 'controller listening');
    let stopping: Promise<void> | undefined;
    const stop = async (): Promise<void> => {
      clearInterval(timer);
      await new Promise<void>((resolve) => {
        listening.close(() => { resolve(); });
        listening.closeIdleConnections();
      });
      await pool.end();
    };
    return { url, pool, stop: () => (stopping ??= stop()) };
  } catch (err) {
    clearInterval(timer);
    server?.close();
    await pool.end();
    throw err;
  }
}
