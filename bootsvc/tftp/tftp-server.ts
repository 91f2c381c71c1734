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
 * Every transfer is driven by the pure reducer of `transfer.ts`; this file only executes its
 * actions: sending packets, one timer per transfer, and finishing. Files stream from disk
 * through `file-source.ts`, from the prefix mounts (`ramdisk/…` → a directory) or the roots; the
 * per-request hook can produce a file instead (per-MAC grub.cfg). Files are held open by the
 * boot HTTP server's open-file cache (http/open-file-cache.ts, its own instance here): a first
 * stage that a rack's firmware fetches at once is resolved, opened and fstat'ed once, not per
 * request, and every transfer reads the one descriptor by position.
 * Malformed datagrams are counted and dropped; every socket has an error listener; a client
 * that vanishes is abandoned after the bounded retries (or at once when its port is unreachable).
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { isTftpDecodeError, TftpWireError } from './errors.js';
import { encodeNetascii, MAX_NETASCII_SOURCE_BYTES } from './netascii.js';
import { steadyEpochMs } from '../steady-clock.js';
import { DEFAULT_MAX_WINDOW_BYTES, MAX_BLOCK_SIZE, negotiateOptions, parseRequestOptions, type IgnoredOption } from './options.js';
import { decodeTftpPacket, encodeErrorPacket, type TftpPacket } from './packet.js';
import { normalizeRequestPath } from './path.js';
import { realpath } from 'node:fs/promises';
import { OpenFileCache, type OpenFileCacheOptions, type PathResolution } from '../http/open-file-cache.js';
import { SharedChunks } from './shared-chunks.js';
import { bufferSource, fileBlockSource, realRoots, resolveInMounts, resolveInRoots, type BlockSource } from './file-source.js';
import { TransferRun, type TransferHost } from './transfer-run.js';
import { loadConnectedAddon, openDgramSocket, openTransferSocket, type TransferSocket } from './transfer-socket.js';
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

interface Counters {
  requests: number;
  completedTransfers: number;
  unconfirmedTransfers: number;
  failedTransfers: number;
  refusedRequests: number;
  notFound: number;
  malformedPackets: number;
  unexpectedPackets: number;
  busyDrops: number;
  duplicateRequests: number;
  bytesSent: number;
  retransmittedPackets: number;
  duplicateAcks: number;
  timeouts: number;
  threadedTransfers: number;
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

/**
 * Starts a read-only TFTP server (see the module comment); resolves once it listens. Rejects
 * when the address cannot be bound, a mount prefix is not one path segment, or there is
 * nothing to serve (no existing root, no mount and no hook).
 */
export async function startTftpServer(options: TftpServerOptions): Promise<TftpServer> {
  const now = options.now ?? steadyEpochMs;
  const limits = {
    maxBlockSize: Math.min(options.maxBlockSize ?? MAX_BLOCK_SIZE, MAX_BLOCK_SIZE),
    maxWindowSize: options.maxWindowSize ?? 64,
    maxWindowBytes: options.maxWindowBytes ?? DEFAULT_MAX_WINDOW_BYTES,
  };
  const defaultTimeoutMs = options.timeoutMs ?? 1000;
  const minTimeoutMs = Math.min(options.minTimeoutMs ?? 100, defaultTimeoutMs);
  const maxTimeoutMs = Math.max(options.maxTimeoutMs ?? 8000, defaultTimeoutMs);
  const maxRetries = options.maxRetries ?? 8;
  const maxTransfers = options.maxTransfers ?? 1024;
  const shared = new SharedChunks(options.sharedChunkBytes ?? 64 * 1024 * 1024);
  const files = new OpenFileCache(options.openFileCache);
  const roots = await realRoots(options.roots);
  const mounts = new Map<string, string>();
  for (const [prefix, dir] of Object.entries(options.mounts ?? {})) {
    if (!MOUNT_PREFIX.test(prefix)) throw new TypeError(`TFTP mount prefix ${JSON.stringify(prefix)} must be one path segment`);
    mounts.set(prefix, dir);
  }
  if (roots.length === 0 && mounts.size === 0 && options.resolve === undefined) {
    throw new Error(`no TFTP root exists among ${options.roots.join(', ') || '(none)'}`);
  }
  const family = isIP(options.listen.host) === 6 ? 'udp6' : 'udp4';
  const counters: Counters = {
    requests: 0, completedTransfers: 0, unconfirmedTransfers: 0, failedTransfers: 0, refusedRequests: 0, notFound: 0, malformedPackets: 0,
    unexpectedPackets: 0, busyDrops: 0, duplicateRequests: 0, bytesSent: 0, retransmittedPackets: 0, duplicateAcks: 0, timeouts: 0, threadedTransfers: 0,
  };
  const active = new Map<string, TransferRun>();
  const pending = new Set<Promise<void>>();
  /** Clients whose request is being resolved (file lookup, hook) but has no transfer yet. */
  const pendingKeys = new Set<string>();
  let stopping = false;

  const emit = (event: TftpEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // The flight recorder must never break a transfer.
    }
  };

