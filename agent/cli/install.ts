/**
 * @module `rackside install`, `rackside uninstall` and `rackside migrate`. Install and uninstall
 * run scripts/install.sh from this package (the repository checkout, or /usr/lib/rackside once
 * installed), streaming its output; `--destdir` stages into a directory (DESTDIR). Migrate opens
 * the state store — which runs the schema migrations — prints the schema version and closes it;
 * the install script runs it on upgrade.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG_PATH, parseConfigYaml } from '../config.js';
import { openStore, StoreError, StoreErrorCode } from '../store/index.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

/** The package root of this build (`dist/agent/cli/install.js` → three levels up). */
export function packageRoot(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

/** The install script inside the package root. */
export function installScriptPath(root = packageRoot()): string {
  return `${root.replace(/\/+$/, '')}/scripts/install.sh`;
}

/** Runs `sh install.sh ARGS`, streaming its stdout/stderr to the CLI's; resolves to its exit code. */
function runInstallScript(ctx: CommandContext, args: readonly string[]): Promise<number> {
  const destdir = ctx.args.options.destdir;
  const env = { ...ctx.io.env, ...(destdir === undefined ? {} : { DESTDIR: destdir }) };
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [installScriptPath(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      ctx.io.stdout(text);
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      ctx.io.stderr(text);
    });
    child.once('error', (err) => {
      reject(new CliError(ExitCode.failure, `cannot run ${installScriptPath()}: ${err.message}`, '', { cause: err }));
    });
    child.once('close', (code) => {
      resolve(code === 0 ? ExitCode.ok : ExitCode.failure);
    });
  });
}

/** `rackside install [--destdir DIR]`: installs or upgrades this build (scripts/install.sh). */
export function installCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.positionals.length > 1) throw new CliError(ExitCode.usage, 'usage: rackside install [--destdir DIR]');
  return runInstallScript(ctx, []);
}

/** `rackside uninstall [--purge] [--destdir DIR]`: removes rackside; state and config stay unless --purge. */
export function uninstallCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.positionals.length > 1) throw new CliError(ExitCode.usage, 'usage: rackside uninstall [--purge] [--destdir DIR]');
  return runInstallScript(ctx, ['--uninstall', ...(ctx.args.options.purge === true ? ['--purge'] : [])]);
}

/** The state dir for migrate: `--state-dir`, else the config's `agent.stateDir`. */
async function stateDirFor(ctx: CommandContext): Promise<string> {
  const given = ctx.args.options['state-dir'];
  if (given !== undefined) {
    if (!given.startsWith('/')) throw new CliError(ExitCode.usage, `--state-dir must be an absolute path, got "${given}"`);
    return given;
  }
  const path = ctx.args.options.config ?? DEFAULT_CONFIG_PATH;
  let text: string;
  try {
    text = await ctx.io.readFile(path);
  } catch (err) {
    throw new CliError(ExitCode.usage, `cannot read ${path}: ${err instanceof Error ? err.message : String(err)} (or pass --state-dir)`);
  }
  try {
    return parseConfigYaml(text, path, { agentId: hostname() }).agent.stateDir;
  } catch (err) {
    throw new CliError(ExitCode.usage, err instanceof Error ? err.message : String(err));
  }
}

/** `rackside migrate [--state-dir DIR | --config FILE]`: brings the store to this build's schema. */
export async function migrateCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.positionals.length > 1) throw new CliError(ExitCode.usage, 'usage: rackside migrate [--state-dir DIR | --config FILE]');
  const stateDir = await stateDirFor(ctx);
  let store;
  try {
    store = await openStore({ stateDir });
  } catch (err) {
    if (err instanceof StoreError && err.code === StoreErrorCode.locked) {
      throw new CliError(ExitCode.failure, `${stateDir} is in use by a running agent; stop it first (systemctl stop rackside)`, '', { cause: err });
    }
    throw new CliError(ExitCode.failure, `cannot open the store in ${stateDir}: ${err instanceof Error ? err.message : String(err)}`, '', { cause: err });
  }
  try {
    ctx.io.stdout(`store ${stateDir}: schema version ${await store.schemaVersion()}\n`);
  } finally {
    await store.close();
  }
  return ExitCode.ok;
}
