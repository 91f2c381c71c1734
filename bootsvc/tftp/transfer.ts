/**
 * @module One read transfer as a pure reducer, `(state, event, nowMs) → { state, actions }`
 * (docs/architecture.md, "TFTP transfer engine"); `tftp-server.ts` executes the actions (send bytes, arm the timer, finish).
 *
 * Blocks are numbered absolutely inside the reducer (1 … `totalBlocks`); on the wire the
 * number is the low 16 bits, so block 65536 goes out as 0 ("rollover to 0", as tftpd-hpa,
 * curl, atftp and iPXE expect). A file of N bytes has ⌊N / blksize⌋ + 1 blocks: the last one is
 * short, and zero bytes long when N is a multiple of blksize (RFC 1350 §6: "a data packet of
 * less than 512 bytes signals termination"; an empty file is one empty block).
 *
 * Rules, with their sources:
 * - Options (RFC 2347 §2): when the OACK is not empty it goes first and block 1 follows the
 *   client's ACK 0; an ERROR instead (code 8: options refused) ends the transfer.
 * - Windows (RFC 7440 §4): up to `windowSize` blocks are sent, then the server waits. An ACK
 *   of the window's last block opens the next window; an ACK of an earlier block of the window
 *   (the receiver saw a gap, or its own timer fired) starts the next window right after that
 *   block, resending the blocks the receiver dropped. Lock-step is window size 1.
 * - Duplicate ACKs never resend anything (RFC 1123 §4.2.3.1, the Sorcerer's Apprentice
 *   syndrome: "the sender ... must never resend the current DATA packet on receipt of a
 *   duplicate ACK"). Only the timer retransmits: the outstanding window from the first
 *   unacknowledged block, at most `maxRetries` times in a row, after which the client is
 *   considered gone and the transfer fails, freeing its resources.
 * - Timeout: a client's RFC 2349 `timeout` is used as is ("the number of seconds to wait
 *   before retransmitting"). Otherwise it adapts, as RFC 1123 §4.2.3.2 asks ("an adaptive
 *   timeout algorithm ... with exponential backoff"): `timeoutMs` until a round trip is
 *   measured, then 4 × the smoothed RTT of windows acknowledged without retransmission (Karn's
 *   rule), never below `minTimeoutMs`; doubled on each consecutive timeout up to
 *   `maxTimeoutMs`. On a LAN a lost packet costs about `minTimeoutMs` instead of a second.
 *   The backoff matters beyond politeness: atftp answers a duplicate block with one extra ACK
 *   and then ignores further duplicates, and its own 5 s timer restarts on every packet it
 *   receives — if that one ACK is lost, only a retransmission gap longer than its timer lets
 *   it re-ACK (seen in the 3 % loss test).
 * - A 16-bit ACK number `w` is mapped to the unique block `acked + ((w − acked) mod 65536)`;
 *   blocks beyond the last one sent are stray (an old ACK from before a wrap, or garbage) and
 *   ignored. The window is capped at 32768 blocks (`options.ts`) so the mapping is unique.
 * - An ERROR from the client ends the transfer ("aborted at block N by the client"); the
 *   server never answers an ERROR with an ERROR (RFC 1350 §7).
 * - The final ACK may be lost: RFC 1350 §6 lets the receiver leave right after sending it (it
 *   "may" dally), and real clients do exit at once. So once the final block has gone out, a
 *   client that stops answering — its port unreachable, or the retries run out — ends the
 *   transfer as done but unconfirmed rather than failed. The server cannot know whether the
 *   final ACK was sent, so it retransmits the final window on its timer; but when the same
 *   client has clearly moved on — it asks for another file (the next one of its boot chain) — the
 *   wait ends at once, done and unconfirmed (the `moved-on` event), so the flight recorder says
 *   the file was delivered before the next one was asked for, not up to ~29 s later when the
 *   retries run out.
 * @pure
 */
import { encodeOackPacket, type TftpOptionPair } from './packet.js';

/** Fixed parameters of one transfer, decided before it starts. */
export interface TransferConfig {
  readonly fileSizeBytes: number;
  readonly blockSize: number;
  readonly windowSize: number;
  /** Timeout before a round trip is measured; the client's RFC 2349 `timeout` when it sent one. */
  readonly timeoutMs: number;
  /** Floor of the adaptive timeout (equal to `timeoutMs` when the client fixed the timeout). */
  readonly minTimeoutMs: number;
  /** Ceiling of the backoff (equal to `timeoutMs` when the client fixed the timeout). */
  readonly maxTimeoutMs: number;
  /** Consecutive retransmissions without progress before the transfer is abandoned. */
  readonly maxRetries: number;
  /** Options to acknowledge first; empty for a plain RFC 1350 transfer. */
  readonly oack: readonly TftpOptionPair[];
}

