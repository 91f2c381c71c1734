/**
 * @module The boot HTTP server: an express 5 app on its own listener
 * on the provisioning address — never the management API's. It serves, for GET and HEAD:
 * - generated files: `/boot/<mac>.ipxe` (per host, from the agent's BootLookup; unknown MACs
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
 * first (for GET/HEAD: under `extraRoutePrefixes`).
 *
 * Two request paths: plain file GETs and HEADs (assets, mounts, root) are answered in the raw
 * `node:http` handler, below express, from an open-file cache (file-routes.ts,
 * open-file-cache.ts) — the decision is made from the request line alone; everything else
 * (generated files, probes, refusals, other methods, the extra routes) goes through express.
 * Both report through response-recorder.ts, so counters and events are the same either way.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { BootEventListener } from '../events.js';
import type { BootLookup } from '../boot-lookup.js';
import type { RamdiskPlan } from '../ipxe/boot-plan.js';
import { routeBootPath, routeMac } from '../ipxe/boot-paths.js';
import { familyUrls, isGeneratedRoute, renderBootFile, type BootRendererOptions } from '../ipxe/boot-renderer.js';
import { BootRenderError } from '../ipxe/render-text.js';
import { FileJail } from './file-jail.js';
import { fileRouteOf, serveFileRoute, type FileRoutes } from './file-routes.js';
import { openKernelSender, type SendfileOptions } from './kernel-send.js';
import { OpenFileCache, type OpenFileCacheOptions } from './open-file-cache.js';
import { BytePacer } from './send-pacer.js';
import type { TurnBudget } from '../turn-budget.js';
import { createBootHttpStats, sendText, trackResponse, type BootHttpLogger, type BootHttpStats, type RecorderTarget, type ResponseNotes } from './response-recorder.js';

export type { BootHttpLogger, BootHttpStats } from './response-recorder.js';

/** Options of {@link startBootHttpServer}. */
export interface BootHttpServerOptions {
  /** Address to listen on (the provisioning address); default `0.0.0.0`. */
  host?: string;
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  /** The base URL clients reach this server at, used inside scripts; default `http://<bound address>:<port>`. */
  publicUrl?: string;
  /**
   * The base URL inside scripts requested over IPv6 (to an IPv6 address of a dual-stack
   * listener, not an IPv4-mapped one), e.g. `http://[fd00:1::1]:8081`; default `publicUrl`.
   * A host that booted over IPv6 then fetches its kernel and initrd over IPv6 too.
   */
  publicUrl6?: string;
  /** `http.root`: an extra read-only directory served at `/`. */
  root?: string;
  /** URL prefix (one path segment, e.g. `ramdisk`, `images`) → directory served under it. */
  mounts?: Readonly<Record<string, string>>;
  /** Boot assets: served name → absolute path (from `checkBootAssets`). */
  assets?: ReadonlyMap<string, string>;
  plans: BootLookup;
  unknownHosts?: 'ignore' | 'discover';
  /** Per-MAC discovery targets for unknown MACs when `unknownHosts` is `discover` (boot-renderer.ts). */
  discoveryLookup?: BootLookup;
  discovery?: RamdiskPlan;
  nothingRetrySeconds?: number;
  nothingMaxAttempts?: number;
  onEvent?: BootEventListener;
  /** Registers more routes (the ramdisk callback API) before the boot routes. */
  extraRoutes?: (app: express.Express) => void;
  /**
   * Path prefixes (e.g. `/ramdisk/v1/`) where `extraRoutes` may answer GET or HEAD: requests
   * under them always go through express, extra routes first, never the file fast path.
   * Default with `extraRoutes`: `['/ramdisk/v1/']` (the ramdisk API, images/ramdisk-protocol.ts's
   * RAMDISK_API_PREFIX, which bootsvc may not import); without: none.
   */
  extraRoutePrefixes?: readonly string[];
  /** Most file body bytes per second over all responses (send-pacer.ts); default: no limit. */
  maxBytesPerSecond?: number;
  /** The open-file cache of the file fast path (open-file-cache.ts); defaults there. */
  openFileCache?: OpenFileCacheOptions;
  /**
   * Small cached file bodies by sendfile(2) through native/sendfile when it is built, larger
   * ones by its sender threads off the event loop (kernel-send.ts); `false`: every body is
   * read and written by Node. Default `{}` (on).
   */
  sendfile?: SendfileOptions | false;
  logger?: BootHttpLogger;
  /**
   * A second listener serving the same routes over TLS (docs/https-boot.md): the server
   * certificate chain and key (PEM), its port (0: a free one), its address (default `host`) and
   * the base URL scripts requested over it name (default `https://<bound address>:<port>`).
   * Bodies on it are always written by Node (sendfile would bypass the TLS record layer).
   */
  tls?: BootHttpTlsOptions;
  /** Shared per-turn handling budget (../turn-budget.ts): a burst of requests is answered over several event-loop turns. */
  turnBudget?: TurnBudget;
}

