/**
 * @module Prometheus metrics of the agent (prom-client), served at `GET /metrics` on the
 * management listener: hosts by state, reconcile steps and their durations, transient
 * provisioner errors, controller-sync backlog and failures, events by source, and Node's
 * default process metrics (event-loop lag, heap, CPU). Boot-service and BMC families are
 * added by their owners through {@link AgentMetrics.registry}.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Reconciler } from './host/reconciler.js';
import type { EventLog, HostReader } from './store/types.js';
import type { SyncLoop } from './sync/index.js';
import type { BmcCallRecorder } from './bmc/bmc-call-recorder.js';
import { LoopLagSampler, type LoopLagSnapshot } from './loop-lag.js';
import { isJsonObject } from './json-value.js';

/** The agent's metric registry and the hooks that feed it. */
export interface AgentMetrics {
  registry: Registry;
  /** Prometheus text exposition of every family. */
  render(): Promise<string>;
  /** Stops listening to the reconciler and store. */
  close(): void;
}

/** Boot-service counters as {@link BootServices.stats} reports them (shapes checked at read time). */
export type BootStatsSource = () => Record<string, unknown>;

/** Sources whose numbers the metrics read. */
export interface MetricSources {
  /** Host counts by state (the shared snapshot) and event counters. */
  store: Pick<HostReader, 'hostSnapshot'> & Pick<EventLog, 'onEvent'>;
  reconciler: Reconciler;
  sync: SyncLoop;
  /** DHCP, boot HTTP (and TFTP) counters; absent when no boot services run. */
  boot?: BootStatsSource;
  /** BMC calls of the local provisioner's drivers; absent with the fixture and demo provisioners. */
  bmc?: BmcCallRecorder;
}

function record(value: unknown): Record<string, unknown> {
  return isJsonObject(value) ? value : {};
}

function countsOf(value: unknown): [string, number][] {
  return Object.entries(record(value)).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]));
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Creates the registry and subscribes to the agent's parts. */
export function createAgentMetrics(sources: MetricSources): AgentMetrics {
  const registry = new Registry();
  // prom-client's own delay monitor is parked (its timer would wake the process every 10 ms for
  // good); the nodejs_eventloop_lag_* percentiles come from the adaptive sampler instead.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: PARKED_MONITOR_MS });
  const loopLag = registerLoopLagMetrics(registry);

  new Gauge({
    name: 'rackside_hosts',
    help: 'BareMetalHosts by provisioning state and operational status.',
    labelNames: ['state', 'operational_status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const host of await sources.store.hostSnapshot()) {
        const state = host.status.provisioning.state === '' ? 'none' : host.status.provisioning.state;
        this.inc({ state, operational_status: host.status.operationalStatus === '' ? 'none' : host.status.operationalStatus });
      }
    },
  });
  const steps = new Histogram({
    name: 'rackside_reconcile_duration_seconds',
    help: 'Duration of one host reconcile step (state machine and provisioner calls).',
    labelNames: ['result'],
    buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 2, 10, 60],
    registers: [registry],
  });
  const transitions = new Counter({
    name: 'rackside_state_transitions_total',
    help: 'Provisioning state transitions.',
    labelNames: ['from', 'to'],
    registers: [registry],
  });
  const stopSteps = sources.reconciler.onStep((_name, outcome, durationMs) => {
    steps.observe({ result: outcome.result.kind }, durationMs / 1000);
    if (outcome.change !== undefined) {
      transitions.inc({ from: outcome.change.from === '' ? 'none' : outcome.change.from, to: outcome.change.to });
    }
  });
  const events = new Counter({
    name: 'rackside_events_total',
    help: 'Events recorded, by source and type.',
    labelNames: ['source', 'type'],
    registers: [registry],
  });
  const stopEvents = sources.store.onEvent((event) => {
    events.inc({ source: event.source, type: event.type });
  });
  new Gauge({
    name: 'rackside_sync_backlog',
    help: 'Summaries not yet acknowledged by the controller.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const status = sources.sync.status();
      this.set({ kind: 'hosts' }, status.backlog.hosts);
      this.set({ kind: 'events' }, status.backlog.events);
    },
  });
  new Gauge({
    name: 'rackside_sync_consecutive_failures',
    help: 'Controller deliveries failed in a row (0 when the last one was acknowledged).',
    registers: [registry],
    collect() {
      this.set(sources.sync.status().consecutiveFailures);
    },
  });
  if (sources.boot !== undefined) registerBootMetrics(registry, sources.boot);
  const bmcCalls = new Histogram({
    name: 'rackside_bmc_call_duration_seconds',
    help: 'BMC calls by driver, operation (capability.method) and outcome (ok or the RACKSIDE_ERR_BMC_* code), with their latency.',
    labelNames: ['driver', 'operation', 'outcome'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 10, 30, 120],
    registers: [registry],
  });
  const stopBmc = sources.bmc?.onCall((call) => {
    bmcCalls.observe({ driver: call.driver, operation: call.operation, outcome: call.outcome }, call.durationMs / 1000);
  });
  return {
    registry,
    render: () => registry.metrics(),
    close: () => {
      loopLag.stop();
      stopSteps();
      stopEvents();
      stopBmc?.();
    },
  };
}

/** A period prom-client's monitor never reaches (≈ 24.8 days, the largest libuv accepts as an int32). */
const PARKED_MONITOR_MS = 2_147_483_647;

