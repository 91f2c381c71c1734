/**
 * @module The TFTP server's decisions about requests, apart from its sockets: what a datagram
 * on the listening port means, whether a request is served, and the parameters of the transfer
 * that serves it. `tftp-server.ts` is the socket loop that executes these answers.
 *
 * - A datagram that is not TFTP is counted as malformed; a TFTP packet other than RRQ/WRQ as
 *   unexpected. A request from a client (`address:port`) whose transfer is running or being
 *   prepared is its own retransmission and is counted, nothing more.
 * - A new request from a client address for another file tells that address's transfers of
 *   other files that it moved on (`moved-on`, see `transfer.ts`: one whose final block is out
 *   ends done, unconfirmed) — a boot loader asks for the next file of its chain (GRUB: the
 *   initrd after the kernel) only once it has the previous one. Requests for the same file are
 *   left out: clients behind one address fetching one file at once (a rack's first stage
 *   through a NAT, or the loss tests' parallel clients) are not a chain, and one of them may
 *   still wait for a final block that was lost.
 * - Beyond `maxTransfers` (or while stopping) a request is dropped and reported `busy`: the
 *   client retries.
 * - A write request is refused (read-only server), as are modes other than octet and netascii
 *   and names `path.ts` refuses.
 * @pure
 */
import { isTftpDecodeError, TftpWireError } from './errors.js';
import { negotiateOptions, parseRequestOptions, type IgnoredOption, type NegotiationLimits } from './options.js';
import { decodeTftpPacket, type TftpPacket } from './packet.js';
import { normalizeRequestPath } from './path.js';
import type { TftpClient, TftpEvent } from './server-types.js';
import type { TransferConfig } from './transfer.js';

/** A read or write request. */
export type RequestPacket = Extract<TftpPacket, { kind: 'rrq' | 'wrq' }>;

/** What the listening socket's loop knows when a datagram arrives. */
export interface ListenerView {
  readonly stopping: boolean;
  readonly maxTransfers: number;
  /** Running transfers by key (`address:port`), with their files (root-relative, normalized). */
  readonly active: ReadonlyMap<string, { readonly client: TftpClient; readonly file: string }>;
  /** Keys of requests being prepared (file lookup, hook) that have no transfer yet. */
  readonly pending: ReadonlySet<string>;
}

/** Counters the listening socket's loop keeps. */
export type ListenerCounter = 'malformedPackets' | 'unexpectedPackets' | 'requests' | 'duplicateRequests' | 'busyDrops';

/** What the loop does with a datagram, in order. */
export type ListenerAction =
  | { readonly type: 'count'; readonly counter: ListenerCounter }
  | { /** Tell the running transfer `key` that its client moved on. */ readonly type: 'moved-on'; readonly key: string }
  | { readonly type: 'emit'; readonly event: TftpEvent }
  | { /** Prepare and start the transfer (`tftp-server.ts` handleRequest). */ readonly type: 'accept'; readonly key: string; readonly client: TftpClient; readonly request: RequestPacket };

/** The key of a client's transfers: `address:port`. */
export function clientKey(client: TftpClient): string {
  return `${client.address}:${client.port}`;
}

/** Decides what a datagram from `client` on the listening socket causes at `nowMs` (see the module comment). */
export function onListenerDatagram(bytes: Uint8Array, client: TftpClient, view: ListenerView, nowMs: number): ListenerAction[] {
  let packet: TftpPacket;
  try {
    packet = decodeTftpPacket(bytes);
  } catch (err) {
    if (!isTftpDecodeError(err)) throw err;
    return [{ type: 'count', counter: 'malformedPackets' }];
  }
  if (packet.kind !== 'rrq' && packet.kind !== 'wrq') return [{ type: 'count', counter: 'unexpectedPackets' }];
  const key = clientKey(client);
  const actions: ListenerAction[] = [{ type: 'count', counter: 'requests' }];
  // The client retransmitted its request: its transfer is already running.
  if (view.active.has(key) || view.pending.has(key)) return [...actions, { type: 'count', counter: 'duplicateRequests' }];
  if (!view.stopping) {
    const asked = normalizeRequestPath(packet.filename);
    const file = asked.ok ? asked.path : packet.filename;
    for (const [other, run] of view.active) if (run.client.address === client.address && run.file !== file) actions.push({ type: 'moved-on', key: other });
  }
  const load = view.active.size + view.pending.size;
  if (view.stopping || load >= view.maxTransfers) {
    actions.push({ type: 'count', counter: 'busyDrops' }, { type: 'emit', event: { type: 'busy', atMs: nowMs, client, file: packet.filename, activeTransfers: load } });
    return actions;
  }
  actions.push({ type: 'accept', key, client, request: packet });
  return actions;
}

/** Whether a request is served: the root-relative path to open, or the refusal to send. */
export type RequestDecision =
  | { readonly kind: 'open'; readonly path: string; readonly netascii: boolean }
  | { readonly kind: 'refuse'; /** The name as reported. */ readonly file: string; readonly errorCode: number; readonly message: string };

/** Decides whether `request` is served (before any file is looked up). */
export function decideRequest(request: RequestPacket): RequestDecision {
  const file = request.filename;
  if (request.kind === 'wrq') return { kind: 'refuse', file, errorCode: TftpWireError.accessViolation, message: 'read-only server: write requests are refused' };
  if (request.mode !== 'octet' && request.mode !== 'netascii') {
    return { kind: 'refuse', file, errorCode: TftpWireError.illegalOperation, message: `transfer mode "${request.mode}" is not supported (use octet)` };
  }
  const path = normalizeRequestPath(file);
  if (!path.ok) return { kind: 'refuse', file, errorCode: TftpWireError.accessViolation, message: `refused file name: ${path.reason}` };
  return { kind: 'open', path: path.path, netascii: request.mode === 'netascii' };
}

/** The server's transfer settings (`TftpServerOptions` with defaults applied). */
export interface TransferSettings extends NegotiationLimits {
  /** Retransmission timeout before a round trip is measured, when the client sent no `timeout`. */
  readonly timeoutMs: number;
  readonly minTimeoutMs: number;
  readonly maxTimeoutMs: number;
  readonly maxRetries: number;
}

/**
 * The transfer of a file of `sizeBytes` for a request with `options`: negotiated as `options.ts`
 * says; a client's `timeout` fixes the retransmission timeout (no adaptation, no backoff).
 */
export function transferConfigFor(request: Pick<RequestPacket, 'options'>, settings: TransferSettings, sizeBytes: number): { config: TransferConfig; ignored: readonly IgnoredOption[] } {
  const requested = parseRequestOptions(request.options);
  const negotiated = negotiateOptions(requested, settings, sizeBytes);
  const fixedMs = negotiated.timeoutSeconds === undefined ? undefined : negotiated.timeoutSeconds * 1000;
  return {
    config: {
      fileSizeBytes: sizeBytes,
      blockSize: negotiated.blockSize,
      windowSize: negotiated.windowSize,
      timeoutMs: fixedMs ?? settings.timeoutMs,
      minTimeoutMs: fixedMs ?? settings.minTimeoutMs,
      maxTimeoutMs: fixedMs ?? settings.maxTimeoutMs,
      maxRetries: settings.maxRetries,
      oack: negotiated.oack,
    },
    ignored: requested.ignored,
  };
}