/** The TLS listener of {@link BootHttpServerOptions.tls}. */
export interface BootHttpTlsOptions {
  /** Server certificate chain, PEM (leaf first). */
  cert: string | Buffer;
  /** Server private key, PEM. */
  key: string | Buffer;
  port: number;
  host?: string;
  publicUrl?: string;
}

/** A running boot HTTP server. */
export interface BootHttpServer {
  /** The base URL (`publicUrl`, or the bound address). */
  url: string;
  port: number;
  /** The TLS listener's base URL and port, when `tls` was given. */
  tlsUrl?: string;
  tlsPort?: number;
  /** Stops listening and drops open connections (in-flight downloads end). */
  stop(): Promise<void>;
  stats(): BootHttpStats;
}

const ALLOW = 'GET, HEAD';

function attemptOf(req: Request): number | undefined {
  const q = req.originalUrl.indexOf('?');
  if (q < 0) return undefined;
  const value = new URLSearchParams(req.originalUrl.slice(q + 1)).get('attempt');
  return value !== null && /^\d{1,4}$/.test(value) ? Number(value) : undefined;
}

/** What the request handlers of one server share. */
interface HttpContext {
  readonly options: BootHttpServerOptions;
  readonly stats: BootHttpStats;
  readonly files: FileRoutes;
  readonly recorder: RecorderTarget;
  /** The notes of responses that went through express (the fast path keeps its own). */
  readonly expressNotes: WeakMap<ServerResponse, ResponseNotes>;
  /** The base URL, known once the listener is bound (before any request). */
  url: string;
  renderer: BootRendererOptions | undefined;
  /** The renderer for requests that arrived over IPv6, when `publicUrl6` is set. */
  renderer6: BootRendererOptions | undefined;
  /** The TLS listener's base URL, once bound; requests over TLS get scripts naming it. */
  tlsUrl?: string;
  rendererTls?: BootRendererOptions;
}

function notesOf(ctx: HttpContext, res: ServerResponse): ResponseNotes {
  let notes = ctx.expressNotes.get(res);
  if (notes === undefined) {
    notes = { bytes: 0 };
    ctx.expressNotes.set(res, notes);
  }
  return notes;
}

/** The realpath jails of `root` and the mounts; rejects a missing directory or a mount prefix that is not one path segment. */
async function openJails(options: BootHttpServerOptions): Promise<{ root: FileJail | undefined; mounts: Map<string, FileJail> }> {
  const root = options.root === undefined ? undefined : await FileJail.create(options.root);
  const mounts = new Map<string, FileJail>();
  for (const [prefix, dir] of Object.entries(options.mounts ?? {})) {
    if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(prefix)) throw new TypeError(`mount prefix ${JSON.stringify(prefix)} must be one path segment`);
    mounts.set(prefix, await FileJail.create(dir));
  }
  return { root, mounts };
}

/** The file routes (assets, mounts, root) with their open-file cache, pacer and kernel sender. */
async function fileRoutes(options: BootHttpServerOptions, stats: BootHttpStats): Promise<FileRoutes> {
  const jails = await openJails(options);
  const assets = options.assets ?? new Map<string, string>();
  return {
    root: jails.root,
    mounts: jails.mounts,
    assets,
    assetNames: new Set(assets.keys()),
    expressPrefixes: (options.extraRoutePrefixes ?? (options.extraRoutes === undefined ? [] : ['/ramdisk/v1/'])).map((p) => p.toLowerCase()),
    cache: new OpenFileCache(options.openFileCache),
    stats,
    logger: options.logger,
    pacer: options.maxBytesPerSecond === undefined ? undefined : new BytePacer(options.maxBytesPerSecond),
    kernel: openKernelSender(options.sendfile),
  };
}