  const host: TransferHost = {
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

  const listener = createSocket({ type: family, reuseAddr: false });
  listener.on('error', (err) => {
    emit({ type: 'server-error', atMs: now(), message: `listening socket: ${err.message}` });
  });
  await bindSocket(listener, options.listen.host, options.listen.port);
  const bound = listener.address();

  const addon = options.nativeSockets === false ? undefined : loadConnectedAddon(options.nativeAddonPath);

  async function refuse(client: TftpClient, file: string, errorCode: number, message: string, startedAtMs: number): Promise<void> {
    if (errorCode === TftpWireError.fileNotFound) counters.notFound++;
    else counters.refusedRequests++;
    emit({ type: 'error', atMs: now(), client, file, origin: 'server', errorCode, message, bytes: 0, durationMs: now() - startedAtMs });
    const socket = await openDgramSocket(bound.address, client.address, client.port);
    await new Promise<void>((resolve) => {
      socket.send(encodeErrorPacket(errorCode, message), () => {
        resolve();
      });
    });
    socket.close();
  }

  async function openSource(path: string, client: TftpClient): Promise<BlockSource | { errorCode: number; message: string }> {
    if (options.resolve !== undefined) {
      const generated = await options.resolve(path, client);
      if (Buffer.isBuffer(generated)) return bufferSource(generated);
      // A named file is trusted (the agent's asset catalog), but may be a symlink (Debian's
      // /usr/lib/ipxe/ipxe.efi is one): its real path is opened, still O_NOFOLLOW and regular only.
      if (generated !== undefined) {
        const file = generated.file;
        return cachedSource(`file:${file}`, path, () => realpath(file).then((real): PathResolution => ({ kind: 'path', real }), (): PathResolution => ({ kind: 'not-found' })));
      }
    }
    return cachedSource(`path:${path}`, path, async (): Promise<PathResolution> => {
      const found = (await resolveInMounts(mounts, path)) ?? (await resolveInRoots(roots, path));
      if (found.kind === 'found') return { kind: 'path', real: found.path };
      // A refusal (a symlink out of the root, a path that cannot be resolved) travels as the
      // cache's `escape`, its reason as the target: the client gets it as an access violation.
      return found.kind === 'refused' ? { kind: 'escape', target: found.reason } : found;
    });
  }

  /** The file `key` names, held from the open-file cache (`resolve` runs on a miss or a revalidation). */
  async function cachedSource(key: string, path: string, resolve: () => Promise<PathResolution>): Promise<BlockSource | { errorCode: number; message: string }> {
    const found = await files.acquire(key, resolve);
    switch (found.kind) {
      case 'file': {
        const file = found.file;
        const release = (): Promise<void> => {
          files.release(file);
          return Promise.resolve();
        };
        return fileBlockSource({ fd: file.fd, dev: file.dev, ino: file.ino, size: file.size, mtimeMs: file.mtimeMs, release }, { shared });
      }
      case 'not-found':
        return { errorCode: TftpWireError.fileNotFound, message: `file not found: ${path}` };
      case 'not-a-file':
        return { errorCode: TftpWireError.fileNotFound, message: `not a regular file: ${path}` };
      case 'escape':
        return { errorCode: TftpWireError.accessViolation, message: found.target };
    }
  }

  async function handleRequest(packet: Extract<TftpPacket, { kind: 'rrq' | 'wrq' }>, client: TftpClient, key: string): Promise<void> {
    if (options.turnBudget !== undefined) {
      await options.turnBudget.enter();
      if (stopping) return;
    }
    const startedAtMs = now();
    emit({ type: 'request', atMs: startedAtMs, client, file: packet.filename, kind: packet.kind, mode: packet.mode, options: packet.options });
    if (packet.kind === 'wrq') {
      await refuse(client, packet.filename, TftpWireError.accessViolation, 'read-only server: write requests are refused', startedAtMs);
      return;
    }
    if (packet.mode !== 'octet' && packet.mode !== 'netascii') {
      await refuse(client, packet.filename, TftpWireError.illegalOperation, `transfer mode "${packet.mode}" is not supported (use octet)`, startedAtMs);
      return;
    }
    const path = normalizeRequestPath(packet.filename);
    if (!path.ok) {
      await refuse(client, packet.filename, TftpWireError.accessViolation, `refused file name: ${path.reason}`, startedAtMs);
      return;
    }
    let source: BlockSource | { errorCode: number; message: string };
    try {
      source = await openSource(path.path, client);
    } catch (err) {
      await refuse(client, path.path, TftpWireError.notDefined, `cannot read ${path.path}: ${errorMessage(err)}`, startedAtMs);
      return;
    }
    if (!('sizeBytes' in source)) {
      await refuse(client, path.path, source.errorCode, source.message, startedAtMs);
      return;
    }
    if (packet.mode === 'netascii') {
      const original: BlockSource = source;
      try {
        if (original.sizeBytes > MAX_NETASCII_SOURCE_BYTES) throw new Error(`netascii mode serves files up to ${MAX_NETASCII_SOURCE_BYTES} bytes; use octet`);
        await original.load(0, original.sizeBytes);
        const bytes = Buffer.alloc(original.sizeBytes);
        if (!original.copy(0, original.sizeBytes, bytes, 0)) throw new Error('file changed while being read');
        source = bufferSource(encodeNetascii(bytes));
      } catch (err) {
        await refuse(client, path.path, TftpWireError.notDefined, errorMessage(err), startedAtMs);
        return;
      } finally {
        await original.close();
      }
    }
    const requested = parseRequestOptions(packet.options);
    const negotiated = negotiateOptions(requested, limits, source.sizeBytes);
    const ignored: readonly IgnoredOption[] = requested.ignored;
    let socket: TransferSocket;
    try {
      socket = await openTransferSocket(addon, bound.address, client.address, client.port);
    } catch (err) {
      await source.close();
      throw err;
    }
    const run = new TransferRun(host, {
      key,
      client,
      file: path.path,
      socket,
      source,
      startedAtMs,
      config: {
        fileSizeBytes: source.sizeBytes,
        blockSize: negotiated.blockSize,
        windowSize: negotiated.windowSize,
        timeoutMs: negotiated.timeoutSeconds === undefined ? defaultTimeoutMs : negotiated.timeoutSeconds * 1000,
        minTimeoutMs: negotiated.timeoutSeconds === undefined ? minTimeoutMs : negotiated.timeoutSeconds * 1000,
        maxTimeoutMs: negotiated.timeoutSeconds === undefined ? maxTimeoutMs : negotiated.timeoutSeconds * 1000,
        maxRetries,
        oack: negotiated.oack,
      },
      ignoredOptions: ignored,
      transferThread: options.transferThread !== false,
    });
    if (stopping) {
      await run.abort('server stopping');
      return;
    }
    active.set(key, run);
    run.start();
  }

  listener.on('message', (bytes, rinfo) => {
    let packet: TftpPacket;
    try {
      packet = decodeTftpPacket(bytes);
    } catch (err) {
      if (!isTftpDecodeError(err)) throw err;
      counters.malformedPackets++;
      return;
    }
    if (packet.kind !== 'rrq' && packet.kind !== 'wrq') {
      counters.unexpectedPackets++;
      return;
    }
    counters.requests++;
    const client: TftpClient = { address: rinfo.address, port: rinfo.port };
    const key = `${rinfo.address}:${rinfo.port}`;
    if (active.has(key) || pendingKeys.has(key)) {
      counters.duplicateRequests++; // the client retransmitted its request; its transfer is already running
      return;
    }
    if (stopping || active.size + pendingKeys.size >= maxTransfers) {
      counters.busyDrops++;
      emit({ type: 'busy', atMs: now(), client, file: packet.filename, activeTransfers: active.size + pendingKeys.size });
      return;
    }
    pendingKeys.add(key);
    const work = handleRequest(packet, client, key)
      .catch((err: unknown) => {
        emit({ type: 'server-error', atMs: now(), message: `request ${packet.filename} from ${key}: ${errorMessage(err)}` });
      })
      .finally(() => {
        pendingKeys.delete(key);
        pending.delete(work);
      });
    pending.add(work);
  });
  return {
    address: { host: bound.address, port: bound.port },
    async stop() {
      if (stopping) return;
      stopping = true;
      await new Promise<void>((resolve) => {
        listener.close(() => {
          resolve();
        });
      });
      await Promise.allSettled(pending);
      await Promise.allSettled([...active.values()].map((run) => run.abort('server stopping')));
      files.close();
    },
    stats(): TftpServerStats {
      const transfers: TftpTransferMetrics[] = [...active.values()].map((run) => run.metrics());
      return { ...counters, activeTransfers: active.size, sharedChunks: shared.stats(), openFiles: files.stats(), transfers };
    },
  };
}
