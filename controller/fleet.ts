/**
 * @module Fleet reads for the API and the page: racks with their push health and state counts,
 * host search across racks (name, boot MAC, serial, error text, state, rack), and one host with
 * its recent events. Every query is bounded (limits) and read-only.
 */
import type pg from 'pg';
import type { HostSummary } from '../wire/index.js';

/** One rack as the fleet view shows it. Times are RFC 3339 or null. */
export interface RackView {
  name: string;
  agentId: string | null;
  agentVersion: string | null;
  wireVersion: number | null;
  statusUrl: string | null;
  lastPushAt: string | null;
  /** Seconds between the last batch being built on the rack and its arrival here. */
  lagSeconds: number | null;
  /** Records waiting in the rack's outbox, as it last reported (version 2). */
  backlog: { hosts: number; events: number } | null;
  /** No push within `offlineAfterSeconds` (or never). */
  offline: boolean;
  revoked: boolean;
  pushes: number;
  resets: number;
  hosts: number;
  errors: number;
  /** Hosts per provisioning state (`''` shown as `none`). */
  states: Record<string, number>;
  pendingCommands: number;
}

interface RackRow {
  name: string; agent_id: string | null; agent_version: string | null; wire_version: number | null; status_url: string | null;
  last_push_at: Date | null; lag: number | null; backlog_hosts: number | null; backlog_events: number | null;
  offline: boolean; revoked: boolean; pushes: string; resets: number; pending: string;
}

/** Every rack, by name. */
export async function listRacks(pool: pg.Pool, offlineAfterSeconds: number): Promise<RackView[]> {
  const racks = await pool.query<RackRow>(
    `SELECT r.name, r.agent_id, r.agent_version, r.wire_version, r.status_url, r.last_push_at,
            EXTRACT(EPOCH FROM (r.last_push_at - r.last_sent_at))::float8 AS lag, r.backlog_hosts, r.backlog_events,
            (r.last_push_at IS NULL OR r.last_push_at < now() - make_interval(secs => $1)) AS offline,
            r.revoked_at IS NOT NULL AS revoked, r.pushes::text AS pushes, r.resets,
            (SELECT count(*) FROM commands c WHERE c.rack_id = r.id AND c.state IN ('queued', 'delivered'))::text AS pending
       FROM racks r ORDER BY r.name`,
    [offlineAfterSeconds],
  );
  const counts = await pool.query<{ name: string; state: string; n: string; errors: string }>(
    `SELECT r.name, h.state, count(*)::text AS n, count(*) FILTER (WHERE h.error_type <> '')::text AS errors
       FROM hosts h JOIN racks r ON r.id = h.rack_id WHERE h.deleted_at IS NULL GROUP BY r.name, h.state`,
  );
  return racks.rows.map((r) => {
    const states: Record<string, number> = {};
    let hosts = 0;
    let errors = 0;
    for (const c of counts.rows.filter((x) => x.name === r.name)) {
      states[c.state === '' ? 'none' : c.state] = Number(c.n);
      hosts += Number(c.n);
      errors += Number(c.errors);
    }
    return {
      name: r.name, agentId: r.agent_id, agentVersion: r.agent_version, wireVersion: r.wire_version, statusUrl: r.status_url,
      lastPushAt: r.last_push_at?.toISOString() ?? null, lagSeconds: r.lag === null ? null : Math.max(0, Math.round(r.lag * 1000) / 1000),
      backlog: r.backlog_hosts === null || r.backlog_events === null ? null : { hosts: r.backlog_hosts, events: r.backlog_events },
      offline: r.offline, revoked: r.revoked, pushes: Number(r.pushes), resets: r.resets, hosts, errors, states, pendingCommands: Number(r.pending),
    };
  });
}

/** Host search criteria; all optional and combined with AND. */
export interface HostQuery {
  /** Free text: a name prefix or substring, a boot MAC, a serial, or words of the error message. */
  q?: string;
  state?: string;
  rack?: string;
  /** Only hosts with an error. */
  errorsOnly?: boolean;
  includeDeleted?: boolean;
  limit?: number;
}

