/**
 * @module Ingest of one push (docs/sync-wire-format.md; docs/controller.md, "Ingest"), in one
 * transaction that first locks the pushing rack's row (`SELECT … FOR UPDATE` by token hash, or by
 * name for a verified client certificate: pushes of one rack serialize, different racks never
 * wait on each other):
 * 1. idempotence on (agent, stream, sequence): a batch already applied — in the ledger, or at or
 *    below the stream's last sequence — changes nothing and is acknowledged again;
 * 2. a stream the agent never used before, when it used another, is recorded as a reset;
 * 3. host summaries upsert newest-revision-wins (a summary from a newer stream always wins);
 *    deleted hosts are marked, not removed; events are appended;
 * 4. version 2: command results close their commands (only the rack's own); pending commands
 *    are marked delivered and returned, so they go out in the answer to this very push.
 * The caller answers only after this resolves, that is after COMMIT.
 */
import type pg from 'pg';
import type { FleetCommand, PushRequest } from '../wire/index.js';
import { inTransaction, type Db } from './db/pool.js';
import { tokenDigest } from './racks.js';

/** Limits of one answer. */
export interface IngestLimits {
  /** Total manifest and command bytes handed out in one answer (at least one command goes). */
  maxAnswerBytes: number;
}

/** What one push did. */
export interface IngestOutcome {
  /** The rack the credential belongs to. */
  rack: string;
  /** The batch was applied before: nothing changed. */
  duplicate: boolean;
  /** This push opened a new stream for a known agent (its state was reset). */
  reset: boolean;
  hosts: number;
  deletedHosts: number;
  events: number;
  commandResults: number;
  /** Commands for the answer (version 2 only). */
  commands: FleetCommand[];
}

/**
 * What authenticated a push: a bearer token, or a client certificate the TLS layer verified
 * against `tls.clientCA`, by the rack name its subject CN carries.
 */
export type PushCredential = { token: string } | { certificateRack: string };

/** The credential is unknown or revoked, or names another rack: nothing was written. */
export class PushUnauthorized extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushUnauthorized';
  }
}

interface RackRow {
  id: string;
  name: string;
  agent_id: string | null;
  stream_id: string | null;
  last_sequence: string | null;
}

const RACK_COLUMNS = 'id::text AS id, name, agent_id, stream_id, last_sequence::text AS last_sequence';

/**
 * Locks the rack `credential` authenticates. A token matches only an unrevoked token rack (a
 * revoked one has no hash); a certificate matches only an unrevoked rack registered for
 * certificates, so a token rack cannot be pushed for with a certificate naming it.
 * @throws PushUnauthorized
 */
async function lockRack(db: Db, credential: PushCredential): Promise<RackRow> {
  if ('token' in credential) {
    const res = await db.query<RackRow>(`SELECT ${RACK_COLUMNS} FROM racks WHERE token_sha256 = $1 AND auth = 'token' AND revoked_at IS NULL FOR UPDATE`, [tokenDigest(credential.token)]);
    if (res.rows[0] === undefined) throw new PushUnauthorized('unknown or revoked rack token');
    return res.rows[0];
  }
  const name = credential.certificateRack;
  const res = await db.query<RackRow & { auth: string; revoked: boolean }>(
    `SELECT ${RACK_COLUMNS}, auth, revoked_at IS NOT NULL AS revoked FROM racks WHERE name = $1 FOR UPDATE`, [name]);
  const row = res.rows[0];
  if (row === undefined) throw new PushUnauthorized(`the client certificate names rack ${name}, which is not registered`);
  if (row.revoked) throw new PushUnauthorized(`rack ${name} is revoked`);
  if (row.auth !== 'cert') throw new PushUnauthorized(`rack ${name} authenticates by token, not by client certificate`);
  return row;
}

