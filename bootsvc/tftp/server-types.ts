/**
 * @module Types the TFTP server shares with its callers: the client address, the flight-recorder
 * events and the metrics returned by `stats()`.
 * @pure
 */
import type { OpenFileCacheStats } from '../http/open-file-cache.js';
import type { IgnoredOption } from './options.js';
import type { TftpOptionPair } from './packet.js';
import type { TransferCounters, TransferPhase } from './transfer.js';

/** The UDP source of a request. */
export interface TftpClient {
  readonly address: string;
  readonly port: number;
}

/** Who ended a failed request or transfer. */
export type TftpErrorOrigin = 'server' | 'client' | 'timeout' | 'unreachable';

/**
 * Flight-recorder events, in the order they happen for one request: `request`, then `oack`
 * (only when options were negotiated), then exactly one of `done` or `error`. `busy` and
 * `server-error` stand alone.
 */
export type TftpEvent =
  | {
      readonly type: 'request';
      readonly atMs: number;
      readonly client: TftpClient;
      /** The name as the client sent it. */
      readonly file: string;
      readonly kind: 'rrq' | 'wrq';
      readonly mode: string;
      readonly options: readonly TftpOptionPair[];
    }
  | {
      readonly type: 'oack';
      readonly atMs: number;
      readonly client: TftpClient;
      readonly file: string;
      /** The options granted, as sent in the OACK. */
      readonly options: readonly TftpOptionPair[];
      /** Options the server left out, with the reason. */
      readonly ignoredOptions: readonly IgnoredOption[];
    }
  | {
      readonly type: 'done';
      readonly atMs: number;
      readonly client: TftpClient;
      readonly file: string;
      readonly bytes: number;
      /**
       * `false` when the final block went out but its ACK never arrived and the client then
       * went silent or closed its port: RFC 1350 §6 lets a client leave after its final ACK,
       * which may be lost, so the file was most likely received.
       */
      readonly confirmed: boolean;
      readonly durationMs: number;
      readonly blockSize: number;
      readonly windowSize: number;
      readonly retransmittedPackets: number;
      readonly duplicateAcks: number;
      readonly timeouts: number;
    }
  | {
      readonly type: 'error';
      readonly atMs: number;
      readonly client: TftpClient;
      readonly file: string;
      readonly origin: TftpErrorOrigin;
      /** The ERROR code sent (origin `server`) or received (origin `client`). */
      readonly errorCode?: number;
      /** Human-readable, e.g. `aborted at block 17 by the client: error 0 "cancelled"`. */
      readonly message: string;
      /** First block not acknowledged, for failures during a transfer. */
      readonly atBlock?: number;
      /** Bytes acknowledged before the failure. */
      readonly bytes: number;
      readonly durationMs: number;
      readonly blockSize?: number;
      readonly windowSize?: number;
    }
  | { readonly type: 'busy'; readonly atMs: number; readonly client: TftpClient; readonly file: string; readonly activeTransfers: number }
  | { readonly type: 'server-error'; readonly atMs: number; readonly message: string };

/** One transfer in progress. */
export interface TftpTransferMetrics {
  readonly client: TftpClient;
  readonly file: string;
  readonly startedAtMs: number;
  readonly phase: TransferPhase;
  readonly sizeBytes: number;
  readonly bytesAcknowledged: number;
  /** Bytes of the file held in memory for this transfer (read-ahead and the unacknowledged window). */
  readonly bufferedBytes: number;
  readonly blockSize: number;
  readonly windowSize: number;
  readonly counters: TransferCounters;
  /** True while the addon's transfer thread runs the sending phase (`transfer-pump.ts`). */
  readonly onTransferThread: boolean;
}

/** Server counters since start (finished transfers) plus the transfers in progress. */
export interface TftpServerStats {
  /** Well-formed RRQ/WRQ datagrams received on the listening port. */
  readonly requests: number;
  readonly activeTransfers: number;
  /** Transfers that ended done, confirmed or not. */
  readonly completedTransfers: number;
  /** Of those, the ones whose final ACK never arrived. */
  readonly unconfirmedTransfers: number;
  readonly failedTransfers: number;
  /** Requests answered with an ERROR other than "file not found". */
  readonly refusedRequests: number;
  readonly notFound: number;
  /** Datagrams that failed to decode (listening and transfer sockets), dropped. */
  readonly malformedPackets: number;
  /** Well-formed datagrams that make no sense where they arrived (an ACK on port 69), dropped. */
  readonly unexpectedPackets: number;
  /** Requests dropped because `maxTransfers` were running. */
  readonly busyDrops: number;
  /** Retransmitted requests of a transfer already running, ignored. */
  readonly duplicateRequests: number;
  /** Bytes acknowledged by clients in finished transfers. */
  readonly bytesSent: number;
  readonly retransmittedPackets: number;
  readonly duplicateAcks: number;
  readonly timeouts: number;
  /** Finished transfers whose sending phase ran on the addon's transfer thread. */
  readonly threadedTransfers: number;
  /** The chunk cache shared by transfers: bytes and chunks held, chunk requests served from memory, disk reads. */
  readonly sharedChunks: { bytes: number; chunks: number; hits: number; reads: number };
  /** The open-file cache: files held open now, descriptors open, requests served without opening, opens, full checks. */
  readonly openFiles: OpenFileCacheStats;
  readonly transfers: readonly TftpTransferMetrics[];
}
