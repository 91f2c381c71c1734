/**
 * @module The wire protocol between rackside's boot HTTP server and the in-ramdisk agent
 * (images/ramdisk/rackside-agent.sh), seen from the server: endpoint paths, the heartbeat
 * body the agent sends, and the line-based answer it understands. The answer is `KEY=VALUE`
 * lines rather than JSON because the agent is POSIX sh on busybox and must parse it without
 * evaluating anything.
 * @pure
 */

/** Path prefix of every ramdisk endpoint on the boot HTTP server. */
export const RAMDISK_API_PREFIX = '/ramdisk/v1';

/** Endpoints the agent POSTs to, each with `Authorization: Bearer <token>` and a JSON body. */
export const RamdiskEndpoint = {
  heartbeat: `${RAMDISK_API_PREFIX}/heartbeat`,
  inventory: `${RAMDISK_API_PREFIX}/inventory`,
  result: `${RAMDISK_API_PREFIX}/result`,
} as const;

/** Commands the current agent executes; anything else is answered with an error result. */
export const RAMDISK_COMMANDS = ['none', 'inspect', 'poweroff', 'reboot'] as const;

/** A command the agent executes. */
export type RamdiskCommandName = (typeof RAMDISK_COMMANDS)[number];

/** What the server answers to a heartbeat. */
export interface RamdiskCommand {
  command: RamdiskCommandName;
  /** Echoed back in the inventory/result so the server can match them. `[A-Za-z0-9._-]{1,64}`. */
  commandId?: string;
  /** Seconds until the next heartbeat (1..3600). */
  intervalSeconds?: number;
}

/** The body of a heartbeat as the agent sends it. */
export interface RamdiskHeartbeat {
  version: string | null;
  bootMac: string | null;
  ip: string | null;
  uptimeSeconds: number | null;
  lastCommandId: string | null;
}

/** Thrown for a command or heartbeat that does not follow the protocol. */
export class RamdiskProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RamdiskProtocolError';
  }
}

/** Renders the text/plain answer to a heartbeat; throws {@link RamdiskProtocolError} for an unsafe id or interval. */
export function encodeRamdiskCommand(cmd: RamdiskCommand): string {
  if (!(RAMDISK_COMMANDS as readonly string[]).includes(cmd.command)) throw new RamdiskProtocolError(`unknown command ${cmd.command}`);
  let out = `command=${cmd.command}\n`;
  if (cmd.commandId !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(cmd.commandId)) throw new RamdiskProtocolError('commandId must be 1-64 characters of [A-Za-z0-9._-]');
    out += `command_id=${cmd.commandId}\n`;
  }
  if (cmd.intervalSeconds !== undefined) {
    if (!Number.isInteger(cmd.intervalSeconds) || cmd.intervalSeconds < 1 || cmd.intervalSeconds > 3600) {
      throw new RamdiskProtocolError('intervalSeconds must be an integer 1..3600');
    }
    out += `interval_seconds=${cmd.intervalSeconds}\n`;
  }
  return out;
}

function nullableString(body: Record<string, unknown>, key: string): string | null {
  const v = body[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new RamdiskProtocolError(`heartbeat field ${key} must be a string or null`);
  return v;
}

/** Decodes a heartbeat body (already JSON-parsed); throws {@link RamdiskProtocolError} on a wrong shape. */
export function decodeRamdiskHeartbeat(body: unknown): RamdiskHeartbeat {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RamdiskProtocolError('heartbeat body must be a JSON object');
  const rec = body as Record<string, unknown>;
  const uptime = rec.uptime_seconds;
  if (uptime !== null && uptime !== undefined && (typeof uptime !== 'number' || !Number.isFinite(uptime) || uptime < 0)) {
    throw new RamdiskProtocolError('heartbeat field uptime_seconds must be a non-negative number or null');
  }
  return {
    version: nullableString(rec, 'version'),
    bootMac: nullableString(rec, 'boot_mac'),
    ip: nullableString(rec, 'ip'),
    uptimeSeconds: typeof uptime === 'number' ? uptime : null,
    lastCommandId: nullableString(rec, 'last_command_id'),
  };
}
