/**
 * @module Periodic upkeep (docs/controller.md, "Retention"): events past their age or beyond
 * the per-rack count go, old idempotency-ledger rows and finished commands go, and queued
 * commands past their expiry become `expired` even for a rack that never comes back. One
 * controller at a time does a round (a transaction-level advisory lock; the others skip it).
 */
import type pg from 'pg';
import type { ControllerConfig } from './config.js';
import { inTransaction } from './db/pool.js';

/** Advisory lock key of a retention round. */
export const RETENTION_LOCK_KEY = 7_311_402_032;

/** What one round removed or changed. */
export interface RetentionReport {
  ran: boolean;
  eventsByAge: number;
  eventsByCount: number;
  batches: number;
  commandsExpired: number;
  commandsDeleted: number;
}

/** Runs one round now. */
export async function runRetention(pool: pg.Pool, retention: ControllerConfig['retention']): Promise<RetentionReport> {
  return inTransaction(pool, async (db) => {
    const report: RetentionReport = { ran: false, eventsByAge: 0, eventsByCount: 0, batches: 0, commandsExpired: 0, commandsDeleted: 0 };
    const lock = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [RETENTION_LOCK_KEY]);
    if (lock.rows[0]?.ok !== true) return report;
    report.ran = true;
    report.eventsByAge = (await db.query(`DELETE FROM events WHERE time < now() - make_interval(days => $1)`, [retention.eventMaxAgeDays])).rowCount ?? 0;
    const racks = await db.query<{ id: string }>('SELECT id::text AS id FROM racks');
    for (const { id } of racks.rows) {
      const res = await db.query(
        `DELETE FROM events WHERE rack_id = $1 AND id <= (SELECT id FROM events WHERE rack_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
        [id, retention.eventsPerRack],
      );
      report.eventsByCount += res.rowCount ?? 0;
    }
    report.batches = (await db.query(`DELETE FROM applied_batches WHERE applied_at < now() - make_interval(days => $1)`, [retention.batchLedgerDays])).rowCount ?? 0;
    report.commandsExpired = (await db.query(
      `UPDATE commands SET state = 'expired', finished_at = now(), error = 'expired before the rack fetched it' WHERE state = 'queued' AND expires_at <= now()`,
    )).rowCount ?? 0;
    report.commandsDeleted = (await db.query(
      `DELETE FROM commands WHERE state IN ('done', 'failed', 'expired') AND finished_at < now() - make_interval(days => $1)`, [retention.commandDays],
    )).rowCount ?? 0;
    return report;
  });
}
