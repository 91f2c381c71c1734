/**
 * @module The boot governor's Prometheus families (docs/metrics.md), registered by the agent
 * on its metrics registry when a governor runs: hosts waiting, how long the oldest has waited,
 * admissions, time spent waiting, what was admitted, and the configured budgets.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { GovernorStats } from './governor.js';

/** Adds the `rackside_governor_*` families to `registry`, read from `stats` at each scrape. */
export function registerGovernorMetrics(registry: Registry, stats: () => GovernorStats): void {
  new Gauge({
    name: 'rackside_governor_waiting',
    help: 'Hosts whose power-on the boot governor holds (in line).',
    registers: [registry],
    collect() {
      this.set(stats().waiting);
    },
  });
  new Gauge({
    name: 'rackside_governor_oldest_wait_seconds',
    help: 'How long the host longest in the boot governor\'s line has waited.',
    registers: [registry],
    collect() {
      this.set(stats().oldestWaitSeconds);
    },
  });
  new Counter({
    name: 'rackside_governor_admitted_total',
    help: 'Power-ons and image streams the boot governor admitted, by whether they waited.',
    labelNames: ['waited'],
    registers: [registry],
    collect() {
      const s = stats();
      this.reset();
      this.inc({ waited: 'yes' }, s.admittedAfterWait);
      this.inc({ waited: 'no' }, s.admitted - s.admittedAfterWait);
    },
  });
  new Counter({
    name: 'rackside_governor_wait_seconds_total',
    help: 'Time admitted hosts spent in the boot governor\'s line.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().waitSecondsTotal);
    },
  });
  new Counter({
    name: 'rackside_governor_admitted_cost_total',
    help: 'What the admitted boots were estimated to draw: boot HTTP bytes, DHCP exchanges, power-ons.',
    labelNames: ['resource'],
    registers: [registry],
    collect() {
      const { drawn } = stats();
      this.reset();
      this.inc({ resource: 'http_bytes' }, drawn.httpBytes);
      this.inc({ resource: 'dhcp_exchanges' }, drawn.dhcpExchanges);
      this.inc({ resource: 'power_ons' }, drawn.powerOns);
    },
  });
  new Gauge({
    name: 'rackside_governor_limit',
    help: 'Configured boot governor budgets: http_bytes_per_second, dhcp_per_second, power_ons_per_minute.',
    labelNames: ['budget'],
    registers: [registry],
    collect() {
      const { limits } = stats();
      this.reset();
      if (limits.httpBytesPerSecond !== undefined) this.set({ budget: 'http_bytes_per_second' }, limits.httpBytesPerSecond);
      if (limits.dhcpPerSecond !== undefined) this.set({ budget: 'dhcp_per_second' }, limits.dhcpPerSecond);
      if (limits.powerOnsPerMinute !== undefined) this.set({ budget: 'power_ons_per_minute' }, limits.powerOnsPerMinute);
    },
  });
}
