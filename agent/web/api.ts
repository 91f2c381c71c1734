/**
 * @module The management API (REST + JSON under `/api/v1`, OpenAPI at `/api/openapi.json`),
 * an express 5 app over a {@link ManagementBackend}. It parses and checks requests, maps
 * errors to JSON (`api-errors.ts`), enforces the bearer token on mutations (`auth.ts`) and
 * streams events (`event-stream.ts`); all domain rules live behind the backend. The agent
 * (agent/main.ts) mounts it on `management.listen`, never on the provisioning network.
 */
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { constants as zlibConstants, gzip } from 'node:zlib';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { RebootMode } from '../host/types.js';
import { ApiError, ApiErrorCode, ValidationError } from '../errors.js';
import type { Logger } from '../log.js';
import type { EventFilter } from '../store/types.js';
import type { HostAction, ManagementBackend } from './backend.js';
import { WebErrorCode, errorHandler, notFoundHandler } from './api-errors.js';
import { requireBearerForMutations } from './auth.js';
import { streamEvents } from './event-stream.js';
import { coalesceAfterArrival, hostListBodies } from './host-list.js';
import { decodeManifests, manifestFormatOf } from './manifests.js';
import { buildOpenApiDocument } from './openapi.js';
import { isJsonObject } from '../json-value.js';

/** Options of {@link createManagementApp}. */
export interface ManagementAppOptions {
  /** The bearer token (`management.token`). */
  token?: string;
  /**
   * Require `Authorization: Bearer <token>` on every POST/PUT/DELETE. agent/main.ts sets it
   * when `management.listen` is not a loopback address or whenever a token is configured;
   * without a token configured, a non-loopback listener is then read-only.
   */
  requireTokenForMutations: boolean;
  logger?: Logger;
  /** Largest accepted request body; default 1 MiB. Larger bodies get 413. */
  bodyLimitBytes?: number;
  /** Keep-alive comment interval on event streams; default 15 s. */
  sseHeartbeatMs?: number;
  /**
   * Mounts further `/api/v1` routes owned by other agent parts (sync status, boot timelines…),
   * behind the same token rule and error handling.
   */
  extraRoutes?: (api: express.Router) => void;
  /** Mounts routes outside `/api/v1` (e.g. `/metrics`, the status page), without the token rule. */
  appRoutes?: (app: express.Express) => void;
}

/** The API's version segment. */
export const API_PREFIX = '/api/v1';
/** Host actions accepted by `POST /hosts/:name/actions/:action`. */
export const HOST_ACTIONS = ['power-on', 'power-off', 'reboot', 'inspect', 'detach', 'attach'] as const;

const DEFAULT_BODY_LIMIT = 1024 * 1024;
const gzipAsync = promisify(gzip);
const MAX_EVENT_LIMIT = 10_000;

type AsyncHandler = (req: Request, res: Response) => Promise<void>;

/** Adapts an async handler so a rejection reaches the error middleware. */
function route(handler: AsyncHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).catch(next);
  };
}

/** A single-valued query parameter, or undefined; repeated parameters are a 400. */
function queryParam(req: Request, key: string): string | undefined {
  const value: unknown = (req.query as Record<string, unknown>)[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`query.${key}`, 'must be given once, as a plain value');
  return value;
}

