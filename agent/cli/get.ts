/**
 * @module The reading commands: `rackside get hosts|host|secrets|events` (tables, `-o
 * wide|json|yaml|name`, `--watch` for events over Server-Sent Events) and `rackside describe
 * host NAME` (with the host's firmware objects when the agent has them).
 */
import type { HostFirmware } from '../host/firmware-types.js';
import type { BareMetalHost } from '../host/types.js';
import type { StoredEvent } from '../store/types.js';
import type { SecretSummary } from '../web/backend.js';
import { hostPath, nameArg, type CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';
import { describeEraseRecord, ERASE_RECORD_ALIASES, getEraseRecords } from './erase.js';
import {
  EVENT_HEADERS, HOST_RESOURCE, OUTPUT_FORMATS, eventCells, renderHostDescription, renderHostsTable,
  renderObjects, renderSecretsTable, type OutputFormat,
} from './render.js';
import { columnWidths, renderRow, renderTable } from './table.js';
import { getSubscriptions, SUBSCRIPTION_ALIASES } from './bmc-event-subscriptions.js';
import { stringify } from 'yaml';
import { diagnoseHost } from '../web/ui/diagnosis.js';

const HOST_ALIASES = ['host', 'hosts', 'bmh', 'baremetalhost', 'baremetalhosts', HOST_RESOURCE];
const RECENT_EVENTS = 20;
/** Timeline events the diagnosis looks at (the status page reads as many). */
const DIAGNOSIS_EVENTS = 500;

function outputFormat(ctx: CommandContext, allowed: readonly OutputFormat[]): OutputFormat {
  const o = ctx.args.options.output;
  if (o === undefined) return 'table';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(o) || !allowed.includes(o as OutputFormat)) {
    throw new CliError(ExitCode.usage, `-o must be one of ${allowed.filter((f) => f !== 'table').join(', ')}, got "${o}"`);
  }
  return o as OutputFormat;
}

function noResources(ctx: CommandContext): number {
  ctx.io.stderr('No resources found.\n');
  return ExitCode.ok;
}

/** Host filters of `rackside get hosts`. */
export interface HostFilter {
  /** Only hosts discovery recorded that still wait in `unmanaged` (docs/discovery.md). */
  discovered?: boolean;
  /** Only hosts with a NIC whose LLDP switch system name or chassis ID is this. */
  switchName?: string;
}

/** The hosts `filter` keeps, in order. */
export function filterHosts(hosts: readonly BareMetalHost[], filter: HostFilter): BareMetalHost[] {
  return hosts.filter((h) => {
    if (filter.discovered === true && !(h.metadata.annotations?.['rackside.io/discovered-at'] !== undefined && h.status.provisioning.state === 'unmanaged')) return false;
    const sw = filter.switchName;
    if (sw !== undefined && !(h.status.hardware?.nics ?? []).some((n) => n.lldp?.switchSystemName === sw || n.lldp?.switchID === sw)) return false;
    return true;
  });
}

async function getHosts(ctx: CommandContext): Promise<number> {
  const format = outputFormat(ctx, ['table', 'wide', 'json', 'yaml', 'name']);
  const name = ctx.args.positionals[2];
  if (ctx.args.positionals.length > 3) throw new CliError(ExitCode.usage, 'usage: rackside get hosts [NAME] [--discovered] [--switch NAME] [-o wide|json|yaml|name]');
  const client = ctx.client();
  const { discovered, switch: switchName } = ctx.args.options;
  const all = name === undefined
    ? ((await client.request('GET', '/api/v1/hosts')) as { items: BareMetalHost[] }).items
    : [(await client.request('GET', hostPath(name))) as BareMetalHost];
  const hosts = filterHosts(all, { ...(discovered === true ? { discovered } : {}), ...(switchName === undefined ? {} : { switchName }) });
  if (format === 'table' || format === 'wide') {
    if (hosts.length === 0) return noResources(ctx);
    ctx.io.stdout(renderHostsTable(hosts, ctx.io.now(), format === 'wide'));
  } else {
    ctx.io.stdout(renderObjects(format, hosts, name !== undefined, (h) => `${HOST_RESOURCE}/${(h as BareMetalHost).metadata.name}`));
  }
  return ExitCode.ok;
}

async function getSecrets(ctx: CommandContext): Promise<number> {
  const format = outputFormat(ctx, ['table', 'wide', 'json', 'yaml', 'name']);
  if (ctx.args.positionals.length > 2) throw new CliError(ExitCode.usage, 'usage: rackside get secrets [-o json|yaml|name]');
  const secrets = ((await ctx.client().request('GET', '/api/v1/secrets')) as { items: SecretSummary[] }).items;
  if (format === 'table' || format === 'wide') {
    if (secrets.length === 0) return noResources(ctx);
    ctx.io.stdout(renderSecretsTable(secrets));
  } else {
    ctx.io.stdout(renderObjects(format, secrets, false, (s) => `secret/${(s as SecretSummary).name}`));
  }
  return ExitCode.ok;
}

