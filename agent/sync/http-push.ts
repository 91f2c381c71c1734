/**
 * @module One delivery of a push request to the controller over undici: gzip body
 * (`Content-Encoding: gzip`, RFC 9110 §8.4), `Idempotency-Key`, bearer token (RFC 6750 §2.1) or
 * mutual TLS through a dedicated undici `Agent` (TLS options belong to the dispatcher: a
 * per-request `connect` option is ignored — docs/dependency-audit.md, "Package behaviour the code works around"), bounded time and response
 * size, and every failure turned into a {@link SyncFailure} with a stable code.
 */
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { Agent, request } from 'undici';
import type { Config } from '../config.js';
import { redactKnownSecrets } from '../redact-text.js';
import { parseRetryAfterMs } from './backoff.js';
import { IDEMPOTENCY_HEADER, decodePushResponse, encodePushRequest, idempotencyKey, type PushAck, type PushRequest } from '../../wire/index.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** The `controller` config section (agent/config.ts). */
export type ControllerConfig = NonNullable<Config['controller']>;

/** Why a push failed. `unauthorized` = 401/403; `http-status` = any other non-2xx; `config` = unreadable TLS files. */
export type SyncFailureCode = 'unreachable' | 'timeout' | 'tls' | 'unauthorized' | 'http-status' | 'bad-response' | 'config' | 'outbox';

/** A push that did not end in an acknowledgement. The batch stays in the outbox and is retried. */
export class SyncFailure extends Error {
  readonly code: SyncFailureCode;
  readonly httpStatus: number | undefined;
  /** The controller's `Retry-After`, in ms from when the answer arrived. */
  readonly retryAfterMs: number | undefined;
  constructor(code: SyncFailureCode, message: string, extra: { httpStatus?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'SyncFailure';
    this.code = code;
    this.httpStatus = extra.httpStatus;
    this.retryAfterMs = extra.retryAfterMs;
  }
}

/** Limits of {@link ControllerClient}. */
export interface ControllerClientOptions {
  /** Whole request (connect, send, answer) deadline. */
  requestTimeoutMs: number;
  /** Larger (decompressed) controller answers are refused. */
  maxResponseBytes: number;
  userAgent: string;
  /** Clock for `Retry-After` HTTP-dates. */
  nowMs: () => number;
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if ('code' in e && typeof e.code === 'string') codes.push(e.code);
    if ('name' in e && typeof e.name === 'string') codes.push(e.name);
    e = 'cause' in e ? e.cause : undefined;
  }
  return codes;
}

function messagesOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    const code = 'code' in e && typeof e.code === 'string' ? ` (${e.code})` : '';
    const text = `${e.message}${code}`;
    if (e.message !== '' && !parts.includes(text)) parts.push(text);
    e = e.cause;
  }
  return parts.length === 0 ? String(err) : parts.join(': ');
}

/** Classifies a transport error (undici, TLS, abort) into a {@link SyncFailure}. */
export function classifyTransportError(err: unknown, what: string): SyncFailure {
  if (err instanceof SyncFailure) return err;
  const codes = codesOf(err);
  const detail = messagesOf(err);
  if (codes.some((c) => /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(c) || c.includes('_CERT_'))) {
    return new SyncFailure('tls', `${what}: TLS handshake failed: ${detail}`, { cause: err });
  }
  if (codes.some((c) => TIMEOUT_CODES.has(c) || c === 'TimeoutError' || c === 'AbortError')) {
    return new SyncFailure('timeout', `${what}: no answer in time: ${detail}`, { cause: err });
  }
  const reachable = !codes.some((c) => UNREACHABLE_CODES.has(c));
  return new SyncFailure('unreachable', `${what}: ${reachable ? 'request failed' : 'controller unreachable'}: ${detail}`, { cause: err });
}

/** The URL as shown in status and errors: no user-info. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** The decoded password of `url`'s user-info, if any. */
function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}

