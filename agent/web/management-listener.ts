/**
 * @module The management listener: plain HTTP by default (loopback), HTTPS with
 * `management.tls`, and mutual TLS with `management.tls.clientCA` — then the TLS handshake
 * itself refuses a client without a certificate signed by that CA, before any request is read.
 * With mutual TLS the agent also serves the same app on a unix socket in its state directory
 * (mode 0600), so its own SSH command runner (which holds no client certificate) still reaches it.
 */
import { chmod, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** Options of {@link listenManagement}. */
export interface ManagementListenOptions {
  host: string;
  port: number;
  tls?: { cert: string; key: string; clientCA?: string };
  /** Where the unix socket goes when mutual TLS is on. */
  stateDir: string;
}

/** A bound management listener. */
export interface ManagementListener {
  server: Server;
  /** `http://host:port` or `https://host:port`, port resolved. */
  url: string;
  port: number;
  /** The unix socket serving the same app (mutual TLS only). */
  socketPath: string | undefined;
  /** Stops accepting, drops open connections and removes the socket. */
  close(): Promise<void>;
}

function listen(server: Server, ...args: [number, string] | [string]): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (args.length === 2) server.listen(args[0], args[1], done);
    else server.listen(args[0], done);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => { resolve(); });
    server.closeAllConnections();
  });
}

/** Binds the management app as configured; throws the listen error (EADDRINUSE, EACCES, bad PEM files). */
export async function listenManagement(app: RequestListener, options: ManagementListenOptions): Promise<ManagementListener> {
  const { tls } = options;
  let server: Server;
  if (tls === undefined) {
    server = createHttpServer(app);
  } else {
    const [cert, key, ca] = await Promise.all([readFile(tls.cert), readFile(tls.key), tls.clientCA === undefined ? undefined : readFile(tls.clientCA)]);
    server = createHttpsServer({
      cert, key,
      // RFC 8446 §4.3.2 CertificateRequest: ask for a client certificate and refuse the handshake without a valid one.
      ...(ca === undefined ? {} : { ca, requestCert: true, rejectUnauthorized: true }),
      minVersion: 'TLSv1.2',
    }, app);
  }
  await listen(server, options.port, options.host);
  const port = (server.address() as AddressInfo).port;
  const hostPart = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `${tls === undefined ? 'http' : 'https'}://${hostPart}:${port}`;
  let socketServer: Server | undefined;
  let socketPath: string | undefined;
  if (tls?.clientCA !== undefined) {
    socketPath = join(options.stateDir, 'management.sock');
    await rm(socketPath, { force: true }); // a stale socket from a killed agent
    socketServer = createHttpServer(app);
    await listen(socketServer, socketPath);
    await chmod(socketPath, 0o600);
  }
  return {
    server, url, port, socketPath,
    close: async () => {
      await Promise.all([closeServer(server), socketServer === undefined ? undefined : closeServer(socketServer)]);
      if (socketPath !== undefined) await rm(socketPath, { force: true });
    },
  };
}