async function getEvents(ctx: CommandContext): Promise<number> {
  const format = outputFormat(ctx, ['table', 'json', 'yaml']);
  if (ctx.args.positionals.length > 2) throw new CliError(ExitCode.usage, 'usage: rackside get events [--host NAME] [--watch] [-o json|yaml]');
  const host = ctx.args.options.host;
  const query = new URLSearchParams(host === undefined ? {} : { host });
  const client = ctx.client();
  const events = ((await client.request('GET', `/api/v1/events?${query.toString()}`)) as { items: StoredEvent[] }).items;
  const watch = ctx.args.options.watch === true;
  if (format === 'json' || format === 'yaml') {
    const print = (e: StoredEvent): void => {
      ctx.io.stdout(format === 'json' ? `${JSON.stringify(e)}\n` : `---\n${stringify(e, { lineWidth: 0 })}`);
    };
    if (!watch) ctx.io.stdout(renderObjects(format, events, false, () => ''));
    else events.forEach(print);
    if (watch) await follow(ctx, events, query, print);
    return ExitCode.ok;
  }
  const rows = events.map((e) => eventCells(e, ctx.io.now()));
  if (events.length === 0 && !watch) return noResources(ctx);
  ctx.io.stdout(renderTable(EVENT_HEADERS, rows));
  if (watch) {
    const widths = columnWidths(EVENT_HEADERS, rows);
    await follow(ctx, events, query, (e) => {
      ctx.io.stdout(renderRow(widths, eventCells(e, ctx.io.now())));
    });
  }
  return ExitCode.ok;
}

/** Streams events after the last one shown until the signal aborts. */
async function follow(ctx: CommandContext, shown: readonly StoredEvent[], query: URLSearchParams, print: (e: StoredEvent) => void): Promise<void> {
  const after = shown.reduce((max, e) => Math.max(max, e.seq), 0);
  query.set('after', String(after));
  await ctx.client().streamEvents(`/api/v1/events/stream?${query.toString()}`, print);
}

/** `rackside get RESOURCE …`. */
export function getCommand(ctx: CommandContext): Promise<number> {
  const resource = ctx.args.positionals[1];
  if (resource !== undefined && HOST_ALIASES.includes(resource)) return getHosts(ctx);
  if (ctx.args.options.discovered !== undefined || ctx.args.options.switch !== undefined) {
    return Promise.reject(new CliError(ExitCode.usage, 'options --discovered and --switch apply to "get hosts" only'));
  }
  if (resource === 'secret' || resource === 'secrets') return getSecrets(ctx);
  if (resource === 'event' || resource === 'events') return getEvents(ctx);
  if (resource !== undefined && ERASE_RECORD_ALIASES.includes(resource)) return getEraseRecords(ctx);
  if (resource !== undefined && SUBSCRIPTION_ALIASES.includes(resource)) return getSubscriptions(ctx);
  if (ctx.args.options.namespace !== undefined) return Promise.reject(new CliError(ExitCode.usage, 'option --namespace applies to "get bmceventsubscriptions" only'));
  return Promise.reject(new CliError(ExitCode.usage, `unknown resource "${resource ?? ''}": usage: rackside get hosts|host NAME|secrets|events|erase-records|bmceventsubscriptions`));
}

/** `rackside describe host NAME`. */
export async function describeCommand(ctx: CommandContext): Promise<number> {
  const resource = ctx.args.positionals[1];
  if (resource !== undefined && ERASE_RECORD_ALIASES.includes(resource)) return describeEraseRecord(ctx);
  if (resource === undefined || !HOST_ALIASES.includes(resource)) throw new CliError(ExitCode.usage, 'usage: rackside describe host NAME | erase-record ID');
  const name = nameArg(ctx, 2, 'describe host NAME');
  const client = ctx.client();
  const host = (await client.request('GET', hostPath(name))) as BareMetalHost;
  // The boot timeline (flight recorder + host events) feeds the diagnosis; an agent without it: the host's events.
  const timeline = await client.request('GET', `${hostPath(name)}/timeline?limit=${DIAGNOSIS_EVENTS}`).catch((err: unknown) => {
    if (err instanceof CliError && err.exitCode === ExitCode.notFound) return client.request('GET', `${hostPath(name)}/events?limit=${DIAGNOSIS_EVENTS}`);
    throw err;
  });
  const all = (timeline as { items: StoredEvent[] }).items;
  const findings = diagnoseHost({ host, events: all, nowMs: ctx.io.now() });
  const events = all.filter((e) => e.host === name).slice(-RECENT_EVENTS);
  let firmware: HostFirmware | undefined;
  try {
    firmware = (await client.request('GET', `${hostPath(name)}/firmware`)) as HostFirmware;
  } catch (err) {
    // An agent without firmware objects answers 404: describe the host without them.
    if (!(err instanceof CliError && err.exitCode === ExitCode.notFound)) throw err;
  }
  ctx.io.stdout(renderHostDescription(host, events, ctx.io.now(), firmware, findings));
  return ExitCode.ok;
}
