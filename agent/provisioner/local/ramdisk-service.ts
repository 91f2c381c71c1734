/**
 * @module The ramdisk callback endpoints on the boot HTTP server (`/ramdisk/v1/heartbeat`,
 * `/inventory`, `/result`; protocol in images/ramdisk-protocol.ts). Each request carries the
 * host's token as a bearer token: the token names the host; a stale or forged one gets 401,
 * is recorded as a Warning event, and changes nothing. Answers are the protocol's KEY=VALUE lines;
 * a heartbeat is answered with the pending command and its parameters (deploy, clean). Results
 * are decoded (images/ramdisk-results.ts): their details (deploy's root device, clean's per-disk
 * reports) and log tail are kept in the operation, and raise `DeployDone`/`CleanDone` events or,
 * on failure, `DeployFailed`/`CleanFailed` Warnings carrying the log tail; a result's message and
 * details are capped (result-caps.ts: 4 KiB, 64 KiB), cut with a marker and counted. Virtual-media hosts
 * fetch their per-host ISO from `/ramdisk/v1/vmedia/<name>.iso` (vmedia-iso.ts), served only while
 * the host has a ramdisk operation (boot intent `ramdisk`) and recorded as `VirtualMediaFetched`.
 */
import { overTls, ramdiskCommandParams, type BootBases } from './ramdisk-command-params.js';
import express from 'express';
import type { Request, Response, Router } from 'express';
import {
  decodeRamdiskHeartbeat,
  decodeRamdiskResult,
  encodeRamdiskCommand,
  RAMDISK_COMMANDS,
  RamdiskEndpoint,
  HEAD_NODE_ARCH,
  RAMDISK_ARCHES,
  RamdiskProtocolError,
  type DebianArch,
  type RamdiskCommandName,
  type RamdiskResult,
} from '../../../images/index.js';
import type { EventLog, StoredEvent } from '../../store/types.js';
import { commandFor, ramdiskTokenLive, type NodeEntry, type NodeOperation } from './node.js';
import type { NodeTable } from './node-table.js';
import { capDetails, capText, RESULT_DETAILS_MAX_BYTES, RESULT_MESSAGE_MAX_BYTES } from './result-caps.js';
import { hostIsoName, HostIsoUnavailableError, VMEDIA_PATH, type HostIsoSource } from './vmedia-iso.js';
import { isJsonObject, nestsDeeperThan } from '../../json-value.js';
import type { EraseRecorder } from '../../erase/recorder.js';
import { eraseRecordOutcome } from '../../erase/record.js';
import { decodeLldpNeighbors } from './lldp.js';

/** Options of {@link createRamdiskRouter}. */
export interface RamdiskServiceOptions {
  /** Where the callbacks publish their events. */
  store: Pick<EventLog, 'appendEvents'>;
  nodes: NodeTable;
  nowMs: () => number;
  /** Heartbeat interval asked of the ramdisk, seconds. */
  intervalSeconds?: number;
  /** Largest accepted body (inventories of big servers are a few hundred KiB). */
  bodyLimitBytes?: number;
  /** Per-host ISOs for virtual-media hosts; without it their media URL answers 404. */
  hostIso?: HostIsoSource;
  /**
   * Called with the host's name when an inventory or a result finished its operation, so the
   * controller looks at the host now instead of at its next poll (the agent wakes the reconciler).
   */
  onOperationFinished?: (hostName: string) => void;
  /** Counters the router keeps (the agent's metrics read them); a private object when absent. */
  stats?: RamdiskServiceStats;
  /**
   * Records each clean result as a signed erase record (agent/erase) before the clean is marked
   * done and the result acknowledged; a rejection answers 500 and the ramdisk posts again.
   */
  recordClean?: EraseRecorder;
  /**
   * Boot HTTP's base URLs when it has a TLS listener (`http.tls`): a heartbeat that came over TLS
   * is answered with deploy URLs under the TLS one (ramdisk-command-params.ts `overTls`).
   */
  bootBases?: BootBases;
}

/** What the ramdisk router counts. */
export interface RamdiskServiceStats {
  /** Results whose message, details or event message exceeded their cap and were cut (result-caps.ts). */
  resultsTruncated: number;
}

