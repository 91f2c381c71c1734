/**
 * @module A TFTP read as PXE firmware does it: RRQ in octet mode with `blksize` (RFC 2348),
 * `tsize` 0 (RFC 2349) and `windowsize` (RFC 7440) from the leased address, then DATA from the
 * server's transfer port (its TID, RFC 1350 §4) acknowledged once per window — the last block
 * of a full window, or, after a gap, the last block received in order so the server resends
 * from there (RFC 7440 §4) — and the short final block acknowledged and the transfer done. A
 * server that answers the RRQ with DATA instead of an OACK gets plain RFC 1350 lock-step (512
 * bytes, window 1). With nothing heard for `timeoutMs` the client sends its last packet again,
 * at most `retries` times in a row. Blocks are counted past 65535 (wrap to 0, as servers
 * agreeing on rollover do). The data is counted, not kept.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { decodeTftpPacket, encodeAckPacket, encodeErrorPacket, encodeTftpRequest, type TftpOptionPair } from '../../../bootsvc/tftp/packet.js';

/** What to fetch, from where. */
export interface TftpFetchRequest {
  server: string;
  port?: number;
  file: string;
  /** Local address to send from (the leased address). */
  localAddress: string;
  blksize: number;
  /** 1: send no windowsize option. */
  windowsize: number;
  timeoutMs: number;
  retries: number;
  /** Overall limit on the transfer. */
  deadlineMs: number;
}

/** A finished transfer. */
export interface TftpFetchResult {
  bytes: number;
  /** `tsize` from the OACK, if the server sent one. */
  tsize?: number;
  blockSize: number;
  windowSize: number;
  /** Packets sent again after a timeout (RRQ, ACK). */
  retransmissions: number;
  /** ACKs sent early because a block was missing or out of order. */
  gapAcks: number;
}

/** Why a TFTP read failed. */
export class TftpFetchError extends Error {
  constructor(message: string, readonly retransmissions: number, readonly bytes: number) {
    super(message);
    this.name = 'TftpFetchError';
  }
}

function optionValue(options: readonly TftpOptionPair[], name: string): number | undefined {
  const v = options.find((o) => o.name === name)?.value;
  return v === undefined || !/^\d+$/.test(v) ? undefined : Number(v);
}

/** Reads `file` (see the module comment); rejects with {@link TftpFetchError}. */
export function fetchTftp(q: TftpFetchRequest): Promise<TftpFetchResult> {
  const socket = createSocket('udp4');
  const options: TftpOptionPair[] = [
    { name: 'blksize', value: String(q.blksize) },
    { name: 'tsize', value: '0' },
    ...(q.windowsize > 1 ? [{ name: 'windowsize', value: String(q.windowsize) }] : []),
  ];
  const rrq = encodeTftpRequest('rrq', q.file, 'octet', options);
  return new Promise<TftpFetchResult>((resolve, reject) => {
    let peerPort: number | undefined;
    let blockSize = 512;
    let windowSize = 1;
    let tsize: number | undefined;
    /** Blocks received in order so far (block numbers on the wire are this + 1, mod 65536). */
    let received = 0;
    let bytes = 0;
    let lastAcked = 0;
    let lastSent: Buffer = rrq;
    let lastSentToRequestPort = true;
    let retransmissions = 0;
    let gapAcks = 0;
    let silentRounds = 0;
    let gapAcked = false;
    let done = false;
    /** Set once the final block is in: later packets (duplicates) are ignored while the last ACK leaves. */
    let ending = false;
    let timer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => { fail(`transfer not done within ${q.deadlineMs} ms (${bytes} bytes)`); }, q.deadlineMs);

    const finish = (err: Error | undefined, result?: TftpFetchResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      socket.close();
      if (err !== undefined) reject(err);
      else if (result !== undefined) resolve(result);
    };
    const fail = (message: string): void => { finish(new TftpFetchError(message, retransmissions, bytes)); };
    const send = (packet: Buffer, toRequestPort: boolean): void => {
      lastSent = packet;
      lastSentToRequestPort = toRequestPort;
      socket.send(packet, toRequestPort ? q.port ?? 69 : peerPort ?? q.port ?? 69, q.server, () => undefined);
    };
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (++silentRounds > q.retries) {
          fail(`no answer after ${q.retries} resends (${received} blocks, ${bytes} bytes in)`);
          return;
        }
        retransmissions++;
        send(lastSent, lastSentToRequestPort);
        arm();
      }, q.timeoutMs);
    };
    const ack = (blockCount: number): void => {
      lastAcked = blockCount;
      send(encodeAckPacket(blockCount & 0xffff), false);
    };

    socket.on('error', (err) => { fail(`socket: ${err.message}`); });
    socket.on('message', (msg: Buffer, from: RemoteInfo) => {
      if (done || ending || from.address !== q.server) return;
      if (peerPort === undefined) peerPort = from.port;
      else if (from.port !== peerPort) {
        // RFC 1350 §4: a packet from another TID gets an error, and the transfer goes on.
        socket.send(encodeErrorPacket(5, 'Unknown transfer ID'), from.port, from.address, () => undefined);
        return;
      }
      let packet;
      try {
        packet = decodeTftpPacket(msg);
      } catch {
        return; // malformed: ignored, the timer decides
      }
      silentRounds = 0;
      switch (packet.kind) {
        case 'error':
          fail(`server error ${packet.errorCode}: ${packet.message}`);
          return;
        case 'oack': {
          if (received > 0) return; // a duplicate OACK after data started
          blockSize = optionValue(packet.options, 'blksize') ?? 512;
          windowSize = optionValue(packet.options, 'windowsize') ?? 1;
          tsize = optionValue(packet.options, 'tsize');
          if (blockSize > q.blksize || windowSize > Math.max(1, q.windowsize)) {
            fail(`OACK grants more than asked (blksize ${blockSize}, windowsize ${windowSize})`);
            return;
          }
          ack(0);
          arm();
          return;
        }
        case 'data': {
          const expected = (received + 1) & 0xffff;
          if (packet.block !== expected) {
            // Out of order or a gap: acknowledge what arrived in order once, so the server resends from there.
            if (!gapAcked && windowSize > 1) {
              gapAcked = true;
              gapAcks++;
              ack(received);
            } else if (windowSize === 1 && packet.block === (received & 0xffff)) {
              ack(received); // lock-step: our ACK was lost, the server sent the block again
            }
            arm();
            return;
          }
          gapAcked = false;
          received++;
          bytes += packet.data.length;
          if (packet.data.length < blockSize) {
            if (tsize !== undefined && tsize !== bytes) {
              fail(`received ${bytes} bytes, the OACK said tsize ${tsize}`);
              return;
            }
            // The final ACK must leave before the socket closes (a send still queued is dropped by
            // close), or the server keeps the transfer open, retransmitting, until it gives up.
            clearTimeout(timer);
            ending = true;
            socket.send(encodeAckPacket(received & 0xffff), peerPort, q.server, () => {
              finish(undefined, { bytes, ...(tsize === undefined ? {} : { tsize }), blockSize, windowSize, retransmissions, gapAcks });
            });
            return;
          }
          if (received - lastAcked >= windowSize) ack(received);
          arm();
          return;
        }
        default:
          return; // RRQ/WRQ/ACK never come from a server
      }
    });
    socket.bind(0, q.localAddress, () => {
      send(rrq, true);
      arm();
    });
  });
}
