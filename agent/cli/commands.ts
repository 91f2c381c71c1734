/**
 * @module The `rackside` commands that change things or ask the agent who it is: agent,
 * apply, delete, power, reboot, inspect, detach, attach, version. Each takes a
 * {@link CommandContext} and resolves to an exit code; failures throw CliError.
 */
import type { ApplyOutcome, AgentInfo } from '../web/backend.js';
import { parseDuration } from './args.js';
import type { ParsedArgs } from './args.js';
import type { ApiClient } from './client.js';
import { CliError, ExitCode, type CliIo } from './io.js';
import { HOST_RESOURCE } from './render.js';
import { resourceOfKind } from './render-firmware.js';
import { deleteSubscription, SUBSCRIPTION_ALIASES } from './bmc-event-subscriptions.js';

/** What every command gets. */
export interface CommandContext {
  io: CliIo;
  args: ParsedArgs;
  /** The API client (created on first use so `agent` and `help` never need a server). */
  client(): ApiClient;
}

/** How often `delete --wait` polls, in milliseconds. */
export const DELETE_POLL_MS = 1000;
const DEFAULT_DELETE_TIMEOUT = '5m';

/** The NAME positional at `index`, or a usage error naming the command. */
export function nameArg(ctx: CommandContext, index: number, usage: string): string {
  const name = ctx.args.positionals[index];
  if (name === undefined || name === '') throw new CliError(ExitCode.usage, `missing NAME: usage: rackside ${usage}`);
  if (ctx.args.positionals.length > index + 1) {
    throw new CliError(ExitCode.usage, `unexpected argument "${ctx.args.positionals[index + 1] ?? ''}": usage: rackside ${usage}`);
  }
  return name;
}

/** Path segment for a host. */
export function hostPath(name: string): string {
  return `/api/v1/hosts/${encodeURIComponent(name)}`;
}

function isConfigError(err: unknown): err is Error {
  return err instanceof Error && (err.name === 'ConfigError' || (err as { code?: unknown }).code === 'RACKSIDE_ERR_CONFIG');
}

/** `rackside agent [--config FILE] [--demo]`: runs the daemon; an invalid config exits 2. */
export async function agentCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.positionals.length > 1) throw new CliError(ExitCode.usage, 'usage: rackside agent [--config FILE] [--demo]');
  try {
    return await ctx.io.runAgent({ configPath: ctx.args.options.config, demo: ctx.args.options.demo === true });
  } catch (err) {
    if (isConfigError(err)) throw new CliError(ExitCode.usage, err.message, '', { cause: err });
    throw err;
  }
}

function outcomeLine(o: ApplyOutcome): string {
  return `${resourceOfKind(o.kind)}/${o.name} ${o.action}\n`;
}