const supported = new Set<string>(RAMDISK_COMMANDS);

function bearer(req: Request): string {
  const header = req.get('authorization') ?? '';
  return header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
}

/** Lines of the ramdisk log kept with an operation (the agent sends its last 40). */
const LOG_TAIL_LINES = 40;

/** Deepest nesting an inventory may have: IPA's is 4 levels; the store's JSON encoder overflows near 10 000. */
const MAX_INVENTORY_DEPTH = 32;


/** The answer text for `op`'s command (its URLs under `tls`'s TLS base when given), or why it cannot be sent. */
function commandText(op: NodeOperation, command: RamdiskCommandName, commandId: string | undefined, intervalSeconds: number, tls: BootBases | undefined): { text: string } | { error: string } {
  try {
    const params = ramdiskCommandParams(op, command);
    return {
      text: encodeRamdiskCommand({
        command,
        ...(commandId !== undefined ? { commandId } : {}),
        intervalSeconds,
        ...(tls === undefined ? params : overTls(params, tls)),
      }),
    };
  } catch (error) {
    if (error instanceof RamdiskProtocolError) return { error: `cannot send ${command} to the ramdisk: ${error.message}` };
    throw error;
  }
}

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** The event for a decoded result: reason, type and a message an operator can act on. */
function resultEvent(result: RamdiskResult): { reason: string; type: 'Normal' | 'Warning'; message: string } {
  const kind = RAMDISK_COMMANDS.find((c) => c === result.command) === undefined ? 'RamdiskCommand' : capitalized(result.command);
  const details = result.details;
  if (result.status === 'error') {
    const tail = result.log.slice(-5).join(' | ');
    const disks = details !== null && 'disks' in details ? details.disks.filter((d) => d.status === 'error').map((d) => `${d.name}: ${d.message ?? 'failed'}`) : [];
    const message = `${result.command} failed in the ramdisk: ${result.message ?? 'no message'}${disks.length > 0 ? ` (${disks.join('; ')})` : ''}${tail === '' ? '' : `; log: ${tail}`}`;
    return { reason: `${kind}Failed`, type: 'Warning', message };
  }
  if (details !== null && 'rootDevice' in details) {
    const cd = details.configDrive === null ? '' : `, config drive at byte ${details.configDrive.offsetBytes}`;
    return { reason: `${kind}Done`, type: 'Normal', message: `image written to ${details.rootDevice.name}: ${details.image.bytes} bytes in ${details.durationSeconds} s, ${details.image.attempts} attempt(s)${cd}` };
  }
  if (details !== null && 'disks' in details) {
    return { reason: `${kind}Done`, type: 'Normal', message: `${details.mode} clean of ${details.disks.length} disk(s): ${details.disks.map((d) => `${d.name} (${d.method}, ${d.bytesWiped} bytes)`).join(', ') || 'none found'}` };
  }
  return { reason: `${kind}Done`, type: 'Normal', message: `${result.command}: done` };
}

/** What every handler works with: the options, the node table, the counters and the helpers over them. */
interface RamdiskContext {
  options: RamdiskServiceOptions;
  nodes: NodeTable;
  stats: RamdiskServiceStats;
  /** Records an event about the entry's host (`source: ramdisk`). */
  event(entry: NodeEntry, reason: string, message: string, type?: 'Normal' | 'Warning', data?: Record<string, unknown>): Promise<StoredEvent[]>;
  /** Resolves the token to a host or answers 401 (and records the attempt). */
  authenticate(req: Request, res: Response): Promise<Authenticated | undefined>;
  /** The entry's operation finished: its host's controller looks now. */
  finished(entry: NodeEntry): void;
}

/** A callback whose live token named host `uid`. */
interface Authenticated {
  uid: string;
  entry: NodeEntry;
}

/** An async route handler; a rejection goes to the router's error handler. */
type RamdiskHandler = (ctx: RamdiskContext, req: Request, res: Response) => Promise<void>;