/** Applies `push` for the rack `credential` authenticates. @throws PushUnauthorized (nothing written), or a database error (rolled back) */
export async function ingestPush(pool: pg.Pool, credential: PushCredential, push: PushRequest, userAgent: string | undefined, limits: IngestLimits): Promise<IngestOutcome> {
  return inTransaction(pool, async (db) => {
    const rack = await lockRack(db, credential);
    const by = 'token' in credential ? 'token' : 'certificate';
    if (push.rack !== undefined && push.rack !== rack.name) throw new PushUnauthorized(`this ${by} belongs to rack ${rack.name}, not ${push.rack}`);
    const outcome: IngestOutcome = { rack: rack.name, duplicate: false, reset: false, hosts: 0, deletedHosts: 0, events: 0, commandResults: 0, commands: [] };
    if (await alreadyApplied(db, rack, push)) {
      outcome.duplicate = true;
    } else {
      outcome.reset = await recordStream(db, rack, push);
      outcome.hosts = await upsertHosts(db, rack.id, push);
      outcome.deletedHosts = await markDeleted(db, rack.id, push);
      outcome.events = await appendEvents(db, rack.id, push);
      outcome.commandResults = await closeCommands(db, rack.id, push);
      await db.query(
        'INSERT INTO applied_batches (rack_id, agent_id, stream_id, sequence, hosts, events) VALUES ($1, $2, $3, $4, $5, $6)',
        [rack.id, push.agentId, push.streamId, push.sequence, push.hosts.length + push.deletedHosts.length, push.events.length],
      );
      await updateRack(db, rack.id, push, userAgent, outcome.reset);
    }
    if (push.version >= 2) outcome.commands = await deliverCommands(db, rack.id, limits.maxAnswerBytes);
    return outcome;
  });
}

async function alreadyApplied(db: Db, rack: RackRow, push: PushRequest): Promise<boolean> {
  // Deliveries arrive in sequence order per stream (the agent sends one batch at a time).
  if (rack.agent_id === push.agentId && rack.stream_id === push.streamId && rack.last_sequence !== null && push.sequence <= Number(rack.last_sequence)) return true;
  const res = await db.query('SELECT 1 FROM applied_batches WHERE rack_id = $1 AND agent_id = $2 AND stream_id = $3 AND sequence = $4', [rack.id, push.agentId, push.streamId, push.sequence]);
  return res.rowCount === 1;
}

/** Records the stream on first sight; true when the agent had pushed on another stream before (a reset). */
async function recordStream(db: Db, rack: RackRow, push: PushRequest): Promise<boolean> {
  const res = await db.query<{ is_reset: boolean }>(
    `INSERT INTO rack_streams (rack_id, agent_id, stream_id, is_reset)
     SELECT $1, $2, $3, EXISTS (SELECT 1 FROM rack_streams WHERE rack_id = $1 AND agent_id = $2)
     ON CONFLICT DO NOTHING RETURNING is_reset`,
    [rack.id, push.agentId, push.streamId],
  );
  return res.rows[0]?.is_reset === true;
}

async function upsertHosts(db: Db, rackId: string, push: PushRequest): Promise<number> {
  if (push.hosts.length === 0) return 0;
  const rows = push.hosts.map((h) => ({
    namespace: h.namespace, name: h.name, rv: h.resourceVersion, state: h.state, op: h.operationalStatus,
    et: h.errorType, em: h.errorMessage, mac: h.bootMACAddress ?? null, serial: h.serialNumber ?? null, summary: h,
  }));
  const res = await db.query(
    `INSERT INTO hosts (rack_id, namespace, name, stream_id, resource_version, state, operational_status, error_type, error_message, boot_mac, serial_number, summary)
     SELECT $1, x.namespace, x.name, $2, x.rv::numeric, x.state, x.op, x.et, x.em, lower(x.mac), x.serial, x.summary
       FROM jsonb_to_recordset($3::jsonb) AS x(namespace text, name text, rv text, state text, op text, et text, em text, mac text, serial text, summary jsonb)
     ON CONFLICT (rack_id, namespace, name) DO UPDATE SET
       stream_id = EXCLUDED.stream_id, resource_version = EXCLUDED.resource_version, state = EXCLUDED.state,
       operational_status = EXCLUDED.operational_status, error_type = EXCLUDED.error_type, error_message = EXCLUDED.error_message,
       boot_mac = EXCLUDED.boot_mac, serial_number = EXCLUDED.serial_number, summary = EXCLUDED.summary,
       updated_at = now(), deleted_at = NULL
     WHERE hosts.stream_id <> EXCLUDED.stream_id OR hosts.resource_version <= EXCLUDED.resource_version`,
    [rackId, push.streamId, JSON.stringify(rows)],
  );
  return res.rowCount ?? 0;
}

async function markDeleted(db: Db, rackId: string, push: PushRequest): Promise<number> {
  if (push.deletedHosts.length === 0) return 0;
  const res = await db.query(
    `UPDATE hosts SET deleted_at = now(), updated_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS x(namespace text, name text)
      WHERE hosts.rack_id = $1 AND hosts.namespace = x.namespace AND hosts.name = x.name AND hosts.deleted_at IS NULL`,
    [rackId, JSON.stringify(push.deletedHosts)],
  );
  return res.rowCount ?? 0;
}

