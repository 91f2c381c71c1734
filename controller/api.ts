/**
 * @module The controller's HTTP routes (docs/controller.md, "API"): the push endpoint, the fleet
 * API (`/api/v1/racks`, `/api/v1/hosts`, one host, `/api/v1/commands`), the fleet page, the host
 * page, `/metrics` and `/healthz`. Reads are open to whoever reaches the listener (like the
 * agent's status page); queueing a command needs the operator token (RFC 6750 bearer).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import { decodeCommandRequest, getCommand, listCommands, queueCommand } from './commands.js';
import type { ControllerConfig } from './config.js';
import { getHost, listRacks, searchHosts, type HostQuery } from './fleet.js';
import { bearerToken, HttpError, readBody, sendError, sendJson } from './http-util.js';
import type { ControllerLog } from './log.js';
import type { ControllerMetrics } from './metrics.js';
import { renderFleetPage, renderHostPage } from './page.js';
import { tokenDigest } from './racks.js';
import { handlePush } from './push-route.js';

/** What the routes need. */
export interface ApiDeps {
  pool: pg.Pool;
  config: ControllerConfig;
  metrics: ControllerMetrics;
  log: ControllerLog;
  /** The operator token; undefined = mutations refused. */
  operatorToken: string | undefined;
  /** Clock for the page's "rendered" line. */
  now: () => Date;
}

/** Constant-time comparison of two tokens through their digests (equal lengths for timingSafeEqual). */
function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(tokenDigest(a), tokenDigest(b));
}

function requireOperator(req: IncomingMessage, deps: ApiDeps): void {
  const headers = { 'www-authenticate': 'Bearer realm="rackside-controller"' };
  if (deps.operatorToken === undefined) throw new HttpError(401, 'commands are disabled: operatorTokenFile is not configured', 'Authorization', headers);
  const presented = bearerToken(req);
  if (presented === undefined) throw new HttpError(401, 'missing "Authorization: Bearer <operator token>" header (--token or RACKSIDE_TOKEN)', 'Authorization', headers);
  if (!sameToken(presented, deps.operatorToken)) throw new HttpError(401, 'invalid operator token', 'Authorization', headers);
}

function oneParam(url: URL, name: string): string | undefined {
  const all = url.searchParams.getAll(name);
  if (all.length > 1) throw new HttpError(400, `given ${all.length} times`, name);
  const v = all[0];
  if (v !== undefined && (v.includes('\u0000') || /[\uD800-\uDFFF]/.test(v))) throw new HttpError(400, 'contains characters that cannot be searched for', name);
  return v === undefined || v === '' ? undefined : v;
}

function limitParam(url: URL): number | undefined {
  const text = oneParam(url, 'limit');
  if (text === undefined) return undefined;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > 1000) throw new HttpError(400, 'expected an integer from 1 to 1000', 'limit');
  return Number(text);
}

function boolParam(url: URL, name: string): boolean | undefined {
  const text = oneParam(url, name);
  if (text === undefined) return undefined;
  if (text !== 'true' && text !== 'false') throw new HttpError(400, 'expected true or false', name);
  return text === 'true';
}

function hostQuery(url: URL): HostQuery {
  const q = oneParam(url, 'q');
  const state = oneParam(url, 'state');
  const rack = oneParam(url, 'rack');
  const errorsOnly = boolParam(url, 'errors');
  const includeDeleted = boolParam(url, 'deleted');
  const limit = limitParam(url);
  if (q !== undefined && q.length > 256) throw new HttpError(400, 'at most 256 characters', 'q');
  return {
    ...(q === undefined ? {} : { q }), ...(state === undefined ? {} : { state }), ...(rack === undefined ? {} : { rack }),
    ...(errorsOnly === undefined ? {} : { errorsOnly }), ...(includeDeleted === undefined ? {} : { includeDeleted }), ...(limit === undefined ? {} : { limit }),
  };
}

function sendHtml(res: ServerResponse, html: string, status = 200): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'", 'x-content-type-options': 'nosniff',
  });
  res.end(html);
}

