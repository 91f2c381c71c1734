/**
 * @module The TFTP server: a read-only RFC 1350 server with the option extension (RFC 2347),
 * blksize (RFC 2348), tsize and timeout (RFC 2349) and windowsize (RFC 7440), written in-house
 * because node-tftp missed the throughput goals and mishandles duplicate ACKs and loss
 * (docs/tftp.md has the measurements).
 *
 * The listening socket only reads requests. Each transfer gets its own ephemeral UDP socket
 * (its TID, RFC 1350 §4), bound to the listening address and connected to the client, so
 * replies leave from the address the client asked and the kernel discards datagrams from any
 * other host or port (they get ICMP port unreachable instead of the ERROR 5 RFC 1350 suggests —
 * cheaper, and spoofed ACKs from other ports never reach a transfer). Request-stage errors (file
 * not found, access violation, write request) are sent from such a socket too, as tftpd-hpa does.
 *
 * This file is the socket loop: the decisions about requests are the pure functions of
 * `request-handler.ts`, and every transfer runs on a `TransferEngine` (`transfer-engine.ts`:
 * the pure reducer of `transfer.ts` on the event loop, or with its sending phase on the addon's
 * transfer thread). Files stream from disk through `request-source.ts` and `file-source.ts`,
 * from the prefix mounts (`ramdisk/…` → a directory) or the roots; the per-request hook can
 * produce a file instead (per-MAC grub.cfg). Files are held open by the boot HTTP server's
 * open-file cache (http/open-file-cache.ts, its own instance here): a first stage that a rack's
 * firmware fetches at once is resolved, opened and fstat'ed once, not per request, and every
 * transfer reads the one descriptor by position.
 * Malformed datagrams are counted and dropped; every socket has an error listener; a client
 * that vanishes is abandoned after the bounded retries (or at once when its port is unreachable).
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { TftpWireError } from './errors.js';
import { steadyEpochMs } from '../steady-clock.js';
import { DEFAULT_MAX_WINDOW_BYTES, MAX_BLOCK_SIZE } from './options.js';
import { encodeErrorPacket } from './packet.js';
import { OpenFileCache, type OpenFileCacheOptions } from '../http/open-file-cache.js';
import { SharedChunks } from './shared-chunks.js';
import { realRoots, type BlockSource } from './file-source.js';
import { decideRequest, onListenerDatagram, transferConfigFor, type ListenerAction, type ListenerCounter, type RequestPacket, type TransferSettings } from './request-handler.js';
import { netasciiSource, openRequestSource, type SourceLookup } from './request-source.js';
import { createTransferEngine, type TransferEngine, type TransferHost } from './transfer-engine.js';
import { loadConnectedAddon, openDgramSocket, openTransferSocket, type ConnectedAddon, type TransferSocket } from './transfer-socket.js';
import type { TftpClient, TftpEvent, TftpServerStats, TftpTransferMetrics } from './server-types.js';
import type { TurnBudget } from '../turn-budget.js';

export type { TftpClient, TftpEvent, TftpServerStats, TftpTransferMetrics } from './server-types.js';

/** Configuration of {@link startTftpServer}. */
export interface TftpServerOptions {
  /** Where to listen; port 0 picks a free port (see {@link TftpServer.address}). */
  readonly listen: { readonly host: string; readonly port: number };
  /** Read-only directories searched in order (built-in assets first, then `tftp.root`). */
  readonly roots: readonly string[];
  /**
   * Prefix mounts, as boot HTTP's `mounts`: first path segment (e.g. `ramdisk`) → directory. A
   * name under a prefix (`/ramdisk/initrd`) is served from that directory alone — streamed like
   * the roots, through the same realpath jail — and never falls through to the roots; a prefix
   * whose directory does not exist (yet) answers "file not found". Looked up after the hook.
   */
  readonly mounts?: Readonly<Record<string, string>>;
  /**
   * Per-request hook for generated files (a per-MAC grub.cfg) and named files (the boot
   * assets): called with the normalized root-relative path before the roots are searched; a
   * Buffer is served, `{ file }` streams that trusted absolute path like the roots (chunks
   * shared between transfers), `undefined` falls through to the mounts and roots, a rejection
   * answers ERROR 0 and is reported.
   */
  readonly resolve?: (path: string, client: TftpClient) => Promise<Buffer | { file: string } | undefined>;
  /** Largest blksize granted (default and RFC 2348 maximum: 65464). */
  readonly maxBlockSize?: number;
  /** Largest windowsize granted (default 64). */
  readonly maxWindowSize?: number;
  /** Most payload bytes per window; larger blocks get smaller windows (default 80 KiB: `DEFAULT_MAX_WINDOW_BYTES` in `options.ts`). */
  readonly maxWindowBytes?: number;
  /**
   * Retransmission timeout until a round trip is measured, when the client sends no `timeout`
   * option (default 1000 ms; then adaptive, see `transfer.ts`).
   */
  readonly timeoutMs?: number;
  /** Shortest adaptive retransmission timeout (default 100 ms). */
  readonly minTimeoutMs?: number;
  /** Longest retransmission timeout the exponential backoff reaches (default 8000 ms). */
  readonly maxTimeoutMs?: number;
  /**
   * Retransmissions in a row before a silent client is abandoned (default 8: with the defaults
   * a vanished client is dropped after about 29 s of silence).
   */
  readonly maxRetries?: number;
  /**
   * Concurrent transfers; requests beyond are dropped and counted (`busyDrops`), so clients
   * retry (default 1024; each holds a socket and a file descriptor, and its window of chunks
   * comes from the shared cache).
   */
  readonly maxTransfers?: number;
  /** Bytes of file chunks shared between transfers (shared-chunks.ts; default 64 MiB). */
  readonly sharedChunkBytes?: number;
  /** The open-file cache's limits (http/open-file-cache.ts defaults: 64 files, checked after 1 s, closed after 10 s idle). */
  readonly openFileCache?: OpenFileCacheOptions;
  /**
   * Transfer sockets from the native addon (`npm run build:native`): a window in one
   * `sendmmsg`, ACKs without per-datagram allocation (default true; without the addon, or
   * with false, transfers use node:dgram). See `transfer-socket.ts`.
   */
  readonly nativeSockets?: boolean;
  /**
   * With the native sockets: hand each transfer's sending phase — in-window ACKs, the next
   * window, retransmissions — to the addon's transfer thread (`transfer-pump.ts`), off the event
   * loop (default true).
   */
  readonly transferThread?: boolean;
  /** Path of `udp_bind.node` (default: the addon built by `npm run build:native`). */
  readonly nativeAddonPath?: string;
  /** Flight-recorder sink; exceptions it throws are swallowed. */
  readonly onEvent?: (event: TftpEvent) => void;
  /** Shared per-turn handling budget (../turn-budget.ts): a burst of requests is started over several event-loop turns. */
  readonly turnBudget?: TurnBudget;
  /**
   * Clock in epoch milliseconds; default the steady clock (`../steady-clock.ts`): retransmission
   * deadlines must not move with a wall-clock step (back a day, a lost block waited a day).
   */
  readonly now?: () => number;
}

