/**
 * The table of transfer cases both TFTP engines must pass (transfer-engine.ts): each case is a
 * request's options, a file size and a script of what the client receives and sends, then the
 * outcome. `transfer-cases.test.ts` plays it against the `event-loop` and the `thread` engine
 * over a loopback socket, as a client would see them.
 *
 * Timing: cases where the client must answer between two timer firings use a fixed timeout of
 * 600 ms (RFC 2349 style: no adaptation, no backoff) or longer; cases where nothing is answered
 * use short ones, since the count of retransmissions then does not depend on how fast the test
 * runs. Where a case waits for silence it waits 150 ms.
 */
import type { TftpOptionPair } from '../../../../bootsvc/tftp/packet.js';
import type { TransferSettings } from '../../../../bootsvc/tftp/request-handler.js';
import type { TransferCounters } from '../../../../bootsvc/tftp/transfer.js';

/** One step of the client's script. */
export type CaseStep =
  /**
   * The next datagrams from the server: DATA block numbers as on the wire, or an OACK with
   * exactly these options; with `gapMs`, the first of them arrives at least that long after the
   * datagram before it (a retransmission timeout; only a lower bound holds on a loaded machine).
   */
  | { readonly expect: readonly (number | { readonly oack: Readonly<Record<string, string>> })[]; readonly gapMs?: number }
  | { readonly ack: number }
  | { readonly error: number; readonly message: string }
  /** The same client sends another request (the server calls `clientMovedOn`). */
  | { readonly movedOn: true }
  /** Nothing arrives for a while. */
  | { readonly quiet: true }
  /** The client closes its socket: the server's next datagram draws ICMP port unreachable. */
  | { readonly close: true }
  /** ACK the last block of each window until the final (short) block; `blocks` DATA expected in all. */
  | { readonly drain: { readonly window: number; readonly blocks: number } };

/** How the transfer ends. */
export interface CaseOutcome {
  readonly ok: boolean;
  /** For `ok`: whether the final ACK arrived. */
  readonly confirmed?: boolean;
  /** For a failure: the event's origin and message. */
  readonly origin?: 'client' | 'timeout' | 'unreachable' | 'server';
  readonly message?: RegExp;
  readonly counters?: Partial<TransferCounters>;
  /** Whether a round trip was measured (Karn's rule: not from a retransmitted window). */
  readonly rtt?: 'measured' | 'none';
}

/** One case of the table. */
export interface TransferCase {
  readonly sizeBytes: number;
  readonly options?: readonly TftpOptionPair[];
  readonly settings?: Partial<TransferSettings>;
  readonly script: readonly CaseStep[];
  readonly outcome: CaseOutcome;
}

const opt = (name: string, value: string): TftpOptionPair => ({ name, value });
/** Fixed timeout (as a client's RFC 2349 `timeout` sets it). */
const fixed = (ms: number, maxRetries = 8): Partial<TransferSettings> => ({ timeoutMs: ms, minTimeoutMs: ms, maxTimeoutMs: ms, maxRetries });
const SLOW = fixed(5000);
const range = (first: number, last: number): number[] => Array.from({ length: last - first + 1 }, (_, i) => first + i);