async function appendEvents(db: Db, rackId: string, push: PushRequest): Promise<number> {
  if (push.events.length === 0) return 0;
  const res = await db.query(
    `INSERT INTO events (rack_id, stream_id, seq, time, type, reason, message, host, mac, source)
     SELECT $1, $2, x.seq, x.time, x.type, x.reason, x.message, x.host, x.mac, x.source
       FROM jsonb_to_recordset($3::jsonb) AS x(seq bigint, time timestamptz, type text, reason text, message text, host text, mac text, source text)`,
    [rackId, push.streamId, JSON.stringify(push.events)],
  );
  return res.rowCount ?? 0;
}

/** Closes commands the rack reports on; a rack closes only its own commands, and only open ones. */
async function closeCommands(db: Db, rackId: string, push: PushRequest): Promise<number> {
  const results = push.commandResults ?? [];
  if (results.length === 0) return 0;
  const res = await db.query(
    `UPDATE commands SET state = x.outcome, finished_at = x.finished_at, error = CASE WHEN x.outcome = 'done' THEN NULL ELSE x.message END,
            result = jsonb_build_object('message', x.message)
       FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, outcome text, message text, finished_at timestamptz)
      WHERE commands.id = x.id AND commands.rack_id = $1 AND commands.state IN ('queued', 'delivered')`,
    [rackId, JSON.stringify(results.map((r) => ({ id: r.id, outcome: r.outcome, message: r.message, finished_at: r.finishedAt })))],
  );
  return res.rowCount ?? 0;
}

async function updateRack(db: Db, rackId: string, push: PushRequest, userAgent: string | undefined, reset: boolean): Promise<void> {
  await db.query(
    `UPDATE racks SET agent_id = $2, stream_id = $3, last_sequence = $4, last_push_at = now(), last_sent_at = $5,
            agent_version = COALESCE($6, agent_version), status_url = COALESCE($7, status_url),
            backlog_hosts = $8, backlog_events = $9, wire_version = $10, boot_services = COALESCE($11::jsonb, boot_services),
            pushes = pushes + 1, resets = resets + $12
      WHERE id = $1`,
    [
      rackId, push.agentId, push.streamId, push.sequence, push.sentAt,
      push.agentVersion ?? userAgent ?? null, push.statusUrl ?? null,
      push.backlog?.hosts ?? null, push.backlog?.events ?? null, push.version,
      push.bootServices === undefined ? null : JSON.stringify(push.bootServices), reset ? 1 : 0,
    ],
  );
}

interface CommandRow {
  id: string;
  kind: FleetCommand['kind'];
  namespace: string | null;
  host: string | null;
  body: { manifest?: string };
  expires_at: Date;
}

/**
 * Expires queued commands past their expiry, then marks the rack's open commands delivered and
 * returns them (oldest first, within `maxBytes`). A delivered command is sent again with every
 * answer until the rack reports its outcome: the agent's ledger runs each id once.
 */
async function deliverCommands(db: Db, rackId: string, maxBytes: number): Promise<FleetCommand[]> {
  await db.query(
    `UPDATE commands SET state = 'expired', finished_at = now(), error = 'expired before the rack fetched it'
      WHERE rack_id = $1 AND state = 'queued' AND expires_at <= now()`,
    [rackId],
  );
  const res = await db.query<CommandRow>(
    `SELECT id::text AS id, kind, namespace, host, body, expires_at FROM commands
      WHERE rack_id = $1 AND state IN ('queued', 'delivered') ORDER BY created_at, id LIMIT 100`,
    [rackId],
  );
  const out: FleetCommand[] = [];
  let bytes = 0;
  for (const row of res.rows) {
    const command: FleetCommand = row.kind === 'apply'
      ? { id: row.id, kind: row.kind, manifest: row.body.manifest ?? '', expiresAt: row.expires_at.toISOString() }
      : { id: row.id, kind: row.kind, host: { namespace: row.namespace ?? '', name: row.host ?? '' }, expiresAt: row.expires_at.toISOString() };
    bytes += JSON.stringify(command).length;
    if (out.length > 0 && bytes > maxBytes) break;
    out.push(command);
  }
  if (out.length > 0) {
    await db.query(
      `UPDATE commands SET state = 'delivered', delivered_at = COALESCE(delivered_at, now()), deliveries = deliveries + 1
        WHERE id = ANY($1::uuid[]) AND rack_id = $2`,
      [out.map((c) => c.id), rackId],
    );
  }
  return out;
}