function ramdiskContext(options: RamdiskServiceOptions): RamdiskContext {
  const { store, nodes } = options;
  const event: RamdiskContext['event'] = (entry, reason, message, type = 'Normal', data) => {
    const local = entry.local;
    return store.appendEvents([
      {
        time: new Date().toISOString(), // event times follow the wall clock; nowMs measures (clock.ts)
        type,
        reason,
        message,
        source: 'ramdisk',
        ...(local !== undefined && local.name !== '' ? { host: local.name } : {}),
        ...(local !== undefined && local.bootMACAddress !== '' ? { mac: local.bootMACAddress.toLowerCase() } : {}),
        ...(data !== undefined ? { data } : {}),
      },
    ]);
  };
  const authenticate: RamdiskContext['authenticate'] = async (req, res) => {
    const found = await nodes.findByToken(bearer(req));
    const now = options.nowMs();
    if (found?.entry.local !== undefined && ramdiskTokenLive(found.entry, now)) return found;
    const why = found === undefined ? 'a stale or unknown token' : 'an expired token (each ramdisk boot gets its own, valid until its operation times out)';
    await store.appendEvents([
      {
        time: new Date().toISOString(),
        type: 'Warning',
        reason: 'RamdiskTokenRejected',
        message: `ramdisk callback ${req.path} from ${req.ip ?? 'unknown'} with ${why}: nothing done`,
        source: 'ramdisk',
        ...(found?.entry.local !== undefined ? { host: found.entry.local.name } : {}),
      },
    ]);
    res.status(401).type('text/plain').send('error=unauthorized\n');
    return undefined;
  };
  const finished = (entry: NodeEntry): void => {
    const name = entry.local?.name ?? '';
    if (name !== '') options.onOperationFinished?.(name);
  };
  return { options, nodes, stats: options.stats ?? { resultsTruncated: 0 }, event, authenticate, finished };
}

/** The command a heartbeat is answered with (and the kind of its operation). */
interface HeartbeatAnswer {
  command: RamdiskCommandName;
  text: string;
  kind?: string;
}

/** Notes the heartbeat on the entry and picks the command to answer with (failing an operation that cannot be sent). */
function answerHeartbeat(entry: NodeEntry, heartbeat: ReturnType<typeof decodeRamdiskHeartbeat>, nowMs: number, intervalSeconds: number, tls: BootBases | undefined): { entry: NodeEntry; write: boolean; value: HeartbeatAnswer } {
  const none = { command: 'none' as RamdiskCommandName, text: encodeRamdiskCommand({ command: 'none', intervalSeconds }) };
  const local = entry.local;
  if (local === undefined) return { entry, write: false, value: none };
  local.ramdisk = { lastHeartbeatMs: nowMs, ...(heartbeat.ip !== null ? { ip: heartbeat.ip } : {}), ...(heartbeat.version !== null ? { version: heartbeat.version } : {}) };
  const next = commandFor(local.op, heartbeat.lastCommandId);
  if (next.command === 'none' || local.op === undefined) return { entry, write: true, value: none };
  if (!supported.has(next.command)) {
    local.op.phase = 'failed';
    local.op.message = `this ramdisk build cannot run "${next.command}"; rebuild it with a newer rackside`;
    return { entry, write: true, value: none };
  }
  const answer = commandText(local.op, next.command, next.commandId, intervalSeconds, tls);
  if ('error' in answer) {
    local.op.phase = 'failed';
    local.op.message = answer.error;
    return { entry, write: true, value: none };
  }
  local.op.phase = 'sent';
  return { entry, write: true, value: { command: next.command, text: answer.text, kind: local.op.kind } };
}

/** `POST /ramdisk/v1/heartbeat`: notes the ramdisk's contact, answers with its pending command. */
const handleHeartbeat: RamdiskHandler = async (ctx, req, res) => {
  const found = await ctx.authenticate(req, res);
  if (found === undefined) return;
  const heartbeat = decodeRamdiskHeartbeat(req.body);
  const intervalSeconds = ctx.options.intervalSeconds ?? 10;
  // Over TLS (a host booted by UEFI HTTPS): what the ramdisk fetches next comes over TLS too.
  const tls = req.secure ? ctx.options.bootBases : undefined;
  const command = await ctx.nodes.update(found.uid, (entry) => answerHeartbeat(entry, heartbeat, ctx.options.nowMs(), intervalSeconds, tls));
  const first = found.entry.local?.ramdisk === undefined || found.entry.local.op?.phase === 'booting';
  if (first || command.command !== 'none') {
    const sent = command.command === 'report'
      ? `; it finished ${command.kind ?? 'its command'} but the report never arrived: asked for it again`
      : command.command !== 'none' ? `; sent ${command.command}` : '';
    await ctx.event(found.entry, 'RamdiskHeartbeat', `ramdisk ${heartbeat.version ?? ''} at ${heartbeat.ip ?? 'unknown address'} is up${sent}`, 'Normal', {
      ip: heartbeat.ip,
      command: command.command,
    });
  }
  res.type('text/plain').send(command.text);
};