/** Counters kept per transfer (metrics and the flight recorder). */
export interface TransferCounters {
  readonly dataPackets: number;
  readonly retransmittedPackets: number;
  readonly duplicateAcks: number;
  readonly strayAcks: number;
  readonly timeouts: number;
}

/** Where a transfer is. */
export type TransferPhase = 'idle' | 'negotiating' | 'sending' | 'done' | 'failed';

/** The reducer's state; treat as immutable. */
export interface TransferState {
  readonly config: TransferConfig;
  readonly phase: TransferPhase;
  readonly totalBlocks: number;
  /** Highest block the client has acknowledged (absolute; 0 = none yet). */
  readonly acked: number;
  /** Highest block sent so far (absolute). */
  readonly sent: number;
  /** Timeouts in a row without progress. */
  readonly retries: number;
  /** When the outstanding packets time out. */
  readonly deadlineMs: number;
  /** When the outstanding window was sent, and whether it held no retransmission (Karn's rule). */
  readonly windowSentAtMs: number;
  readonly windowClean: boolean;
  /** Smoothed round trip of clean windows, once measured. */
  readonly srttMs: number | undefined;
  readonly counters: TransferCounters;
}

/** Inputs of the reducer: the start, a client ACK or ERROR, and the timer firing. */
export type TransferEvent =
  | { readonly type: 'start' }
  | { readonly type: 'ack'; /** Block number as on the wire (16 bits). */ readonly block: number }
  | { readonly type: 'error'; readonly errorCode: number; readonly message: string }
  | { readonly type: 'timer' }
  | { /** The client's port answered with ICMP port unreachable: it is gone. */ readonly type: 'unreachable' }
  | {
      /**
       * The same client (its address) asked for another file: when the final block has gone
       * out, it consumed this file and moved on, so the wait for a final ACK ends (see the
       * module comment); earlier in the transfer the event changes nothing.
       */
      readonly type: 'moved-on';
    };

/** Why a transfer failed. */
export type TransferFailure = 'timeout' | 'client-error' | 'unreachable';

/** Outputs of the reducer, executed in order by the server. */
export type TransferAction =
  | { readonly type: 'send-packet'; readonly packet: Buffer; readonly retransmit: boolean }
  | {
      /** Send DATA for absolute blocks `first`…`last` (see {@link describeBlock}). */
      readonly type: 'send-blocks';
      readonly first: number;
      readonly last: number;
      readonly retransmit: boolean;
    }
  | { readonly type: 'arm-timer'; readonly deadlineMs: number }
  | { /** `false`: the final block went out but its ACK never came (see the module comment). */ readonly type: 'done'; readonly confirmed: boolean }
  | { readonly type: 'fail'; readonly failure: TransferFailure; readonly message: string; readonly atBlock: number; readonly errorCode?: number };

/** The reducer's result. */
export interface TransferStep {
  readonly state: TransferState;
  readonly actions: readonly TransferAction[];
}

/** Where absolute block `block` lives in the file and what number it carries on the wire. */
export interface BlockLocation {
  readonly offset: number;
  readonly length: number;
  readonly wireBlock: number;
}

/** Number of DATA blocks for a file: ⌊size / blksize⌋ + 1 (the last is short, maybe empty). */
export function countBlocks(fileSizeBytes: number, blockSize: number): number {
  return Math.floor(fileSizeBytes / blockSize) + 1;
}

/** Locates absolute block `block` (1-based) of a transfer. */
export function describeBlock(config: TransferConfig, block: number): BlockLocation {
  const offset = (block - 1) * config.blockSize;
  return { offset, length: Math.max(0, Math.min(config.blockSize, config.fileSizeBytes - offset)), wireBlock: block & 0xffff };
}

const ZERO_COUNTERS: TransferCounters = { dataPackets: 0, retransmittedPackets: 0, duplicateAcks: 0, strayAcks: 0, timeouts: 0 };

/** The state before the `start` event. */
export function createTransfer(config: TransferConfig): TransferState {
  return {
    config,
    phase: 'idle',
    totalBlocks: countBlocks(config.fileSizeBytes, config.blockSize),
    acked: 0,
    sent: 0,
    retries: 0,
    deadlineMs: 0,
    windowSentAtMs: 0,
    windowClean: false,
    srttMs: undefined,
    counters: ZERO_COUNTERS,
  };
}

