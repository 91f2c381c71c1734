/**
 * @module File bodies sent by the kernel — small ones from the event loop, large ones from the
 * addon's sender threads: sendfile(2) through the optional native addon
 * `native/sendfile` (built by `npm run build:native`; Linux). Node has no sendfile, so a body
 * read through libuv is copied twice (page cache → buffer on a pool thread, buffer → socket on
 * the event loop) with a pool hand-off per read; for a 64 KiB Range answer that was most of
 * the server's CPU against nginx (docs/PERFORMANCE.md, "Boot HTTP against nginx").
 *
 * {@link KernelSender.send} writes the response head and the body on the socket itself, from
 * the event loop — the head with MSG_MORE, then the body with sendfile, so both leave in the
 * same segments, as nginx's `tcp_nopush` has them — only when every precondition holds; else
 * it writes nothing and the caller answers as before:
 * - the body is at most {@link SENDFILE_MAX_BYTES} (a Range answer, a boot binary);
 * - the socket is plain TCP (not TLS: the kernel would bypass the record layer), Node holds no
 *   byte for it (its write queue is empty and not corked), the response is the socket's
 *   current one (a pipelined response waits with no socket) and nothing of it was sent yet;
 * - `strictContentLength` is off (Node 20's default): the body bypasses Node's byte count, so
 *   the strict check in `end()` would throw;
 * - Node keeps the head where it always has: `writeHead` leaves it in the response's `_header`
 *   string, and `_headerSent` says whether it went out (both internal, both read by many
 *   libraries; a Node without them gets the ordinary path);
 * - every page of the range is in the page cache (the addon's `rangeCached`: cachestat(2), or
 *   RWF_NOWAIT probes before Linux 6.5). sendfile cannot read without waiting, and a disk read
 *   on the event loop would stall every client: a cold range goes the pool-thread way, which
 *   also warms the cache for the next one. nginx's worker without `aio` simply blocks in
 *   sendfile instead; the probes sample one byte per 128 KiB, so a hole between two sampled
 *   pages can still block the loop for one read (the pre-6.5 trade-off).
 * The addon sends until the range is sent or the non-blocking socket is full (EAGAIN); the
 * rest of the head, if the socket took only part of it, goes through the socket's own write
 * queue, and the rest of the body the caller sends through Node: in order after the kernel's
 * bytes, because Node held none for the socket. Byte ranges are RFC 9110 §14; this module
 * only moves the bytes range.ts planned.
 *
 * Larger bodies (kernels, initrds, ISOs, whole images) go by {@link KernelSender.sendLarge}: the
 * addon's sender threads (native/sendfile/sender_thread.c, two per process, each with its own
 * epoll set) send the head with MSG_MORE and the body with sendfile off the event loop, cold
 * pages included (a cold read blocks that sender thread and its other jobs, never the loop).
 * The same preconditions hold, bar the cache check; while the job runs the socket is paused (Node
 * neither reads nor writes it: a pipelined request waits in the kernel), the thread works on
 * its own dup(2) of the socket and of the file (a descriptor closed meanwhile cannot be reused
 * under it), and a socket closed by Node cancels the job (shutdown(2) of the copy). On success
 * the caller ends the response without a body and keep-alive goes on; on an error (EPIPE or
 * ECONNRESET: the client went away; EIO: the file shrank) the socket is destroyed.
 */
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bodies up to this size may go by sendfile; larger ones are streamed (send-file.ts). */
export const SENDFILE_MAX_BYTES = 1024 * 1024;

/** Where `npm run build:native` puts the addon, relative to this compiled file (dist/bootsvc/http/). */
export const DEFAULT_SENDFILE_ADDON_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../../../native/sendfile/build/Release/sendfile_range.node');

/** The functions `sendfile_range.node` exports (native/sendfile/sendfile_range.c). */
export interface SendfileAddon {
  /** 1 (every page of the range cached), 0 (a page not cached, or past the end), -1 (cannot tell); method 0 cachestat, 1 probes. */
  rangeCached(fileFd: number, offset: number, count: number, method: number): number;
  /** Sends `header` (latin1) with MSG_MORE, then the range: head and body bytes sent together, or -errno when an error came before any byte. */
  sendRange(socketFd: number, fileFd: number, offset: number, count: number, header?: string): number;
}

