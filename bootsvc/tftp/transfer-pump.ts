/**
 * @module The addon's TFTP transfer thread (`native/udp-bind/tftp_pump.c`) seen from TypeScript:
 * the shape of what goes in and comes back, and the conversion between the reducer's state
 * (`transfer.ts`, absolute times on the server's clock) and the thread's (times relative to the
 * hand-over, its own monotonic clock).
 *
 * A run hands its transfer to the thread once the outstanding window is on the wire; the thread
 * answers in-window ACKs and retransmits on its timer by the reducer's own rules, and hands back
 * — with the state it reached — the first event the reducer must decide: the final ACK, a
 * datagram that is not an ACK, the client unreachable, the timer that would exceed the retry
 * limit, a read error, or a cancel. The per-ACK work of every transfer thus leaves the event
 * loop (docs/PERFORMANCE.md, TFTP).
 */
import type { DirectBytes } from './file-source.js';
import { resumeSending, type TransferConfig, type TransferCounters, type TransferState } from './transfer.js';

/** The reducer's state as the thread takes and returns it (times relative to the hand-over or return). */
export interface PumpState extends TransferCounters {
  readonly acked: number;
  readonly sent: number;
  readonly retries: number;
  /** When the outstanding window times out, from now (negative: already due). */
  readonly deadlineInMs: number;
  readonly windowSentAgoMs: number;
  readonly windowClean: boolean;
  /** Smoothed round trip; negative when not measured yet. */
  readonly srttMs: number;
}

/** What `pumpStart` takes: the bytes, the transfer's parameters and its state. */
export type PumpStartOptions = PumpState &
  DirectBytes &
  Pick<TransferConfig, 'blockSize' | 'windowSize' | 'timeoutMs' | 'minTimeoutMs' | 'maxTimeoutMs' | 'maxRetries'> & { readonly sizeBytes: number };

/** The event the thread hands back for the reducer to decide. */
export type PumpEvent =
  | { readonly reason: 'ack'; /** As on the wire (16 bits): the final block's ACK. */ readonly block: number }
  | { readonly reason: 'datagram'; /** A copy of a datagram that is not an ACK. */ readonly bytes: Buffer }
  | { readonly reason: 'unreachable' | 'timer' | 'cancelled' }
  | { readonly reason: 'read-error'; readonly message: string }
  | { /** The thread could not take the transfer: it goes on on the event loop. */ readonly reason: 'refused' };

/** What the thread hands back: the event and the state it reached. */
export type PumpReturn = PumpEvent & PumpState;

/** A transfer on the thread. */
export interface PumpedTransfer {
  /** Acknowledged and highest sent block and counters as of the thread's last step. */
  progress(): Pick<TransferState, 'acked' | 'sent' | 'counters'>;
  /** Asks for the transfer back (`cancelled`, unless another event came first). */
  cancel(): void;
}

/** The part of `udp_bind.node` behind this module. */
export interface PumpAddon {
  pumpStart(socketHandle: object, options: PumpStartOptions, onReturn: (returned: PumpReturn) => void): object;
  pumpProgress(pump: object, out: Float64Array): void;
  pumpCancel(pump: object): void;
}

/** True when `value` has the pump functions (an addon built before them has not). */
export function isPumpAddon(value: unknown): value is PumpAddon {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['pumpStart', 'pumpProgress', 'pumpCancel'].every((name) => typeof v[name] === 'function');
}

/** The options handing `state` (phase `sending`, its window on the wire) to the thread at `nowMs`. */
export function pumpStartOptions(config: TransferConfig, state: TransferState, bytes: DirectBytes, nowMs: number): PumpStartOptions {
  const c = state.counters;
  return {
    ...bytes,
    sizeBytes: config.fileSizeBytes,
    blockSize: config.blockSize,
    windowSize: config.windowSize,
    timeoutMs: config.timeoutMs,
    minTimeoutMs: config.minTimeoutMs,
    maxTimeoutMs: config.maxTimeoutMs,
    maxRetries: config.maxRetries,
    acked: state.acked,
    sent: state.sent,
    retries: state.retries,
    deadlineInMs: state.deadlineMs - nowMs,
    windowSentAgoMs: Math.max(0, nowMs - state.windowSentAtMs),
    windowClean: state.windowClean,
    srttMs: state.srttMs ?? -1,
    dataPackets: c.dataPackets,
    retransmittedPackets: c.retransmittedPackets,
    duplicateAcks: c.duplicateAcks,
    strayAcks: c.strayAcks,
    timeouts: c.timeouts,
  };
}

/** `state` advanced to what the thread handed back, received at `nowMs`. */
export function stateAfterPump(state: TransferState, returned: PumpState, nowMs: number): TransferState {
  return resumeSending(state, {
    acked: returned.acked,
    sent: returned.sent,
    retries: returned.retries,
    deadlineMs: nowMs + returned.deadlineInMs,
    windowSentAtMs: nowMs - returned.windowSentAgoMs,
    windowClean: returned.windowClean,
    srttMs: returned.srttMs < 0 ? undefined : returned.srttMs,
    counters: {
      dataPackets: returned.dataPackets,
      retransmittedPackets: returned.retransmittedPackets,
      duplicateAcks: returned.duplicateAcks,
      strayAcks: returned.strayAcks,
      timeouts: returned.timeouts,
    },
  });
}

/** Starts a transfer on the thread over an addon socket handle (`transfer-socket.ts` calls it). */
export function startPump(addon: PumpAddon, socketHandle: object, options: PumpStartOptions, onReturn: (returned: PumpReturn) => void): PumpedTransfer {
  const pump = addon.pumpStart(socketHandle, options, onReturn);
  const out = new Float64Array(7);
  return {
    progress: () => {
      addon.pumpProgress(pump, out);
      const [acked = 0, sent = 0, dataPackets = 0, retransmittedPackets = 0, duplicateAcks = 0, strayAcks = 0, timeouts = 0] = out;
      return { acked, sent, counters: { dataPackets, retransmittedPackets, duplicateAcks, strayAcks, timeouts } };
    },
    cancel: () => {
      addon.pumpCancel(pump);
    },
  };
}