/**
 * A copy of `state` with `change` applied, built as one object literal with every field in
 * the same order: the reducer runs once per ACK, and object spreads of varying shapes sent V8
 * down its slow cloning path (a measurable share of the lock-step CPU per block).
 */
function next(state: TransferState, change: Partial<TransferState>): TransferState {
  return {
    config: state.config,
    phase: change.phase ?? state.phase,
    totalBlocks: state.totalBlocks,
    acked: change.acked ?? state.acked,
    sent: change.sent ?? state.sent,
    retries: change.retries ?? state.retries,
    deadlineMs: change.deadlineMs ?? state.deadlineMs,
    windowSentAtMs: change.windowSentAtMs ?? state.windowSentAtMs,
    windowClean: change.windowClean ?? state.windowClean,
    srttMs: 'srttMs' in change ? change.srttMs : state.srttMs,
    counters: change.counters ?? state.counters,
  };
}

/** The part of a sending transfer's state that a step changes (what the addon's transfer thread hands back). */
export type SendingProgress = Pick<TransferState, 'acked' | 'sent' | 'retries' | 'deadlineMs' | 'windowSentAtMs' | 'windowClean' | 'srttMs' | 'counters'>;

/**
 * `state` (phase `sending`) with the progress made elsewhere — by the addon's transfer thread,
 * which runs the same rules (native/udp-bind/tftp_pump.c) — so the next event is decided here.
 */
export function resumeSending(state: TransferState, progress: SendingProgress): TransferState {
  return next(state, { ...progress, phase: 'sending' });
}

/** The retransmission timeout now: adaptive unless the client fixed it (min = max), backed off per retry. */
export function currentTimeoutMs(state: TransferState): number {
  const { timeoutMs, minTimeoutMs, maxTimeoutMs } = state.config;
  const measured = state.srttMs === undefined ? timeoutMs : Math.ceil(4 * state.srttMs);
  const base = Math.min(maxTimeoutMs, Math.max(minTimeoutMs, measured));
  return Math.min(maxTimeoutMs, base * 2 ** Math.min(state.retries, 30));
}

function count(state: TransferState, change: Partial<Record<keyof TransferCounters, number>>): TransferCounters {
  const c = state.counters;
  return {
    dataPackets: c.dataPackets + (change.dataPackets ?? 0),
    retransmittedPackets: c.retransmittedPackets + (change.retransmittedPackets ?? 0),
    duplicateAcks: c.duplicateAcks + (change.duplicateAcks ?? 0),
    strayAcks: c.strayAcks + (change.strayAcks ?? 0),
    timeouts: c.timeouts + (change.timeouts ?? 0),
  };
}

/**
 * Sends the window that starts after block `from` (blocks up to `sent` are retransmissions).
 * `retries` and `srttMs` are the state's values after this event.
 */
function sendWindow(state: TransferState, from: number, nowMs: number, retries: number, srttMs: number | undefined): TransferStep {
  const first = from + 1;
  const last = Math.min(from + state.config.windowSize, state.totalBlocks);
  const resent = Math.max(0, Math.min(last, state.sent) - first + 1);
  const sending = next(state, { phase: 'sending', acked: from, sent: Math.max(state.sent, last), retries, srttMs });
  const deadlineMs = nowMs + currentTimeoutMs(sending);
  const actions: TransferAction[] = [];
  if (resent > 0) actions.push({ type: 'send-blocks', first, last: first + resent - 1, retransmit: true });
  if (first + resent <= last) actions.push({ type: 'send-blocks', first: first + resent, last, retransmit: false });
  actions.push({ type: 'arm-timer', deadlineMs });
  const counters = count(state, { dataPackets: last - first + 1, retransmittedPackets: resent });
  return { state: next(sending, { deadlineMs, windowSentAtMs: nowMs, windowClean: resent === 0, counters }), actions };
}

function fail(state: TransferState, failure: TransferFailure, message: string, errorCode?: number): TransferStep {
  const atBlock = state.acked + 1;
  const action: TransferAction = { type: 'fail', failure, message, atBlock, ...(errorCode === undefined ? {} : { errorCode }) };
  return { state: next(state, { phase: 'failed' }), actions: [action] };
}

function finalBlockSent(state: TransferState): boolean {
  return state.phase === 'sending' && state.sent === state.totalBlocks;
}

function unconfirmed(state: TransferState): TransferStep {
  return { state: next(state, { phase: 'done' }), actions: [{ type: 'done', confirmed: false }] };
}