/** A running server. */
export interface TftpServer {
  /** The bound address (the real port when `listen.port` was 0). */
  readonly address: { readonly host: string; readonly port: number };
  /** Stops listening and abandons every transfer; resolves when all sockets are closed. */
  stop(): Promise<void>;
  /** Counters since start and the transfers in progress. */
  stats(): TftpServerStats;
}

type Counters = Record<ListenerCounter | 'completedTransfers' | 'unconfirmedTransfers' | 'failedTransfers' | 'refusedRequests' | 'notFound'
  | 'bytesSent' | 'retransmittedPackets' | 'duplicateAcks' | 'timeouts' | 'threadedTransfers', number>;

function zeroCounters(): Counters {
  return {
    requests: 0, completedTransfers: 0, unconfirmedTransfers: 0, failedTransfers: 0, refusedRequests: 0, notFound: 0, malformedPackets: 0,
    unexpectedPackets: 0, busyDrops: 0, duplicateRequests: 0, bytesSent: 0, retransmittedPackets: 0, duplicateAcks: 0, timeouts: 0, threadedTransfers: 0,
  };
}

function bindSocket(socket: Socket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(err);
    };
    socket.once('error', onError);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

/** A mount prefix: one path segment, as boot HTTP accepts it. */
const MOUNT_PREFIX = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The transfer settings of `options`, defaults applied. */
function transferSettings(options: TftpServerOptions): TransferSettings {
  const timeoutMs = options.timeoutMs ?? 1000;
  return {
    maxBlockSize: Math.min(options.maxBlockSize ?? MAX_BLOCK_SIZE, MAX_BLOCK_SIZE),
    maxWindowSize: options.maxWindowSize ?? 64,
    maxWindowBytes: options.maxWindowBytes ?? DEFAULT_MAX_WINDOW_BYTES,
    timeoutMs,
    minTimeoutMs: Math.min(options.minTimeoutMs ?? 100, timeoutMs),
    maxTimeoutMs: Math.max(options.maxTimeoutMs ?? 8000, timeoutMs),
    maxRetries: options.maxRetries ?? 8,
  };
}

