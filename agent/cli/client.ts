/**
 * @module The CLI's HTTP client for the management API: JSON requests with the bearer token,
 * the API's JSON errors mapped to exit codes (400/413/415 → 5, 404 → 3, 409 → 4, other → 1,
 * no connection → 6), and a Server-Sent Events reader for `get events --watch`.
 */
import type { StoredEvent } from '../store/types.js';
import { CliError, ExitCode, type CliIo, type ExitCodeValue } from './io.js';
import { isJsonObject } from '../json-value.js';

/** Default server when neither `--server` nor `RACKSIDE_SERVER` is given. */
export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
const REQUEST_TIMEOUT_MS = 30_000;

/** Options of one request. */
export interface RequestOptions {
  /** JSON-encoded as the body. */
  json?: unknown;
  /** A raw body with its content type. */
  body?: { text: string; contentType: string };
}

/** Exit code for an HTTP error status. */
export function exitCodeForStatus(status: number): ExitCodeValue {
  if (status === 400 || status === 413 || status === 415 || status === 422) return ExitCode.invalid;
  if (status === 404) return ExitCode.notFound;
  if (status === 409) return ExitCode.conflict;
  return ExitCode.failure;
}

/** Reads `{error: {message, field}}` from an error response, falling back to the status line. */
function errorOf(status: number, text: string): CliError {
  let message = `HTTP ${status}${text.trim() === '' ? '' : `: ${text.trim().slice(0, 200)}`}`;
  let field = '';
  try {
    const parsed: unknown = JSON.parse(text);
    const error = isJsonObject(parsed) ? parsed.error : undefined;
    if (isJsonObject(error) && typeof error.message === 'string') {
      message = error.message;
      field = typeof error.field === 'string' ? error.field : '';
    }
  } catch {
    // not JSON: keep the status line
  }
  if (status === 401) message += ' (pass --token or set RACKSIDE_TOKEN)';
  return new CliError(exitCodeForStatus(status), message, field);
}

/** Describes why fetch failed (undici puts the socket error in `cause`). */
function reasonOf(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000}s`;
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A client bound to one server URL and token. */
export class ApiClient {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly io: CliIo;

  constructor(baseUrl: string, token: string | undefined, io: CliIo) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.token = token === '' ? undefined : token;
    this.io = io;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return { accept: 'application/json', ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }), ...extra };
  }

  private async send(method: string, path: string, init: RequestInit): Promise<Response> {
    try {
      return await this.io.fetch(`${this.baseUrl}${path}`, { method, ...init });
    } catch (err) {
      if (this.io.signal?.aborted === true || err instanceof CliError) throw err;
      throw new CliError(ExitCode.unreachable, `cannot reach the rackside agent at ${this.baseUrl} (${reasonOf(err)}); is it running? (--server, RACKSIDE_SERVER)`, '', { cause: err });
    }
  }

  /** Sends a request; resolves to the parsed JSON body (undefined for 204). @throws CliError */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const extra: Record<string, string> = {};
    let body: string | undefined;
    if (options.body !== undefined) {
      extra['content-type'] = options.body.contentType;
      body = options.body.text;
    } else if (options.json !== undefined) {
      extra['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const res = await this.send(method, path, {
      headers: this.headers(extra),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    if (!res.ok) throw errorOf(res.status, text);
    if (res.status === 204 || text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CliError(ExitCode.failure, `the server sent invalid JSON for ${method} ${path}`);
    }
  }

  /**
   * GETs `path` and resolves to the body text as sent (erase records are checked byte for byte).
   * @throws CliError
   */
  async requestText(path: string): Promise<string> {
    const res = await this.send('GET', path, { headers: this.headers({ accept: '*/*' }), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    if (!res.ok) throw errorOf(res.status, text);
    return text;
  }

  /**
   * Reads the SSE stream at `path`, calling `onEvent` for each event, until the server closes
   * it (→ CliError exit 6) or `io.signal` aborts (→ resolves).
   */
  async streamEvents(path: string, onEvent: (event: StoredEvent) => void): Promise<void> {
    const signal = this.io.signal;
    let res: Response;
    try {
      res = await this.send('GET', path, { headers: this.headers({ accept: 'text/event-stream' }), ...(signal === undefined ? {} : { signal }) });
    } catch (err) {
      if (signal?.aborted === true) return;
      throw err;
    }
    if (!res.ok) throw errorOf(res.status, await res.text());
    if (res.body === null) throw new CliError(ExitCode.unreachable, 'the event stream had no body');
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value as Uint8Array, { stream: true }).replaceAll('\r\n', '\n');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
          if (data !== '') onEvent(JSON.parse(data) as StoredEvent);
        }
      }
    } catch (err) {
      if (signal?.aborted === true) return;
      throw new CliError(ExitCode.unreachable, `event stream from ${this.baseUrl} broke: ${reasonOf(err)}`, '', { cause: err });
    }
    if (signal?.aborted === true) return;
    throw new CliError(ExitCode.unreachable, `the agent at ${this.baseUrl} closed the event stream`);
  }
}