/** A non-negative integer query parameter within `max`. */
function queryInteger(req: Request, key: string, min: number, max: number): number | undefined {
  const text = queryParam(req, key);
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9]{1,15}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ValidationError(`query.${key}`, `must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** Reads `host`, `mac`, `after`, `limit` into an EventFilter. */
function eventFilterOf(req: Request, host?: string): EventFilter {
  const filter: EventFilter = {};
  const hostParam = host ?? queryParam(req, 'host');
  if (hostParam !== undefined && hostParam !== '') filter.host = hostParam;
  const mac = queryParam(req, 'mac');
  if (mac !== undefined && mac !== '') {
    if (!/^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i.test(mac)) throw new ValidationError('query.mac', `must be a MAC address like 52:54:00:12:34:56, got ${JSON.stringify(mac)}`);
    filter.mac = mac.toLowerCase().replaceAll('-', ':');
  }
  const after = queryInteger(req, 'after', 0, Number.MAX_SAFE_INTEGER);
  if (after !== undefined) filter.afterSeq = after;
  const limit = queryInteger(req, 'limit', 1, MAX_EVENT_LIMIT);
  if (limit !== undefined) filter.limit = limit;
  return filter;
}

/** A route parameter (always present on the routes that read it). */
function param(req: Request, key: string): string {
  const value = (req.params as Record<string, string | undefined>)[key];
  if (value === undefined) throw new ValidationError(key, 'missing');
  return value;
}

/**
 * A request value for an error message: strings quoted and cut at 100 characters, other values
 * by kind. Never `JSON.stringify` of the value: a body nested 100 000 levels deep overflows it.
 */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/** Decodes the JSON body of a host action into a {@link HostAction}; unknown fields are a 400. */
export function decodeHostAction(action: string, body: unknown): HostAction {
  const input: Record<string, unknown> = body === undefined || body === null ? {} : isJsonObject(body) ? body : {};
  if (body !== undefined && body !== null && !isJsonObject(body)) throw new ValidationError('body', 'must be a JSON object');
  const allowed: Record<string, readonly string[]> = { reboot: ['mode'], detach: ['deleteAction', 'force'] };
  const fields = Object.hasOwn(allowed, action) ? allowed[action] ?? [] : []; // not `allowed[action]`: `hasOwnProperty` is an action name too
  for (const key of Object.keys(input)) {
    if (!fields.includes(key)) throw new ValidationError(key === '' ? '[""]' : key, `unknown field for action ${action}`); // an empty key still gets a name
  }
  switch (action) {
    case 'power-on':
    case 'power-off':
    case 'inspect':
    case 'attach':
      return { action };
    case 'reboot': {
      const mode = input.mode ?? 'soft';
      if (mode !== 'hard' && mode !== 'soft') throw new ValidationError('mode', `must be hard or soft, got ${shown(mode)}`);
      return { action, mode: mode satisfies RebootMode };
    }
    case 'detach': {
      const { deleteAction, force } = input;
      if (deleteAction !== undefined && deleteAction !== 'delay' && deleteAction !== 'delete') {
        throw new ValidationError('deleteAction', `must be delay or delete, got ${shown(deleteAction)}`);
      }
      if (force !== undefined && typeof force !== 'boolean') throw new ValidationError('force', 'must be true or false');
      return { action, ...(deleteAction === undefined ? {} : { deleteAction }), ...(force === undefined ? {} : { force }) };
    }
    default:
      throw new ValidationError('action', `unknown action ${JSON.stringify(action)}; expected one of ${HOST_ACTIONS.join(', ')}`);
  }
}

/** Reads a manifest body (YAML or JSON by Content-Type) that express.text left as a string. */
function manifestsOf(req: Request): Record<string, unknown>[] {
  const format = manifestFormatOf(req.get('content-type'));
  if (format === undefined) {
    throw new ApiError(WebErrorCode.unsupportedMediaType, 415, 'body', 'Content-Type must be application/yaml or application/json');
  }
  const text: unknown = req.body;
  return decodeManifests(format, typeof text === 'string' ? text : '');
}

/**
 * Builds the management API app. Routes (all JSON): `GET /api/v1/hosts`, `GET|PUT|DELETE
 * /api/v1/hosts/:name`, `GET /api/v1/hosts/:name/firmware`, `POST /api/v1/apply`,
 * `POST /api/v1/hosts/:name/actions/:action`,
 * `GET /api/v1/secrets`, `DELETE /api/v1/secrets/:namespace/:name`, `GET /api/v1/events`,
 * `GET /api/v1/hosts/:name/events`, `GET /api/v1/events/stream` (SSE), `GET /api/v1/version`,
 * `GET /api/v1/healthz`, `GET /api/openapi.json`. Errors: see api-errors.ts.
 */
export function createManagementApp(backend: ManagementBackend, options: ManagementAppOptions): express.Express {
  const app = express();
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const logger = options.logger;
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const startedMs = Date.now();
    res.set('Cache-Control', 'no-store');
    res.on('finish', () => {
      logger?.debug({ method: req.method, url: req.originalUrl, status: res.statusCode, durationMs: Date.now() - startedMs }, 'management request');
    });
    next();
  });
  app.get('/api/openapi.json', (_req, res) => {
    res.json(buildOpenApiDocument(backend.info().version));
  });

  const api = express.Router();
  if (options.requireTokenForMutations) api.use(requireBearerForMutations(options.token));
  const manifestBody = express.text({ type: () => true, limit });
  const jsonBody = express.json({ limit, strict: false });

  api.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  api.get('/version', (_req, res) => {
    res.json({ ...backend.info(), apiVersion: 'v1' });
  });
  // Built once for all requests waiting together and kept while unchanged (host-list.ts): a
  // 1000-host list is ≈ 1.3 MB, ≈ 0.1 MB gzipped; pollers that send If-None-Match get a 304.
  const listBody = hostListBodies(randomBytes(6).toString('hex'), (json) => gzipAsync(json, { level: zlibConstants.Z_BEST_SPEED }));
  const hostList = coalesceAfterArrival(async () =>
    listBody(backend.listHostsJson === undefined ? JSON.stringify(await backend.listHosts()) : await backend.listHostsJson()));
  api.get('/hosts', route(async (req, res) => {
    const body = await hostList();
    res.set({ 'Content-Type': 'application/json; charset=utf-8', ETag: body.etag, Vary: 'Accept-Encoding', 'Cache-Control': 'no-cache' });
    if (req.fresh) {
      res.status(304).end();
    } else if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      res.set('Content-Encoding', 'gzip').send(await body.gzip());
    } else {
      res.send(body.json);
    }
  }));
  api.get('/hosts/:name', route(async (req, res) => {
    res.json(await backend.getHost(param(req, 'name')));
  }));
  api.post('/apply', manifestBody, route(async (req, res) => {
    res.json({ items: await backend.apply(manifestsOf(req)) });
  }));
  api.put('/hosts/:name', manifestBody, route(async (req, res) => {
    const name = param(req, 'name');
    const docs = manifestsOf(req);
    const [doc] = docs;
    if (doc === undefined || docs.length !== 1) throw new ValidationError('body', `expected exactly one manifest, got ${docs.length}`);
    if (doc.kind !== 'BareMetalHost') throw new ValidationError('kind', `must be BareMetalHost, got ${shown(doc.kind)}`);
    const metadata = doc.metadata ?? {};
    if (!isJsonObject(metadata)) throw new ValidationError('metadata', 'must be a mapping');
    if (metadata.name !== undefined && metadata.name !== name) {
      throw new ValidationError('metadata.name', `${shown(metadata.name)} does not match the name in the URL (${JSON.stringify(name)})`);
    }
    const [outcome] = await backend.apply([{ ...doc, metadata: { ...metadata, name } }]);
    res.status(outcome?.action === 'created' ? 201 : 200).json(await backend.getHost(name));
  }));
  api.delete('/hosts/:name', route(async (req, res) => {
    res.status(202).json(await backend.deleteHost(param(req, 'name')));
  }));
  api.post('/hosts/:name/actions/:action', jsonBody, route(async (req, res) => {
    const action = decodeHostAction(param(req, 'action'), req.body);
    res.status(202).json(await backend.hostAction(param(req, 'name'), action));
  }));
  api.get('/hosts/:name/firmware', route(async (req, res) => {
    const name = param(req, 'name');
    if (backend.getHostFirmware === undefined) {
      await backend.getHost(name);
      throw new ApiError(ApiErrorCode.notFound, 404, '', 'this agent keeps no firmware objects');
    }
    res.json(await backend.getHostFirmware(name));
  }));
  api.get('/hosts/:name/events', route(async (req, res) => {
    const name = param(req, 'name');
    await backend.getHost(name);
    res.json({ items: await backend.listEvents(eventFilterOf(req, name)) });
  }));
  api.get('/secrets', route(async (_req, res) => {
    res.json({ apiVersion: 'v1', kind: 'SecretList', items: await backend.listSecrets() });
  }));
  api.delete('/secrets/:namespace/:name', route(async (req, res) => {
    await backend.deleteSecret(param(req, 'namespace'), param(req, 'name'));
    res.status(204).end();
  }));
  api.post('/bmc/probe', jsonBody, route(async (req, res) => {
    if (backend.probeBmc === undefined) throw new ApiError(ApiErrorCode.notFound, 404, '', 'this agent does not probe BMCs');
    res.json(await backend.probeBmc(req.body));
  }));
  api.get('/bmceventsubscriptions', route(async (_req, res) => {
    if (backend.listBMCEventSubscriptions === undefined) throw new ApiError(ApiErrorCode.notFound, 404, '', 'this agent keeps no BMC event subscriptions');
    res.json({ apiVersion: 'metal3.io/v1alpha1', kind: 'BMCEventSubscriptionList', items: await backend.listBMCEventSubscriptions() });
  }));
  api.get('/bmceventsubscriptions/:namespace/:name', route(async (req, res) => {
    if (backend.getBMCEventSubscription === undefined) throw new ApiError(ApiErrorCode.notFound, 404, '', 'this agent keeps no BMC event subscriptions');
    res.json(await backend.getBMCEventSubscription(param(req, 'namespace'), param(req, 'name')));
  }));
  api.delete('/bmceventsubscriptions/:namespace/:name', route(async (req, res) => {
    if (backend.deleteBMCEventSubscription === undefined) throw new ApiError(ApiErrorCode.notFound, 404, '', 'this agent keeps no BMC event subscriptions');
    res.status(202).json(await backend.deleteBMCEventSubscription(param(req, 'namespace'), param(req, 'name')));
  }));
  api.get('/events', route(async (req, res) => {
    res.json({ items: await backend.listEvents(eventFilterOf(req)) });
  }));
  api.get('/events/stream', route(async (req, res) => {
    const { limit: _limit, ...filter } = eventFilterOf(req);
    const lastEventId = req.get('last-event-id');
    if (lastEventId !== undefined && /^[0-9]{1,15}$/.test(lastEventId.trim())) filter.afterSeq = Number(lastEventId.trim());
    await streamEvents(backend, req, res, filter, { heartbeatMs: options.sseHeartbeatMs ?? 15_000, replayLimit: MAX_EVENT_LIMIT });
  }));

  options.extraRoutes?.(api);
  app.use(API_PREFIX, api);
  options.appRoutes?.(app);
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
