/**
 * @module `rackside controller …` and `rackside fleet …` (docs/controller.md). `controller`
 * runs the fleet controller (`serve`, the default) or manages rack credentials (`racks add|
 * rotate|revoke|list NAME`) through {@link CliIo.runController}, which loads controller/ lazily.
 * `fleet` is a client of a controller's API (`--server`, else RACKSIDE_CONTROLLER, else
 * http://127.0.0.1:9300; `--token`/RACKSIDE_TOKEN is the operator token): it queues commands for
 * racks (`apply -f FILE --rack NAME`, `power on|off RACK/HOST`, `reboot|inspect|detach|delete
 * RACK/HOST`, each with `--expires DURATION`) and lists `racks`, `hosts` and `commands`.
 */
import { stringify } from 'yaml';
import { parseDuration } from './args.js';
import { ApiClient } from './client.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';
import { renderTable } from './table.js';

/** The controller's address when neither --server nor RACKSIDE_CONTROLLER is given. */
export const DEFAULT_CONTROLLER = 'http://127.0.0.1:9300';

/** `rackside controller [serve | racks add|rotate NAME [--auth token|cert] | racks revoke NAME | racks list] --config FILE`. */
export async function controllerCommand(ctx: CommandContext): Promise<number> {
  const config = ctx.args.options.config;
  const action = ctx.args.positionals.slice(1);
  if (config === undefined) throw new CliError(ExitCode.usage, 'usage: rackside controller [serve | racks add|rotate NAME [--auth token|cert] | racks revoke NAME | racks list] --config FILE');
  if (ctx.io.runController === undefined) throw new CliError(ExitCode.failure, 'the controller is not available in this client');
  const auth = ctx.args.options.auth;
  if (auth !== undefined && auth !== 'token' && auth !== 'cert') throw new CliError(ExitCode.usage, `--auth must be token or cert, got "${auth}"`);
  if (auth !== undefined && !(action[0] === 'racks' && (action[1] === 'add' || action[1] === 'rotate'))) {
    throw new CliError(ExitCode.usage, '--auth applies to "rackside controller racks add|rotate NAME" only');
  }
  return ctx.io.runController({ configPath: config, action: action.length === 0 ? ['serve'] : action, ...(auth === undefined ? {} : { auth }), stdout: ctx.io.stdout, stderr: ctx.io.stderr });
}

function fleetClient(ctx: CommandContext): ApiClient {
  const server = ctx.args.options.server ?? ctx.io.env.RACKSIDE_CONTROLLER ?? DEFAULT_CONTROLLER;
  if (!URL.canParse(server) || !/^https?:$/.test(new URL(server).protocol)) throw new CliError(ExitCode.usage, `--server must be an http:// or https:// URL, got "${server}"`);
  return new ApiClient(server, ctx.args.options.token ?? ctx.io.env.RACKSIDE_TOKEN, ctx.io);
}

function expiresSeconds(ctx: CommandContext): number | undefined {
  const text = ctx.args.options.expires;
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000) throw new CliError(ExitCode.usage, `--expires must be a duration of at least 1s (30s, 15m, 2h), got "${text}"`);
  return Math.round(ms / 1000);
}

interface CommandView { id: string; rack: string; kind: string; host: string | null; state: string; createdAt: string; expiresAt: string; error: string | null; message: string | null }

function printCommand(ctx: CommandContext, c: CommandView): void {
  ctx.io.stdout(`command ${c.id} ${c.state}: ${c.kind}${c.host === null ? '' : ` ${c.host}`} on rack ${c.rack} (expires ${c.expiresAt})\n`);
}

async function queue(ctx: CommandContext, body: Record<string, unknown>): Promise<number> {
  const expires = expiresSeconds(ctx);
  const command = (await fleetClient(ctx).request('POST', '/api/v1/commands', { json: { ...body, ...(expires === undefined ? {} : { expiresInSeconds: expires }) } })) as CommandView;
  printCommand(ctx, command);
  return ExitCode.ok;
}

/** RACK/HOST or RACK/NAMESPACE/HOST → rack and host. */
function rackHost(text: string | undefined, usage: string): { rack: string; host: string } {
  const parts = (text ?? '').split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) throw new CliError(ExitCode.usage, `expected RACK/HOST or RACK/NAMESPACE/HOST: usage: rackside ${usage}`);
  return { rack: parts[0] ?? '', host: parts.slice(1).join('/') };
}