/** The sender threads of `sendfile_range.node` (native/sendfile/sender_thread.c); absent in an older build. */
export interface SenderThreadAddon {
  /** Starts the threads once; `onDone(id, bodyBytesSent, errno)` is called on the main thread per job (errno 0: all sent). */
  senderStart(onDone: (id: number, bodyBytes: number, errno: number) => void): void;
  /** Queues a job (head with MSG_MORE, then the range by sendfile): 0, or -errno when a dup(2) failed (no job). */
  senderSend(id: number, socketFd: number, fileFd: number, offset: number, count: number, header?: string): number;
  /** Cancels a live job (it completes with ECANCELED or the error the shutdown caused): its body bytes sent so far, or -1 when none has `id`. */
  senderCancel(id: number): number;
  /** [live jobs, jobs started]. */
  senderStats(): number[];
}

/** How a job of the sender threads ended: body bytes sent, and 0 or the errno that stopped it. */
export interface LargeSendResult {
  bytes: number;
  errno: number;
}

/** How the addon tells a cached range: cachestat(2) where the kernel has it, else probes; or probes only (tests). */
export type ResidencyCheck = 'cachestat' | 'probes';

/** What {@link KernelSender} did since start. */
export interface KernelSendStats {
  /** Responses answered here: headers flushed, then as much of the body as the socket took by sendfile. */
  answers: number;
  /** Body bytes sent by sendfile. */
  bytes: number;
  /** Answers sent only in part (or not at all) by sendfile, the socket being full: Node sent the rest. */
  partial: number;
  /** Bodies not sent by sendfile because a page of the range was not in the page cache. */
  cold: number;
  /** Large bodies handed to the sender threads. */
  threadJobs: number;
  /** Body bytes the sender threads sent. */
  threadBytes: number;
  /** Jobs of the sender threads that ended with an error (client gone, file shrank, cancelled). */
  threadErrors: number;
}

const CACHED = 1;
const NOT_CACHED = 0;

function isAddon(value: unknown): value is SendfileAddon {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['rangeCached', 'sendRange'].every((name) => typeof v[name] === 'function');
}

function hasSenderThreads(value: SendfileAddon): value is SendfileAddon & SenderThreadAddon {
  const v = value as unknown as Record<string, unknown>;
  return ['senderStart', 'senderSend', 'senderCancel', 'senderStats'].every((name) => typeof v[name] === 'function');
}

const loaded = new Map<string, SendfileAddon | undefined>();

/**
 * Loads `sendfile_range.node` from `path` once; undefined when it is missing (not built: the
 * boot server then copies bodies through Node as before) or is not this addon. Never throws.
 */
export function loadSendfileAddon(path = DEFAULT_SENDFILE_ADDON_PATH): SendfileAddon | undefined {
  if (loaded.has(path)) return loaded.get(path);
  let addon: SendfileAddon | undefined;
  if (process.platform === 'linux') {
    try {
      const value: unknown = createRequire(import.meta.url)(path);
      if (isAddon(value)) addon = value;
    } catch {
      addon = undefined;
    }
  }
  loaded.set(path, addon);
  return addon;
}

/** How the boot HTTP server uses sendfile (its `sendfile` option; `false` turns it off). */
export interface SendfileOptions {
  /** Path of `sendfile_range.node`; default {@link DEFAULT_SENDFILE_ADDON_PATH}. */
  addonPath?: string;
  /** Default `cachestat`. */
  residency?: ResidencyCheck;
  /**
   * Bodies over {@link SENDFILE_MAX_BYTES} by the addon's sender threads (off the event loop);
   * default true. (The 110–180 s initrds once seen in PXE storms with them were the storm lab's
   * receivers under BBR, not the sender: docs/PERFORMANCE.md, "Boot HTTP against nginx".)
   */
  largeBodies?: boolean;
}

