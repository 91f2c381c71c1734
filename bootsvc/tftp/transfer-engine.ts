/**
 * @module The contract between the TFTP server and the engine that runs one read transfer.
 *
 * There are two engines, and the server (`tftp-server.ts`) drives both through
 * {@link TransferEngine} alone, choosing one with {@link createTransferEngine}:
 *
 * - `event-loop` (`transfer-run.ts`): the pure reducer of `transfer.ts` on the event loop; socket
 *   events become reducer events, its actions become datagrams and one timer.
 * - `thread` (`transfer-thread.ts`): the same, except that once a window is on the wire the
 *   sending phase — in-window ACKs, the next window, duplicate and stray ACKs, retransmissions
 *   on the timer — runs on the addon's transfer thread (`native/udp-bind/tftp_pump.c`, seen
 *   through `transfer-pump.ts`), which hands back every event the reducer must decide.
 *
 * Both keep the rules written in `transfer.ts`'s module comment (RFC 1350, RFC 2347–2349,
 * RFC 7440, RFC 1123 §4.2.3, Karn's rule), and one table of transfer cases runs against both
 * (test/unit/bootsvc/tftp/transfer-cases.test.ts): on the wire a client cannot tell them apart.
 */
import type { IgnoredOption } from './options.js';
import type { BlockSource } from './file-source.js';
import type { TftpClient, TftpEvent, TftpTransferMetrics } from './server-types.js';
import type { TransferConfig, TransferState } from './transfer.js';
import type { TransferSocket } from './transfer-socket.js';
import { EventLoopTransfer } from './transfer-run.js';
import { ThreadedTransfer } from './transfer-thread.js';

/** Which engine runs a transfer. */
export type TransferEngineKind = 'event-loop' | 'thread';

/** What an engine needs from its server. */
export interface TransferHost {
  /** The server's clock (epoch ms, steady). */
  now(): number;
  /** The flight-recorder sink: `oack` at the start, then exactly one `done` or `error`. */
  emit(event: TftpEvent): void;
  /** Called once, when the transfer ended (`ok`: done; `confirmed`: its final ACK arrived). */
  finished(run: TransferEngine, ok: boolean, confirmed: boolean): void;
  /** A datagram on the transfer's socket that is not TFTP. */
  malformed(): void;
  /** A TFTP packet that has no place in a read transfer (a DATA, a request). */
  unexpected(): void;
}

/** Everything a transfer starts with. */
export interface TransferRunInit {
  /** `address:port` of the client: the server's key for its transfers. */
  readonly key: string;
  readonly client: TftpClient;
  readonly file: string;
  /** The transfer's own socket (its TID), connected to the client; the engine closes it. */
  readonly socket: TransferSocket;
  /** The bytes; the engine closes it. */
  readonly source: BlockSource;
  readonly startedAtMs: number;
  readonly config: TransferConfig;
  readonly ignoredOptions: readonly IgnoredOption[];
  /** Hand the sending phase to the addon's transfer thread when the socket has one (default true). */
  readonly transferThread?: boolean;
}

/**
 * One transfer in progress, whichever engine runs it.
 *
 * Contract: after {@link start} the engine sends the OACK (or the first window) and from then
 * on answers the client by itself; it calls `host.emit` with the `oack` event (when options
 * were negotiated) and exactly one `done` or `error`, then `host.finished` once, and closes its
 * socket and source. Duplicate ACKs never cause a send; only the timer retransmits, at most
 * `config.maxRetries` times in a row; an RTT sample comes only from a window sent once.
 */
export interface TransferEngine {
  readonly key: string;
  readonly client: TftpClient;
  /** The file served (root-relative, normalized). */
  readonly file: string;
  readonly kind: TransferEngineKind;
  /** The reducer's state as of the last event decided on the event loop (final once finished). */
  readonly state: TransferState;
  /** Times the sending phase went to the transfer thread (always 0 for `event-loop`). */
  readonly handOvers: number;
  /** Sends the OACK or the first window. */
  start(): void;
  /**
   * The same client asked for another file: if this transfer's final block is already out, it
   * ends done and unconfirmed (the `moved-on` event of `transfer.ts`); otherwise nothing changes.
   */
  clientMovedOn(): void;
  /** Ends the transfer from the server side, telling the client with ERROR 0; resolves once ended. */
  abort(reason: string): Promise<void>;
  /** Bytes the client has acknowledged so far. */
  bytesAcknowledged(): number;
  /** A snapshot for the server's `stats()`. */
  metrics(): TftpTransferMetrics;
}

/**
 * The engine for `init`: `thread` when the socket can hand transfers to the addon's thread and
 * `init.transferThread` is not false, else `event-loop`.
 */
export function createTransferEngine(host: TransferHost, init: TransferRunInit): TransferEngine {
  return init.transferThread !== false && init.socket.native ? new ThreadedTransfer(host, init) : new EventLoopTransfer(host, init);
}
