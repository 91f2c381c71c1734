/**
 * @module Prometheus metrics of the agent (prom-client), served at `GET /metrics` on the
 * management listener: hosts by state, reconcile steps and their durations, transient
 * provisioner errors, controller-sync backlog and failures, events by source, and Node's
 * default process metrics (event-loop lag, heap, CPU). Boot-service and BMC families are
 * added by their owners through {@link AgentMetrics.registry}.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Reconciler } from './host/reconciler.js';
import type { Store } from './store/types.js';
import type { SyncLoop } from './sync/index.js';

/** The agent's metric registry and the hooks that feed it. */
export interface AgentMetrics {
  registry: Registry;
  /** Prometheus text exposition of every family. */
  render(): Promise<string>;
  /** Stops listening to the reconciler and store. */
  close(): void;
}

/** Sources whose numbers the metrics read. */
export interface MetricSources {
  store: Store;
  reconciler: Reconciler;
  sync: SyncLoop;
}

/** Creates the registry and subscribes to the agent's parts. */
export function createAgentMetrics(sources: MetricSources): AgentMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });

  new Gauge({
    name: 'rackside_hosts',
    help: 'BareMetalHosts by provisioning state and operational status.',
    labelNames: ['state', 'operational_status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const host of await sources.store.listHosts()) {
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
  return {
    registry,
    render: () => registry.metrics(),
    close: () => {
      stopSteps();
      stopEvents();
    },
  };
}