/** A {@link KernelSender} over the addon `options` name; undefined when it is off (`false`) or not built. */
export function openKernelSender(options: SendfileOptions | false = {}): KernelSender | undefined {
  if (options === false) return undefined;
  const addon = loadSendfileAddon(options.addonPath);
  return addon === undefined ? undefined : new KernelSender(addon, options.residency, options.largeBodies ?? true);
}

/**
 * Completions of the sender threads, by job id: one table per process, because the addon's
 * threads (and their completion callback) are one per Node environment, shared by every
 * {@link KernelSender} (every boot HTTP server) of it.
 */
const jobWaiters = new Map<number, (result: LargeSendResult) => void>();
let nextJobId = 0;
const startedAddons = new WeakSet<SenderThreadAddon>();

function startSenders(threads: SenderThreadAddon): void {
  if (startedAddons.has(threads)) return;
  threads.senderStart((id, bytes, errno) => {
    const resolve = jobWaiters.get(id);
    jobWaiters.delete(id);
    resolve?.({ bytes, errno });
  });
  startedAddons.add(threads);
}

/** The kernel descriptor of a plain TCP socket, from its libuv handle; -1 when there is none (TLS, closed). */
function socketFdOf(socket: Socket): number {
  if (Reflect.get(socket, 'encrypted') === true) return -1;
  const handle: unknown = Reflect.get(socket, '_handle');
  if (typeof handle !== 'object' || handle === null) return -1;
  const fd: unknown = Reflect.get(handle, 'fd');
  return typeof fd === 'number' && Number.isInteger(fd) && fd >= 0 ? fd : -1;
}

/** Sends small bodies with sendfile(2) when the preconditions of the module comment hold. */
export class KernelSender {
  private readonly counters: KernelSendStats = { answers: 0, bytes: 0, partial: 0, cold: 0, threadJobs: 0, threadBytes: 0, threadErrors: 0 };
  private readonly method: number;
  private readonly threads: (SendfileAddon & SenderThreadAddon) | undefined;

  /** `largeBodies`: use the addon's sender threads (when it has them) for {@link sendLarge}. */
  constructor(private readonly addon: SendfileAddon, residency: ResidencyCheck = 'cachestat', largeBodies = true) {
    this.method = residency === 'probes' ? 1 : 0;
    this.threads = largeBodies && hasSenderThreads(addon) ? addon : undefined;
  }

  /** Whether {@link sendLarge} may take bodies (the addon has sender threads and they are on). */
  get largeBodies(): boolean {
    return this.threads !== undefined;
  }

