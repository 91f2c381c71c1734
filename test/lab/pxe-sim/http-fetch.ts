/**
 * @module HTTP GETs as iPXE makes them: from the leased address, over one keep-alive connection
 * per client that the script, kernel and initrd requests reuse (iPXE pools HTTP connections),
 * `Connection: keep-alive`, no compression. A 200 with a body that ends before its
 * Content-Length, any other status, or no byte for `idleMs` fails the request. Bodies are
 * counted; only small ones (the script) are kept.
 *
 * A small HTTP/1.1 client on a raw TCP socket rather than `node:http`: one simulator process
 * plays hundreds of clients, and node:http's parser and stream machinery over 25 GB of kernels
 * and initrds were 8.5 s of its CPU in a 500-client storm, plus 2.7 s of GC for a fresh 64 KiB
 * buffer per read — the simulator, not the server, then set the pace (docs/PERFORMANCE.md, "PXE
 * storm"). Here each connection reads into one reused buffer (`net.Socket` `onread`) and
 * the parser only finds the head (status line, Content-Length or chunked framing) and counts
 * the body. iPXE itself parses no more than that.
 */
import { connect, type Socket } from 'node:net';

/** Bytes read per `read(2)` into the connection's reused buffer. */
const READ_BUFFER_BYTES = 256 * 1024;
/** The longest response head accepted (status line and headers). */
const MAX_HEAD_BYTES = 16 * 1024;

/** One client's connection: opened on its first GET, kept for the next ones to the same origin. */
export interface HttpSession {
  readonly localAddress: string;
  /** The open connection and its origin (`host:port`), if any. */
  connection?: { socket: Socket; origin: string; reader: ResponseReader };
}

/** Opens a session for a client at `localAddress`; `closeHttpSession` when the client is done. */
export function openHttpSession(localAddress: string): HttpSession {
  return { localAddress };
}

