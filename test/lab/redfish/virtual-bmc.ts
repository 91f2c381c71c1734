/**
 * @module A virtual Redfish BMC: an HTTP(S) server (self-signed certificate from tls.ts) that
 * serves the routes of routes-system.ts and routes-services.ts over a {@link VirtualBmcState},
 * with basic and session authentication (the service root and the login POST are open, as
 * DSP0266 §13.3 requires), ETags, and injectable faults (status storms, HTML error pages,
 * truncated JSON, huge bodies, slow and hanging answers, redirects, connection resets).
 * Usable as a library: `startVirtualRedfishBmc(options) → { url, stop(), state }`.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { MemoryHostBackend, type HostBackend } from './backend.js';
import { LabContext, type Route, type RouteResponse } from './lab-context.js';
import { errorBody } from './payloads.js';
import { systemRoutes } from './routes-system.js';
import { serviceRoutes } from './routes-services.js';
import { VirtualBmcState, type VirtualBmcFault, type VirtualBmcFlavor, type VirtualBmcKnobs } from './state.js';
import { labCertificate, type LabCertificate } from './tls.js';

/** Options of {@link startVirtualRedfishBmc}. */
export interface VirtualRedfishBmcOptions {
  /** Serve HTTPS with a self-signed certificate (default true). */
  readonly https?: boolean;
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  readonly username?: string;
  readonly password?: string;
  readonly flavor?: VirtualBmcFlavor;
  /** How many systems (generic flavor: `Systems/1`…`Systems/N`); default 1. */
  readonly systems?: number;
  /** Backend per system id; default a fresh {@link MemoryHostBackend}. */
  readonly backend?: (systemId: string) => HostBackend;
  readonly knobs?: Partial<VirtualBmcKnobs>;
  /** HTTPS: serve this key and certificate instead of the shared self-signed one. */
  readonly certificate?: LabCertificate;
}

/** A running virtual BMC. */
export interface VirtualRedfishBmc {
  /** `https://127.0.0.1:PORT`. */
  readonly url: string;
  /** `127.0.0.1:PORT`. */
  readonly host: string;
  readonly state: VirtualBmcState;
  readonly systemIds: readonly string[];
  /** The backend of each system. */
  readonly backends: ReadonlyMap<string, HostBackend>;
  /** PEM of the self-signed certificate (HTTPS only). */
  readonly certificate: string | undefined;
  /**
   * HTTPS: serves another key and certificate from now on and drops every open connection, as
   * a BMC restarting its web server after a certificate change does.
   */
  setCertificate(certificate: LabCertificate): void;
  /** Stops the server, cancels delayed operations and closes the backends. */
  stop(): Promise<void>;
}

const OPEN_PATHS = new Set(['/redfish', '/redfish/v1', '/redfish/v1/odata', '/redfish/v1/$metadata']);

