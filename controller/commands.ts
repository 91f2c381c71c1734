/**
 * @module Operator commands queued for a rack (docs/controller.md, "Commands"): validation of
 * `POST /api/v1/commands` bodies (a 400 names the field), the queue insert, and listings. A
 * command waits in state `queued` until the rack's next push fetches it (`delivered`), and ends
 * `done` or `failed` with the rack's message — or `expired`, when its expiry passes before the
 * rack fetched it (or the rack saw it too late and did not start it).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { COMMAND_KINDS, type CommandKind } from '../wire/index.js';
import { HttpError } from './http-util.js';

/** A validated request to queue a command. */
export interface CommandRequest {
  rack: string;
  kind: CommandKind;
  host?: { namespace: string; name: string };
  manifest?: string;
  expiresInSeconds: number;
}

/** A command as listed. Times are RFC 3339 or null. */
export interface CommandView {
  id: string;
  rack: string;
  kind: string;
  host: string | null;
  state: string;
  createdAt: string;
  expiresAt: string;
  deliveredAt: string | null;
  deliveries: number;
  finishedAt: string | null;
  /** The rack's message on failure (or why it expired). */
  error: string | null;
  /** The rack's message on success. */
  message: string | null;
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * Validates a queue request body. `host` is `NAME` or `NAMESPACE/NAME` (namespace `default`).
 * @throws HttpError 400 naming the field
 */
export function decodeCommandRequest(body: unknown, limits: { defaultExpirySeconds: number; maxManifestBytes: number }): CommandRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'expected a JSON object', 'body');
  const o = body as Record<string, unknown>;
  if (typeof o.rack !== 'string' || o.rack === '') throw new HttpError(400, 'expected the rack name', 'rack');
  if (typeof o.kind !== 'string' || !(COMMAND_KINDS as readonly string[]).includes(o.kind)) throw new HttpError(400, `expected one of ${COMMAND_KINDS.join(', ')}`, 'kind');
  const kind = o.kind as CommandKind;
  let expiresInSeconds = limits.defaultExpirySeconds;
  if (o.expiresInSeconds !== undefined) {
    if (typeof o.expiresInSeconds !== 'number' || !Number.isInteger(o.expiresInSeconds) || o.expiresInSeconds < 1 || o.expiresInSeconds > 31_536_000) {
      throw new HttpError(400, 'expected whole seconds from 1 to 31536000', 'expiresInSeconds');
    }
    expiresInSeconds = o.expiresInSeconds;
  }
  if (kind === 'apply') {
    if (typeof o.manifest !== 'string' || o.manifest.trim() === '') throw new HttpError(400, 'expected the YAML manifest text', 'manifest');
    if (Buffer.byteLength(o.manifest, 'utf8') > limits.maxManifestBytes) throw new HttpError(413, `manifest larger than commands.maxManifestBytes (${limits.maxManifestBytes})`, 'manifest');
    if (o.host !== undefined) throw new HttpError(400, 'apply takes no host (the manifest names its hosts)', 'host');
    return { rack: o.rack, kind, manifest: o.manifest, expiresInSeconds };
  }
  if (o.manifest !== undefined) throw new HttpError(400, `${kind} takes no manifest`, 'manifest');
  if (typeof o.host !== 'string') throw new HttpError(400, 'expected the host as NAME or NAMESPACE/NAME', 'host');
  const parts = o.host.split('/');
  const [namespace, name] = parts.length === 1 ? ['default', parts[0] ?? ''] : [parts[0] ?? '', parts[1] ?? ''];
  if (parts.length > 2 || !NAME.test(namespace) || !NAME.test(name)) throw new HttpError(400, `expected NAME or NAMESPACE/NAME, got ${JSON.stringify(o.host.slice(0, 80))}`, 'host');
  return { rack: o.rack, kind, host: { namespace, name }, expiresInSeconds };
}

/** Queues a command; resolves with it. @throws HttpError 404 when the rack is unknown, 409 when it is revoked */
export async function queueCommand(pool: pg.Pool, request: CommandRequest): Promise<CommandView> {
  const rack = await pool.query<{ id: string; revoked: boolean }>('SELECT id::text AS id, revoked_at IS NOT NULL AS revoked FROM racks WHERE name = $1', [request.rack]);
  const row = rack.rows[0];
  if (row === undefined) throw new HttpError(404, `no rack named ${request.rack}`, 'rack');
  if (row.revoked) throw new HttpError(409, `rack ${request.rack} is revoked: it cannot fetch commands`, 'rack');
  const id = randomUUID();
  await pool.query(
    `INSERT INTO commands (id, rack_id, kind, namespace, host, body, state, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'queued', now() + make_interval(secs => $7))`,
    [id, row.id, request.kind, request.host?.namespace ?? null, request.host?.name ?? null,
      JSON.stringify(request.manifest === undefined ? {} : { manifest: request.manifest }), request.expiresInSeconds],
  );
  const view = await getCommand(pool, id);
  if (view === undefined) throw new Error(`command ${id} vanished after insert`);
  return view;
}

interface CommandDbRow {
  id: string; rack: string; kind: string; namespace: string | null; host: string | null; state: string; created_at: Date; expires_at: Date;
  delivered_at: Date | null; deliveries: number; finished_at: Date | null; error: string | null; result: { message?: string } | null;
}

const SELECT = `SELECT c.id::text AS id, r.name AS rack, c.kind, c.namespace, c.host, c.state, c.created_at, c.expires_at, c.delivered_at,
                       c.deliveries, c.finished_at, c.error, c.result FROM commands c JOIN racks r ON r.id = c.rack_id`;

function view(c: CommandDbRow): CommandView {
  return {
    id: c.id, rack: c.rack, kind: c.kind, host: c.host === null ? null : `${c.namespace ?? 'default'}/${c.host}`, state: c.state,
    createdAt: c.created_at.toISOString(), expiresAt: c.expires_at.toISOString(), deliveredAt: c.delivered_at?.toISOString() ?? null,
    deliveries: c.deliveries, finishedAt: c.finished_at?.toISOString() ?? null, error: c.error,
    message: c.state === 'done' ? (c.result?.message ?? null) : null,
  };
}

/** One command, or undefined. */
export async function getCommand(pool: pg.Pool, id: string): Promise<CommandView | undefined> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
  const res = await pool.query<CommandDbRow>(`${SELECT} WHERE c.id = $1::uuid`, [id]);
  const row = res.rows[0];
  return row === undefined ? undefined : view(row);
}

/** Commands, newest first, optionally of one rack and/or state; at most `limit` (≤ 1000). */
export async function listCommands(pool: pg.Pool, filter: { rack?: string; state?: string; limit?: number }): Promise<CommandView[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.rack !== undefined) where.push(`r.name = $${params.push(filter.rack)}`);
  if (filter.state !== undefined) where.push(`c.state = $${params.push(filter.state)}`);
  const limit = Math.min(1000, Math.max(1, filter.limit ?? 100));
  const res = await pool.query<CommandDbRow>(`${SELECT} ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY c.created_at DESC, c.id LIMIT ${limit}`, params);
  return res.rows.map(view);
}