export const transferCases: Readonly<Record<string, TransferCase>> = {
  'windowsize 1 (plain RFC 1350, no options): block 1 at once, the short block ends it': {
    sizeBytes: 1100, settings: SLOW,
    script: [{ expect: [1] }, { ack: 1 }, { expect: [2] }, { ack: 2 }, { expect: [3] }, { ack: 3 }],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 3, retransmittedPackets: 0, duplicateAcks: 0, timeouts: 0 }, rtt: 'measured' },
  },
  'windowsize 4 after the OACK (RFC 7440): the ACK of a window\'s last block opens the next; a multiple of blksize ends with an empty block': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 4 },
      { expect: range(5, 8) }, { ack: 8 }, { expect: range(9, 11) }, { ack: 11 },
    ],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 11, retransmittedPackets: 0 } },
  },
  'windowsize 16': {
    sizeBytes: 64 * 32 + 10, options: [opt('blksize', '64'), opt('windowsize', '16')], settings: SLOW,
    script: [{ expect: [{ oack: { blksize: '64', windowsize: '16' } }] }, { ack: 0 }, { expect: range(1, 16) }, { ack: 16 }, { expect: range(17, 32) }, { ack: 32 }, { expect: [33] }, { ack: 33 }],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 33, retransmittedPackets: 0 } },
  },
  'duplicate ACKs are counted and never answered (RFC 1123 §4.2.3.1)': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 0 }, { ack: 0 }, { quiet: true },
      { ack: 4 }, { expect: range(5, 8) }, { ack: 4 }, { quiet: true }, { ack: 8 }, { expect: range(9, 11) }, { ack: 11 },
    ],
    outcome: { ok: true, confirmed: true, counters: { duplicateAcks: 3, retransmittedPackets: 0, dataPackets: 11 } },
  },
  'an ACK beyond what was sent is stray and ignored': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 7 }, { ack: 65535 }, { quiet: true },
      { ack: 4 }, { expect: range(5, 8) }, { ack: 8 }, { expect: range(9, 11) }, { ack: 11 },
    ],
    outcome: { ok: true, confirmed: true, counters: { strayAcks: 2, retransmittedPackets: 0 } },
  },
  'a lost ACK: the timer resends the whole outstanding window': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: fixed(600),
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { expect: range(1, 4) }, { ack: 4 },
      { expect: range(5, 8) }, { ack: 8 }, { expect: range(9, 11) }, { ack: 11 },
    ],
    outcome: { ok: true, confirmed: true, counters: { timeouts: 1, retransmittedPackets: 4, dataPackets: 15 } },
  },
  'a lost DATA block: the ACK before the gap starts the next window there, resending the rest (RFC 7440 §4)': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 2 }, { expect: range(3, 6) }, { ack: 6 },
      { expect: range(7, 10) }, { ack: 10 }, { expect: [11] }, { ack: 11 },
    ],
    outcome: { ok: true, confirmed: true, counters: { retransmittedPackets: 2, dataPackets: 13, timeouts: 0 } },
  },
  "Karn's rule: the ACK of a retransmitted block is no round-trip sample": {
    sizeBytes: 700, settings: fixed(600),
    script: [{ expect: [1] }, { expect: [1] }, { ack: 1 }, { expect: [2] }, { ack: 2 }],
    outcome: { ok: true, confirmed: true, counters: { timeouts: 1, retransmittedPackets: 1 }, rtt: 'none' },
  },
  "Karn's rule, the control: the ACK of a block sent once is a sample": {
    sizeBytes: 700, settings: SLOW,
    script: [{ expect: [1] }, { ack: 1 }, { expect: [2] }, { ack: 2 }],
    outcome: { ok: true, confirmed: true, counters: { timeouts: 0, retransmittedPackets: 0 }, rtt: 'measured' },
  },
  'the final ACK lost: the final block is resent until the retries run out, then done, unconfirmed (RFC 1350 §6)': {
    sizeBytes: 700, settings: fixed(600, 2),
    script: [{ expect: [1] }, { ack: 1 }, { expect: [2] }, { expect: [2] }, { expect: [2] }],
    outcome: { ok: true, confirmed: false, counters: { timeouts: 2, retransmittedPackets: 2 } },
  },
  'the final ACK after a retransmission of the final block: done, confirmed': {
    sizeBytes: 700, settings: fixed(600),
    script: [{ expect: [1] }, { ack: 1 }, { expect: [2] }, { expect: [2] }, { ack: 2 }],
    outcome: { ok: true, confirmed: true, counters: { timeouts: 1, retransmittedPackets: 1 } },
  },
  'dallying after the last block ends when the client moves on (a new request): done, unconfirmed, nothing resent': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 4 }, { expect: range(5, 8) }, { ack: 8 },
      { expect: range(9, 11) }, { movedOn: true },
    ],
    outcome: { ok: true, confirmed: false, counters: { timeouts: 0, retransmittedPackets: 0 } },
  },
  'a new request from the client before the final block is out changes nothing': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [
      { expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { movedOn: true }, { ack: 0 }, { expect: range(1, 4) }, { movedOn: true }, { quiet: true },
      { ack: 4 }, { expect: range(5, 8) }, { ack: 8 }, { expect: range(9, 11) }, { ack: 11 },
    ],
    outcome: { ok: true, confirmed: true },
  },
  'a silent client: the block is resent maxRetries times, then the transfer fails': {
    sizeBytes: 1000, settings: fixed(80, 2),
    script: [{ expect: [1] }, { expect: [1] }, { expect: [1] }],
    outcome: { ok: false, origin: 'timeout', message: /no ACK for block 1 after 2 retransmissions/, counters: { timeouts: 2, retransmittedPackets: 2 } },
  },
  'a client silent after a window: the whole window is resent maxRetries times, then the transfer fails': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: fixed(600, 2),
    script: [{ expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 2 }, { expect: range(3, 6) }, { expect: range(3, 6) }, { expect: range(3, 6) }],
    outcome: { ok: false, origin: 'timeout', message: /no ACK for block 3 after 2 retransmissions/, counters: { timeouts: 2, retransmittedPackets: 10 } },
  },
  'before any round trip is measured the timeout is timeoutMs, doubled per retry up to maxTimeoutMs (RFC 1123 §4.2.3.2)': {
    sizeBytes: 1000, settings: { timeoutMs: 100, minTimeoutMs: 50, maxTimeoutMs: 400, maxRetries: 4 },
    script: [{ expect: [1] }, { expect: [1], gapMs: 100 }, { expect: [1], gapMs: 200 }, { expect: [1], gapMs: 400 }, { expect: [1], gapMs: 400 }],
    outcome: { ok: false, origin: 'timeout', message: /no ACK for block 1 after 4 retransmissions/, counters: { timeouts: 4, retransmittedPackets: 4 } },
  },
  'the client\'s port closes mid-transfer: ICMP port unreachable ends the transfer at once': {
    sizeBytes: 1000, settings: fixed(100, 50),
    script: [{ expect: [1] }, { close: true }],
    outcome: { ok: false, origin: 'unreachable', message: /client port unreachable at block 1/ },
  },
  'the client\'s port closes after the final block: done, unconfirmed (its final ACK was lost)': {
    sizeBytes: 700, settings: { ...fixed(600, 50) },
    script: [{ expect: [1] }, { ack: 1 }, { expect: [2] }, { close: true }],
    outcome: { ok: true, confirmed: false },
  },
  'a lost OACK is resent by the timer; a silent client fails at the OACK': {
    sizeBytes: 1000, options: [opt('tsize', '0')], settings: fixed(80, 2),
    script: [{ expect: [{ oack: { tsize: '1000' } }] }, { expect: [{ oack: { tsize: '1000' } }] }, { expect: [{ oack: { tsize: '1000' } }] }],
    outcome: { ok: false, origin: 'timeout', message: /no ACK for the OACK after 2 retransmissions/ },
  },
  'OACK refused with ERROR 8 (RFC 2347): the transfer ends, nothing more is sent': {
    sizeBytes: 1000, options: [opt('blksize', '1468'), opt('tsize', '0')], settings: SLOW,
    script: [{ expect: [{ oack: { blksize: '1468', tsize: '1000' } }] }, { error: 8, message: 'bad options' }, { quiet: true }],
    outcome: { ok: false, origin: 'client', message: /aborted after the OACK by the client: error 8 "bad options"/ },
  },
  'a client ERROR in the middle of a window aborts the transfer at its block': {
    sizeBytes: 1000, options: [opt('blksize', '100'), opt('windowsize', '4')], settings: SLOW,
    script: [{ expect: [{ oack: { blksize: '100', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 2 }, { expect: range(3, 6) }, { error: 0, message: 'user cancelled' }, { quiet: true }],
    outcome: { ok: false, origin: 'client', message: /aborted at block 3 by the client: error 0 "user cancelled"/ },
  },
  'option bounds: blksize capped at the server maximum, tsize answered with the size, timeout echoed, unknown and out-of-range options left out, client order kept': {
    sizeBytes: 3000, settings: { ...SLOW, maxBlockSize: 1468 },
    options: [opt('timeout', '5'), opt('blksize', '65464'), opt('foo', '1'), opt('windowsize', '0'), opt('tsize', '0')],
    script: [{ expect: [{ oack: { timeout: '5', blksize: '1468', tsize: '3000' } }] }, { ack: 0 }, { expect: [1] }, { ack: 1 }, { expect: [2] }, { ack: 2 }, { expect: [3] }, { ack: 3 }],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 3 } },
  },
  'option bounds: windowsize capped by the window byte budget; timeout 0 not honoured': {
    sizeBytes: 8192 * 12, settings: { ...SLOW, maxWindowBytes: 4 * 8192 },
    options: [opt('blksize', '8192'), opt('windowsize', '16'), opt('timeout', '0')],
    script: [
      { expect: [{ oack: { blksize: '8192', windowsize: '4' } }] }, { ack: 0 }, { expect: range(1, 4) }, { ack: 4 }, { expect: range(5, 8) }, { ack: 8 },
      { expect: range(9, 12) }, { ack: 12 }, { expect: [13] }, { ack: 13 },
    ],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 13 } },
  },
  'options the server honours none of: no OACK, a plain transfer at 512 bytes': {
    sizeBytes: 600, settings: SLOW, options: [opt('blksize', '7'), opt('timeout', '256'), opt('multicast', '')],
    script: [{ expect: [1] }, { ack: 1 }, { expect: [2] }, { ack: 2 }],
    outcome: { ok: true, confirmed: true },
  },
  'an empty file is one empty block': {
    sizeBytes: 0, settings: SLOW,
    script: [{ expect: [1] }, { ack: 1 }],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 1 } },
  },
  'block numbers roll over from 65535 to 0, and the ACK of wire block 0 is block 65536': {
    sizeBytes: 8 * 65_540 + 3, settings: SLOW, options: [opt('blksize', '8'), opt('windowsize', '64')],
    script: [{ expect: [{ oack: { blksize: '8', windowsize: '64' } }] }, { ack: 0 }, { drain: { window: 64, blocks: 65_541 } }],
    outcome: { ok: true, confirmed: true, counters: { dataPackets: 65_541, retransmittedPackets: 0 } },
  },
};
