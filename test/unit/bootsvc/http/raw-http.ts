/**
 * @module A raw HTTP/1.1 client for the boot HTTP tests: requests written by hand on one TCP
 * connection (one after another, or all at once: pipelined), responses cut from the byte
 * stream by their Content-Length, so a body byte too many or too few shows up as a broken next
 * response rather than being hidden by a client library. No chunked encoding (the file paths
 * never use it).
 */
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

function requestText(host: string, r: RawRequest): string {
  const lines = [`${r.method ?? 'GET'} ${r.path} HTTP/1.1`, `Host: ${host}`];
  for (const [name, value] of Object.entries(r.headers ?? {})) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Reads responses off a socket as bytes arrive. */
class ResponseReader {
  private buffered = Buffer.alloc(0);
  private waiting: { head: boolean; resolve: (r: RawResponse) => void; reject: (err: Error) => void } | undefined;
  private ended: Error | undefined;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
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
      this.waiting = { head, resolve, reject };
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
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end >= 0) {
      const lines = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = waiting.head ? 0 : Number(headers['content-length'] ?? 0);
      if (this.buffered.length >= end + 4 + length) {
        const body = Buffer.from(this.buffered.subarray(end + 4, end + 4 + length));
        this.buffered = this.buffered.subarray(end + 4 + length);
        this.waiting = undefined;
        waiting.resolve({ status, headers, body });
        return;
      }
    }
    if (this.ended !== undefined) {
      this.waiting = undefined;
      waiting.reject(new Error(`${this.ended.message} with ${String(this.buffered.length)} bytes of an incomplete response`));
    }
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

  /** Bytes received that belong to no response read (should be 0 between exchanges). */
  leftover(): number {
    return this.reader.leftover();
  }

  close(): void {
    this.socket.destroy();
  }
}
