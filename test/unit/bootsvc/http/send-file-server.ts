/**
 * @module A bare node:http server over bootsvc/http/send-file.ts for its unit tests: `GET`/`HEAD
 * /NAME` opens DIR/NAME through the jail's `openRegularFile`, answers it with `sendFile` (paced
 * when the test gives a pacer) and closes it; and a client call that reports a broken answer
 * instead of throwing, so tests can assert on cut bodies too.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { openRegularFile } from '../../../../bootsvc/http/file-jail.js';
import { sendFile, type SentFile } from '../../../../bootsvc/http/send-file.js';
import type { BytePacer } from '../../../../bootsvc/http/send-pacer.js';

/** Hooks of {@link startSendFileServer}. */
export interface SendFileServerOptions {
  /** The pacer of each request (read per request: tests swap it). */
  pacer?: () => BytePacer | undefined;
  /** Runs after the file is opened, before it is sent (to change the file under the open descriptor). */
  afterOpen?: (name: string, url: URL) => Promise<void>;
  /** What sendFile reported for each answer. */
  onSent?: (sent: SentFile) => void;
}

/** Starts the server on 127.0.0.1 (a free port); close it when done. */
export async function startSendFileServer(dir: string, options: SendFileServerOptions = {}): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const name = url.pathname.slice(1);
    void (async () => {
      const file = await openRegularFile(join(dir, name));
      if (file.kind !== 'file') throw new Error(`cannot open ${name}: ${file.kind}`);
      await options.afterOpen?.(name, url);
      try {
        const sent = await sendFile(req, res, { fd: file.handle.fd, size: file.size, mtimeMs: file.mtimeMs }, name, undefined, options.pacer?.());
        options.onSent?.(sent);
      } finally {
        await file.handle.close();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** An answer; `error` when it broke (before its head: status 0). */
export interface CallReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  error?: string;
}

/** One request on a fresh connection; resolves with what came, never rejects. */
export function call(port: number, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<CallReply> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error: err.message });
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    // A response destroyed before its headers went out is a socket error here.
    req.on('error', (err) => {
      resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: err.message });
    });
    req.end();
  });
}