async function fleetPage(url: URL, deps: ApiDeps): Promise<string> {
  const q = oneParam(url, 'q');
  const [racks, errorHosts, commands, results] = await Promise.all([
    listRacks(deps.pool, deps.config.offlineAfterSeconds),
    searchHosts(deps.pool, { errorsOnly: true, limit: 200 }),
    listCommands(deps.pool, { limit: 50 }),
    q === undefined ? Promise.resolve(undefined) : searchHosts(deps.pool, { q: q.slice(0, 256), limit: 200 }),
  ]);
  return renderFleetPage({ racks, errorHosts, commands, renderedAt: deps.now().toISOString(), ...(q === undefined || results === undefined ? {} : { search: { q, results } }) });
}

/** Routes GETs; resolves false when no route matched. */
async function routeGet(url: URL, res: ServerResponse, deps: ApiDeps): Promise<boolean> {
  const path = url.pathname;
  const host = /^\/(?:api\/v1\/racks|hosts)\/([^/]+)\/(?:hosts\/)?([^/]+)\/([^/]+)$/.exec(path);
  if (path === '/' || path === '/index.html') sendHtml(res, await fleetPage(url, deps));
  else if (path === '/api/v1/racks') sendJson(res, 200, { items: await listRacks(deps.pool, deps.config.offlineAfterSeconds) });
  else if (path === '/api/v1/hosts') sendJson(res, 200, { items: await searchHosts(deps.pool, hostQuery(url)) });
  else if (path === '/api/v1/commands') {
    const rack = oneParam(url, 'rack');
    const state = oneParam(url, 'state');
    const limit = limitParam(url);
    sendJson(res, 200, { items: await listCommands(deps.pool, { ...(rack === undefined ? {} : { rack }), ...(state === undefined ? {} : { state }), ...(limit === undefined ? {} : { limit }) }) });
  } else if (path.startsWith('/api/v1/commands/')) {
    const command = await getCommand(deps.pool, decodeURIComponent(path.slice('/api/v1/commands/'.length)));
    if (command === undefined) throw new HttpError(404, 'no such command', 'id');
    sendJson(res, 200, command);
  } else if (host !== null) {
    const [rack, namespace, name] = [host[1], host[2], host[3]].map((s) => decodeURIComponent(s ?? ''));
    const found = await getHost(deps.pool, rack ?? '', namespace ?? '', name ?? '');
    if (found === undefined) throw new HttpError(404, `no host ${namespace ?? ''}/${name ?? ''} in rack ${rack ?? ''}`, 'host');
    if (path.startsWith('/hosts/')) sendHtml(res, renderHostPage(found.rack, found.summary as unknown as Record<string, unknown>, found.events));
    else sendJson(res, 200, found);
  } else if (path === '/metrics') {
    const text = await deps.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': deps.metrics.registry.contentType });
    res.end(text);
  } else if (path === '/healthz') {
    await deps.pool.query('SELECT 1');
    sendJson(res, 200, { ok: true });
  } else return false;
  return true;
}

/** The request handler of the controller's listener. Never throws. */
export function createRequestHandler(deps: ApiDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://controller');
      try {
        if (req.method === 'POST' && url.pathname === '/api/v1/racks/push') {
          await handlePush(req, res, deps);
          return;
        }
        if (req.method === 'POST' && url.pathname === '/api/v1/commands') {
          requireOperator(req, deps);
          const body = await readBody(req, deps.config.commands.maxManifestBytes * 2 + 65_536, deps.config.commands.maxManifestBytes * 2 + 65_536);
          let json: unknown;
          try {
            json = JSON.parse(body.toString('utf8'));
          } catch {
            throw new HttpError(400, 'body is not JSON', 'body');
          }
          const command = await queueCommand(deps.pool, decodeCommandRequest(json, deps.config.commands));
          deps.metrics.commandQueued(command.kind);
          deps.log.info({ id: command.id, rack: command.rack, kind: command.kind, host: command.host }, 'command queued');
          sendJson(res, 201, command);
          return;
        }
        if ((req.method === 'GET' || req.method === 'HEAD') && (await routeGet(url, res, deps))) return;
        throw new HttpError(404, `no route ${req.method ?? ''} ${url.pathname}`, '');
      } catch (caught) {
        const err = caught instanceof URIError ? new HttpError(400, 'malformed percent-encoding in the path', 'path') : caught;
        if (!(err instanceof HttpError)) deps.log.error({ err: err instanceof Error ? err.stack ?? err.message : String(err), path: url.pathname }, 'request failed');
        sendError(res, err);
      }
    })();
  };
}
