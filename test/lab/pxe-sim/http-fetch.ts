/**
 * @module HTTP GETs as iPXE makes them: from the leased address, over one keep-alive connection
 * per client that the script, kernel and initrd requests reuse (iPXE pools HTTP connections),
 * `Connection: keep-alive`, no compression. A 200 with a body that ends before its
 * Content-Length, any other status, or no byte for `idleMs` fails the request. Bodies are
 * counted; only small ones (the script) are kept.
 */
import { Agent, request, type IncomingMessage } from 'node:http';

/** One client's connection pool: a keep-alive agent with one socket, bound to the client's address. */
export interface HttpSession {
  readonly agent: Agent;
  readonly localAddress: string;
}

/** Opens a session for a client at `localAddress`; `closeHttpSession` when the client is done. */
export function openHttpSession(localAddress: string): HttpSession {
  return { agent: new Agent({ keepAlive: true, maxSockets: 1, localAddress }), localAddress };
}

/** Closes the session's connection. */
export function closeHttpSession(session: HttpSession): void {
  session.agent.destroy();
}

/** A finished GET. */
export interface HttpFetchResult {
  status: number;
  bytes: number;
  /** The body as text, when `keepBodyBytes` allowed it. */
  text?: string;
  /** The Content-Length the server announced, if any. */
  contentLength?: number;
}

/** Why a GET failed. */
export class HttpFetchError extends Error {
  constructor(message: string, readonly bytes: number) {
    super(message);
    this.name = 'HttpFetchError';
  }
}

/** GETs `url` through `session`; keeps the body as text when it is at most `keepBodyBytes` (default 0: count only). */
export function fetchHttp(session: HttpSession, url: string, options: { idleMs: number; keepBodyBytes?: number }): Promise<HttpFetchResult> {
  const keep = options.keepBodyBytes ?? 0;
  return new Promise<HttpFetchResult>((resolve, reject) => {
    let bytes = 0;
    let settled = false;
    const fail = (message: string): void => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(new HttpFetchError(message, bytes));
    };
    const req = request(url, { agent: session.agent, headers: { connection: 'keep-alive', 'user-agent': 'iPXE/1.21.1 (pxe-sim)' } }, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const lengthHeader = res.headers['content-length'];
      const contentLength = lengthHeader === undefined ? undefined : Number(lengthHeader);
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes <= keep) chunks.push(chunk);
      });
      res.on('error', (err) => { fail(`response: ${err.message}`); });
      res.on('aborted', () => { fail(`connection closed after ${bytes} bytes`); });
      res.on('end', () => {
        if (settled) return;
        if (status !== 200) {
          fail(`HTTP ${status}`);
          return;
        }
        if (contentLength !== undefined && contentLength !== bytes) {
          fail(`body ended after ${bytes} of ${contentLength} bytes`);
          return;
        }
        settled = true;
        resolve({
          status, bytes,
          ...(bytes <= keep ? { text: Buffer.concat(chunks).toString('utf8') } : {}),
          ...(contentLength === undefined ? {} : { contentLength }),
        });
      });
    });
    req.setTimeout(options.idleMs, () => { fail(`no byte for ${options.idleMs} ms (${bytes} bytes in)`); });
    req.on('error', (err) => { fail(err.message); });
    req.end();
  });
}