/**
 * The firmware facts of an inventory's `boot` section (IPA's `current_boot_mode`; rackside's ramdisk
 * adds `secure_boot` from the SecureBoot EFI variable — metal3's HardwareDetails has no field for
 * either, so they go on the inventory event): event data and a message suffix.
 */
function bootFacts(inventory: Record<string, unknown>): { data: { bootMode?: string; secureBoot?: boolean }; summary: string } {
  const boot = isJsonObject(inventory.boot) ? inventory.boot : {};
  const mode = boot.current_boot_mode === 'uefi' || boot.current_boot_mode === 'bios' ? boot.current_boot_mode : undefined;
  const secure = typeof boot.secure_boot === 'boolean' ? boot.secure_boot : undefined;
  const words = [mode?.toUpperCase(), secure === undefined ? undefined : `Secure Boot ${secure ? 'on' : 'off'}`].filter((w) => w !== undefined);
  return {
    data: { ...(mode === undefined ? {} : { bootMode: mode }), ...(secure === undefined ? {} : { secureBoot: secure }) },
    summary: words.length === 0 ? '' : ` (${words.join(', ')})`,
  };
}

/**
 * `POST /ramdisk/v1/inventory`: stores the inventory — with the LLDP neighbours the ramdisk heard
 * meanwhile (`lldp`, optional, checked like a discovery report's: lldp.ts) kept beside IPA's
 * fields — then finishes the inspection it answers.
 */
const handleInventory: RamdiskHandler = async (ctx, req, res) => {
  const found = await ctx.authenticate(req, res);
  if (found === undefined) return;
  const payload: unknown = req.body;
  if (!isJsonObject(payload) || !isJsonObject(payload.inventory)) throw new RamdiskProtocolError('inventory body must be {command_id, inventory: {...}, lldp?: [...]}');
  if (nestsDeeperThan(payload.inventory, MAX_INVENTORY_DEPTH)) throw new RamdiskProtocolError(`inventory nests deeper than ${MAX_INVENTORY_DEPTH} levels`);
  decodeLldpNeighbors(payload.lldp, (field, message) => new RamdiskProtocolError(`${field} ${message}`));
  const inventory = payload.lldp === undefined ? payload.inventory : { ...payload.inventory, lldp: payload.lldp };
  const commandId = typeof payload.command_id === 'string' ? payload.command_id : '';
  // The inventory first, then the phase: an inspection reads as done only with its inventory stored.
  if (found.entry.local !== undefined) await ctx.nodes.putInventory(found.uid, inventory);
  const done = await ctx.nodes.update(found.uid, (entry) => {
    const local = entry.local;
    if (local === undefined) return { entry, write: false, value: false };
    const finishes = local.op?.kind === 'inspect' && local.op.commandId === commandId && local.op.phase !== 'failed';
    if (finishes && local.op !== undefined) local.op.phase = 'done';
    return { entry, write: finishes, value: finishes };
  });
  const boot = bootFacts(payload.inventory);
  await ctx.event(found.entry, 'RamdiskInventory', `hardware inventory received from the ramdisk${boot.summary}`, 'Normal', { commandId, ...boot.data });
  if (done) ctx.finished(found.entry);
  res.type('text/plain').send('ok=1\n');
};