function sendJson(res: ServerResponse, answer: RouteResponse): void {
  const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
  const headers: Record<string, string> = { 'odata-version': '4.0', ...answer.headers };
  if (text !== '') headers['content-type'] = 'application/json; charset=utf-8';
  res.writeHead(answer.status, headers);
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/** Answers a request with a fault; returns true when the request is done (or never will be). */
async function applyFault(fault: VirtualBmcFault, res: ServerResponse, sleep: (ms: number) => Promise<void>): Promise<boolean> {
  switch (fault.kind) {
    case 'status':
      sendJson(res, { status: fault.status, body: errorBody('Base.1.16.ServiceTemporarilyUnavailable', `injected HTTP ${fault.status}`), headers: fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) } });
      return true;
    case 'html':
      res.writeHead(fault.status ?? 500, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>');
      return true;
    case 'truncated':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"@odata.id": "/redfish/v1/Systems/1", "PowerState": "On", "Boot": {"BootSourceOverrideTar');
      return true;
    case 'huge': {
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.writeHead(200, { 'content-type': 'application/json', ...(fault.contentLength === true ? { 'content-length': String(fault.bytes + 2) } : {}) });
      res.write('{');
      for (let sent = 0; sent < fault.bytes && !res.destroyed; sent += chunk.length) {
        if (!res.write(chunk.subarray(0, Math.min(chunk.length, fault.bytes - sent)))) await new Promise((r) => res.once('drain', r));
      }
      res.end('}');
      return true;
    }
    case 'slow':
      await sleep(fault.delayMs);
      return false;
    case 'hang':
      return true; // never answer; the socket closes on stop
    case 'redirect':
      res.writeHead(302, { location: fault.location });
      res.end();
      return true;
    case 'reset':
      res.socket?.destroy();
      return true;
  }
}

/** Starts a virtual Redfish BMC. */
export async function startVirtualRedfishBmc(options: VirtualRedfishBmcOptions = {}): Promise<VirtualRedfishBmc> {
  const flavor = options.flavor ?? 'generic';
  const state = new VirtualBmcState(flavor, options.username ?? 'admin', options.password ?? 'password', options.knobs ?? {});
  const count = flavor === 'generic' ? Math.max(1, options.systems ?? 1) : 1;
  const backends = new Map<string, HostBackend>();
  for (let i = 1; i <= count; i++) {
    const id = flavor === 'idrac' ? 'System.Embedded.1' : String(i);
    const backend = options.backend?.(id) ?? new MemoryHostBackend();
    backends.set(id, backend);
    state.addSystem(id, backend);
  }
  const lab = new LabContext(state);
  const routes: Route[] = [...serviceRoutes(lab), ...systemRoutes(lab)];
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => {
    const t = setTimeout(() => { timers.delete(t); resolve(); }, ms);
    timers.add(t);
  });
  const basic = `Basic ${Buffer.from(`${state.username}:${state.password}`).toString('base64')}`;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://bmc');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const token = req.headers['x-auth-token'];
    const auth = req.headers.authorization;
    const ifMatch = req.headers['if-match'];
    state.requests.push({
      method, path, ifMatch, startedAt: performance.now(),
      authorization: typeof token === 'string' ? 'token' : auth !== undefined ? 'basic' : 'none',
    });
    const fault = state.takeFault(method, path);
    if (fault !== undefined && await applyFault(fault, res, sleep)) return;
    const text = await readBody(req);
    const open = (method === 'GET' && OPEN_PATHS.has(path)) || (method === 'POST' && path === '/redfish/v1/SessionService/Sessions');
    const tokenOk = typeof token === 'string' && [...state.sessions.values()].some((s) => s.token === token);
    if (!open && !tokenOk && auth !== basic) {
      sendJson(res, { status: 401, body: errorBody('Base.1.16.NoValidSession', 'authentication required'), headers: { 'www-authenticate': 'Basic realm="Redfish"' } });
      return;
    }
    let body: unknown;
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        sendJson(res, { status: 400, body: errorBody('Base.1.16.MalformedJSON', 'the request body is not JSON') });
        return;
      }
    }
    const lookup = path === '/redfish' ? '/redfish/v1' : path;
    const candidates = routes.map((r) => ({ r, m: r.pattern.exec(lookup) })).filter((x) => x.m !== null);
    const hit = candidates.find((x) => x.r.method === method);
    if (hit === undefined || hit.m === null) {
      sendJson(res, candidates.length > 0
        ? { status: 405, body: errorBody('Base.1.16.OperationNotAllowed', `${method} is not allowed on ${path}`) }
        : { status: 404, body: errorBody('Base.1.16.ResourceMissingAtURI', `${path} not found`) });
      return;
    }
    sendJson(res, await hit.r.handle({ method, path: lookup, params: hit.m.slice(1), body, ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined }));
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    res.once('close', () => { state.inFlight -= 1; });
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, { status: 500, body: errorBody('Base.1.16.InternalError', String(err)) });
      else res.destroy();
    });
  };
  const tls = options.https === false ? undefined : options.certificate ?? await labCertificate();
  const secure = tls === undefined ? undefined : createHttpsServer({ key: tls.key, cert: tls.cert }, listener);
  const server: Server = secure ?? createHttpServer(listener);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  let stopped: Promise<void> | undefined;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://${host}`,
    host,
    state,
    systemIds: [...backends.keys()],
    backends,
    certificate: tls?.cert,
    setCertificate: (certificate) => {
      if (secure === undefined) throw new Error('setCertificate: this virtual BMC serves plain HTTP');
      secure.setSecureContext({ key: certificate.key, cert: certificate.cert });
      secure.closeAllConnections();
    },
    stop: () => (stopped ??= (async () => {
      for (const t of timers) clearTimeout(t);
      const closed = new Promise<void>((resolve) => { server.close(() => { resolve(); }); });
      server.closeAllConnections();
      await closed;
      await lab.stop();
      await Promise.all([...backends.values()].map((b) => b.close()));
    })()),
  };
}