/** Closes the session's connection. */
export function closeHttpSession(session: HttpSession): void {
  session.connection?.socket.destroy();
  delete session.connection;
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

/** The response being read on a connection, and what the reader does with its bytes. */
interface Pending {
  keep: number;
  done(result: HttpFetchResult): void;
  fail(message: string): void;
}

/**
 * Parses responses from the bytes of one connection, one at a time: the head (status line and
 * headers, up to {@link MAX_HEAD_BYTES}), then a body framed by Content-Length or chunked
 * transfer coding (RFC 9112 §6.3, §7.1), counted and, up to `keep` bytes, kept.
 */
export class ResponseReader {
  pending: Pending | undefined;
  /** Body bytes of the current response so far. */
  bytes = 0;
  #head: Buffer[] = [];
  #headBytes = 0;
  #status = 0;
  #length: number | undefined;
  #chunked = false;
  #close = false;
  #inHead = true;
  /** Chunked: bytes left of the current chunk, or -1 while reading a chunk-size line (or the CRLF after data: -2; the trailer: -3). */
  #chunkLeft = -1;
  #line = '';
  #kept: Buffer[] = [];
  #keptBytes = 0;

  /** Starts reading a new response for `pending`. */
  expect(pending: Pending): void {
    this.pending = pending;
    this.bytes = 0;
    this.#head = [];
    this.#headBytes = 0;
    this.#status = 0;
    this.#length = undefined;
    this.#chunked = false;
    this.#close = false;
    this.#inHead = true;
    this.#chunkLeft = -1;
    this.#line = '';
    this.#kept = [];
    this.#keptBytes = 0;
  }

  /** True when the server said it closes the connection after this response. */
  get closes(): boolean {
    return this.#close;
  }

  /** Feeds `data` (valid only during the call). Returns false when the response failed. */
  feed(data: Buffer): boolean {
    let at = 0;
    while (at < data.length && this.pending !== undefined) {
      if (this.#inHead) {
        const next = this.#readHead(data, at);
        if (next < 0) return false;
        at = next;
        continue;
      }
      at = this.#chunked ? this.#readChunked(data, at) : this.#readBody(data, at, data.length - at);
      if (at < 0) return false;
    }
    return true;
  }

  /** The connection ended: a body without framing ends here; anything else failed. */
  ended(): void {
    if (this.pending === undefined) return;
    if (!this.#inHead && !this.#chunked && this.#length === undefined) this.#finish();
    else this.#fail(`connection closed after ${this.bytes} bytes`);
  }

  #readHead(data: Buffer, from: number): number {
    this.#head.push(Buffer.from(data.subarray(from)));
    this.#headBytes += data.length - from;
    const head = this.#head.length === 1 ? (this.#head[0] ?? Buffer.alloc(0)) : Buffer.concat(this.#head);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (this.#headBytes > MAX_HEAD_BYTES) return this.#fail(`response head over ${MAX_HEAD_BYTES} bytes`);
      this.#head = [head];
      return data.length;
    }
    const lines = head.subarray(0, end).toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (status === null) return this.#fail(`not an HTTP response: ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`);
    this.#status = Number(status[1]);
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') this.#length = Number(value);
      else if (name === 'transfer-encoding') this.#chunked = value.toLowerCase().split(',').map((v) => v.trim()).includes('chunked');
      else if (name === 'connection') this.#close = value.toLowerCase().split(',').map((v) => v.trim()).includes('close');
    }
    if (this.#length !== undefined && !(Number.isSafeInteger(this.#length) && this.#length >= 0)) return this.#fail('bad Content-Length');
    this.#inHead = false;
    this.#head = [];
    // The body starts after the blank line, in this datagram's part of the head.
    const bodyStart = end + 4 - (this.#headBytes - (data.length - from));
    if (this.#length === 0 && !this.#chunked) {
      this.#finish();
      return from + bodyStart;
    }
    return from + Math.max(0, bodyStart);
  }

  #readBody(data: Buffer, from: number, available: number): number {
    const want = this.#length === undefined ? available : Math.min(available, this.#length - this.bytes);
    this.#take(data, from, want);
    if (this.#length !== undefined && this.bytes >= this.#length) this.#finish();
    return from + want;
  }

  #readChunked(data: Buffer, from: number): number {
    let at = from;
    while (at < data.length && this.pending !== undefined) {
      if (this.#chunkLeft > 0) {
        const n = Math.min(this.#chunkLeft, data.length - at);
        this.#take(data, at, n);
        this.#chunkLeft -= n;
        at += n;
        if (this.#chunkLeft === 0) this.#chunkLeft = -2;
        continue;
      }
      const eol = data.indexOf(10, at);
      const end = eol < 0 ? data.length : eol + 1;
      this.#line += data.toString('latin1', at, end);
      at = end;
      if (eol < 0) {
        if (this.#line.length > 1024) return this.#fail('chunk-size line too long');
        break;
      }
      const line = this.#line.trim();
      this.#line = '';
      if (this.#chunkLeft === -2) {
        this.#chunkLeft = -1; // the CRLF after a chunk's data
        continue;
      }
      if (this.#chunkLeft === -3) {
        if (line === '') this.#finish(); // the trailer's blank line
        continue;
      }
      const size = Number.parseInt(line.split(';')[0] ?? '', 16);
      if (!Number.isSafeInteger(size) || size < 0) return this.#fail(`bad chunk size ${JSON.stringify(line.slice(0, 20))}`);
      this.#chunkLeft = size === 0 ? -3 : size;
    }
    return at;
  }

  #take(data: Buffer, from: number, count: number): void {
    this.bytes += count;
    const keep = this.pending?.keep ?? 0;
    if (this.#keptBytes < keep + 1 && count > 0) {
      const part = Buffer.from(data.subarray(from, from + Math.min(count, keep + 1 - this.#keptBytes)));
      this.#kept.push(part);
      this.#keptBytes += part.length;
    }
  }

  #finish(): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    if (this.#status !== 200) {
      pending.fail(`HTTP ${this.#status}`);
      return;
    }
    pending.done({
      status: this.#status, bytes: this.bytes,
      ...(this.bytes <= pending.keep ? { text: Buffer.concat(this.#kept).toString('utf8') } : {}),
      ...(this.#length === undefined ? {} : { contentLength: this.#length }),
    });
  }

  #fail(message: string): number {
    const pending = this.pending;
    this.pending = undefined;
    pending?.fail(message);
    return -1;
  }
}

/** The open connection to `url`'s origin, reused or new. */
function connectionFor(session: HttpSession, url: URL): NonNullable<HttpSession['connection']> {
  const port = Number(url.port === '' ? 80 : url.port);
  const origin = `${url.hostname}:${port}`;
  const open = session.connection;
  if (open !== undefined && open.origin === origin && !open.socket.destroyed && open.socket.writable) return open;
  if (open !== undefined) closeHttpSession(session);
  const reader = new ResponseReader();
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const socket = connect({
    host: url.hostname, port, localAddress: session.localAddress, noDelay: true,
    onread: { buffer, callback: (n: number, buf: Uint8Array): boolean => reader.feed(Buffer.from(buf.buffer, buf.byteOffset, n)) || (socket.destroy(), false) },
  });
  const connection = { socket, origin, reader };
  socket.on('error', (err) => { reader.pending?.fail(err.message); });
  socket.on('end', () => { reader.ended(); });
  socket.on('close', () => {
    reader.ended();
    if (session.connection === connection) delete session.connection;
  });
  session.connection = connection;
  return connection;
}

/** GETs `url` through `session`; keeps the body as text when it is at most `keepBodyBytes` (default 0: count only). */
export function fetchHttp(session: HttpSession, url: string, options: { idleMs: number; keepBodyBytes?: number }): Promise<HttpFetchResult> {
  const target = new URL(url);
  if (target.protocol !== 'http:') return Promise.reject(new HttpFetchError(`only http:// URLs, got ${target.protocol}`, 0));
  const { socket, reader } = connectionFor(session, target);
  return new Promise<HttpFetchResult>((resolve, reject) => {
    let settled = false;
    const settle = (): void => {
      settled = true;
      socket.setTimeout(0);
      socket.off('timeout', onIdle);
    };
    const onIdle = (): void => { reader.pending?.fail(`no byte for ${options.idleMs} ms (${reader.bytes} bytes in)`); };
    reader.expect({
      keep: options.keepBodyBytes ?? 0,
      done: (result) => {
        if (settled) return;
        settle();
        if (reader.closes) closeHttpSession(session);
        resolve(result);
      },
      fail: (message) => {
        if (settled) return;
        settle();
        const bytes = reader.bytes;
        reader.pending = undefined;
        closeHttpSession(session); // a failed response leaves the connection in an unknown state
        reject(new HttpFetchError(message, bytes));
      },
    });
    socket.setTimeout(options.idleMs);
    socket.on('timeout', onIdle);
    const path = `${target.pathname}${target.search}`;
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${target.host}\r\nUser-Agent: iPXE/1.21.1 (pxe-sim)\r\nConnection: keep-alive\r\n\r\n`, 'latin1');
  });
}