/** Decodes a result; an unreadable one still ends its operation, with a clear message instead of a timeout (then rethrows: 400). */
async function decodeResultOrFail(ctx: RamdiskContext, uid: string, payload: Record<string, unknown>, commandId: string): Promise<RamdiskResult> {
  try {
    return decodeRamdiskResult(payload);
  } catch (error) {
    if (!(error instanceof RamdiskProtocolError)) throw error;
    await ctx.nodes.update(uid, (entry) => {
      const op = entry.local?.op;
      if (op?.commandId !== commandId || op.phase === 'done' || op.phase === 'failed') return { entry, write: false, value: undefined };
      op.phase = 'failed';
      op.message = `the ramdisk's ${op.kind} result could not be read: ${error.message}`;
      return { entry, write: true, value: undefined };
    });
    throw error;
  }
}

/** A result with its message, details and log tail cut to their caps (result-caps.ts). */
interface CappedResult {
  kept: RamdiskResult;
  message: string;
  log: string[];
  messageBytesCut: number;
  details: ReturnType<typeof capDetails>;
}

/**
 * A result's message and details have caps of their own (not only the body limit): a ramdisk
 * holding a valid token must not grow the node table and event log by megabytes.
 */
function capResult(result: RamdiskResult): CappedResult {
  const cappedMessage = capText(result.message ?? '', RESULT_MESSAGE_MAX_BYTES);
  const details = capDetails(result.details, RESULT_DETAILS_MAX_BYTES);
  const message = cappedMessage.text;
  const log = result.log.slice(-LOG_TAIL_LINES).map((l) => l.slice(0, 500));
  const kept: RamdiskResult = { ...result, message: result.message === null ? null : message, details: details.details, log };
  return { kept, message, log, messageBytesCut: cappedMessage.cutBytes, details };
}

/** Records the result of the entry's current clean as a signed erase record, before the clean is marked done. */
async function recordCleanResult(ctx: RamdiskContext, found: Authenticated, result: RamdiskResult, commandId: string): Promise<void> {
  const current = found.entry.local?.op;
  const recordClean = ctx.options.recordClean;
  if (recordClean === undefined || current?.kind !== 'clean' || current.commandId !== commandId || current.phase === 'done' || current.phase === 'failed') return;
  // Before the operation is marked done: a crash in between leaves it current, the ramdisk posts again.
  const recorded = await recordClean({
    hostUid: found.uid,
    hostName: found.entry.local?.name ?? '',
    commandId,
    startedAtMs: current.startedAtMs,
    softwareRaidKept: current.clean?.keepSoftwareRaid === true,
    status: result.status,
    message: result.message,
    details: result.details !== null && 'disks' in result.details ? result.details : null,
    requestedMode: current.clean?.mode ?? 'metadata',
  });
  if (recorded.added) {
    const { record } = recorded;
    await ctx.event(found.entry, 'EraseRecorded', `erase record ${record.id}: ${eraseRecordOutcome(record)}`, record.status === 'ok' ? 'Normal' : 'Warning', { eraseRecord: record.id });
  }
}

/** Applies the result to its operation if it is still the current one; true when it was. */
function applyResult(ctx: RamdiskContext, uid: string, capped: CappedResult, commandId: string): Promise<boolean> {
  const { kept, message, log } = capped;
  return ctx.nodes.update(uid, (entry) => {
    const op = entry.local?.op;
    if (op?.commandId !== commandId || op.phase === 'done' || op.phase === 'failed') return { entry, write: false, value: false };
    if (kept.details !== null) op.details = kept.details;
    op.log = log;
    if (kept.status === 'ok') {
      // inspect completes with its inventory; other commands with their result
      if (op.kind !== 'inspect') op.phase = 'done';
    } else {
      op.phase = 'failed';
      op.message = message === '' ? `${op.kind} failed in the ramdisk` : message;
    }
    return { entry, write: true, value: true };
  });
}

