/**
 * @module `rackside get bmceventsubscriptions [NAME] [-n NS] [-o json|yaml|name]` and
 * `rackside delete bmceventsubscription NAME [-n NS]`: the metal3 BMCEventSubscription objects
 * (agent/host/bmc-event-subscription-types.ts) through `/api/v1/bmceventsubscriptions`.
 */
import type { BMCEventSubscriptionObject } from '../host/bmc-event-subscription-types.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';
import { OUTPUT_FORMATS, renderObjects, type OutputFormat } from './render.js';
import { renderTable } from './table.js';

/** Names the CLI accepts for the kind (`get`, `delete`). */
export const SUBSCRIPTION_ALIASES = ['bmceventsubscription', 'bmceventsubscriptions', 'bmcevents', 'bes'];

const HEADERS = ['NAMESPACE', 'NAME', 'HOST', 'DESTINATION', 'SUBSCRIPTION', 'ERROR'] as const;

function path(namespace: string, name: string): string {
  return `/api/v1/bmceventsubscriptions/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}

/** The table rows of subscriptions (a subscription being deleted shows `(deleting)` after its name). */
export function subscriptionRows(items: readonly BMCEventSubscriptionObject[]): string[][] {
  return items.map((s) => [
    s.metadata.namespace,
    s.metadata.deletionTimestamp === undefined ? s.metadata.name : `${s.metadata.name} (deleting)`,
    s.spec.hostName,
    s.spec.destination,
    s.status.subscriptionID ?? '',
    s.status.error ?? '',
  ]);
}

/** `rackside get bmceventsubscriptions [NAME]`. */
export async function getSubscriptions(ctx: CommandContext): Promise<number> {
  const o = ctx.args.options.output ?? 'table';
  if (o !== 'table' && (!(OUTPUT_FORMATS as readonly string[]).includes(o) || o === 'wide')) throw new CliError(ExitCode.usage, `-o must be one of json, yaml, name, got "${o}"`);
  const format = o as Exclude<OutputFormat, 'wide'>;
  if (ctx.args.positionals.length > 3) throw new CliError(ExitCode.usage, 'usage: rackside get bmceventsubscriptions [NAME] [-n NS] [-o json|yaml|name]');
  const name = ctx.args.positionals[2];
  const client = ctx.client();
  const items = name === undefined
    ? ((await client.request('GET', '/api/v1/bmceventsubscriptions')) as { items: BMCEventSubscriptionObject[] }).items
    : [(await client.request('GET', path(ctx.args.options.namespace ?? 'default', name))) as BMCEventSubscriptionObject];
  if (format === 'table') {
    if (items.length === 0) {
      ctx.io.stderr('No resources found.\n');
      return ExitCode.ok;
    }
    ctx.io.stdout(renderTable(HEADERS, subscriptionRows(items)));
  } else {
    ctx.io.stdout(renderObjects(format, items, name !== undefined, (s) => `bmceventsubscription/${(s as BMCEventSubscriptionObject).metadata.name}`));
  }
  return ExitCode.ok;
}

/** `rackside delete bmceventsubscription NAME [-n NS]`: returns once the delete is recorded. */
export async function deleteSubscription(ctx: CommandContext): Promise<number> {
  const name = ctx.args.positionals[2];
  if (name === undefined || name === '' || ctx.args.positionals.length > 3) throw new CliError(ExitCode.usage, 'usage: rackside delete bmceventsubscription NAME [--namespace NS]');
  await ctx.client().request('DELETE', path(ctx.args.options.namespace ?? 'default', name));
  ctx.io.stdout(`bmceventsubscription "${name}" deleted (removed from the BMC first)\n`);
  return ExitCode.ok;
}