async function fleetApply(ctx: CommandContext): Promise<number> {
  const file = ctx.args.options.filename;
  const rack = ctx.args.options.rack;
  if (file === undefined || rack === undefined || ctx.args.positionals.length > 2) throw new CliError(ExitCode.usage, 'usage: rackside fleet apply -f FILE|- --rack NAME [--expires DURATION]');
  let manifest: string;
  try {
    manifest = file === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(file);
  } catch (err) {
    throw new CliError(ExitCode.usage, `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return queue(ctx, { rack, kind: 'apply', manifest });
}

async function fleetGet(ctx: CommandContext): Promise<number> {
  const what = ctx.args.positionals[2];
  const client = fleetClient(ctx);
  const params = new URLSearchParams();
  if (ctx.args.options.rack !== undefined) params.set('rack', ctx.args.options.rack);
  const q = ctx.args.positionals[3];
  if (what === 'hosts' && q !== undefined) params.set('q', q);
  const path = what === 'racks' ? '/api/v1/racks' : what === 'hosts' ? '/api/v1/hosts' : what === 'commands' ? '/api/v1/commands' : undefined;
  if (path === undefined || ctx.args.positionals.length > (what === 'hosts' ? 4 : 3)) throw new CliError(ExitCode.usage, 'usage: rackside fleet get racks|hosts [TEXT]|commands [--rack NAME] [-o json|yaml]');
  const query = params.toString();
  const { items } = (await client.request('GET', `${path}${query === '' ? '' : `?${query}`}`)) as { items: Record<string, unknown>[] };
  const output = ctx.args.options.output;
  if (output === 'json') ctx.io.stdout(`${JSON.stringify(items, null, 2)}\n`);
  else if (output === 'yaml') ctx.io.stdout(stringify(items));
  else if (output !== undefined) throw new CliError(ExitCode.usage, `-o must be json or yaml, got "${output}"`);
  else ctx.io.stdout(fleetTable(what ?? '', items));
  return ExitCode.ok;
}

const s = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

function fleetTable(what: string, items: Record<string, unknown>[]): string {
  if (what === 'racks') {
    return renderTable(['RACK', 'STATUS', 'HOSTS', 'ERRORS', 'PENDING', 'LAST PUSH', 'VERSION'], items.map((r) => [
      s(r.name), r.revoked === true ? 'revoked' : r.offline === true ? 'offline' : 'online', s(r.hosts), s(r.errors), s(r.pendingCommands), s(r.lastPushAt), s(r.agentVersion),
    ]));
  }
  if (what === 'hosts') {
    return renderTable(['RACK', 'HOST', 'STATE', 'MAC', 'ERROR'], items.map((h) => [s(h.rack), `${s(h.namespace)}/${s(h.name)}`, s(h.state), s(h.bootMACAddress), s(h.errorMessage)]));
  }
  return renderTable(['ID', 'RACK', 'COMMAND', 'HOST', 'STATE', 'RACK SAYS'], items.map((c) => [s(c.id), s(c.rack), s(c.kind), s(c.host), s(c.state), s(c.error ?? c.message)]));
}

const HOST_ACTIONS: Record<string, string> = { reboot: 'reboot', inspect: 'inspect', detach: 'detach', delete: 'delete' };

/** `rackside fleet apply|power|reboot|inspect|detach|delete|get …`. */
export async function fleetCommand(ctx: CommandContext): Promise<number> {
  const [, verb, a, b] = ctx.args.positionals;
  if (verb === 'apply') return fleetApply(ctx);
  if (verb === 'get') return fleetGet(ctx);
  if (verb === 'power') {
    if ((a !== 'on' && a !== 'off') || ctx.args.positionals.length !== 4) throw new CliError(ExitCode.usage, 'usage: rackside fleet power on|off RACK/HOST [--expires DURATION]');
    const { rack, host } = rackHost(b, 'fleet power on|off RACK/HOST');
    return queue(ctx, { rack, kind: `power-${a}`, host });
  }
  const kind = verb === undefined ? undefined : HOST_ACTIONS[verb];
  if (kind !== undefined) {
    if (ctx.args.positionals.length !== 3) throw new CliError(ExitCode.usage, `usage: rackside fleet ${kind} RACK/HOST [--expires DURATION]`);
    const { rack, host } = rackHost(a, `fleet ${kind} RACK/HOST`);
    return queue(ctx, { rack, kind, host });
  }
  throw new CliError(ExitCode.usage, 'usage: rackside fleet apply|power|reboot|inspect|detach|delete|get … (see rackside --help)');
}