/** `POST /ramdisk/v1/result`: the erase record of a clean, the operation's outcome, and its event. */
const handleResult: RamdiskHandler = async (ctx, req, res) => {
  const found = await ctx.authenticate(req, res);
  if (found === undefined) return;
  const payload: unknown = req.body;
  if (!isJsonObject(payload)) throw new RamdiskProtocolError('result body must be a JSON object');
  const commandId = typeof payload.command_id === 'string' ? payload.command_id : '';
  const result = await decodeResultOrFail(ctx, found.uid, payload, commandId);
  const capped = capResult(result);
  await recordCleanResult(ctx, found, result, commandId);
  const matched = await applyResult(ctx, found.uid, capped, commandId);
  const { kept, log, details } = capped;
  const summary = resultEvent(kept);
  const eventMessage = capText(matched ? summary.message : `${summary.message} (stale: command ${commandId} is no longer current)`, RESULT_MESSAGE_MAX_BYTES);
  const truncated = capped.messageBytesCut > 0 || details.cut || eventMessage.cutBytes > 0;
  if (truncated) ctx.stats.resultsTruncated += 1;
  await ctx.event(found.entry, summary.reason, eventMessage.text, summary.type, {
    commandId,
    ...(kept.status === 'ok' ? {} : { log }),
    ...(kept.details !== null ? { details: kept.details } : {}),
    ...(truncated ? { truncated: { messageBytesCut: capped.messageBytesCut, detailsBytes: details.cut ? details.bytes : 0, eventMessageBytesCut: eventMessage.cutBytes } } : {}),
  });
  if (matched) ctx.finished(found.entry);
  res.type('text/plain').send('ok=1\n');
};

const ISO_ROUTE = new RegExp(`^${VMEDIA_PATH}/(?:(${RAMDISK_ARCHES.join('|')})/)?([0-9a-f]{32})\\.iso$`);

/** `GET /ramdisk/v1/vmedia/[<arch>/]<name>.iso`: a virtual-media host's ISO, only while it boots a ramdisk. */
const handleVirtualMediaIso: RamdiskHandler = async (ctx, req, res) => {
  const route = ISO_ROUTE.exec(req.path);
  const name = route?.[2] ?? '';
  const arch = (route?.[1] as DebianArch | undefined) ?? HEAD_NODE_ARCH;
  const source = ctx.options.hostIso;
  // Only while the host boots a ramdisk: a finished host's media URL stops working.
  const found = source === undefined ? undefined : await ctx.nodes.find((e) => e.token !== undefined && e.boot === 'ramdisk' && hostIsoName(e.token) === name);
  const token = found?.entry.token;
  if (source === undefined || found === undefined || token === undefined) {
    res.status(404).type('text/plain').send('no such virtual media image\n');
    return;
  }
  let first: number | undefined;
  try {
    first = await source.serve(req, res, token, arch);
  } catch (error) {
    if (error instanceof HostIsoUnavailableError && !res.headersSent) {
      res.status(503).type('text/plain').send(`${error.message}\n`);
      return;
    }
    if (res.headersSent) return; // the BMC went away mid-transfer: nothing to answer
    throw error;
  }
  if (first === 0) await ctx.event(found.entry, 'VirtualMediaFetched', `the BMC fetched the rackside ISO (${req.method} ${req.path}, from ${req.ip ?? 'unknown'})`);
};

/** Protocol errors and unparsable bodies answer 400 with the reason; anything else goes on. */
function protocolErrors(error: unknown, _req: Request, res: Response, next: (err?: unknown) => void): void {
  if (error instanceof RamdiskProtocolError || (error instanceof SyntaxError && 'body' in error)) {
    res.status(400).type('text/plain').send(`error=${error.message.replace(/\s+/g, ' ')}\n`);
    return;
  }
  next(error);
}

/** Builds the router; mount it on the boot HTTP server's app. */
export function createRamdiskRouter(options: RamdiskServiceOptions): Router {
  const ctx = ramdiskContext(options);
  const route = (handler: RamdiskHandler) => (req: Request, res: Response, next: (err?: unknown) => void): void => {
    handler(ctx, req, res).catch(next);
  };
  const body = express.json({ limit: options.bodyLimitBytes ?? 4 * 1024 * 1024 });
  const router = express.Router();
  router.post(RamdiskEndpoint.heartbeat, body, route(handleHeartbeat));
  router.post(RamdiskEndpoint.inventory, body, route(handleInventory));
  router.post(RamdiskEndpoint.result, body, route(handleResult));
  router.get(ISO_ROUTE, route(handleVirtualMediaIso));
  router.use(protocolErrors);
  return router;
}
