/**
 * @module Byte relays between TCP and unix-domain sockets, the virtual rack's way across the
 * network-namespace boundary without touching the root namespace's interfaces: a pathname unix
 * socket is reachable from every network namespace (it lives in the file system), so a TCP
 * listener on one side plus a unix listener on the other joins a loopback port inside the rack
 * namespace to a loopback port outside it. Importable ({@link startRelay}) and runnable inside
 * the namespace as `node relay.js SPEC…` where each SPEC is `tcp:HOST:PORT=unix:PATH` (listen
 * on TCP, connect to the unix socket) or `unix:PATH=tcp:HOST:PORT` (the reverse). The CLI prints
 * `relay ready` once every listener is bound and stops on SIGTERM/SIGINT or when stdin closes.
 */
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { pathToFileURL } from 'node:url';

/** One end of a relay. */
export type RelayEndpoint = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

/** A relay: accept on `listen`, open a connection to `target` per client, pipe both ways. */
export interface RelaySpec {
  listen: RelayEndpoint;
  target: RelayEndpoint;
}

/** A running relay. */
export interface Relay {
  /** The bound TCP port (when listening on TCP with port 0), else undefined. */
  readonly port: number | undefined;
  /** Stops listening and destroys every open connection; removes a unix socket file it created. */
  close(): Promise<void>;
}

/** Parses `tcp:HOST:PORT` or `unix:/PATH`; throws a RangeError naming the bad text. */
export function parseRelayEndpoint(text: string): RelayEndpoint {
  if (text.startsWith('unix:/')) return { kind: 'unix', path: text.slice('unix:'.length) };
  const match = /^tcp:([0-9.]+):([0-9]{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match?.[1] === undefined || port > 65535) throw new RangeError(`relay endpoint must be tcp:IPV4:PORT or unix:/PATH, got ${JSON.stringify(text)}`);
  return { kind: 'tcp', host: match[1], port };
}

/** Parses `LISTEN=TARGET` (see the module comment). */
export function parseRelaySpec(text: string): RelaySpec {
  const eq = text.indexOf('=');
  if (eq < 0) throw new RangeError(`relay spec must be LISTEN=TARGET, got ${JSON.stringify(text)}`);
  return { listen: parseRelayEndpoint(text.slice(0, eq)), target: parseRelayEndpoint(text.slice(eq + 1)) };
}

/** Renders a spec back to its command-line form. */
export function formatRelaySpec(spec: RelaySpec): string {
  const end = (e: RelayEndpoint): string => (e.kind === 'unix' ? `unix:${e.path}` : `tcp:${e.host}:${e.port}`);
  return `${end(spec.listen)}=${end(spec.target)}`;
}

function dial(target: RelayEndpoint): Socket {
  return target.kind === 'unix' ? connect(target.path) : connect(target.port, target.host);
}

/** Starts one relay; resolves once it listens. */
export async function startRelay(spec: RelaySpec): Promise<Relay> {
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const server: Server = createServer((client) => {
    track(client);
    const upstream = dial(spec.target);
    track(upstream);
    // A reset on either side ends both: the peer sees a closed connection, as through a real cable.
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  if (spec.listen.kind === 'unix') await rm(spec.listen.path, { force: true });
  const listening = once(server, 'listening');
  if (spec.listen.kind === 'unix') server.listen(spec.listen.path);
  else server.listen(spec.listen.port, spec.listen.host);
  await Promise.race([listening, once(server, 'error').then(([err]: unknown[]) => { throw err; })]);
  const address = server.address();
  const listenPath = spec.listen.kind === 'unix' ? spec.listen.path : undefined;
  let closing: Promise<void> | undefined;
  return {
    port: typeof address === 'object' && address !== null ? address.port : undefined,
    close: () => (closing ??= (async () => {
      const closed = new Promise<void>((resolve) => { server.close(() => { resolve(); }); });
      for (const s of sockets) s.destroy();
      await closed;
      if (listenPath !== undefined) await rm(listenPath, { force: true });
    })()),
  };
}

async function main(args: readonly string[]): Promise<void> {
  if (args.length === 0) throw new RangeError('usage: relay.js tcp:HOST:PORT=unix:PATH | unix:PATH=tcp:HOST:PORT …');
  const relays = await Promise.all(args.map((a) => startRelay(parseRelaySpec(a))));
  process.stdout.write('relay ready\n');
  const stop = (): void => {
    void Promise.all(relays.map((r) => r.close())).then(() => { process.exitCode = 0; process.stdin.destroy(); });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdin.once('end', stop);
  process.stdin.resume();
}

const invoked = process.argv[1];
if (invoked !== undefined && import.meta.url === pathToFileURL(invoked).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`relay: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
