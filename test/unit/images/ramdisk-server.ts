/**
 * @module A small loopback HTTP server speaking the ramdisk protocol for the images tests: it
 * checks the bearer token, answers heartbeats from a queue of commands (encoded with the real
 * protocol encoder), records inventories, results and logs, and serves files (with Range, and
 * optionally cutting the first response short, to test resume). Given a certificate and key it
 * speaks HTTPS instead, and keeps the handshakes it refused.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { encodeRamdiskCommand, type RamdiskCommand } from '../../../images/ramdisk-protocol.js';

/** One request the server saw. */
export interface SeenRequest {
  path: string;
  authorization: string | undefined;
  body: unknown;
  range?: string;
}

/** A file served under `/files/<name>`. */
export interface ServedFile {
  path: string;
  /** Cut the first N GET responses after this many bytes (the connection is destroyed). */
  truncateFirst?: { count: number; afterBytes: number };
}

/** The test server. */
export interface RamdiskTestServer {
  port: number;
  /** URL as seen from the host. */
  url: string;
  seen: SeenRequest[];
  /** Commands answered to heartbeats, in order; `none` when empty. */
  commands: RamdiskCommand[];
  files: Map<string, ServedFile>;
  /** Handshakes the HTTPS server refused (`tlsClientError`), with OpenSSL's reason in `code`. */
  tlsErrors: (Error & { code?: string })[];
  /** Resolves when a request to `path` matching `predicate` arrives. */
  waitFor(path: string, predicate?: (body: unknown) => boolean): Promise<SeenRequest>;
  close(): Promise<void>;
}

function serveFile(file: ServedFile, req: IncomingMessage, res: ServerResponse): void {
  const size = statSync(file.path).size;
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = size - 1;
  if (range?.[1] !== undefined) {
    start = Number(range[1]);
    if (range[2] !== undefined && range[2] !== '') end = Math.min(Number(range[2]), size - 1);
    if (start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    res.writeHead(206, { 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}`, 'accept-ranges': 'bytes' });
  } else {
    res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes' });
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const cut = file.truncateFirst;
  if (cut !== undefined && cut.count > 0) {
    cut.count -= 1;
    const stop = Math.min(end, start + cut.afterBytes - 1);
    const stream = createReadStream(file.path, { start, end: stop });
    stream.pipe(res, { end: false });
    stream.on('end', () => {
      // Let the bytes reach the client, then drop the connection mid-response.
      setTimeout(() => res.destroy(), 50);
    });
    return;
  }
  createReadStream(file.path, { start, end }).pipe(res);
}

/** Starts the server on 127.0.0.1 (or `host`) with `token`; over HTTPS with `tls`. */
export async function startRamdiskServer(token: string, host = '127.0.0.1', tls?: { cert: string; key: string }): Promise<RamdiskTestServer> {
  const tlsErrors: (Error & { code?: string })[] = [];
  const seen: SeenRequest[] = [];
  const commands: RamdiskCommand[] = [];
  const files = new Map<string, ServedFile>();
  const waiters: { path: string; predicate: (body: unknown) => boolean; resolve: (r: SeenRequest) => void }[] = [];
  const handler: RequestListener = (req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/files/')) {
      const file = files.get(decodeURIComponent(url.slice('/files/'.length)));
      if (file === undefined) return void res.writeHead(404).end();
      seen.push({ path: url, authorization: req.headers.authorization, body: null, ...(req.headers.range === undefined ? {} : { range: req.headers.range }) });
      serveFile(file, req, res);
      return;
    }
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
      let body: unknown = text;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // kept as text (a log upload)
      }
      const record: SeenRequest = { path: url, authorization: req.headers.authorization, body };
      seen.push(record);
      for (const w of [...waiters]) {
        if (w.path === url && w.predicate(body)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(record);
        }
      }
      if (url === '/ramdisk/v1/heartbeat') {
        const next = commands.shift() ?? { command: 'none', intervalSeconds: 1 };
        res.writeHead(200, { 'content-type': 'text/plain' }).end(encodeRamdiskCommand(next));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    });
  };
  const server: Server = tls === undefined ? createServer(handler) : createTlsServer({ cert: tls.cert, key: tls.key }, handler);
  server.on('tlsClientError', (err: Error) => { tlsErrors.push(err); });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `${tls === undefined ? 'http' : 'https'}://${host}:${port}`,
    seen,
    commands,
    files,
    tlsErrors,
    waitFor(path, predicate = () => true) {
      const found = seen.find((s) => s.path === path && predicate(s.body));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ path, predicate, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => { resolve(); });
      }),
  };
}
