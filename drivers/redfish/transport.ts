/**
 * @module One HTTP exchange with a Redfish service over undici: a per-BMC `Client` (TLS
 * settings live on the dispatcher — per-request connect options are ignored, docs/dependency-audit.md,
 * "Package behaviour the code works around"), a deadline from `AbortSignal.timeout` (undici's own timers are coarse), a body size cap,
 * same-origin redirects only, and JSON decoding that turns HTML pages and truncated JSON into
 * `BmcError(PROTOCOL)` naming the BMC. No auth, no retries, no queue: client.ts adds those.
 */
import { createSecureContext, type SecureContext } from 'node:tls';
import { Client } from 'undici';
import { connectLookup, type HostLookup } from '../host-lookup.js';
import { exchangeError, htmlTitle, statusError, transportError, type RequestDescription } from './http-errors.js';

/** Default body cap: Redfish resources are small; attribute registries reach a few MiB. */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_REDIRECTS = 3;

const secureContexts = new Map<string, SecureContext>();

/**
 * One TLS context per trust setting, shared by every BMC's Client: building a context loads the
 * CA store, which otherwise costs ~0.5 ms per new connection in a sweep of hundreds of BMCs.
 * Verification on/off stays per Client (`rejectUnauthorized`).
 */
function sharedSecureContext(ca: string | undefined): SecureContext {
  const key = ca ?? '';
  let context = secureContexts.get(key);
  if (context === undefined) {
    context = createSecureContext(ca === undefined ? {} : { ca });
    secureContexts.set(key, context);
  }
  return context;
}

/** Settings of one {@link RedfishTransport}. */
export interface TransportOptions {
  /** `https://host[:port]` (or http) — the Redfish endpoint. */
  readonly endpoint: string;
  /** Address named in errors. */
  readonly address: string;
  readonly disableCertificateVerification: boolean;
  /** PEM CA bundle to trust instead of the system store (pinning a BMC's own certificate). */
  readonly ca?: string;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  /** Resolver of the endpoint's host name; default the system's. Either way through host-lookup.ts. */
  readonly lookup?: HostLookup;
}

/** A request as the client hands it down. */
export interface ExchangeRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path on the endpoint, starting with `/`. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

/** A decoded answer (any status). */
export interface ExchangeResponse {
  readonly status: number;
  /** Path actually answered (after same-origin redirects). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON, or undefined for an empty body. */
  readonly body: unknown;
  /** The raw text when the BMC sent HTML (error pages), else undefined. */
  readonly html: string | undefined;
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** The HTTP side of one BMC: owns its undici Client. */
export class RedfishTransport {
  readonly #options: TransportOptions;
  readonly #origin: string;
  readonly #host: string;
  readonly #client: Client;