  /**
   * Answers bytes [start, start + length) of `fileFd` on `res` from a sender thread (the module
   * comment): when every precondition holds, calls `writeHead` (status and headers, Content-Length
   * included), pauses the socket and resolves, once the thread is done, with the body bytes
   * sent and 0 (the caller ends `res` without a body, which resumes nothing: this method resumes
   * the socket first) or the errno that stopped it (the socket is destroyed here). Returns
   * undefined, having sent no byte, when a precondition fails (`writeHead` may have been called,
   * as with {@link send}). `onEnd` hears the result once, first, before the socket is destroyed
   * (so a `close` listener of the response sees the bytes that went). When Node closes the
   * socket during the job, the job is cancelled and the result comes when the thread has let go
   * of it — after the response's `close` (errno ECANCELED, or EPIPE from the shutdown).
   */
  sendLarge(res: ServerResponse, fileFd: number, start: number, length: number, writeHead: () => void, onEnd?: (result: LargeSendResult) => void): Promise<LargeSendResult> | undefined {
    const threads = this.threads;
    if (threads === undefined || length <= 0 || res.headersSent || res.strictContentLength) return undefined;
    if (Reflect.get(res, '_headerSent') !== false) return undefined;
    const socket = res.socket;
    if (socket === null || socket.destroyed || socket.writableCorked !== 0 || socket.writableLength !== 0 || res.writableLength !== 0) return undefined;
    const socketFd = socketFdOf(socket);
    if (socketFd < 0) return undefined;
    writeHead();
    const head: unknown = Reflect.get(res, '_header');
    if (typeof head !== 'string') return undefined;
    startSenders(threads);
    nextJobId += 1;
    const id = nextJobId;
    const wasPaused = socket.isPaused();
    // Node must neither read (a pipelined request, an EOF that would close it) nor write meanwhile.
    socket.pause();
    if (threads.senderSend(id, socketFd, fileFd, start, length, head) !== 0) {
      if (!wasPaused) socket.resume();
      return undefined;
    }
    Reflect.set(res, '_headerSent', true);
    this.counters.threadJobs += 1;
    // Node closed the socket (server stop, or it saw the client go first): cancel the job. What
    // senderCancel returns is only a snapshot — a sendfile call in flight on the thread still
    // adds its bytes (seen: 0.6 MB more than the snapshot reached the client) — so `onEnd`
    // waits for the job's own completion, which the cancel hastens (shutdown(2): EPIPE).
    const cancel = (): void => {
      threads.senderCancel(id);
    };
    socket.prependOnceListener('close', cancel);
    return new Promise<LargeSendResult>((resolve) => {
      jobWaiters.set(id, (result) => {
        socket.off('close', cancel);
        this.counters.threadBytes += result.bytes;
        onEnd?.(result);
        if (result.errno !== 0) {
          this.counters.threadErrors += 1;
          socket.destroy();
        } else if (!wasPaused) {
          socket.resume();
        }
        resolve(result);
      });
    });
  }

  /** Jobs the sender threads hold now (0 without threads). */
  liveJobs(): number {
    return this.threads?.senderStats()[0] ?? 0;
  }

  /**
   * Answers bytes [start, start + length) of `fileFd` on `res`: when every precondition holds,
   * calls `writeHead` (which must set the status and headers, Content-Length included), sends
   * the head and what the socket takes of the body by sendfile, and returns how many body
   * bytes went (0 to `length`); the caller sends the rest through `res` (whose head then counts
   * as sent, or is still to send when the socket took none of it) and ends it. Returns
   * undefined, having written no byte, when a precondition fails (`writeHead` may have been
   * called: the head then waits in `res`, and `res.headersSent` is true).
   */
  send(res: ServerResponse, fileFd: number, start: number, length: number, writeHead: () => void): number | undefined {
    if (length <= 0 || length > SENDFILE_MAX_BYTES || res.headersSent || res.strictContentLength) return undefined;
    if (Reflect.get(res, '_headerSent') !== false) return undefined;
    const socket = res.socket;
    if (socket === null || socket.destroyed || socket.writableCorked !== 0 || socket.writableLength !== 0 || res.writableLength !== 0) return undefined;
    const socketFd = socketFdOf(socket);
    if (socketFd < 0) return undefined;
    const cached = this.addon.rangeCached(fileFd, start, length, this.method);
    if (cached !== CACHED) {
      if (cached === NOT_CACHED) this.counters.cold += 1;
      return undefined;
    }
    writeHead();
    const head: unknown = Reflect.get(res, '_header');
    // Not where Node 20 keeps it: Node sends the head it holds with the body, the ordinary way.
    if (typeof head !== 'string') return undefined;
    // An error before any byte (-errno: the client gone, a file sendfile refuses) or a full
    // socket sends nothing: Node sends head and body the ordinary way, or meets the error.
    const sent = Math.max(0, this.addon.sendRange(socketFd, fileFd, start, length, head));
    if (sent > 0) {
      Reflect.set(res, '_headerSent', true);
      // A head sent in part (and no body): its rest goes first, through the socket's queue.
      if (sent < head.length) socket.write(head.slice(sent), 'latin1');
    }
    const body = Math.max(0, sent - head.length);
    this.counters.answers += 1;
    this.counters.bytes += body;
    if (body < length) this.counters.partial += 1;
    return body;
  }

  /** A copy of the counters. */
  stats(): KernelSendStats {
    return { ...this.counters };
  }
}
