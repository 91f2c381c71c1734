/**
 * @module The `rackside_discovery_*` Prometheus families (docs/metrics.md, docs/discovery.md),
 * registered by the agent when discovery is on: MACs pending, admissions, refusals by reason,
 * hosts recorded, reports rejected by reason, and in-band BMC outcomes.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AdmissionStats } from './admissions.js';
import type { DiscoveryServiceStats } from './discovery-service.js';
import type { DiscoveryRouteStats } from './discovery-routes.js';

/** Everything the discovery families read at each scrape. */
export interface DiscoveryStats {
  admissions: AdmissionStats;
  service: DiscoveryServiceStats;
  routes: DiscoveryRouteStats;
}

/** Adds the `rackside_discovery_*` families to `registry`. */
export function registerDiscoveryMetrics(registry: Registry, stats: () => DiscoveryStats): void {
  new Gauge({
    name: 'rackside_discovery_pending',
    help: 'Unknown MACs handed a discovery boot whose ramdisk has not reported yet (bounded by discovery.maxPending).',
    registers: [registry],
    collect() {
      this.set(stats().admissions.pending);
    },
  });
  new Counter({
    name: 'rackside_discovery_admitted_total',
    help: 'Unknown MACs admitted to discovery (given a discovery token).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().admissions.admitted);
    },
  });
  new Counter({
    name: 'rackside_discovery_refused_total',
    help: 'Boot requests of unknown MACs refused discovery, by reason: pending-full (discovery.maxPending), hosts-full (discovery.maxHosts).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const { refused } = stats().admissions;
      this.reset();
      for (const [reason, n] of Object.entries(refused)) this.inc({ reason }, n);
    },
  });
  new Counter({
    name: 'rackside_discovery_expired_total',
    help: 'Discovery tokens that expired before their ramdisk reported.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().admissions.expired);
    },
  });
  new Counter({
    name: 'rackside_discovery_recorded_total',
    help: 'Discovered hosts recorded as BareMetalHosts.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().service.recorded);
    },
  });
  new Counter({
    name: 'rackside_discovery_reports_rejected_total',
    help: 'Discovery reports refused, by reason: token (401), invalid (400), full (429, discovery.maxHosts).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const { rejected } = stats().routes;
      this.reset();
      for (const [reason, n] of Object.entries(rejected)) this.inc({ reason }, n);
    },
  });
  new Counter({
    name: 'rackside_discovery_bmc_total',
    help: 'In-band BMC enlistment outcomes of recorded hosts: enrolled, proposed (approve: manual), failed.',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const { service } = stats();
      this.reset();
      this.inc({ outcome: 'enrolled' }, service.bmcEnrolled);
      this.inc({ outcome: 'proposed' }, service.bmcProposed);
      this.inc({ outcome: 'failed' }, service.bmcFailed);
    },
  });
}
