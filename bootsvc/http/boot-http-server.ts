/**
 * @module The boot HTTP server (DESIGN.md boot flow 4): an express 5 app on its own listener
 * on the provisioning address — never the management API's. It serves, for GET and HEAD:
 * - generated files: `/boot/<mac>.ipxe` (per host, from the agent's BootPlanSource; unknown MACs
 *   get "nothing to do" or the discovery ramdisk), `/boot/boot.ipxe`, `/grub/grub.cfg`,
 *   `/grub/<mac>.cfg`;
 * - boot assets (iPXE, shim, GRUB) by name at `/<name>` and `/boot/<name>`;
 * - files under `mounts` (`/<prefix>/…` → a directory: kernels, initrds, ISOs, OS images) and
 *   under `root` (`http.root`), through realpath jails, with Range, If-Range, conditional
 *   requests and HEAD (range.ts); no directory listings;
 * - a fast 404 for shim's and GRUB's probes (boot-paths.ts).
 * Malformed paths (backslash, NUL, encoded `/`) get 400, `..` and symlinks out of a root 403.
 * Every request is reported through `onEvent` when its response ends. `extraRoutes` lets the
 * agent add the ramdisk callback API (`/ramdisk/v1/…`) on the same listener; those routes come
 * first.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { emitBootEvent, type BootEventListener, type HttpBootEvent } from '../events.js';
import type { BootPlanSource, RamdiskPlan } from '../ipxe/boot-plan.js';
import { routeBootPath, routeMac, type BootRoute } from '../ipxe/boot-paths.js';
import { isGeneratedRoute, renderBootFile, type BootRendererOptions } from '../ipxe/boot-renderer.js';
import { BootRenderError } from '../ipxe/render-text.js';
import { FileJail, openRegularFile, type JailLookup } from './file-jail.js';
import { sendFile, type SentFile } from './send-file.js';

/** The few logger methods the server uses (pino's signature). */
export interface BootHttpLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Options of {@link startBootHttpServer}. */
export interface BootHttpServerOptions {
  /** Address to listen on (the provisioning address); default `0.0.0.0`. */
  host?: string;
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  /** The base URL clients reach this server at, used inside scripts; default `http://<bound address>:<port>`. */
  publicUrl?: string;
  /** `http.root`: an extra read-only directory served at `/`. */
  root?: string;
  /** URL prefix (one path segment, e.g. `ramdisk`, `images`) → directory served under it. */
  mounts?: Readonly<Record<string, string>>;
  /** Boot assets: served name → absolute path (from `checkBootAssets`). */
  assets?: ReadonlyMap<string, string>;
  plans: BootPlanSource;
  unknownHosts?: 'ignore' | 'discover';
  discovery?: RamdiskPlan;
  nothingRetrySeconds?: number;
  nothingMaxAttempts?: number;
  onEvent?: BootEventListener;
  /** Registers more routes (the ramdisk callback API) before the boot routes. */
  extraRoutes?: (app: express.Express) => void;
  logger?: BootHttpLogger;
}

/** Counters since start. */
export interface BootHttpStats {
  requests: number;
  /** Body bytes sent. */
  bytes: number;
  /** Responses in progress. */
  active: number;
  /** Responses by status code. */
  byStatus: Record<string, number>;
  /** Generated scripts and GRUB configs served. */
  generated: number;
  /** Shim/GRUB probes answered with a fast 404. */
  probes: number;
  /** Requests refused: malformed (400), traversal or symlink escape (403). */
  refused: number;
  /** Responses the client abandoned before they ended. */
  aborted: number;
  /** Boot lookups or renderings that failed (500/503). */
  errors: number;
}

/** A running boot HTTP server. */
export interface BootHttpServer {
  /** The base URL (`publicUrl`, or the bound address). */
  url: string;
  port: number;
  /** Stops listening and drops open connections (in-flight downloads end). */
  stop(): Promise<void>;
  stats(): BootHttpStats;
}

/** Per-response facts the handlers leave for the recorder. */
interface ResponseNotes {
  bytes: number;
  servedAs?: string;
  detail?: string;
  mac?: string;
  /** Live facts of a file response (bytes and Content-Range). */
  sent?: SentFile;
}

