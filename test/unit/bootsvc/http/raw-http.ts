/**
 * @module A raw HTTP/1.1 client for the boot HTTP tests: requests written by hand on one TCP
 * connection (one after another, or all at once: pipelined), responses cut from the byte
 * stream by their Content-Length, so a body byte too many or too few shows up as a broken next
 * response rather than being hidden by a client library. No chunked encoding (the file paths
 * never use it). Large bodies can be hashed as they come instead of kept ({@link RawConnection.get}):
 * a 50 MiB initrd is never concatenated.
 */
import { createHash, type Hash } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** One request: method, path and extra header lines. */
export interface RawRequest {
  method?: 'GET' | 'HEAD';
  path: string;
  headers?: Record<string, string>;
}

/** One parsed response. */
export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: Buffer;
}

/** A response whose body was hashed, not kept. */
export interface HashedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Body bytes received. */
  length: number;
  /** sha256 of the body, hex. */
  sha256: string;
}

/** What the reader is waiting for: a response with its body kept, or hashed as it comes. */
type Waiting =
  | { kind: 'keep'; head: boolean; resolve: (r: RawResponse) => void; reject: (err: Error) => void }
  | { kind: 'hash'; head: boolean; resolve: (r: HashedResponse) => void; reject: (err: Error) => void; reply?: HashedResponse; hash?: Hash; left?: number };

function requestText(host: string, r: RawRequest): string {
  const lines = [`${r.method ?? 'GET'} ${r.path} HTTP/1.1`, `Host: ${host}`];
  for (const [name, value] of Object.entries(r.headers ?? {})) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The status line's code and the headers (names in lower case) of a response head. */
function parseHead(head: Buffer): { status: number; headers: Record<string, string> } {
  const lines = head.toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? '')?.[1] ?? 0), headers };
}

/** Reads responses off a socket as bytes arrive. */
class ResponseReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: Waiting | undefined;
  private ended: Error | undefined;
  /** Body bytes of the response being hashed, so far. */
  bodyBytes = 0;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.poll();
    });
    const end = (err?: Error): void => {
      this.ended ??= err ?? new Error('connection closed');
      this.poll();
    };
    socket.on('end', () => { end(); });
    socket.on('close', () => { end(); });
    socket.on('error', end);
  }

  /** The next response (`head`: it answers a HEAD, so it has no body whatever its Content-Length says); one caller at a time. */
  next(head: boolean): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      this.waiting = { kind: 'keep', head, resolve, reject };
      this.poll();
    });
  }

  /** The next response with its body hashed as it arrives, never kept; one caller at a time. */
  nextHashed(head: boolean): Promise<HashedResponse> {
    this.bodyBytes = 0;
    return new Promise((resolve, reject) => {
      this.waiting = { kind: 'hash', head, resolve, reject };
      this.poll();
    });
  }

  /** Bytes received beyond the responses taken so far. */
  leftover(): number {
    return this.buffered.length;
  }

  private poll(): void {
    const waiting = this.waiting;
    if (waiting === undefined) return;
    if (waiting.kind === 'hash' ? this.pollHashed(waiting) : this.pollKept(waiting)) return;
    if (this.ended !== undefined) {
      this.waiting = undefined;
      const what = waiting.kind === 'hash' ? `after ${String(this.bodyBytes)} body bytes` : `with ${String(this.buffered.length)} bytes of an incomplete response`;
      waiting.reject(new Error(`${this.ended.message} ${what}`));
    }
  }

  /** A whole response, body kept, once all of it is buffered; true when it was delivered. */
  private pollKept(waiting: Extract<Waiting, { kind: 'keep' }>): boolean {
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0) return false;
    const { status, headers } = parseHead(this.buffered.subarray(0, end));
    const length = waiting.head ? 0 : Number(headers['content-length'] ?? 0);
    if (this.buffered.length < end + 4 + length) return false;
    const body = Buffer.from(this.buffered.subarray(end + 4, end + 4 + length));
    this.buffered = this.buffered.subarray(end + 4 + length);
    this.waiting = undefined;
    waiting.resolve({ status, headers, body });
    return true;
  }

  /** The head once it is in, then body bytes into the hash as they come; true when the response was delivered. */
  private pollHashed(waiting: Extract<Waiting, { kind: 'hash' }>): boolean {
    if (waiting.reply === undefined) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const { status, headers } = parseHead(this.buffered.subarray(0, end));
      waiting.reply = { status, headers, length: 0, sha256: '' };
      waiting.left = waiting.head ? 0 : Number(headers['content-length'] ?? 0);
      waiting.hash = createHash('sha256');
      this.buffered = this.buffered.subarray(end + 4);
    }
    const { reply, hash } = waiting;
    const left = waiting.left ?? 0;
    const take = Math.min(left, this.buffered.length);
    if (take > 0 && hash !== undefined) {
      hash.update(this.buffered.subarray(0, take));
      this.buffered = this.buffered.subarray(take);
      waiting.left = left - take;
      reply.length += take;
      this.bodyBytes += take;
    }
    if (waiting.left !== 0 || hash === undefined) return false;
    reply.sha256 = hash.digest('hex');
    this.waiting = undefined;
    waiting.resolve(reply);
    return true;
  }
}

/** An open keep-alive connection to 127.0.0.1:`port`. */
export class RawConnection {
  readonly socket: Socket;
  private readonly reader: ResponseReader;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.reader = new ResponseReader(socket);
  }

  /** Connects to 127.0.0.1:`port`. */
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Sends the requests one at a time, each after the previous response. */
  async sequential(requests: readonly RawRequest[]): Promise<RawResponse[]> {
    const out: RawResponse[] = [];
    for (const r of requests) {
      this.socket.write(requestText('127.0.0.1', r));
      out.push(await this.reader.next(r.method === 'HEAD'));
    }
    return out;
  }

  /** Writes one request without waiting for anything; read its response with {@link read}. */
  write(request: RawRequest): void {
    this.socket.write(requestText('127.0.0.1', request));
  }

  /** The next response (`head`: it answers a HEAD); one read at a time. */
  read(head = false): Promise<RawResponse> {
    return this.reader.next(head);
  }

  /** Writes all requests at once (HTTP/1.1 pipelining), then reads the responses in order. */
  async pipelined(requests: readonly RawRequest[]): Promise<RawResponse[]> {
    this.socket.write(requests.map((r) => requestText('127.0.0.1', r)).join(''));
    const out: RawResponse[] = [];
    for (const r of requests) out.push(await this.reader.next(r.method === 'HEAD'));
    return out;
  }

  /**
   * Sends one request and resolves with its answer, the body hashed as it comes (for bodies of
   * many MiB); {@link bodyBytes} counts it meanwhile.
   */
  get(path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<HashedResponse> {
    const answer = this.reader.nextHashed(method === 'HEAD');
    this.socket.write(requestText('127.0.0.1', { method, path, headers }));
    return answer;
  }

  /** Body bytes of the answer {@link get} is reading, so far (for tests that stop mid-body). */
  get bodyBytes(): number {
    return this.reader.bodyBytes;
  }

  /** Bytes received that belong to no response read (should be 0 between exchanges). */
  leftover(): number {
    return this.reader.leftover();
  }

  close(): void {
    this.socket.destroy();
  }
}