/** The histogram-backed `nodejs_eventloop_lag_*` gauges (prom-client's names and meanings, read from {@link LoopLagSampler}). */
const LOOP_LAG_GAUGES: readonly [name: string, help: string, read: (s: LoopLagSnapshot) => number][] = [
  ['nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', (s) => s.min],
  ['nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', (s) => s.max],
  ['nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', (s) => s.mean],
  ['nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.', (s) => s.stddev],
  ['nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', (s) => s.p50],
  ['nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.', (s) => s.p90],
  ['nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', (s) => s.p99],
];

/**
 * Replaces prom-client's histogram-backed event-loop gauges with ones read from a started
 * {@link LoopLagSampler} (same names; delays beyond the schedule since the previous scrape).
 * Returns the sampler; stop it when the registry is dropped.
 */
export function registerLoopLagMetrics(registry: Registry, sampler = new LoopLagSampler()): LoopLagSampler {
  const gauges = LOOP_LAG_GAUGES.map(([name, help], index) => {
    registry.removeSingleMetric(name);
    return new Gauge({
      name,
      help: `${help} Beyond the schedule, since the previous scrape.`,
      registers: [registry],
      // The first gauge of a scrape takes the interval's numbers and sets every gauge (prom-client's pattern).
      ...(index === 0 ? { collect: () => { setLoopLagGauges(gauges, sampler.take()); } } : {}),
    });
  });
  sampler.start();
  return sampler;
}

function setLoopLagGauges(gauges: readonly Gauge[], snapshot: LoopLagSnapshot): void {
  LOOP_LAG_GAUGES.forEach(([, , read], index) => { gauges[index]?.set(read(snapshot)); });
}

/**
 * DHCP packets by type and outcome, leases, boot HTTP requests/bytes/in flight and TFTP
 * transfers, read from the services' own counters at scrape time (counters are monotonic in
 * the services, so each scrape sets them to the current totals).
 */
function registerBootMetrics(registry: Registry, boot: BootStatsSource): void {
  const snapshot = (): Record<string, unknown> => {
    try {
      return boot();
    } catch {
      return {};
    }
  };
  const totals = (name: string, help: string, labelNames: string[], read: (stats: Record<string, unknown>) => [Record<string, string>, number][]): void => {
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const [labels, value] of read(snapshot())) this.inc(labels, value);
      },
    });
  };
  const dhcp = (stats: Record<string, unknown>): Record<string, unknown> => record(stats.dhcp);
  totals('rackside_dhcp_received_total', 'DHCP messages received, by message type.', ['type'], (s) => countsOf(dhcp(s).received).map(([type, v]) => [{ type }, v]));
  totals('rackside_dhcp_replies_total', 'DHCP replies sent, by message type.', ['type'], (s) => countsOf(dhcp(s).replies).map(([type, v]) => [{ type }, v]));
  totals('rackside_dhcp_ignored_total', 'DHCP requests left unanswered, by reason.', ['reason'], (s) => countsOf(dhcp(s).ignored).map(([reason, v]) => [{ reason }, v]));
  totals('rackside_dhcp_dropped_total', 'Malformed or unwanted DHCP datagrams dropped, by reason.', ['reason'], (s) => countsOf(dhcp(s).dropped).map(([reason, v]) => [{ reason }, v]));
  new Gauge({
    name: 'rackside_dhcp_leases',
    help: 'Lease records held by the DHCP server (bound, offered and quarantined).',
    registers: [registry],
    collect() {
      this.set(numberOf(record(dhcp(snapshot()).leases).records) ?? 0);
    },
  });
  const http = (stats: Record<string, unknown>): Record<string, unknown> => record(stats.http);
  totals('rackside_http_requests_total', 'Boot HTTP requests, by status code.', ['status'], (s) => countsOf(http(s).byStatus).map(([status, v]) => [{ status }, v]));
  totals('rackside_http_sent_bytes_total', 'Bytes sent by boot HTTP.', [], (s) => [[{}, numberOf(http(s).bytes) ?? 0]]);
  new Gauge({
    name: 'rackside_http_transfers_in_flight',
    help: 'Boot HTTP responses being sent now.',
    registers: [registry],
    collect() {
      this.set(numberOf(http(snapshot()).active) ?? 0);
    },
  });
  const tftp = (stats: Record<string, unknown>): Record<string, unknown> => record(stats.tftp);
  totals('rackside_tftp_transfers_total', 'TFTP transfers, by outcome.', ['outcome'], (s) =>
    Object.entries({ done: tftp(s).completedTransfers, error: tftp(s).failedTransfers })
      .filter((e): e is [string, number] => typeof e[1] === 'number')
      .map(([outcome, v]) => [{ outcome }, v]),
  );
  totals('rackside_tftp_sent_bytes_total', 'Bytes sent by TFTP.', [], (s) => [[{}, numberOf(tftp(s).bytesSent) ?? 0]]);
  totals('rackside_boot_requests_deferred_total', 'DHCP, TFTP and boot HTTP requests that waited for a later event-loop turn: the turn had spent its handling budget (bootsvc/turn-budget.ts).', [], (s) => [
    [{}, numberOf(record(s.turnBudget).deferred) ?? 0],
  ]);
  totals('rackside_tftp_threaded_transfers_total', 'Finished TFTP transfers whose DATA and ACKs ran on the transfer thread.', [], (s) => [
    [{}, numberOf(tftp(s).threadedTransfers) ?? 0],
  ]);
}