const ALLOW = 'GET, HEAD';

function notesOf(res: Response): ResponseNotes {
  return res.locals as ResponseNotes;
}

function sendText(res: Response, status: number, text: string, notes: Partial<ResponseNotes>): void {
  const body = Buffer.from(text, 'utf8');
  Object.assign(notesOf(res), notes);
  res.status(status).set({ 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length), 'Cache-Control': 'no-store' });
  if (res.req.method === 'HEAD') {
    res.end();
  } else {
    notesOf(res).bytes = body.length;
    res.end(body);
  }
}

function attemptOf(req: Request): number | undefined {
  const q = req.originalUrl.indexOf('?');
  if (q < 0) return undefined;
  const value = new URLSearchParams(req.originalUrl.slice(q + 1)).get('attempt');
  return value !== null && /^\d{1,4}$/.test(value) ? Number(value) : undefined;
}

/**
 * Starts the boot HTTP server. Rejects when a root or mount directory does not exist or the
 * port cannot be bound.
 */
export async function startBootHttpServer(options: BootHttpServerOptions): Promise<BootHttpServer> {
  const rootJail = options.root === undefined ? undefined : await FileJail.create(options.root);
  const mountJails = new Map<string, FileJail>();
  for (const [prefix, dir] of Object.entries(options.mounts ?? {})) {
    if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(prefix)) throw new TypeError(`mount prefix ${JSON.stringify(prefix)} must be one path segment`);
    mountJails.set(prefix, await FileJail.create(dir));
  }
  const assets = options.assets ?? new Map<string, string>();
  const assetNames = new Set(assets.keys());
  const stats: BootHttpStats = { requests: 0, bytes: 0, active: 0, byStatus: {}, generated: 0, probes: 0, refused: 0, aborted: 0, errors: 0 };
  let renderer: BootRendererOptions | undefined;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const startedNs = process.hrtime.bigint();
    stats.requests += 1;
    stats.active += 1;
    const notes = notesOf(res);
    notes.bytes = 0;
    res.on('close', () => {
      stats.active -= 1;
      const completed = res.writableFinished;
      if (!completed) stats.aborted += 1;
      const statusKey = String(res.statusCode);
      stats.byStatus[statusKey] = (stats.byStatus[statusKey] ?? 0) + 1;
      const bytes = notes.sent?.bytes ?? (notes.bytes > 0 ? notes.bytes : completed && req.method !== 'HEAD' ? Number(res.getHeader('content-length') ?? 0) || 0 : 0);
      stats.bytes += bytes;
      const event: HttpBootEvent = {
        kind: 'http',
        method: req.method,
        path: req.originalUrl.split('?')[0] ?? '',
        status: res.statusCode,
        bytes,
        durationMs: Number(process.hrtime.bigint() - startedNs) / 1e6,
        clientAddress: req.socket.remoteAddress ?? '',
        completed,
      };
      const range = req.get('range');
      if (range !== undefined) event.range = range;
      if (notes.sent?.contentRange !== undefined) event.contentRange = notes.sent.contentRange;
      const userAgent = req.get('user-agent');
      if (userAgent !== undefined) event.userAgent = userAgent;
      if (notes.mac !== undefined) event.mac = notes.mac;
      if (notes.servedAs !== undefined) event.servedAs = notes.servedAs;
      if (notes.detail !== undefined) event.detail = notes.detail;
      const err = emitBootEvent(options.onEvent, event);
      if (err !== undefined) options.logger?.warn({ err }, 'boot HTTP: flight recorder listener failed');
    });
    next();
  });

  options.extraRoutes?.(app);

  app.use((req: Request, res: Response, next: NextFunction) => {
    serveBootPath(req, res).catch(next);
  });

  async function openRouteFile(route: Extract<BootRoute, { kind: 'asset' | 'file' }>): Promise<JailLookup> {
    if (route.kind === 'asset') {
      const path = assets.get(route.name);
      return path === undefined ? { kind: 'not-found' } : openRegularFile(path);
    }
    const slash = route.path.indexOf('/');
    const mount = slash < 0 ? undefined : mountJails.get(route.path.slice(0, slash));
    if (mount !== undefined) return mount.open(route.path.slice(slash + 1));
    return rootJail === undefined ? { kind: 'not-found' } : rootJail.open(route.path);
  }

  async function serveBootPath(req: Request, res: Response): Promise<void> {
    const notes = notesOf(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.set('Allow', ALLOW);
      sendText(res, 405, 'method not allowed: the boot server is read-only\n', { servedAs: 'refused', detail: 'method not allowed' });
      return;
    }
    const rawPath = req.originalUrl.split('?')[0] ?? '';
    if (!rawPath.startsWith('/')) {
      stats.refused += 1;
      sendText(res, 400, 'bad request target\n', { servedAs: 'refused', detail: 'request target is not a path' });
      return;
    }
    const route = routeBootPath(rawPath, { assetNames, percentEncoded: true });
    const mac = routeMac(route);
    if (mac !== undefined) notes.mac = mac;
    if (route.kind === 'refused') {
      if (route.status !== 404) stats.refused += 1;
      sendText(res, route.status, route.status === 404 ? 'not found\n' : `refused: ${route.reason}\n`, { servedAs: 'refused', detail: route.reason });
      return;
    }
    if (route.kind === 'probe') {
      stats.probes += 1;
      sendText(res, 404, 'not found\n', { servedAs: 'probe' });
      return;
    }
    if (isGeneratedRoute(route)) {
      renderer ??= rendererOptions();
      const rendered = await renderBootFile(route, renderer, attemptOf(req));
      stats.generated += 1;
      sendText(res, 200, rendered.body, { servedAs: route.kind, detail: rendered.planKind });
      return;
    }
    const file = await openRouteFile(route);
    if (file.kind === 'escape') {
      stats.refused += 1;
      options.logger?.warn({ path: rawPath, target: file.target }, 'boot HTTP: refused a symlink out of the served root');
      sendText(res, 403, 'refused: outside the served root\n', { servedAs: 'refused', detail: 'symlink out of the root' });
      return;
    }
    if (file.kind !== 'file') {
      sendText(res, 404, 'not found\n', { servedAs: route.kind, detail: file.kind });
      return;
    }
    notes.servedAs = route.kind;
    const sent: SentFile = { status: 0, bytes: 0, completed: false };
    notes.sent = sent;
    await sendFile(req, res, file, route.kind === 'asset' ? route.name : route.path, sent);
  }

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    stats.errors += 1;
    const render = err instanceof BootRenderError;
    options.logger?.warn({ err, path: req.originalUrl }, render ? 'boot HTTP: cannot render a boot file' : 'boot HTTP: request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    sendText(res, render ? 500 : 503, render ? `cannot render: ${message}\n` : 'boot lookup unavailable; try again\n', { detail: message });
  });

  const server: Server = createServer(app);
  server.headersTimeout = 20_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => {
    options.logger?.warn({ err }, 'boot HTTP: server error');
  });
  const address = server.address() as AddressInfo;
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  if (wildcard && options.publicUrl === undefined) options.logger?.warn({ port: address.port }, 'boot HTTP: listening on a wildcard address without publicUrl; scripts will name 127.0.0.1');
  const bound = wildcard ? '127.0.0.1' : address.address;
  const host = bound.includes(':') ? `[${bound}]` : bound;
  const url = (options.publicUrl ?? `http://${host}:${address.port}`).replace(/\/+$/, '');

  function rendererOptions(): BootRendererOptions {
    const r: BootRendererOptions = { plans: options.plans, baseUrl: url, unknownHosts: options.unknownHosts ?? 'ignore' };
    if (options.discovery !== undefined) r.discovery = options.discovery;
    if (options.nothingRetrySeconds !== undefined) r.nothingRetrySeconds = options.nothingRetrySeconds;
    if (options.nothingMaxAttempts !== undefined) r.nothingMaxAttempts = options.nothingMaxAttempts;
    return r;
  }

  return {
    url,
    port: address.port,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
      server.closeAllConnections();
    }),
    stats: () => ({ ...stats, byStatus: { ...stats.byStatus } }),
  };
}