  constructor(options: TransportOptions) {
    this.#options = options;
    const url = new URL(options.endpoint);
    this.#origin = url.origin;
    this.#host = url.host;
    // One Client, one connection: client.ts sends one request at a time per BMC anyway. Not an
    // Agent: an Agent drops its Client when the BMC closes an idle connection and builds a new
    // one on the next request — with a power sweep every ~55 s against BMCs that time out
    // keep-alive after a few seconds, that was a Client construction per read (~6 % of the
    // sweep's CPU at 1000 hosts). A Client reconnects by itself.
    this.#client = new Client(this.#origin, {
      pipelining: 1,
      connect: {
        rejectUnauthorized: !options.disableCertificateVerification,
        secureContext: sharedSecureContext(options.ca),
        timeout: options.timeoutMs,
        // The drivers' one resolver: a name that does not resolve fails as BmcHostUnresolvedError.
        lookup: connectLookup({ address: options.address, ...(options.lookup === undefined ? {} : { lookup: options.lookup }) }),
      },
    });
  }

  /** `host[:port]` of the endpoint. */
  get host(): string {
    return this.#host;
  }

  /**
   * Resolves a `Location`-style reference against the endpoint; another origin is refused
   * (a BMC must never send us, with its credentials, elsewhere).
   */
  resolvePath(reference: string, about: RequestDescription): string {
    let url: URL;
    try {
      url = new URL(reference, `${this.#origin}${about.path}`);
    } catch {
      throw exchangeError(about, `unusable location "${reference.slice(0, 200)}"`);
    }
    if (url.origin !== this.#origin) {
      throw exchangeError(about, `refused redirect/location to another host (${url.host}); only ${this.#host} is trusted with the credentials`);
    }
    return `${url.pathname}${url.search}`;
  }

  /** Sends one request, following same-origin redirects of GETs; throws `BmcError` on transport failures. */
  async exchange(req: ExchangeRequest): Promise<ExchangeResponse> {
    let path = req.path;
    for (let hop = 0; ; hop++) {
      const about: RequestDescription = { address: this.#options.address, method: req.method, path };
      const res = await this.#once({ ...req, path }, about);
      if (res.status < 300 || res.status >= 400 || res.status === 304) return res;
      const location = res.headers.location;
      if (location === undefined) return res;
      const next = this.resolvePath(location, about);
      if (req.method !== 'GET') throw exchangeError(about, `answered a redirect (HTTP ${res.status}) to ${next}; not followed for ${req.method}`);
      if (hop >= MAX_REDIRECTS) throw exchangeError(about, `more than ${MAX_REDIRECTS} redirects`);
      path = next;
    }
  }

  async #once(req: ExchangeRequest, about: RequestDescription): Promise<ExchangeResponse> {
    const { timeoutMs, maxBodyBytes } = this.#options;
    const headers: Record<string, string> = { accept: 'application/json', 'odata-version': '4.0', ...req.headers };
    let payload: string | undefined;
    if (req.body !== undefined) {
      payload = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    const signal = AbortSignal.timeout(timeoutMs);
    let status: number;
    let rawHeaders: Record<string, string>;
    let text: string;
    try {
      // Through URL, as undici's top-level request() does: a BMC's @odata.id with a space or
      // non-ASCII character is percent-encoded rather than refused as an invalid path.
      const url = new URL(req.path, this.#origin);
      const res = await this.#client.request({ path: `${url.pathname}${url.search}`, method: req.method, headers, body: payload, signal });
      status = res.statusCode;
      rawHeaders = flattenHeaders(res.headers);
      text = await readCapped(res.body, maxBodyBytes, rawHeaders['content-length'], about);
    } catch (err) {
      throw transportError(err, about, this.#host, timeoutMs);
    }
    return decodeBody(status, rawHeaders, text, about);
  }

  /** Closes every connection at once (in-flight requests fail). */
  async close(): Promise<void> {
    await this.#client.destroy();
  }
}

interface BodyStream extends AsyncIterable<unknown> {
  destroy(error?: Error): unknown;
}

async function readCapped(body: BodyStream, maxBytes: number, contentLength: string | undefined, about: RequestDescription): Promise<string> {
  const tooBig = (): Error => exchangeError(about, `response body exceeds ${maxBytes} bytes; refused`);
  if (contentLength !== undefined && Number(contentLength) > maxBytes) {
    body.destroy();
    throw tooBig();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > maxBytes) {
      body.destroy();
      throw tooBig();
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function decodeBody(status: number, headers: Record<string, string>, text: string, about: RequestDescription): ExchangeResponse {
  const base = { status, path: about.path, headers };
  const trimmed = text.trimStart();
  if (trimmed === '') return { ...base, body: undefined, html: undefined };
  const type = headers['content-type'] ?? '';
  const looksHtml = type.includes('html') || trimmed.startsWith('<');
  if (looksHtml) {
    if (status >= 200 && status < 300) {
      const title = htmlTitle(text);
      throw exchangeError(about, `answered an HTML page${title === undefined ? '' : ` "${title}"`} (HTTP ${status}) instead of JSON`);
    }
    return { ...base, body: undefined, html: text };
  }
  try {
    return { ...base, body: JSON.parse(text) as unknown, html: undefined };
  } catch {
    if (status >= 400) throw statusError(status, about, undefined);
    throw exchangeError(about, `answered invalid JSON (HTTP ${status}, ${text.length} bytes; truncated?)`);
  }
}
