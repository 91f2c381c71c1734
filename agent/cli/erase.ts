/**
 * @module The erase record commands (docs/erase-records.md): `rackside get erase-records [--host
 * NAME]`, `rackside describe erase-record ID`, and `rackside export erase-record ID [--output
 * DIR]`, which writes the record's signed text, its signature and an `allowed_signers` file and
 * prints the `ssh-keygen -Y verify` command that checks them without rackside.
 */
import { join } from 'node:path';
import { ERASE_RECORD_NAMESPACE, type EraseRecord } from '../erase/record.js';
import { nameArg, type CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';
import { renderObjects } from './render.js';
import { renderEraseRecordDescription, renderEraseRecordsTable } from './render-erase.js';

/** Resource names that mean erase records. */
export const ERASE_RECORD_ALIASES = ['erase-record', 'erase-records', 'eraserecord', 'eraserecords'];

const BASE = '/api/v1/erase-records';

/** What `GET /erase-records/signing-key` answers. */
interface SigningKey {
  publicKey: string;
  fingerprint: string;
  principal: string;
  allowedSigners: string;
}

function recordPath(id: string): string {
  return `${BASE}/${encodeURIComponent(id)}`;
}

/** `rackside get erase-records [ID] [--host NAME] [-o json|yaml|name]`. */
export async function getEraseRecords(ctx: CommandContext): Promise<number> {
  const usage = 'usage: rackside get erase-records [ID] [--host NAME] [-o json|yaml|name]';
  const o = ctx.args.options.output;
  if (o !== undefined && !['json', 'yaml', 'name'].includes(o)) throw new CliError(ExitCode.usage, `-o must be one of json, yaml, name, got "${o}"`);
  if (ctx.args.positionals.length > 3) throw new CliError(ExitCode.usage, usage);
  const id = ctx.args.positionals[2];
  const client = ctx.client();
  if (id !== undefined) {
    // One record: its signed text as it is (-o json keeps it byte for byte).
    const text = await client.requestText(recordPath(id));
    const record = JSON.parse(text) as EraseRecord;
    if (o === 'json') ctx.io.stdout(text);
    else if (o === 'yaml' || o === 'name') ctx.io.stdout(renderObjects(o, [record], true, () => `erase-record/${record.id}`));
    else ctx.io.stdout(renderEraseRecordsTable([record], ctx.io.now()));
    return ExitCode.ok;
  }
  const host = ctx.args.options.host;
  const query = host === undefined ? '' : `?${new URLSearchParams({ host }).toString()}`;
  const records = ((await client.request('GET', `${BASE}${query}`)) as { items: EraseRecord[] }).items;
  if (o === 'json' || o === 'yaml' || o === 'name') {
    ctx.io.stdout(renderObjects(o, records, false, (r) => `erase-record/${(r as EraseRecord).id}`));
  } else if (records.length === 0) {
    ctx.io.stderr('No resources found.\n');
  } else {
    ctx.io.stdout(renderEraseRecordsTable(records, ctx.io.now()));
  }
  return ExitCode.ok;
}

/** `rackside describe erase-record ID`. */
export async function describeEraseRecord(ctx: CommandContext): Promise<number> {
  const id = nameArg(ctx, 2, 'describe erase-record ID');
  const client = ctx.client();
  const record = JSON.parse(await client.requestText(recordPath(id))) as EraseRecord;
  const key = (await client.request('GET', `${BASE}/signing-key`)) as SigningKey;
  ctx.io.stdout(renderEraseRecordDescription(record, key.fingerprint));
  return ExitCode.ok;
}

/** The shell command that checks an exported record (printed by `export`). */
export function verifyCommand(dir: string, id: string, principal: string): string {
  const q = (s: string): string => (/^[A-Za-z0-9_./:@=+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  return `ssh-keygen -Y verify -f ${q(join(dir, 'allowed_signers'))} -I ${q(principal)} -n ${ERASE_RECORD_NAMESPACE} -s ${q(join(dir, `${id}.json.sig`))} < ${q(join(dir, `${id}.json`))}`;
}

/** `rackside export erase-record ID [--output DIR]`. */
export async function exportCommand(ctx: CommandContext): Promise<number> {
  const kind = ctx.args.positionals[1];
  // Loaded on use: only `export boot-ca` needs bootsvc's EFI signature list encoder.
  if (kind === 'boot-ca') return (await import('./boot-ca.js')).exportBootCaCommand(ctx);
  if (kind === undefined || !ERASE_RECORD_ALIASES.includes(kind)) throw new CliError(ExitCode.usage, 'usage: rackside export erase-record ID [--output DIR] | rackside export boot-ca [--format pem|der|edk2] [--output FILE]');
  const id = nameArg(ctx, 2, 'export erase-record ID [--output DIR]');
  const write = ctx.io.writeFile;
  if (write === undefined) {
    throw new CliError(ExitCode.usage, `export writes files, which is not done over SSH: use "rackside get erase-record ${id} -o json" and the API's ${BASE}/${id}/signature`);
  }
  const dir = ctx.args.options.output ?? '.';
  const client = ctx.client();
  const document = await client.requestText(recordPath(id));
  const signature = await client.requestText(`${recordPath(id)}/signature`);
  const key = (await client.request('GET', `${BASE}/signing-key`)) as SigningKey;
  await write(join(dir, `${id}.json`), document);
  await write(join(dir, `${id}.json.sig`), signature);
  await write(join(dir, 'allowed_signers'), `${key.allowedSigners}\n`);
  ctx.io.stdout(`wrote ${join(dir, `${id}.json`)}, ${join(dir, `${id}.json.sig`)} and ${join(dir, 'allowed_signers')} (key ${key.fingerprint})\ncheck with:\n  ${verifyCommand(dir, id, key.principal)}\n`);
  return ExitCode.ok;
}
