/**
 * @module The entry of `rackside controller` (loaded lazily by agent/cli.ts, like the agent's
 * main): `serve` runs a controller until SIGTERM/SIGINT; `racks add|rotate|revoke|list` manage
 * rack credentials straight in the database (the token is printed once, never stored; `--auth
 * cert` makes a rack that authenticates by client certificate instead). This file
 * owns the process while a controller runs (signal handlers), like agent/main.ts for the agent.
 */
import { readFile } from 'node:fs/promises';
import pino from 'pino';
import { decodeControllerConfig, type ControllerConfig } from './config.js';
import { startController } from './controller.js';
import { defaultMigrationsDir, migrate, readMigrations } from './db/migrate.js';
import { openPool } from './db/pool.js';
import type { ControllerLog } from './log.js';
import { addCertRack, addRack, listRackCredentials, RackError, revokeRack, rotateRack, rotateRackToCert } from './racks.js';

/** What agent/cli hands over (structurally the CLI's RunControllerOptions). */
export interface RunControllerOptions {
  configPath: string;
  /** `['serve']`, `['racks', 'add', NAME]`, `['racks', 'rotate', NAME]`, `['racks', 'revoke', NAME]` or `['racks', 'list']`. */
  action: readonly string[];
  /** `racks add|rotate --auth cert|token`: the rack's credential kind (default token). */
  auth?: 'token' | 'cert';
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

async function loadConfig(path: string): Promise<ControllerConfig> {
  return decodeControllerConfig(await readFile(path, 'utf8'));
}

/** Runs `racks …` against the database (migrated first, so a fresh database works). Resolves the exit code. */
async function racksCommand(config: ControllerConfig, action: readonly string[], o: RunControllerOptions, log: ControllerLog): Promise<number> {
  const pool = await openPool(config.database, (err) => { log.warn({ err: err.message }, 'database connection lost'); });
  try {
    await migrate(pool, await readMigrations(defaultMigrationsDir()));
    const [verb, name] = [action[1], action[2]];
    if (verb === 'list') {
      for (const r of await listRackCredentials(pool)) o.stdout(`${r.name}\t${r.revoked ? 'revoked' : 'active'}\t${r.createdAt}\t${r.auth}\n`);
      return 0;
    }
    if (name === undefined || action.length !== 3) {
      o.stderr('error: usage: rackside controller racks add|rotate|revoke NAME [--auth token|cert] --config FILE\n');
      return 2;
    }
    if (o.auth !== undefined && verb !== 'add' && verb !== 'rotate') {
      o.stderr(`error: --auth applies to "racks add" and "racks rotate", not "racks ${verb ?? ''}"\n`);
      return 2;
    }
    if ((verb === 'add' || verb === 'rotate') && o.auth === 'cert') {
      await (verb === 'add' ? addCertRack(pool, name) : rotateRackToCert(pool, name));
      o.stderr(`rack ${name}: authenticates by a client certificate whose subject CN is "${name}", issued by the controller's tls.clientCA (it has no token)\n`);
      return 0;
    }
    if (verb === 'add' || verb === 'rotate') {
      const token = verb === 'add' ? await addRack(pool, name) : await rotateRack(pool, name);
      o.stdout(`${token}\n`);
      o.stderr(`rack ${name}: this token is shown once; put it in the rack's controller.token (it is stored only as a hash)\n`);
      return 0;
    }
    if (verb === 'revoke') {
      await revokeRack(pool, name);
      o.stderr(`rack ${name}: credential revoked; its pushes (token or certificate) are refused (401) from now on\n`);
      return 0;
    }
    o.stderr(`error: unknown racks command ${JSON.stringify(verb ?? '')} (add, rotate, revoke, list)\n`);
    return 2;
  } catch (err) {
    if (err instanceof RackError) {
      o.stderr(`error: ${err.message}\n`);
      return err.status === 404 ? 3 : err.status === 409 ? 4 : 5;
    }
    throw err;
  } finally {
    await pool.end();
  }
}

/** Serves until SIGTERM or SIGINT; resolves the exit code. */
async function serve(config: ControllerConfig, log: ControllerLog): Promise<number> {
  const controller = await startController(config, { log });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => { resolve(); });
    process.once('SIGINT', () => { resolve(); });
  });
  log.info({}, 'stopping');
  await controller.stop();
  return 0;
}

/** Runs `rackside controller …`; resolves the exit code (0 ok, 1 failure, 2 usage or config). */
export async function runController(o: RunControllerOptions): Promise<number> {
  let config: ControllerConfig;
  try {
    config = await loadConfig(o.configPath);
  } catch (err) {
    o.stderr(`error: ${o.configPath}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const log: ControllerLog = pino({ name: 'rackside-controller' }, pino.destination(o.action[0] === 'serve' ? 1 : 2));
  try {
    if (o.action[0] === 'racks') return await racksCommand(config, o.action, o, log);
    if (o.action[0] === 'serve' && o.action.length === 1) return await serve(config, log);
    o.stderr(`error: unknown controller command ${JSON.stringify(o.action.join(' '))} (serve, racks)\n`);
    return 2;
  } catch (err) {
    o.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
