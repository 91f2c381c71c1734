/**
 * @module The Redfish client of one BMC: one request at a time (a FIFO queue per client, so
 * one driver never floods its BMC), basic or session authentication (DSP0266 §13.3: POST
 * `SessionService/Sessions` → `X-Auth-Token`, reused, one re-login on 401, DELETE on close),
 * bounded retries with backoff for idempotent reads (429/502/503/504 and connection resets;
 * `Retry-After` honoured up to a cap; the backoff holds the queue), PATCH with `If-Match`
 * (one retry after 412 with a fresh ETag; iLO 5 weak ETags retried in strong form), and
 * task monitors (DSP0266 §12.2: 202 + `Location`, polled until done or a bounded timeout).
 * Errors are `BmcError`s naming the BMC address, never the credentials or the token.
 */
import type { HostLookup } from '../host-lookup.js';
import type { TaskState } from '../capabilities.js';
import { BmcError, BmcErrorCode } from '../errors.js';
import type { BmcCredentials } from '../registry.js';
import { exchangeError, httpStatusOf, isRetryableTransportError, statusError, type RequestDescription } from './http-errors.js';
import { isJsonObject, readString, redfishProtocolError } from './json.js';
import { decodeServiceRoot, decodeTask, isTaskBody, type ServiceRoot, type TaskResource } from './resources.js';
import { DEFAULT_MAX_BODY_BYTES, RedfishTransport, type ExchangeRequest, type ExchangeResponse } from './transport.js';

/** How the client authenticates: `auto` tries a session and falls back to basic when the BMC has none. */
export type RedfishAuthMode = 'auto' | 'session' | 'basic';

/** Options of {@link RedfishClient}. */
export interface RedfishClientOptions {
  /** `https://host[:port]`. */
  readonly endpoint: string;
  /** Address named in errors (credential-free, as configured). */
  readonly address: string;
  readonly credentials: BmcCredentials;
  readonly disableCertificateVerification?: boolean;
  /** PEM CA bundle to trust (e.g. a BMC's pinned self-signed certificate). */
  readonly ca?: string;
  /** Deadline of one request, default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Resolver of the BMC's host name (tests inject one); default the system's, via host-lookup.ts. */
  readonly lookup?: HostLookup;
  /** Default `auto`. */
  readonly auth?: RedfishAuthMode;
  /** Default 8 MiB. */
  readonly maxBodyBytes?: number;
  /** Extra tries of a GET after 429/502/503/504 or a reset connection; default 2. */
  readonly retries?: number;
  /** First backoff, doubled per retry; default 500 ms. */
  readonly retryDelayMs?: number;
  /** Cap on one backoff (also on `Retry-After`); default 10 000 ms. */
  readonly maxRetryDelayMs?: number;
  /** Task monitor poll interval when the BMC sends no `Retry-After`; default 1000 ms. */
  readonly taskPollMs?: number;
  /** Upper bound for {@link RedfishClient.waitForTask}; default 300 000 ms. */
  readonly taskTimeoutMs?: number;
  /** Sleep function (tests pass a fast one). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** A successful (2xx) answer. */
export interface RedfishResponse {
  readonly status: number;
  readonly path: string;
  readonly body: unknown;
  /** `ETag` header, else the body's `@odata.etag`. */
  readonly etag: string | undefined;
  /** `Location` header resolved to a same-origin path. */
  readonly location: string | undefined;
  /** `Retry-After` in milliseconds, when given as seconds. */
  readonly retryAfterMs: number | undefined;
}

const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Session {
  readonly token: string;
  readonly uri: string | undefined;
}

/** Talks to one BMC. Construct cheaply: nothing connects before the first request. */
export class RedfishClient {
  readonly address: string;
  readonly #o: Required<Omit<RedfishClientOptions, 'ca' | 'credentials' | 'lookup'>> & { readonly credentials: BmcCredentials };
  readonly #transport: RedfishTransport;
  #queue: Promise<unknown> = Promise.resolve();
  #root: Promise<ServiceRoot> | undefined;
  #auth: Promise<Session | 'basic'> | undefined;
  #closed = false;
  /** What a BMC error must not repeat: the password (4+ characters) and the Basic header's value. */
  readonly #secrets: readonly string[];
  /** Requests sent so far (for tests and the flight recorder). */
  requestCount = 0;

