/**
 * @module `POST /ramdisk/v1/discovery` on the boot HTTP listener (docs/discovery.md, "The
 * report"): the discovery ramdisk posts its report with its discovery token as the bearer token.
 * The token names the MAC the host is recorded under: an unknown, forged, expired or already used
 * token answers 401, records a `DiscoveryTokenRejected` Warning and nothing else; a bad field
 * answers 400 naming it. The answer is the ramdisk protocol's KEY=VALUE lines: `ok=1`, `name=`,
 * and `command=poweroff` (a discovered host powers itself off: without a BMC rackside cannot
 * power it on again anyway, and with one registration powers it on when it needs it). The body
 * is never logged: it may carry the in-band BMC user's password.
 */
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { RamdiskEndpoint } from '../../images/index.js';
import { isApiError } from '../errors.js';
import type { EventLog } from '../store/types.js';
import type { DiscoveryAdmissions } from './admissions.js';
import type { DiscoveryService } from './discovery-service.js';
import { decodeDiscoveryReport, DiscoveryReportError, inventoryBootMac } from './report.js';

/** The discovery report endpoint. */
export const DISCOVERY_REPORT_PATH = RamdiskEndpoint.discovery;

/** What the route counts. */
export interface DiscoveryRouteStats {
  /** Reports refused, by reason: `token` (401), `invalid` (400), `full` (429). */
  rejected: Record<'token' | 'invalid' | 'full', number>;
}

/** Options of {@link createDiscoveryRouter}. */
export interface DiscoveryRouteOptions {
  admissions: DiscoveryAdmissions;
  service: DiscoveryService;
  store: Pick<EventLog, 'appendEvents'>;
  nowMs: () => number;
  stats: DiscoveryRouteStats;
  bodyLimitBytes?: number;
}

function bearer(req: Request): string {
  const header = req.get('authorization') ?? '';
  return header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
}

function reply(res: Response, status: number, lines: Record<string, string>): void {
  res.status(status).type('text/plain').send(Object.entries(lines).map(([k, v]) => `${k}=${v.replace(/\s+/g, ' ')}\n`).join(''));
}

async function handleReport(options: DiscoveryRouteOptions, req: Request, res: Response): Promise<void> {
  const { admissions, service, stats } = options;
  const admission = admissions.find(bearer(req), options.nowMs());
  if (admission === undefined) {
    stats.rejected.token += 1;
    await options.store.appendEvents([{
      time: new Date().toISOString(), type: 'Warning', reason: 'DiscoveryTokenRejected', source: 'discovery',
      message: `discovery report from ${req.ip ?? 'unknown'} with an unknown, expired or used token: nothing recorded`,
    }]);
    reply(res, 401, { error: 'unauthorized' });
    return;
  }
  const report = decodeDiscoveryReport(req.body);
  // The token is bound to the MAC it was handed to; an inventory naming another boot MAC is not this host's.
  const bootMac = inventoryBootMac(report.inventory);
  if (bootMac !== undefined && bootMac !== admission.mac) throw new DiscoveryReportError('inventory.boot.pxe_interface', `is ${bootMac}, but the token was handed to ${admission.mac}`);
  const outcome = await service.record(admission.mac, report);
  if (outcome.kind === 'full') {
    stats.rejected.full += 1;
    admissions.release(admission.mac);
    reply(res, 429, { error: `discovery.maxHosts reached (${outcome.discovered} discovered hosts)`, command: 'poweroff' });
    return;
  }
  admissions.release(admission.mac);
  reply(res, 200, { ok: '1', name: outcome.name, command: 'poweroff' });
}

function errors(stats: DiscoveryRouteStats) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (error instanceof DiscoveryReportError) {
      stats.rejected.invalid += 1;
      reply(res, 400, { error: error.message, field: error.field });
      return;
    }
    if (isApiError(error) && error.status < 500) {
      stats.rejected.invalid += 1;
      reply(res, error.status, { error: error.message, field: error.field });
      return;
    }
    if (error instanceof SyntaxError && 'body' in error) {
      stats.rejected.invalid += 1;
      reply(res, 400, { error: 'the body is not JSON', field: 'body' });
      return;
    }
    next(error);
  };
}

/** Builds the router; mount it on the boot HTTP server's app. */
export function createDiscoveryRouter(options: DiscoveryRouteOptions): Router {
  const router = express.Router();
  const body = express.json({ limit: options.bodyLimitBytes ?? 4 * 1024 * 1024 });
  router.post(DISCOVERY_REPORT_PATH, body, (req, res, next) => {
    handleReport(options, req, res).catch(next);
  });
  router.use(errors(options.stats));
  return router;
}
