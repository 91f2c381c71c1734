/**
 * @module `rackside ssh status [-o json|yaml]`: the embedded SSH server (address and host key
 * fingerprint) and the reverse tunnel to the bastion (state and since when, bastion and its
 * pinned fingerprint, remote port, reconnects, last error, next attempt), as the agent reports
 * them at `GET /api/v1/ssh`; "not configured" without an `ssh` / `ssh.tunnel` section.
 */
import { stringify } from 'yaml';
import type { TunnelStatus } from '../ssh/index.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';
import { isJsonObject } from '../json-value.js';

/** The body of `GET /api/v1/ssh`: `server` is null without `ssh` in the config, `tunnel` null before remote access started. */
export interface SshApiStatus {
  server: { address: string; port: number; fingerprint: string } | null;
  tunnel: TunnelStatus | null;
}

const USAGE = 'usage: rackside ssh status [-o json|yaml]';
const TUNNEL_STATES: ReadonlySet<string> = new Set(['disabled', 'connecting', 'connected', 'backoff']);

/**
 * Checks that `body` has the shape of {@link SshApiStatus} (the fields this command prints).
 * @throws CliError (exit 1) naming the first wrong field, e.g. from an agent of another version.
 */
export function decodeSshStatus(body: unknown): SshApiStatus {
  const wrong = (field: string): CliError => new CliError(ExitCode.failure, `the agent's /api/v1/ssh answer has no valid ${field}`);
  if (!isJsonObject(body)) throw wrong('body');
  const { server, tunnel } = body;
  if (server !== null && !(isJsonObject(server) && typeof server.address === 'string' && typeof server.port === 'number' && typeof server.fingerprint === 'string')) throw wrong('server');
  if (tunnel !== null) {
    if (!isJsonObject(tunnel) || typeof tunnel.state !== 'string' || !TUNNEL_STATES.has(tunnel.state)) throw wrong('tunnel.state');
    if (typeof tunnel.since !== 'string') throw wrong('tunnel.since');
    if (typeof tunnel.reconnects !== 'number') throw wrong('tunnel.reconnects');
    if (tunnel.remotePort !== null && typeof tunnel.remotePort !== 'number') throw wrong('tunnel.remotePort');
  }
  return body as unknown as SshApiStatus;
}

function ago(iso: string, nowMs: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const seconds = Math.round((nowMs - ms) / 1000);
  const span = (s: number): string => (s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172_800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`);
  return seconds >= 0 ? `${iso} (${span(seconds)} ago)` : `${iso} (in ${span(-seconds)})`;
}

function listenText(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** The status as aligned `label  value` lines (no trailing newline), ages relative to `nowMs`. */
export function formatSshStatus(status: SshApiStatus, nowMs: number): string {
  const lines: [string, string][] = [];
  const { server, tunnel } = status;
  if (server === null) {
    lines.push(['server', '(not configured: no ssh section in the config)']);
  } else {
    lines.push(['server', listenText(server.address, server.port)]);
    lines.push(['host key', server.fingerprint]);
  }
  if (tunnel === null) {
    lines.push(['tunnel', server === null ? '(not configured)' : '(not started yet)']);
  } else if (tunnel.state === 'disabled' && tunnel.bastion === undefined) {
    lines.push(['tunnel', '(not configured: no ssh.tunnel section with a pinned hostKey)']);
  } else {
    lines.push(['tunnel', `${tunnel.state} since ${ago(tunnel.since, nowMs)}`]);
    lines.push(['bastion', `${tunnel.bastion ?? '?'}${tunnel.bastionFingerprint === undefined ? '' : ` (${tunnel.bastionFingerprint})`}`]);
    lines.push(['remote port', tunnel.remotePort === null ? '(none yet)' : String(tunnel.remotePort)]);
    lines.push(['reconnects', String(tunnel.reconnects)]);
    if (tunnel.lastError !== undefined) lines.push(['last error', tunnel.lastError]);
    if (tunnel.nextAttemptAt !== undefined) lines.push(['next try', ago(tunnel.nextAttemptAt, nowMs)]);
  }
  return lines.map(([label, value]) => `${label.padEnd(11)} ${value}`).join('\n');
}

/** `rackside ssh status`. */
export async function sshCommand(ctx: CommandContext): Promise<number> {
  const [, sub, extra] = ctx.args.positionals;
  if (sub !== 'status' || extra !== undefined) throw new CliError(ExitCode.usage, USAGE);
  const output = ctx.args.options.output;
  if (output !== undefined && output !== 'json' && output !== 'yaml') throw new CliError(ExitCode.usage, `-o must be json or yaml, got "${output}"`);
  const status = decodeSshStatus(await ctx.client().request('GET', '/api/v1/ssh'));
  if (output === 'json') ctx.io.stdout(`${JSON.stringify(status, null, 2)}\n`);
  else if (output === 'yaml') ctx.io.stdout(stringify(status));
  else ctx.io.stdout(`${formatSshStatus(status, ctx.io.now())}\n`);
  return ExitCode.ok;
}
