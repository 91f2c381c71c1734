/**
 * @module Prometheus metrics of the controller itself (`GET /metrics`, docs/controller.md,
 * "Metrics"), in a registry of its own: push counts and latency by result, what pushes applied,
 * and fleet gauges (racks online/offline/revoked, hosts per state, commands per state) read from
 * the database at scrape time, so every controller process reports the same fleet.
 */
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { IngestOutcome } from './ingest.js';

/** The controller's metrics. */
export interface ControllerMetrics {
  readonly registry: Registry;
  recordIngest(outcome: IngestOutcome): void;
  observePush(result: string, seconds: number): void;
  /** A command queued through the API. */
  commandQueued(kind: string): void;
}

/** Makes the registry; the fleet gauges query `pool` at scrape time (`offlineAfterSeconds` decides offline). */
export function createControllerMetrics(pool: pg.Pool, offlineAfterSeconds: number): ControllerMetrics {
  const registry = new Registry();
  const pushes = new Counter({ name: 'rackside_controller_pushes_total', help: 'Push requests by result (applied, duplicate, unauthorized, invalid, unavailable, error).', labelNames: ['result'], registers: [registry] });
  const duration = new Histogram({
    name: 'rackside_controller_push_duration_seconds', help: 'Time from a push request to its answer, by result.', labelNames: ['result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10], registers: [registry],
  });
  const hosts = new Counter({ name: 'rackside_controller_host_summaries_total', help: 'Host summaries and deletions applied.', registers: [registry] });
  const events = new Counter({ name: 'rackside_controller_events_total', help: 'Events appended.', registers: [registry] });
  const resets = new Counter({ name: 'rackside_controller_stream_resets_total', help: 'Pushes that opened a new stream for a known agent (its state was reset).', registers: [registry] });
  const results = new Counter({ name: 'rackside_controller_command_results_total', help: 'Command outcomes reported by racks and applied.', registers: [registry] });
  const delivered = new Counter({ name: 'rackside_controller_command_deliveries_total', help: 'Commands handed to racks in push answers (a command is resent until its outcome arrives).', registers: [registry] });
  const queued = new Counter({ name: 'rackside_controller_commands_queued_total', help: 'Commands queued by operators, by kind.', labelNames: ['kind'], registers: [registry] });
  new Gauge({
    name: 'rackside_controller_racks', help: 'Racks by state (online, offline, never: registered but never pushed, revoked).', labelNames: ['state'], registers: [registry],
    async collect() {
      const res = await pool.query<{ state: string; n: string }>(
        `SELECT CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN last_push_at IS NULL THEN 'never'
                     WHEN last_push_at < now() - make_interval(secs => $1) THEN 'offline' ELSE 'online' END AS state, count(*)::text AS n
           FROM racks GROUP BY 1`, [offlineAfterSeconds]);
      this.reset();
      for (const s of ['online', 'offline', 'never', 'revoked']) this.set({ state: s }, Number(res.rows.find((r) => r.state === s)?.n ?? 0));
    },
  });
  new Gauge({
    name: 'rackside_controller_hosts', help: 'Hosts (not deleted) across the fleet by provisioning state.', labelNames: ['state'], registers: [registry],
    async collect() {
      const res = await pool.query<{ state: string; n: string }>(`SELECT state, count(*)::text AS n FROM hosts WHERE deleted_at IS NULL GROUP BY state`);
      this.reset();
      for (const r of res.rows) this.set({ state: r.state === '' ? 'none' : r.state }, Number(r.n));
    },
  });
  new Gauge({
    name: 'rackside_controller_commands', help: 'Commands by state (queued, delivered, done, failed, expired).', labelNames: ['state'], registers: [registry],
    async collect() {
      const res = await pool.query<{ state: string; n: string }>(`SELECT state, count(*)::text AS n FROM commands GROUP BY state`);
      this.reset();
      for (const s of ['queued', 'delivered', 'done', 'failed', 'expired']) this.set({ state: s }, Number(res.rows.find((r) => r.state === s)?.n ?? 0));
    },
  });
  return {
    registry,
    recordIngest(outcome) {
      delivered.inc(outcome.commands.length);
      if (outcome.duplicate) return;
      hosts.inc(outcome.hosts + outcome.deletedHosts);
      events.inc(outcome.events);
      results.inc(outcome.commandResults);
      if (outcome.reset) resets.inc();
    },
    observePush(result, seconds) {
      pushes.inc({ result });
      duration.observe({ result }, seconds);
    },
    commandQueued(kind) {
      queued.inc({ kind });
    },
  };
}
