/**
 * @module A `fetch` for the CLI that reaches the management API where the global one cannot:
 * over HTTPS with a private CA and a client certificate (the listener's `management.tls` with
 * `clientCA`, i.e. mutual TLS), or over the agent's unix socket (the SSH command runner when
 * the TCP listener demands client certificates). Built on undici's own fetch and Agent (the
 * npm undici, not Node's bundled copy, so the dispatcher and the fetch always match).
 */
import { Agent, fetch as undiciFetch } from 'undici';

/** Where and how to connect. */
export interface DispatchOptions {
  /** PEM of the CA that signed the server's certificate (`--cacert`). */
  ca?: string;
  /** PEM client certificate and key (`--cert`, `--key`), presented when the server asks. */
  cert?: string;
  key?: string;
  /** Connect to this unix socket instead of the URL's host and port. */
  socketPath?: string;
}

/**
 * Returns a fetch that sends through a dedicated undici Agent with `options`. It supports what
 * the CLI's client sends: a string or URL, method, headers, a string body and a signal.
 */
export function createDispatchFetch(options: DispatchOptions): typeof globalThis.fetch {
  const agent = new Agent({
    connect: {
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
      ...(options.cert !== undefined ? { cert: options.cert } : {}),
      ...(options.key !== undefined ? { key: options.key } : {}),
      ...(options.socketPath !== undefined ? { socketPath: options.socketPath } : {}),
    },
  });
  const dispatchFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (input instanceof Request) throw new TypeError('dispatch fetch takes a URL, not a Request');
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') throw new TypeError('dispatch fetch sends string bodies only');
    const response = await undiciFetch(input, {
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      ...(typeof body === 'string' ? { body } : {}),
      ...(init?.signal !== undefined && init.signal !== null ? { signal: init.signal } : {}),
      dispatcher: agent,
    });
    // npm undici's Response is not the global Response class: re-wrap the stream so callers get
    // exactly what the global fetch returns (instanceof, body reader and all).
    const headers = new Headers();
    for (const [name, value] of response.headers.entries()) headers.append(name, value);
    const stream: ReadableStream<Uint8Array> | null = response.body;
    return new Response(stream, { status: response.status, statusText: response.statusText, headers });
  };
  return dispatchFetch;
}