/** A printable, one-line excerpt of an answer body (controllers often explain a refusal there). */
function excerpt(text: string): string {
  let line = '';
  for (const ch of text) line += ch < ' ' || ch === '\u007f' ? ' ' : ch;
  line = line.replace(/ {2,}/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** Delivers push requests to one controller; owns its undici `Agent` (close it with {@link ControllerClient.close}). */
export class ControllerClient {
  readonly #config: ControllerConfig;
  readonly #options: ControllerClientOptions;
  readonly #url: string;
  #dispatcher: Agent | undefined;

  constructor(config: ControllerConfig, options: ControllerClientOptions) {
    this.#config = config;
    this.#options = options;
    this.#url = displayUrl(config.url);
  }

  /** Reads the TLS files on first use (a missing file is a `config` failure, retried later, in case it appears). */
  async #agent(): Promise<Agent> {
    if (this.#dispatcher !== undefined) return this.#dispatcher;
    const tls = this.#config.tls ?? {};
    const files: Record<string, Buffer> = {};
    for (const key of ['ca', 'cert', 'key'] as const) {
      const path = tls[key];
      if (path === undefined) continue;
      try {
        files[key] = await readFile(path);
      } catch (err) {
        throw new SyncFailure('config', `cannot read controller.tls.${key} ${path}: ${messagesOf(err)}`, { cause: err });
      }
    }
    this.#dispatcher = new Agent({
      connect: { ...files, timeout: this.#options.requestTimeoutMs },
      headersTimeout: this.#options.requestTimeoutMs,
      bodyTimeout: this.#options.requestTimeoutMs,
    });
    return this.#dispatcher;
  }

  /**
   * POSTs `push` (gzip JSON) and resolves with the controller's acknowledgement of its sequence.
   * `signal` aborts it (the request also times out by itself).
   * @throws SyncFailure for every way the push can fail; nothing else.
   */
  async push(push: PushRequest, signal: AbortSignal): Promise<PushAck> {
    const what = `POST ${this.#url} (sequence ${push.sequence})`;
    const dispatcher = await this.#agent();
    const body = await gzipAsync(Buffer.from(encodePushRequest(push), 'utf8'));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      accept: 'application/json',
      'user-agent': this.#options.userAgent,
      [IDEMPOTENCY_HEADER.toLowerCase()]: idempotencyKey(push.agentId, push.sequence),
    };
    if (this.#config.token !== undefined) headers.authorization = `Bearer ${this.#config.token}`;
    const timeout = AbortSignal.timeout(this.#options.requestTimeoutMs);
    const both = AbortSignal.any([signal, timeout]);
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const res = await request(this.#config.url, { method: 'POST', headers, body, dispatcher, signal: both });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      retryAfter = Array.isArray(ra) ? ra[0] : ra;
      const encoding = res.headers['content-encoding'];
      text = await this.#readBody(res.body, typeof encoding === 'string' ? encoding : undefined, what);
    } catch (err) {
      const failure = classifyTransportError(err, what);
      // TLS 1.3 (RFC 8446 §4.4.2.4): a server that requires a client certificate aborts after
      // the client's Finished, so the client only sees the connection close.
      const noClientCert = this.#config.url.startsWith('https:') && this.#config.tls?.cert === undefined;
      if (failure.code === 'unreachable' && noClientCert && codesOf(err).includes('UND_ERR_SOCKET')) {
        throw new SyncFailure('unreachable', `${failure.message} (if the controller requires a client certificate, set controller.tls.cert and controller.tls.key)`, { cause: err });
      }
      throw failure;
    }
    if (status >= 200 && status < 300) {
      try {
        return decodePushResponse(text, push.sequence);
      } catch (err) {
        throw new SyncFailure('bad-response', `${what}: HTTP ${status} but ${err instanceof Error ? err.message : String(err)}`, { httpStatus: status, cause: err });
      }
    }
    // A controller may echo what it was sent (an Authorization header in a 401's body): what it
    // said is shown in `sync status` and logged, our token never.
    const said = excerpt(redactKnownSecrets(text, [this.#config.token, urlPassword(this.#config.url)]));
    const tail = said === '' ? '' : `: ${said}`;
    const retryAfterMs = parseRetryAfterMs(retryAfter, this.#options.nowMs());
    const extra = { httpStatus: status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    if (status === 401 || status === 403) {
      const how = this.#config.token !== undefined ? 'check controller.token' : this.#config.tls?.cert !== undefined ? 'check the client certificate' : 'no controller.token or client certificate is configured';
      throw new SyncFailure('unauthorized', `${what}: controller refused our credentials (HTTP ${status}; ${how})${tail}`, extra);
    }
    throw new SyncFailure('http-status', `${what}: controller answered HTTP ${status}${tail}`, extra);
  }

  async #readBody(body: AsyncIterable<Buffer> & { destroy(): unknown }, encoding: string | undefined, what: string): Promise<string> {
    const max = this.#options.maxResponseBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > max) {
        body.destroy();
        throw new SyncFailure('bad-response', `${what}: controller answer larger than ${max} bytes`);
      }
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks);
    if (encoding === undefined || encoding === 'identity') return raw.toString('utf8');
    if (encoding !== 'gzip') throw new SyncFailure('bad-response', `${what}: controller answer has unsupported Content-Encoding ${JSON.stringify(encoding)}`);
    try {
      return (await gunzipAsync(raw, { maxOutputLength: max })).toString('utf8');
    } catch (err) {
      throw new SyncFailure('bad-response', `${what}: controller answer is not valid gzip or larger than ${max} bytes: ${messagesOf(err)}`, { cause: err });
    }
  }

  /** Closes the dispatcher's connections (in-flight requests are destroyed). */
  async close(): Promise<void> {
    const d = this.#dispatcher;
    this.#dispatcher = undefined;
    if (d !== undefined) await d.destroy();
  }
}