/** A request that failed: 500 for a boot file that cannot be rendered, 503 when the boot lookup failed; a started response is cut. */
function failed(ctx: HttpContext, err: unknown, req: IncomingMessage, res: ServerResponse, notes: ResponseNotes): void {
  ctx.stats.errors += 1;
  const render = err instanceof BootRenderError;
  ctx.options.logger?.warn({ err, path: req.url }, render ? 'boot HTTP: cannot render a boot file' : 'boot HTTP: request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  sendText(req, res, render ? 500 : 503, render ? `cannot render: ${message}\n` : 'boot lookup unavailable; try again\n', notes, { detail: message });
}

function rendererOptions(options: BootHttpServerOptions, url: string): BootRendererOptions {
  const r: BootRendererOptions = { plans: options.plans, baseUrl: url, unknownHosts: options.unknownHosts ?? 'ignore', ...(options.discoveryLookup === undefined ? {} : { discoveryLookup: options.discoveryLookup }) };
  if (options.discovery !== undefined) r.discovery = options.discovery;
  if (options.nothingRetrySeconds !== undefined) r.nothingRetrySeconds = options.nothingRetrySeconds;
  if (options.nothingMaxAttempts !== undefined) r.nothingMaxAttempts = options.nothingMaxAttempts;
  return r;
}

/** The renderer of `req`: with `publicUrl6`, requests to an IPv6 address get the IPv6 base URL, and ramdisk callback URLs on it. */
function rendererFor(ctx: HttpContext, req: Request): BootRendererOptions {
  if (ctx.tlsUrl !== undefined && Reflect.get(req.socket, 'encrypted') === true) return (ctx.rendererTls ??= rendererOptions(ctx.options, ctx.tlsUrl));
  const urls = familyUrls(req.socket.localAddress ?? '', ctx.url, ctx.options.publicUrl6);
  if (urls.rebaseAgentUrl !== undefined) return (ctx.renderer6 ??= { ...rendererOptions(ctx.options, urls.baseUrl), rebaseAgentUrl: urls.rebaseAgentUrl });
  return (ctx.renderer ??= rendererOptions(ctx.options, ctx.url));
}

/** The boot routes behind express: refusals, probes, generated files, then files. */
async function serveBootPath(ctx: HttpContext, req: Request, res: Response): Promise<void> {
  const { stats } = ctx;
  const notes = notesOf(ctx, res);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', ALLOW);
    sendText(req, res, 405, 'method not allowed: the boot server is read-only\n', notes, { servedAs: 'refused', detail: 'method not allowed' });
    return;
  }
  const rawPath = req.originalUrl.split('?')[0] ?? '';
  if (!rawPath.startsWith('/')) {
    stats.refused += 1;
    sendText(req, res, 400, 'bad request target\n', notes, { servedAs: 'refused', detail: 'request target is not a path' });
    return;
  }
  const route = routeBootPath(rawPath, { assetNames: ctx.files.assetNames, percentEncoded: true });
  const mac = routeMac(route);
  if (mac !== undefined) notes.mac = mac;
  if (route.kind === 'refused') {
    if (route.status !== 404) stats.refused += 1;
    sendText(req, res, route.status, route.status === 404 ? 'not found\n' : `refused: ${route.reason}\n`, notes, { servedAs: 'refused', detail: route.reason });
    return;
  }
  if (route.kind === 'probe') {
    stats.probes += 1;
    sendText(req, res, 404, 'not found\n', notes, { servedAs: 'probe' });
    return;
  }
  if (isGeneratedRoute(route)) {
    const rendered = await renderBootFile(route, rendererFor(ctx, req), attemptOf(req));
    stats.generated += 1;
    sendText(req, res, 200, rendered.body, notes, { servedAs: route.kind, detail: rendered.planKind });
    return;
  }
  await serveFileRoute(route, req, res, notes, ctx.files);
}

/** The express app: response tracking, the extra routes first, the boot routes, the error handler. */
function createApp(ctx: HttpContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  app.use((req: Request, res: Response, next: NextFunction) => {
    ctx.expressNotes.set(res, trackResponse(req, res, ctx.recorder));
    next();
  });
  ctx.options.extraRoutes?.(app);
  app.use((req: Request, res: Response, next: NextFunction) => {
    serveBootPath(ctx, req, res).catch(next);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    failed(ctx, err, req, res, notesOf(ctx, res));
  });
  return app;
}