/** Where files are looked up; rejects for a bad mount prefix or when there is nothing to serve. */
async function sourceLookup(options: TftpServerOptions, files: OpenFileCache, shared: SharedChunks): Promise<SourceLookup> {
  const roots = await realRoots(options.roots);
  const mounts = new Map<string, string>();
  for (const [prefix, dir] of Object.entries(options.mounts ?? {})) {
    if (!MOUNT_PREFIX.test(prefix)) throw new TypeError(`TFTP mount prefix ${JSON.stringify(prefix)} must be one path segment`);
    mounts.set(prefix, dir);
  }
  if (roots.length === 0 && mounts.size === 0 && options.resolve === undefined) {
    throw new Error(`no TFTP root exists among ${options.roots.join(', ') || '(none)'}`);
  }
  return { files, shared, roots, mounts, ...(options.resolve === undefined ? {} : { resolve: options.resolve }) };
}

/** The state the socket loop and the request handling share. */
interface ServerContext {
  readonly options: TftpServerOptions;
  readonly now: () => number;
  readonly settings: TransferSettings;
  readonly maxTransfers: number;
  readonly lookup: SourceLookup;
  readonly counters: Counters;
  readonly active: Map<string, TransferEngine>;
  /** Requests being prepared (file lookup, hook): their work, and their keys. */
  readonly pending: Set<Promise<void>>;
  readonly pendingKeys: Set<string>;
  readonly host: TransferHost;
  readonly bound: { readonly address: string; readonly port: number };
  readonly addon: ConnectedAddon | undefined;
  stopping: boolean;
  emit(event: TftpEvent): void;
}

/** What transfers report to the server: the flight recorder and the counters. */
function transferHost(now: () => number, emit: (event: TftpEvent) => void, counters: Counters, active: Map<string, TransferEngine>): TransferHost {
  return {
    now,
    emit,
    finished(run, ok, confirmed) {
      active.delete(run.key);
      const c = run.state.counters;
      counters.retransmittedPackets += c.retransmittedPackets;
      counters.duplicateAcks += c.duplicateAcks;
      counters.timeouts += c.timeouts;
      counters.bytesSent += run.bytesAcknowledged();
      if (ok) counters.completedTransfers++;
      else counters.failedTransfers++;
      if (ok && !confirmed) counters.unconfirmedTransfers++;
      if (run.handOvers > 0) counters.threadedTransfers++;
    },
    malformed() {
      counters.malformedPackets++;
    },
    unexpected() {
      counters.unexpectedPackets++;
    },
  };
}

/** Answers a request with an ERROR from a socket of its own, and reports it. */
async function refuse(ctx: ServerContext, client: TftpClient, file: string, errorCode: number, message: string, startedAtMs: number): Promise<void> {
  if (errorCode === TftpWireError.fileNotFound) ctx.counters.notFound++;
  else ctx.counters.refusedRequests++;
  ctx.emit({ type: 'error', atMs: ctx.now(), client, file, origin: 'server', errorCode, message, bytes: 0, durationMs: ctx.now() - startedAtMs });
  const socket = await openDgramSocket(ctx.bound.address, client.address, client.port);
  await new Promise<void>((resolve) => {
    socket.send(encodeErrorPacket(errorCode, message), () => {
      resolve();
    });
  });
  socket.close();
}

/** The bytes for a request the handler accepted, or undefined once it was refused. */
async function requestSource(ctx: ServerContext, request: RequestPacket, client: TftpClient, startedAtMs: number): Promise<{ path: string; source: BlockSource } | undefined> {
  const decision = decideRequest(request);
  if (decision.kind === 'refuse') {
    await refuse(ctx, client, decision.file, decision.errorCode, decision.message, startedAtMs);
    return undefined;
  }
  const { path } = decision;
  let source: BlockSource;
  try {
    const found = await openRequestSource(ctx.lookup, path, client);
    if (!('sizeBytes' in found)) {
      await refuse(ctx, client, path, found.errorCode, found.message, startedAtMs);
      return undefined;
    }
    source = found;
  } catch (err) {
    await refuse(ctx, client, path, TftpWireError.notDefined, `cannot read ${path}: ${errorMessage(err)}`, startedAtMs);
    return undefined;
  }
  if (!decision.netascii) return { path, source };
  try {
    return { path, source: await netasciiSource(source) };
  } catch (err) {
    await refuse(ctx, client, path, TftpWireError.notDefined, errorMessage(err), startedAtMs);
    return undefined;
  }
}

