/**
 * @module The flight-recorder timelines of the management API: `GET /api/v1/boot/:mac/timeline`
 * (every recorded boot step of one MAC — DHCP, TFTP, HTTP, ramdisk, BMC) and
 * `GET /api/v1/hosts/:name/timeline` (the host's boot MAC's timeline merged with the host's own
 * events). Both answer `{ items: StoredEvent[] }`, oldest first (newest last), at most `limit`
 * (default 200, up to 10000) items with `seq > after`. Mounted through api.ts's
 * `ManagementAppOptions.extraRoutes` (behind its token rule and JSON errors), e.g.
 * `extraRoutes: (api) => { mountTimelineRoutes(api, store); }`.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { NotFoundError, ValidationError } from '../errors.js';
import type { BareMetalHost } from '../host/types.js';
import type { EventFilter, StoredEvent } from '../store/types.js';

/** What the timeline routes read; the store satisfies it (its EventLog and HostReader owners, agent/store/types.ts). */
export interface TimelineSource {
  listEvents(filter: EventFilter): Promise<StoredEvent[]>;
  getHost(name: string): Promise<Pick<BareMetalHost, 'metadata' | 'spec'> | undefined>;
}

/** Default and largest number of timeline items per response. */
export const TIMELINE_DEFAULT_LIMIT = 200;
export const TIMELINE_MAX_LIMIT = 10_000;

const MAC = /^[0-9a-f]{2}([:-][0-9a-f]{2}){5}$/i;

function route(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).catch(next);
  };
}

function queryNumber(req: Request, key: string, max: number): number | undefined {
  const value: unknown = (req.query as Record<string, unknown>)[key];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,15}$/.test(value) || Number(value) > max) {
    throw new ValidationError(`query.${key}`, `must be an integer from 0 to ${max}`);
  }
  return Number(value);
}

/** Parses `mac` (colon or hyphen, any case) to lower-case colon form, or throws a 400. */
export function timelineMac(mac: string, field = 'mac'): string {
  if (!MAC.test(mac)) throw new ValidationError(field, `must be a MAC address like 52:54:00:12:34:56, got ${JSON.stringify(mac)}`);
  return mac.toLowerCase().replaceAll('-', ':');
}

/** Merges event lists by `seq` (duplicates once), oldest first, keeping the newest `limit`. */
export function mergeTimelines(lists: readonly StoredEvent[][], limit: number): StoredEvent[] {
  const bySeq = new Map<number, StoredEvent>();
  for (const list of lists) for (const e of list) bySeq.set(e.seq, e);
  const merged = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  return merged.slice(Math.max(0, merged.length - limit));
}

/** Builds the router with both timeline routes (mount it under `/api/v1`). */
export function createTimelineRouter(source: TimelineSource): express.Router {
  const router = express.Router();
  const paging = (req: Request): { afterSeq?: number; limit: number } => {
    const after = queryNumber(req, 'after', Number.MAX_SAFE_INTEGER);
    const limit = queryNumber(req, 'limit', TIMELINE_MAX_LIMIT) ?? TIMELINE_DEFAULT_LIMIT;
    if (limit < 1) throw new ValidationError('query.limit', `must be an integer from 1 to ${TIMELINE_MAX_LIMIT}`);
    return after === undefined ? { limit } : { afterSeq: after, limit };
  };

  router.get('/boot/:mac/timeline', route(async (req, res) => {
    const mac = timelineMac(String(req.params.mac), 'mac');
    const page = paging(req);
    res.json({ mac, items: await source.listEvents({ ...page, mac }) });
  }));

  router.get('/hosts/:name/timeline', route(async (req, res) => {
    const name = String(req.params.name);
    const host = await source.getHost(name);
    if (host === undefined) throw new NotFoundError('BareMetalHost', name);
    const page = paging(req);
    const bootMac = host.spec.bootMACAddress;
    const mac = bootMac === undefined || bootMac === '' ? undefined : bootMac.toLowerCase().replaceAll('-', ':');
    const lists = [await source.listEvents({ ...page, host: name })];
    if (mac !== undefined) lists.push(await source.listEvents({ ...page, mac }));
    res.json({ host: name, ...(mac === undefined ? {} : { mac }), items: mergeTimelines(lists, page.limit) });
  }));
  return router;
}

/** Mounts the timeline routes on the management API's `/api/v1` router (for `ManagementAppOptions.extraRoutes`). */
export function mountTimelineRoutes(api: express.Router, source: TimelineSource): void {
  api.use(createTimelineRouter(source));
}
