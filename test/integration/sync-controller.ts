/**
 * @module A real HTTP(S) controller for the sync tests: node:http (or https with client
 * certificates required) on 127.0.0.1, gunzips and validates every push with the wire decoder,
 * records each delivery (Idempotency-Key, raw JSON bytes, client certificate CN), applies each
 * key once, and misbehaves on purpose through a per-request `respond` hook. Also `waitFor`, a
 * polling helper bounded in count and time.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import { decodePushRequest, type PushRequest } from '../../agent/sync/index.js';

/** One request the controller received (whether or not it answered). */
export interface Delivery {
  key: string | undefined;
  headers: IncomingHttpHeaders;
  /** The decompressed JSON text. */
  json: string;
  request: PushRequest;
  /** CN of the client certificate (https only). */
  clientCn?: string;
}

/** What to do with a request: answer, or drop the connection after reading the body ("lost response"). */
export type Reply = { status: number; body: string; headers?: Record<string, string>; delayMs?: number } | 'destroy';

/** Decides the reply to delivery number `index` (0-based, counting every request). */
export type Respond = (delivery: Delivery, index: number, controller: FakeController) => Reply | undefined;

/** Options of {@link FakeController.start}. */
export interface FakeControllerOptions {
  port?: number;
  tls?: { key: Buffer; cert: Buffer; ca: Buffer };
  /** Overrides the default reply (undefined from the hook = default: apply once and acknowledge). */
  respond?: Respond;
}

/** The fake controller; see the module comment. */
export class FakeController {
  readonly deliveries: Delivery[] = [];
  /** Idempotency keys applied, in order; a key is applied at most once. */
  readonly appliedKeys: string[] = [];
  /** Requests applied, in order. */
  readonly applied: PushRequest[] = [];
  /** Requests that failed wire validation (should stay empty). */
  readonly invalid: string[] = [];
  respond: Respond | undefined;
  readonly #server: Server;
  #port = 0;
  readonly #scheme: string;

  private constructor(server: Server, scheme: string, respond: Respond | undefined) {
    this.#server = server;
    this.#scheme = scheme;
    this.respond = respond;
  }

  static async start(options: FakeControllerOptions = {}): Promise<FakeController> {
    const holder: { controller?: FakeController } = {};
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      void holder.controller?.handle(req, res);
    };
    const server = options.tls === undefined
      ? createHttpServer(handler)
      : createHttpsServer({ ...options.tls, requestCert: true, rejectUnauthorized: true }, handler);
    const controller = new FakeController(server, options.tls === undefined ? 'http' : 'https', options.respond);
    holder.controller = controller;
    server.on('clientError', (_err, socket) => { socket.destroy(); });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => { resolve(); });
    });
    controller.#port = (server.address() as AddressInfo).port;
    return controller;
  }

  get port(): number {
    return this.#port;
  }
  get url(): string {
    return `${this.#scheme}://127.0.0.1:${this.#port}/api/v1/push`;
  }

  /** Hosts names in applied summaries, in delivery order. */
  appliedHostVersions(): [string, number][] {
    return this.applied.flatMap((r) => r.hosts.map((h): [string, number] => [h.name, Number(h.resourceVersion)]));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > 50 * 1024 * 1024) {
        req.destroy();
        return;
      }
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks);
    let json: string;
    let request: PushRequest;
    try {
      json = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      request = decodePushRequest(json);
    } catch (err) {
      this.invalid.push(err instanceof Error ? err.message : String(err));
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid push' }));
      return;
    }
    const key = req.headers['idempotency-key'];
    const socket = req.socket as Partial<TLSSocket>;
    const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
    // An empty object (no subject) when the client sent no certificate.
    const cn = (peer?.subject as { CN?: unknown } | undefined)?.CN;
    const delivery: Delivery = {
      key: typeof key === 'string' ? key : undefined,
      headers: req.headers,
      json,
      request,
      ...(typeof cn === 'string' ? { clientCn: cn } : {}),
    };
    const index = this.deliveries.length;
    this.deliveries.push(delivery);
    const reply = this.respond?.(delivery, index, this) ?? this.acknowledge(delivery);
    if (reply === 'destroy') {
      req.socket.destroy();
      return;
    }
    if (reply.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (res.destroyed || req.socket.destroyed) return;
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body);
  }

  /** The well-behaved reply: apply the key once, acknowledge every time. */
  acknowledge(delivery: Delivery): Reply {
    if (delivery.key !== undefined && !this.appliedKeys.includes(delivery.key)) {
      this.appliedKeys.push(delivery.key);
      this.applied.push(delivery.request);
    }
    return { status: 200, body: JSON.stringify({ acknowledged: delivery.request.sequence }) };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => { resolve(); }));
  }
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => { resolve(); }));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  return port;
}

/** Polls `predicate` every `intervalMs` until it holds; fails after `timeoutMs` (and so after a bounded number of polls). */
export async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  const polls = Math.ceil(timeoutMs / intervalMs);
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < polls && Date.now() < deadline; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  if (await predicate()) return;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