/** Serves one accepted request: reported, decided, its file opened, its transfer started. */
async function handleRequest(ctx: ServerContext, request: RequestPacket, client: TftpClient, key: string): Promise<void> {
  if (ctx.options.turnBudget !== undefined) {
    await ctx.options.turnBudget.enter();
    if (ctx.stopping) return;
  }
  const startedAtMs = ctx.now();
  ctx.emit({ type: 'request', atMs: startedAtMs, client, file: request.filename, kind: request.kind, mode: request.mode, options: request.options });
  const found = await requestSource(ctx, request, client, startedAtMs);
  if (found === undefined) return;
  const { path, source } = found;
  const { config, ignored } = transferConfigFor(request, ctx.settings, source.sizeBytes);
  let socket: TransferSocket;
  try {
    socket = await openTransferSocket(ctx.addon, ctx.bound.address, client.address, client.port);
  } catch (err) {
    await source.close();
    throw err;
  }
  const transferThread = ctx.options.transferThread !== false;
  const run = createTransferEngine(ctx.host, { key, client, file: path, socket, source, startedAtMs, config, ignoredOptions: ignored, transferThread });
  if (ctx.stopping) {
    await run.abort('server stopping');
    return;
  }
  ctx.active.set(key, run);
  run.start();
}

/** Executes the request handler's answer to a datagram on the listening socket. */
function executeListenerAction(ctx: ServerContext, action: ListenerAction): void {
  switch (action.type) {
    case 'count':
      ctx.counters[action.counter]++;
      return;
    case 'moved-on':
      ctx.active.get(action.key)?.clientMovedOn();
      return;
    case 'emit':
      ctx.emit(action.event);
      return;
    case 'accept': {
      const { key, client, request } = action;
      ctx.pendingKeys.add(key);
      const work = handleRequest(ctx, request, client, key)
        .catch((err: unknown) => {
          ctx.emit({ type: 'server-error', atMs: ctx.now(), message: `request ${request.filename} from ${key}: ${errorMessage(err)}` });
        })
        .finally(() => {
          ctx.pendingKeys.delete(key);
          ctx.pending.delete(work);
        });
      ctx.pending.add(work);
      return;
    }
  }
}

/**
 * Starts a read-only TFTP server (see the module comment); resolves once it listens. Rejects
 * when the address cannot be bound, a mount prefix is not one path segment, or there is
 * nothing to serve (no existing root, no mount and no hook).
 */
export async function startTftpServer(options: TftpServerOptions): Promise<TftpServer> {
  const now = options.now ?? steadyEpochMs;
  const shared = new SharedChunks(options.sharedChunkBytes ?? 64 * 1024 * 1024);
  const files = new OpenFileCache(options.openFileCache);
  const lookup = await sourceLookup(options, files, shared);
  const counters = zeroCounters();
  const active = new Map<string, TransferEngine>();
  const emit = (event: TftpEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // The flight recorder must never break a transfer.
    }
  };
  const listener = createSocket({ type: isIP(options.listen.host) === 6 ? 'udp6' : 'udp4', reuseAddr: false });
  listener.on('error', (err) => {
    emit({ type: 'server-error', atMs: now(), message: `listening socket: ${err.message}` });
  });
  await bindSocket(listener, options.listen.host, options.listen.port);
  const { address, port } = listener.address();
  const ctx: ServerContext = {
    options, now, settings: transferSettings(options), maxTransfers: options.maxTransfers ?? 1024, lookup, counters, active,
    pending: new Set(), pendingKeys: new Set(), host: transferHost(now, emit, counters, active), bound: { address, port },
    addon: options.nativeSockets === false ? undefined : loadConnectedAddon(options.nativeAddonPath), stopping: false, emit,
  };
  const view = { get stopping() { return ctx.stopping; }, maxTransfers: ctx.maxTransfers, active, pending: ctx.pendingKeys };
  listener.on('message', (bytes, rinfo) => {
    for (const action of onListenerDatagram(bytes, { address: rinfo.address, port: rinfo.port }, view, now())) executeListenerAction(ctx, action);
  });
  return {
    address: { host: address, port },
    async stop() {
      if (ctx.stopping) return;
      ctx.stopping = true;
      await new Promise<void>((resolve) => {
        listener.close(() => {
          resolve();
        });
      });
      await Promise.allSettled(ctx.pending);
      await Promise.allSettled([...active.values()].map((run) => run.abort('server stopping')));
      files.close();
    },
    stats(): TftpServerStats {
      const transfers: TftpTransferMetrics[] = [...active.values()].map((run) => run.metrics());
      return { ...counters, activeTransfers: active.size, sharedChunks: shared.stats(), openFiles: files.stats(), transfers };
    },
  };
}
