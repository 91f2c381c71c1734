/**
 * @module `rackside sync status [-o json|yaml]`: the controller sync's last acknowledgement,
 * backlog and last error, as the agent reports them at `GET /api/v1/sync`.
 */
import { stringify } from 'yaml';
import type { SyncStatus } from '../sync/index.js';
import { formatSyncStatus } from '../sync/index.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

/** `rackside sync status`. */
export async function syncCommand(ctx: CommandContext): Promise<number> {
  const [, sub, extra] = ctx.args.positionals;
  if (sub !== 'status' || extra !== undefined) throw new CliError(ExitCode.usage, 'usage: rackside sync status [-o json|yaml]');
  const status = (await ctx.client().request('GET', '/api/v1/sync')) as SyncStatus;
  const output = ctx.args.options.output;
  if (output === 'json') ctx.io.stdout(`${JSON.stringify(status, null, 2)}\n`);
  else if (output === 'yaml') ctx.io.stdout(stringify(status));
  else if (output === undefined) ctx.io.stdout(`${formatSyncStatus(status, ctx.io.now())}\n`);
  else throw new CliError(ExitCode.usage, `-o must be json or yaml, got "${output}"`);
  return ExitCode.ok;
}
