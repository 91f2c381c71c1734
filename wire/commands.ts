/**
 * @module Wire format version 2, the command exchange (docs/sync-wire-format.md, "Commands"):
 * the controller answers a push with the commands pending for the rack, the agent runs each at
 * most once per id and reports each outcome in a later push. Decoders are strict per command
 * and lenient per list: one malformed command is set aside with its reason (and its id, when
 * readable, so the agent can report it failed) instead of refusing the whole acknowledgement.
 * @pure
 */
import { SyncWireError, type WireReader } from './read.js';

/** What a command asks of the rack. `apply` carries a YAML manifest stream; the rest name one host. */
export const COMMAND_KINDS = ['apply', 'power-on', 'power-off', 'reboot', 'inspect', 'detach', 'delete'] as const;
/** One of {@link COMMAND_KINDS}. */
export type CommandKind = (typeof COMMAND_KINDS)[number];
/** How a command ended on the rack. */
export const COMMAND_OUTCOMES = ['done', 'failed', 'expired'] as const;
/** One of {@link COMMAND_OUTCOMES}. */
export type CommandOutcome = (typeof COMMAND_OUTCOMES)[number];

/** Limits of the command exchange. */
export const COMMAND_LIMITS = {
  /** Commands in one answer. */
  maxCommands: 100,
  /** Results in one push. */
  maxResults: 1000,
  /** A manifest's characters. */
  maxManifest: 4_194_304,
  message: 2048,
} as const;

/** One command, as the controller hands it to the rack. */
export interface FleetCommand {
  /** Unique id (a UUID): the agent runs a command id at most once. */
  id: string;
  kind: CommandKind;
  /** The host (every kind but `apply`). */
  host?: { namespace: string; name: string };
  /** The YAML manifest stream (`apply` only). */
  manifest?: string;
  /** RFC 3339: the agent does not start the command after this time (it reports `expired`). */
  expiresAt: string;
}

/** The outcome of one command, reported in a push (`commandResults`). */
export interface CommandResult {
  id: string;
  outcome: CommandOutcome;
  /** Why it failed, or what it did (≤ 2048 characters). */
  message: string;
  /** RFC 3339. */
  finishedAt: string;
}

/** A command the agent could not read, set aside with why. */
export interface RejectedCommand {
  /** The command's id when it was readable. */
  id: string | null;
  reason: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Validates one command. @throws SyncWireError naming the bad field. */
export function readCommand(r: WireReader, path: string, value: unknown): FleetCommand {
  const o = r.object(path, value);
  const id = r.string(`${path}.id`, o.id, 36);
  if (!UUID.test(id)) r.fail(`${path}.id`, 'a lower-case UUID', o.id);
  const kind = r.oneOf(`${path}.kind`, o.kind, COMMAND_KINDS);
  const expiresAt = r.time(`${path}.expiresAt`, o.expiresAt);
  if (kind === 'apply') {
    const manifest = r.nonEmptyString(`${path}.manifest`, o.manifest, COMMAND_LIMITS.maxManifest);
    return { id, kind, manifest, expiresAt };
  }
  const h = r.object(`${path}.host`, o.host);
  const host = { namespace: r.string(`${path}.host.namespace`, h.namespace, 253), name: r.nonEmptyString(`${path}.host.name`, h.name, 253) };
  return { id, kind, host, expiresAt };
}

/** Reads the `commands` list of an acknowledgement: good commands, and the rejected ones with their reasons. */
export function readCommandList(r: WireReader, path: string, value: unknown): { commands: FleetCommand[]; rejected: RejectedCommand[] } {
  if (value === undefined) return { commands: [], rejected: [] };
  const list = r.array(path, value, COMMAND_LIMITS.maxCommands);
  const commands: FleetCommand[] = [];
  const rejected: RejectedCommand[] = [];
  list.forEach((item, i) => {
    try {
      commands.push(readCommand(r, `${path}[${i}]`, item));
    } catch (err) {
      if (!(err instanceof SyncWireError)) throw err;
      const rawId = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>).id : undefined;
      rejected.push({ id: typeof rawId === 'string' && UUID.test(rawId) ? rawId : null, reason: err.message });
    }
  });
  return { commands, rejected };
}

/** Validates one command result. @throws SyncWireError naming the bad field. */
export function readCommandResult(r: WireReader, path: string, value: unknown): CommandResult {
  const o = r.object(path, value);
  const id = r.string(`${path}.id`, o.id, 36);
  if (!UUID.test(id)) r.fail(`${path}.id`, 'a lower-case UUID', o.id);
  return {
    id,
    outcome: r.oneOf(`${path}.outcome`, o.outcome, COMMAND_OUTCOMES),
    message: r.string(`${path}.message`, o.message, COMMAND_LIMITS.message),
    finishedAt: r.time(`${path}.finishedAt`, o.finishedAt),
  };
}

/** True for a lower-case UUID (command ids). */
export function isCommandId(text: string): boolean {
  return UUID.test(text);
}

/** Cuts `text` to the wire's message limit. */
export function clipMessage(text: string): string {
  return text.length > COMMAND_LIMITS.message ? `${text.slice(0, COMMAND_LIMITS.message - 1)}…` : text;
}