function onTimer(state: TransferState, nowMs: number): TransferStep {
  // A timer that fires early (the server keeps one timer armed and lets it run) re-arms.
  if (nowMs < state.deadlineMs) return { state, actions: [{ type: 'arm-timer', deadlineMs: state.deadlineMs }] };
  const retries = state.retries + 1;
  if (retries > state.config.maxRetries) {
    if (finalBlockSent(state)) return unconfirmed(next(state, { retries }));
    const what = state.phase === 'negotiating' ? 'the OACK' : `block ${state.acked + 1}`;
    return fail(next(state, { retries }), 'timeout', `client stopped answering: no ACK for ${what} after ${state.config.maxRetries} retransmissions`);
  }
  const timeouts = count(state, { timeouts: 1 });
  if (state.phase === 'negotiating') {
    const deadlineMs = nowMs + currentTimeoutMs(next(state, { retries }));
    return {
      state: next(state, { retries, deadlineMs, windowClean: false, counters: { ...timeouts, retransmittedPackets: timeouts.retransmittedPackets + 1 } }),
      actions: [{ type: 'send-packet', packet: encodeOackPacket(state.config.oack), retransmit: true }, { type: 'arm-timer', deadlineMs }],
    };
  }
  return sendWindow(next(state, { counters: timeouts }), state.acked, nowMs, retries, state.srttMs);
}

function onAck(state: TransferState, wireBlock: number, nowMs: number): TransferStep {
  if (state.phase === 'negotiating') {
    if (wireBlock !== 0) return { state: next(state, { counters: count(state, { strayAcks: 1 }) }), actions: [] };
    return sendWindow(state, 0, nowMs, 0, measureRoundTrip(state, nowMs));
  }
  const block = state.acked + ((wireBlock - (state.acked & 0xffff)) & 0xffff);
  if (block === state.acked) return { state: next(state, { counters: count(state, { duplicateAcks: 1 }) }), actions: [] };
  if (block > state.sent) return { state: next(state, { counters: count(state, { strayAcks: 1 }) }), actions: [] };
  if (block === state.totalBlocks) return { state: next(state, { phase: 'done', acked: block, retries: 0 }), actions: [{ type: 'done', confirmed: true }] };
  return sendWindow(state, block, nowMs, 0, measureRoundTrip(state, nowMs));
}

/** The smoothed RTT after this ACK: a new sample (gain 1/8, as RFC 6298) when the acknowledged window was clean. */
function measureRoundTrip(state: TransferState, nowMs: number): number | undefined {
  if (!state.windowClean) return state.srttMs;
  const sample = Math.max(0, nowMs - state.windowSentAtMs);
  return state.srttMs === undefined ? sample : state.srttMs + (sample - state.srttMs) / 8;
}

/**
 * Advances a transfer by one event at time `nowMs`. Events after the transfer ended are
 * ignored (no actions). See the module comment for the rules.
 */
export function reduceTransfer(state: TransferState, event: TransferEvent, nowMs: number): TransferStep {
  if (state.phase === 'done' || state.phase === 'failed') return { state, actions: [] };
  if (state.phase === 'idle') {
    if (event.type !== 'start') return { state, actions: [] };
    if (state.config.oack.length === 0) return sendWindow(state, 0, nowMs, state.retries, state.srttMs);
    const deadlineMs = nowMs + currentTimeoutMs(state);
    return {
      state: next(state, { phase: 'negotiating', deadlineMs, windowSentAtMs: nowMs, windowClean: true }),
      actions: [{ type: 'send-packet', packet: encodeOackPacket(state.config.oack), retransmit: false }, { type: 'arm-timer', deadlineMs }],
    };
  }
  switch (event.type) {
    case 'start':
      return { state, actions: [] };
    case 'ack':
      return onAck(state, event.block, nowMs);
    case 'error': {
      // After the OACK this is often deliberate: PXE ROMs take the size from tsize, abort, and ask again.
      const what = state.phase === 'negotiating' ? 'aborted after the OACK' : `aborted at block ${state.acked + 1}`;
      return fail(state, 'client-error', `${what} by the client: error ${event.errorCode} "${event.message}"`, event.errorCode);
    }
    case 'moved-on':
      return finalBlockSent(state) ? unconfirmed(state) : { state, actions: [] };
    case 'unreachable':
      if (finalBlockSent(state)) return unconfirmed(state);
      return fail(state, 'unreachable', `client port unreachable at block ${state.acked + 1}: the client went away`);
    case 'timer':
      return onTimer(state, nowMs);
  }
}
