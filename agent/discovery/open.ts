/**
 * @module Discovery opened for the agent (docs/discovery.md): the admissions, the discovery boot
 * lookup the boot services ask for unknown MACs, the report route, the `rackside_discovery_*`
 * metrics, and refusal reporting — a `DiscoveryRefused` Warning event and log line at most once
 * a minute, counting the refusals since the last one (a storm must not flood the event log).
 */
import { randomBytes } from 'node:crypto';
import type { Router } from 'express';
import type { Registry } from 'prom-client';
import type { BootLookup } from '../../bootsvc/index.js';
import { generateRamdiskToken } from '../boot/ramdisk-token.js';
import type { RamdiskDefaults } from '../boot/host-boot-plan.js';
import type { DiscoveryConfig } from '../config-discovery.js';
import type { Logger } from '../log.js';
import type { EventLog, HostReader } from '../store/types.js';
import { DiscoveryAdmissions, type RefusalReason } from './admissions.js';
import { DiscoveryBoot } from './discovery-boot.js';
import { registerDiscoveryMetrics, type DiscoveryStats } from './discovery-metrics.js';
import { createDiscoveryRouter, type DiscoveryRouteStats } from './discovery-routes.js';
import { discoveredHostCount, type DiscoveryService } from './discovery-service.js';

/** Running discovery. */
export interface Discovery {
  /** What unknown MACs boot (bootsvc's `discoveryLookup`). */
  lookup: BootLookup;
  /** `POST /ramdisk/v1/discovery`, for the boot HTTP listener. */
  routes: Router;
  stats(): DiscoveryStats;
  /** Adds the `rackside_discovery_*` families. */
  register(registry: Registry): void;
}

/** Options of {@link openDiscovery}. */
export interface OpenDiscoveryOptions {
  config: DiscoveryConfig;
  store: Pick<HostReader, 'hostSnapshot'> & Pick<EventLog, 'appendEvents'>;
  service: DiscoveryService;
  logger: Logger;
  ramdisk: RamdiskDefaults;
  /** Steady clock (token expiry, refusal reporting). */
  nowMs: () => number;
}

/** How often refusals are reported at most. */
const REFUSAL_REPORT_MS = 60_000;

/** Opens discovery (see the module comment). */
export function openDiscovery(options: OpenDiscoveryOptions): Discovery {
  const { config, store, logger, nowMs } = options;
  const admissions = new DiscoveryAdmissions(
    { maxPending: config.maxPending, maxHosts: config.maxHosts, tokenTtlMs: config.tokenTtlSeconds * 1000 },
    () => generateRamdiskToken(randomBytes),
  );
  const discoveredCount = async (): Promise<number> => discoveredHostCount(await store.hostSnapshot());
  const unreported: Record<RefusalReason, number> = { 'pending-full': 0, 'hosts-full': 0 };
  let lastReportMs = Number.NEGATIVE_INFINITY;
  const onRefused = (mac: string, reason: RefusalReason): void => {
    unreported[reason] += 1;
    const now = nowMs();
    if (now - lastReportMs < REFUSAL_REPORT_MS) return;
    lastReportMs = now;
    const counts = Object.entries(unreported).filter(([, n]) => n > 0).map(([r, n]) => `${n} ${r}`).join(', ');
    const message = `discovery refused unknown MACs (${counts}; latest ${mac}): discovery.maxPending ${config.maxPending}, discovery.maxHosts ${config.maxHosts}`;
    unreported['pending-full'] = 0;
    unreported['hosts-full'] = 0;
    logger.warn({ component: 'discovery', mac, reason }, message);
    void store.appendEvents([{ time: new Date().toISOString(), type: 'Warning', reason: 'DiscoveryRefused', source: 'discovery', mac, message }])
      .catch((err: unknown) => { logger.warn({ err }, 'recording a discovery refusal failed'); });
  };
  const lookup = new DiscoveryBoot({
    admissions, discoveredCount, nowMs, ramdisk: options.ramdisk, enrollBMC: config.enrollBMC, onRefused,
    onAdmitted: (mac) => { logger.info({ component: 'discovery', mac }, 'unknown MAC admitted to discovery'); },
  });
  const routeStats: DiscoveryRouteStats = { rejected: { token: 0, invalid: 0, full: 0 } };
  const routes = createDiscoveryRouter({ admissions, service: options.service, store, nowMs, stats: routeStats });
  const stats = (): DiscoveryStats => ({ admissions: admissions.stats(nowMs()), service: options.service.stats(), routes: { rejected: { ...routeStats.rejected } } });
  return { lookup, routes, stats, register: (registry) => { registerDiscoveryMetrics(registry, stats); } };
}