/** One host found. */
export interface HostRow {
  rack: string;
  namespace: string;
  name: string;
  state: string;
  operationalStatus: string;
  errorType: string;
  errorMessage: string;
  bootMACAddress: string | null;
  serialNumber: string | null;
  poweredOn: boolean;
  updatedAt: string;
  deleted: boolean;
}

interface HostDbRow {
  rack: string; namespace: string; name: string; state: string; operational_status: string; error_type: string; error_message: string;
  boot_mac: string | null; serial_number: string | null; powered_on: boolean | null; updated_at: Date; deleted_at: Date | null;
}

/** Escapes LIKE wildcards so search text matches literally. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Searches hosts across racks, newest change first, at most `limit` (default 100, max 1000). */
export async function searchHosts(pool: pg.Pool, query: HostQuery): Promise<HostRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (v: unknown): string => `$${params.push(v)}`;
  if (query.includeDeleted !== true) where.push('h.deleted_at IS NULL');
  if (query.state !== undefined) where.push(`h.state = ${param(query.state === 'none' ? '' : query.state)}`);
  if (query.rack !== undefined) where.push(`r.name = ${param(query.rack)}`);
  if (query.errorsOnly === true) where.push(`h.error_type <> ''`);
  const q = query.q?.trim() ?? '';
  if (q !== '') {
    const like = param(`%${likeLiteral(q.toLowerCase())}%`);
    const exact = param(q.toLowerCase());
    where.push(`(lower(h.name) LIKE ${like} OR h.boot_mac = ${exact} OR lower(h.serial_number) = ${exact} OR lower(h.error_message) LIKE ${like})`);
  }
  const limit = Math.min(1000, Math.max(1, query.limit ?? 100));
  const res = await pool.query<HostDbRow>(
    `SELECT r.name AS rack, h.namespace, h.name, h.state, h.operational_status, h.error_type, h.error_message, h.boot_mac, h.serial_number,
            (h.summary->>'poweredOn')::boolean AS powered_on, h.updated_at, h.deleted_at
       FROM hosts h JOIN racks r ON r.id = h.rack_id
      ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
      ORDER BY h.updated_at DESC, r.name, h.namespace, h.name LIMIT ${limit}`,
    params,
  );
  return res.rows.map((h) => ({
    rack: h.rack, namespace: h.namespace, name: h.name, state: h.state, operationalStatus: h.operational_status, errorType: h.error_type,
    errorMessage: h.error_message, bootMACAddress: h.boot_mac, serialNumber: h.serial_number, poweredOn: h.powered_on === true,
    updatedAt: h.updated_at.toISOString(), deleted: h.deleted_at !== null,
  }));
}

/** One event as stored. */
export interface EventView {
  seq: number;
  time: string;
  type: string;
  reason: string;
  message: string;
  host: string | null;
  mac: string | null;
  source: string;
}

/** One host's last summary and its newest events (at most `eventLimit`, newest first); undefined when unknown. */
export async function getHost(pool: pg.Pool, rack: string, namespace: string, name: string, eventLimit = 100): Promise<{ rack: string; summary: HostSummary; updatedAt: string; deleted: boolean; events: EventView[] } | undefined> {
  const res = await pool.query<{ rack_id: string; summary: HostSummary; updated_at: Date; deleted_at: Date | null }>(
    `SELECT h.rack_id::text AS rack_id, h.summary, h.updated_at, h.deleted_at FROM hosts h JOIN racks r ON r.id = h.rack_id
      WHERE r.name = $1 AND h.namespace = $2 AND h.name = $3`,
    [rack, namespace, name],
  );
  const row = res.rows[0];
  if (row === undefined) return undefined;
  const events = await pool.query<{ seq: string; time: Date; type: string; reason: string; message: string; host: string | null; mac: string | null; source: string }>(
    `SELECT seq::text AS seq, time, type, reason, message, host, mac, source FROM events WHERE rack_id = $1 AND host = $2 ORDER BY id DESC LIMIT $3`,
    [row.rack_id, name, Math.min(1000, Math.max(1, eventLimit))],
  );
  return {
    rack, summary: row.summary, updatedAt: row.updated_at.toISOString(), deleted: row.deleted_at !== null,
    events: events.rows.map((e) => ({ ...e, seq: Number(e.seq), time: e.time.toISOString() })),
  };
}