/**
 * The raw `node:http` handler. The fast path: plain file GETs and HEADs are answered here,
 * below express (its per-request routing cost most of a 64 KiB Range answer); everything else
 * goes to express. With a turn budget, a burst of requests (every host of a rack fetching its
 * script) is answered over several turns.
 */
function requestHandler(ctx: HttpContext, app: express.Express): (req: IncomingMessage, res: ServerResponse) => void {
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    const route = fileRouteOf(req, ctx.files);
    if (route === undefined) {
      app(req, res);
      return;
    }
    const notes = trackResponse(req, res, ctx.recorder);
    serveFileRoute(route, req, res, notes, ctx.files).catch((err: unknown) => {
      failed(ctx, err, req, res, notes);
    });
  };
  const budget = ctx.options.turnBudget;
  if (budget === undefined) return dispatch;
  return (req, res) => {
    void budget.enter().then(() => { dispatch(req, res); });
  };
}

/** Listens on `options.port`/`host` and returns the bound address and the base URL scripts name. */
async function listen(server: Server, options: Pick<BootHttpServerOptions, 'port' | 'host' | 'publicUrl' | 'logger'>, scheme = 'http'): Promise<{ port: number; url: string }> {
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
  return { port: address.port, url: (options.publicUrl ?? `${scheme}://${host}:${address.port}`).replace(/\/+$/, '') };
}

/** Closes `server` and drops its open connections (in-flight downloads end). */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => { resolve(); });
    server.closeAllConnections();
  });
}

/** The TLS listener: the same handler behind `node:https`; a failed handshake is logged, never a crash. */
async function listenTls(options: BootHttpServerOptions, stats: BootHttpStats, tls: BootHttpTlsOptions, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number; url: string }> {
  const server = createTlsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler) as unknown as Server;
  server.headersTimeout = 20_000;
  server.on('tlsClientError', (err: Error) => {
    stats.tlsHandshakeFailures += 1;
    options.logger?.warn({ err }, 'boot HTTPS: TLS handshake failed');
  });
  const listenOptions = { port: tls.port, host: tls.host ?? options.host, publicUrl: tls.publicUrl, logger: options.logger };
  const { port, url } = await listen(server, listenOptions, 'https');
  return { server, port, url };
}

/**
 * Starts the boot HTTP server. Rejects when a root or mount directory does not exist or the
 * port cannot be bound.
 */
export async function startBootHttpServer(options: BootHttpServerOptions): Promise<BootHttpServer> {
  const stats = createBootHttpStats();
  const files = await fileRoutes(options, stats);
  const recorder: RecorderTarget = { stats };
  if (options.onEvent !== undefined) recorder.onEvent = options.onEvent;
  if (options.logger !== undefined) recorder.logger = options.logger;
  const ctx: HttpContext = { options, stats, files, recorder, expressNotes: new WeakMap(), url: '', renderer: undefined, renderer6: undefined };
  const handler = requestHandler(ctx, createApp(ctx));
  const server: Server = createServer(handler);
  server.headersTimeout = 20_000;
  const { port, url } = await listen(server, options);
  ctx.url = url;
  const secure = options.tls === undefined ? undefined : await listenTls(options, stats, options.tls, handler).catch(async (err: unknown) => {
    await closeServer(server);
    throw err;
  });
  if (secure !== undefined) ctx.tlsUrl = secure.url;
  const { cache } = files;
  return {
    url,
    port,
    ...(secure === undefined ? {} : { tlsUrl: secure.url, tlsPort: secure.port }),
    stop: async () => {
      await Promise.all([closeServer(server), ...(secure === undefined ? [] : [closeServer(secure.server)])]);
      cache.close();
    },
    stats: () => {
      const cached = cache.stats();
      const kernel = files.kernel?.stats();
      return { ...stats, byStatus: { ...stats.byStatus }, openFiles: cached.openFiles, fileOpens: cached.opens, sendfileAnswers: (kernel?.answers ?? 0) + (kernel?.threadJobs ?? 0), sendfileCold: kernel?.cold ?? 0 };
    },
  };
}