  constructor(options: RedfishClientOptions) {
    this.address = options.address;
    this.#o = {
      endpoint: options.endpoint, address: options.address, credentials: options.credentials,
      disableCertificateVerification: options.disableCertificateVerification ?? false,
      timeoutMs: options.timeoutMs ?? 30_000, auth: options.auth ?? 'auto',
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, retries: options.retries ?? 2,
      retryDelayMs: options.retryDelayMs ?? 500, maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      taskPollMs: options.taskPollMs ?? 1000, taskTimeoutMs: options.taskTimeoutMs ?? 300_000,
      sleep: options.sleep ?? defaultSleep,
    };
    const { username, password } = options.credentials;
    this.#secrets = password.length < 4 ? [] : [password, Buffer.from(`${username}:${password}`, 'utf8').toString('base64')];
    this.#transport = new RedfishTransport({
      endpoint: options.endpoint, address: options.address, disableCertificateVerification: this.#o.disableCertificateVerification,
      ...(options.ca === undefined ? {} : { ca: options.ca }), timeoutMs: this.#o.timeoutMs, maxBodyBytes: this.#o.maxBodyBytes,
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    });
  }

  /** Runs `fn` after every earlier queued exchange (one request at a time per BMC). */
  #enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #exchange(req: ExchangeRequest): Promise<ExchangeResponse> {
    if (this.#closed) {
      return Promise.reject(new BmcError(BmcErrorCode.protocol, `BMC ${this.address}: the Redfish client was closed`, { address: this.address }));
    }
    return this.#enqueue(() => {
      this.requestCount += 1;
      return this.#transport.exchange(req);
    });
  }

  #describe(method: string, path: string): RequestDescription {
    return { address: this.address, method, path, secrets: this.#secrets };
  }

  #success(res: ExchangeResponse, about: RequestDescription): RedfishResponse {
    const location = res.headers.location;
    const retryAfter = res.headers['retry-after'];
    const bodyTag = isJsonObject(res.body) ? readString(res.body, '@odata.etag') : undefined;
    return {
      status: res.status, path: res.path, body: res.body, etag: res.headers.etag ?? bodyTag,
      location: location === undefined ? undefined : this.#transport.resolvePath(location, about),
      retryAfterMs: retryAfter !== undefined && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined,
    };
  }

  /** The service root (read once, unauthenticated as DSP0266 §13.3.1 allows; basic auth on 401). */
  serviceRoot(): Promise<ServiceRoot> {
    this.#root ??= (async () => {
      const path = '/redfish/v1';
      let res = await this.#exchange({ method: 'GET', path });
      if (res.status === 401) res = await this.#exchange({ method: 'GET', path, headers: this.#basicHeader() });
      const about = this.#describe('GET', path);
      if (res.status >= 300) throw statusError(res.status, about, res.body, res.html);
      return decodeServiceRoot(res.body, { address: this.address, uri: path });
    })();
    this.#root.catch(() => { this.#root = undefined; });
    return this.#root;
  }

  #basicHeader(): Record<string, string> {
    const { username, password } = this.#o.credentials;
    return { authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}` };
  }

  #authenticate(): Promise<Session | 'basic'> {
    this.#auth ??= this.#login();
    this.#auth.catch(() => { this.#auth = undefined; });
    return this.#auth;
  }

  async #login(): Promise<Session | 'basic'> {
    const mode = this.#o.auth;
    if (mode === 'basic') return 'basic';
    const root = await this.serviceRoot();
    const sessions = root.sessions;
    if (sessions === undefined) {
      if (mode === 'auto') return 'basic';
      throw redfishProtocolError({ address: this.address, uri: '/redfish/v1' }, 'no SessionService; use basic authentication');
    }
    const { username, password } = this.#o.credentials;
    const about = this.#describe('POST', sessions);
    const res = await this.#exchange({ method: 'POST', path: sessions, body: { UserName: username, Password: password } });
    if (mode === 'auto' && (res.status === 404 || res.status === 405 || res.status === 501)) return 'basic';
    if (res.status >= 300) throw statusError(res.status, { ...about, method: 'login:POST' }, res.body, res.html);
    const token = res.headers['x-auth-token'];
    if (token === undefined || token === '') {
      if (mode === 'auto') return 'basic';
      throw exchangeError(about, 'session created without an X-Auth-Token header');
    }
    const ok = this.#success(res, about);
    const bodyUri = isJsonObject(res.body) ? readString(res.body, '@odata.id') : undefined;
    return { token, uri: ok.location ?? bodyUri };
  }

  async #authHeaders(): Promise<Record<string, string>> {
    const auth = await this.#authenticate();
    return auth === 'basic' ? this.#basicHeader() : { 'x-auth-token': auth.token };
  }

  /**
   * Sends an authenticated request and returns any 2xx answer; a 401 with a session logs in
   * again once (the BMC may have dropped or expired the session). Other statuses throw.
   */
  async #authed(req: ExchangeRequest): Promise<RedfishResponse> {
    const about = this.#describe(req.method, req.path);
    let auth = await this.#authenticate();
    let res = await this.#exchange({ ...req, headers: { ...req.headers, ...await this.#authHeaders() } });
    if (res.status === 401 && auth !== 'basic') {
      if (this.#auth !== undefined && (await this.#auth) === auth) this.#auth = undefined;
      auth = await this.#authenticate();
      res = await this.#exchange({ ...req, headers: { ...req.headers, ...await this.#authHeaders() } });
    }
    if (res.status < 200 || res.status >= 300) throw statusError(res.status, about, res.body, res.html);
    return this.#success(res, about);
  }

  /** GET with bounded retries and backoff on busy answers and reset connections. */
  async get(path: string): Promise<RedfishResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#authed({ method: 'GET', path });
      } catch (err) {
        const status = httpStatusOf(err);
        const retry = (status !== undefined && RETRY_STATUSES.has(status)) || (status === undefined && isRetryableTransportError(err));
        if (!retry || attempt >= this.#o.retries) throw err;
        const delay = Math.min(this.#o.retryDelayMs * 2 ** attempt, this.#o.maxRetryDelayMs);
        await this.#enqueue(() => this.#o.sleep(delay)); // the backoff holds the queue: nothing else hits the BMC
      }
    }
  }

  /** GET returning the body only. */
  async getBody(path: string): Promise<unknown> {
    return (await this.get(path)).body;
  }

  /** POST (never retried: Redfish actions are not idempotent). */
  post(path: string, body: unknown = {}): Promise<RedfishResponse> {
    return this.#authed({ method: 'POST', path, body });
  }

  /** DELETE; with `missingOk`, 404 counts as done. */
  async delete(path: string, missingOk = false): Promise<RedfishResponse | undefined> {
    try {
      return await this.#authed({ method: 'DELETE', path });
    } catch (err) {
      if (missingOk && httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /**
   * PATCH with `If-Match: etag` (ETag read first when not given). On 412 the ETag is read
   * again and the PATCH retried once; a weak ETag (`W/"…"`, iLO 5) is retried in strong form
   * first. On 428 (If-Match required) the ETag is fetched and the PATCH retried. Each retry needs
   * an ETag not tried yet, so a BMC that answers 412/428 without one ends the PATCH (no loop).
   */
  async patch(path: string, body: unknown, etag?: string): Promise<RedfishResponse> {
    let tag = etag ?? (await this.get(path)).etag;
    const tried = new Set<string>();
    for (;;) {
      try {
        return await this.#authed({ method: 'PATCH', path, body, headers: tag === undefined ? {} : { 'if-match': tag } });
      } catch (err) {
        const status = httpStatusOf(err);
        if ((status !== 412 && status !== 428) || tried.size >= 2) throw err;
        tried.add(tag ?? '');
        const strong = tag?.startsWith('W/') === true ? tag.slice(2) : undefined;
        tag = strong !== undefined && !tried.has(strong) ? strong : (await this.get(path)).etag;
        // No ETag to offer, or one already refused: retrying would PATCH the same way forever.
        if (tag === undefined || tried.has(tag)) throw err;
      }
    }
  }

  /**
   * Reads a task monitor or Task URI once: 202 → still running (Task body decoded when sent);
   * a 2xx Task body → its state; any other 2xx → completed (the monitor returned the result).
   */
  async readTask(path: string): Promise<TaskResource> {
    const res = await this.get(path);
    const ctx = { address: this.address, uri: path };
    if (isTaskBody(res.body)) {
      const task = decodeTask(res.body, ctx);
      return res.status === 202 && task.state === 'completed' ? { ...task, state: 'running' } : task;
    }
    const state: TaskState = res.status === 202 ? 'running' : 'completed';
    return { id: path, state, rawState: `HTTP ${res.status}`, percentComplete: state === 'completed' ? 100 : undefined, messages: [] };
  }

  /** Where to follow an accepted (202) request: the Task's `@odata.id`, else `Location`. */
  taskPathOf(res: RedfishResponse): string | undefined {
    const taskUri = isTaskBody(res.body) && isJsonObject(res.body) ? readString(res.body, '@odata.id') : undefined;
    return res.location ?? taskUri;
  }

  /**
   * Follows a 202 answer to its end (see {@link followTask}); non-202 answers return at once.
   */
  async waitForTask(res: RedfishResponse, timeoutMs = this.#o.taskTimeoutMs): Promise<TaskResource | undefined> {
    if (res.status !== 202) return undefined;
    const path = this.taskPathOf(res);
    if (path === undefined) throw exchangeError(this.#describe('POST', res.path), 'accepted (202) without a Location or Task to follow');
    return this.followTask(path, timeoutMs, res.retryAfterMs);
  }

  /**
   * Polls a task monitor or Task (`Retry-After`, else `taskPollMs`) until it stops answering
   * 202 or the task completes; a failed or cancelled task and the bounded timeout throw.
   */
  async followTask(path: string, timeoutMs = this.#o.taskTimeoutMs, firstWaitMs?: number): Promise<TaskResource> {
    const deadline = performance.now() + timeoutMs;
    let wait = firstWaitMs ?? this.#o.taskPollMs;
    for (;;) {
      await this.#o.sleep(Math.min(wait, this.#o.maxRetryDelayMs));
      const task = await this.readTask(path);
      if (task.state === 'failed' || task.state === 'cancelled') {
        throw new BmcError(BmcErrorCode.protocol,
          `BMC ${this.address}: task ${path} ${task.state} (${task.rawState}${task.messages.length > 0 ? `: ${task.messages.join('; ')}` : ''})`,
          { address: this.address });
      }
      if (task.state === 'completed') return task;
      if (performance.now() >= deadline) {
        throw new BmcError(BmcErrorCode.timeout, `BMC ${this.address}: task ${path} did not finish within ${timeoutMs} ms (${task.rawState})`, { address: this.address });
      }
      wait = this.#o.taskPollMs;
    }
  }

  /** Logs out (DELETE the session, errors ignored) and closes the connections. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const auth = this.#auth;
    if (auth !== undefined) {
      const session = await auth.catch(() => undefined);
      if (session !== undefined && session !== 'basic' && session.uri !== undefined) {
        const path = session.uri;
        await this.#exchange({ method: 'DELETE', path, headers: { 'x-auth-token': session.token } }).catch(() => undefined);
      }
    }
    this.#closed = true;
    await this.#queue;
    await this.#transport.close();
  }
}