/** `rackside apply -f FILE|-`: sends the file as application/yaml; prints one line per object. */
export async function applyCommand(ctx: CommandContext): Promise<number> {
  const file = ctx.args.options.filename;
  if (file === undefined || ctx.args.positionals.length > 1) throw new CliError(ExitCode.usage, 'usage: rackside apply -f FILE|-');
  let text: string;
  try {
    text = file === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(file);
  } catch (err) {
    throw new CliError(ExitCode.usage, `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const result = (await ctx.client().request('POST', '/api/v1/apply', { body: { text, contentType: 'application/yaml' } })) as { items?: ApplyOutcome[] };
  for (const outcome of result.items ?? []) ctx.io.stdout(outcomeLine(outcome));
  return ExitCode.ok;
}

/** `rackside delete host NAME [--wait] [--timeout 5m]` and `delete secret NAME [-n NS]`. */
export async function deleteCommand(ctx: CommandContext): Promise<number> {
  const kind = ctx.args.positionals[1];
  const { wait = 'true', timeout = DEFAULT_DELETE_TIMEOUT, namespace } = ctx.args.options;
  if (kind === 'secret' || kind === 'secrets') {
    const name = nameArg(ctx, 2, 'delete secret NAME [--namespace NS]');
    const ns = namespace ?? 'default';
    await ctx.client().request('DELETE', `/api/v1/secrets/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`);
    ctx.io.stdout(`secret "${name}" deleted\n`);
    return ExitCode.ok;
  }
  if (kind !== undefined && SUBSCRIPTION_ALIASES.includes(kind)) return deleteSubscription(ctx);
  if (kind !== 'host' && kind !== 'hosts' && kind !== 'bmh' && kind !== 'baremetalhost') {
    throw new CliError(ExitCode.usage, 'usage: rackside delete host NAME [--wait=true|false] [--timeout 5m] | delete secret NAME');
  }
  if (namespace !== undefined) throw new CliError(ExitCode.usage, 'option --namespace applies to "delete secret" only');
  const name = nameArg(ctx, 2, 'delete host NAME [--wait=true|false] [--timeout 5m]');
  if (wait !== 'true' && wait !== 'false') throw new CliError(ExitCode.usage, `--wait must be true or false, got "${wait}"`);
  const timeoutMs = parseDuration(timeout);
  if (timeoutMs === undefined) throw new CliError(ExitCode.usage, `--timeout must be a duration like 30s, 5m, 1h, got "${timeout}"`);
  const client = ctx.client();
  await client.request('DELETE', hostPath(name));
  if (wait === 'false') {
    ctx.io.stdout(`${HOST_RESOURCE} "${name}" deletion requested\n`);
    return ExitCode.ok;
  }
  const deadline = ctx.io.now() + timeoutMs;
  for (;;) {
    let state = '';
    try {
      const host = (await client.request('GET', hostPath(name))) as { status?: { provisioning?: { state?: string } } };
      state = host.status?.provisioning?.state ?? '';
    } catch (err) {
      if (err instanceof CliError && err.exitCode === ExitCode.notFound) break;
      throw err;
    }
    if (ctx.io.now() >= deadline) {
      throw new CliError(ExitCode.timeout, `timed out after ${timeout} waiting for ${HOST_RESOURCE} "${name}" to be deleted (state: ${state === '' ? 'unknown' : state}); deletion continues in the agent`);
    }
    await ctx.io.sleep(DELETE_POLL_MS);
  }
  ctx.io.stdout(`${HOST_RESOURCE} "${name}" deleted\n`);
  return ExitCode.ok;
}

/** Posts one host action and prints what was requested. */
async function postAction(ctx: CommandContext, name: string, action: string, body: Record<string, unknown> | undefined, said: string): Promise<number> {
  await ctx.client().request('POST', `${hostPath(name)}/actions/${action}`, body === undefined ? {} : { json: body });
  ctx.io.stdout(`${HOST_RESOURCE}/${name} ${said}\n`);
  return ExitCode.ok;
}

/** `rackside power on|off NAME`. */
export function powerCommand(ctx: CommandContext): Promise<number> {
  const state = ctx.args.positionals[1];
  if (state !== 'on' && state !== 'off') throw new CliError(ExitCode.usage, 'usage: rackside power on|off NAME');
  const name = nameArg(ctx, 2, `power ${state} NAME`);
  return postAction(ctx, name, `power-${state}`, undefined, `power ${state} requested`);
}

/** `rackside reboot NAME [--hard]` (soft by default, as upstream's reboot annotation). */
export function rebootCommand(ctx: CommandContext): Promise<number> {
  const name = nameArg(ctx, 1, 'reboot NAME [--hard]');
  const mode = ctx.args.options.hard === true ? 'hard' : 'soft';
  return postAction(ctx, name, 'reboot', { mode }, `${mode} reboot requested`);
}

/** `rackside inspect NAME`. */
export function inspectCommand(ctx: CommandContext): Promise<number> {
  return postAction(ctx, nameArg(ctx, 1, 'inspect NAME'), 'inspect', undefined, 'inspection requested');
}

/** `rackside detach NAME [--force] [--delete-action delay|delete]`. */
export function detachCommand(ctx: CommandContext): Promise<number> {
  const name = nameArg(ctx, 1, 'detach NAME [--force] [--delete-action delay|delete]');
  const deleteAction = ctx.args.options['delete-action'];
  if (deleteAction !== undefined && deleteAction !== 'delay' && deleteAction !== 'delete') {
    throw new CliError(ExitCode.usage, `--delete-action must be delay or delete, got "${deleteAction}"`);
  }
  const body = { ...(deleteAction === undefined ? {} : { deleteAction }), ...(ctx.args.options.force === true ? { force: true } : {}) };
  return postAction(ctx, name, 'detach', body, 'detach requested');
}

/** `rackside attach NAME`. */
export function attachCommand(ctx: CommandContext): Promise<number> {
  return postAction(ctx, nameArg(ctx, 1, 'attach NAME'), 'attach', undefined, 'attach requested');
}

/** `rackside version`: the client's version, then the server's (exit 6 when unreachable). */
export async function versionCommand(ctx: CommandContext): Promise<number> {
  ctx.io.stdout(`Client Version: ${ctx.io.clientVersion}\n`);
  const info = (await ctx.client().request('GET', '/api/v1/version')) as AgentInfo;
  ctx.io.stdout(`Server Version: ${info.version} (agent ${info.agentId}, provisioner ${info.provisioner}, started ${info.startedAt})\n`);
  return ExitCode.ok;
}
