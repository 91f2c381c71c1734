/**
 * @module One running transfer: its TID socket, its block source, its timer and the pure
 * reducer of `transfer.ts`. Socket events become reducer events; the reducer's actions become
 * datagrams, a timer and the final flight-recorder event.
 *
 * Timer economy: the reducer moves its deadline forward on every acknowledged window, which
 * at tens of thousands of ACKs per second would churn `setTimeout`. The run keeps its timer
 * when it would fire no later than the new deadline; an early firing is handed to the reducer,
 * which re-arms for the rest.
 */
import type { Socket } from 'node:dgram';
import { isTftpDecodeError, TftpWireError } from './errors.js';
import type { IgnoredOption } from './options.js';
import { decodeTftpPacket, encodeDataHeader, encodeErrorPacket, writeDataHeader, type TftpPacket } from './packet.js';
import type { BlockSource } from './file-source.js';
import type { TftpClient, TftpErrorOrigin, TftpEvent, TftpTransferMetrics } from './server-types.js';
import { createTransfer, describeBlock, reduceTransfer, type TransferAction, type TransferConfig, type TransferEvent, type TransferState } from './transfer.js';

/** Blocks larger than this go out as header + view (Buffer's pool serves allocations up to 4 KiB). */
const ZERO_COPY_BYTES = 4096;

/** What a run needs from its server. */
export interface TransferHost {
  now(): number;
  emit(event: TftpEvent): void;
  finished(run: TransferRun, ok: boolean, confirmed: boolean): void;
  malformed(): void;
  unexpected(): void;
}

/** Everything a run starts with. */
export interface TransferRunInit {
  readonly key: string;
  readonly client: TftpClient;
  readonly file: string;
  readonly socket: Socket;
  readonly source: BlockSource;
  readonly startedAtMs: number;
  readonly config: TransferConfig;
  readonly ignoredOptions: readonly IgnoredOption[];
}

/** A transfer in progress (see the module comment). */
export class TransferRun {
  readonly key: string;
  state: TransferState;
  private readonly init: TransferRunInit;
  private timer: NodeJS.Timeout | undefined;
  private timerAtMs = 0;
  /** Block ranges waiting for the disk, in order. */
  private backlog: [number, number][] = [];
  private waitingForDisk = false;
  private ended = false;

  constructor(
    private readonly host: TransferHost,
    init: TransferRunInit,
  ) {
    this.key = init.key;
    this.init = init;
    this.state = createTransfer(init.config);
    init.socket.removeAllListeners('error');
    init.socket.on('error', (err: NodeJS.ErrnoException) => {
      // A connected UDP socket reports the client's ICMP port unreachable as ECONNREFUSED.
      if (err.code === 'ECONNREFUSED') this.dispatch({ type: 'unreachable' });
    });
    init.socket.on('message', (bytes) => {
      this.onDatagram(bytes);
    });
  }

  /** Sends the OACK or the first window. */
  start(): void {
    if (this.init.config.oack.length > 0) {
      const { client, file } = this.init;
      this.host.emit({ type: 'oack', atMs: this.host.now(), client, file, options: this.init.config.oack, ignoredOptions: this.init.ignoredOptions });
    }
    this.dispatch({ type: 'start' });
  }

  /** Ends the transfer from the server side, telling the client with ERROR 0. */
  async abort(reason: string): Promise<void> {
    if (this.ended) return;
    this.send(encodeErrorPacket(TftpWireError.notDefined, reason));
    await this.finish('server', reason, TftpWireError.notDefined);
  }

  /** Bytes the client has acknowledged so far. */
  bytesAcknowledged(): number {
    return Math.min(this.state.acked * this.init.config.blockSize, this.init.config.fileSizeBytes);
  }

  /** A snapshot for `stats()`. */
  metrics(): TftpTransferMetrics {
    const { client, file, startedAtMs, config } = this.init;
    return {
      client,
      file,
      startedAtMs,
      phase: this.state.phase,
      sizeBytes: config.fileSizeBytes,
      bytesAcknowledged: this.bytesAcknowledged(),
      bufferedBytes: this.init.source.bufferedBytes(),
      blockSize: config.blockSize,
      windowSize: config.windowSize,
      counters: this.state.counters,
    };
  }

  private onDatagram(bytes: Buffer): void {
    // Fast path for the one packet that arrives thousands of times a second: a well-formed ACK
    // (opcode 4 and a block number, exactly what decodeTftpPacket would return).
    if (bytes.length >= 4 && bytes[0] === 0 && bytes[1] === 4) {
      this.dispatch({ type: 'ack', block: bytes.readUInt16BE(2) });
      return;
    }
    let packet: TftpPacket;
    try {
      packet = decodeTftpPacket(bytes);
    } catch (err) {
      if (!isTftpDecodeError(err)) throw err;
      this.host.malformed();
      return;
    }
    if (packet.kind === 'ack') this.dispatch({ type: 'ack', block: packet.block });
    else if (packet.kind === 'error') this.dispatch({ type: 'error', errorCode: packet.errorCode, message: packet.message });
    else this.host.unexpected();
  }

  private dispatch(event: TransferEvent): void {
    if (this.ended) return;
    const before = this.state.acked;
    const step = reduceTransfer(this.state, event, this.host.now());
    this.state = step.state;
    for (const action of step.actions) this.execute(action);
    if (step.state.acked > before) this.init.source.release(describeBlock(this.init.config, step.state.acked + 1).offset);
  }

  private execute(action: TransferAction): void {
    switch (action.type) {
      case 'send-packet':
        this.send(action.packet);
        return;
      case 'send-blocks':
        this.sendBlocks(action.first, action.last);
        return;
      case 'arm-timer':
        this.arm(action.deadlineMs);
        return;
      case 'done':
        void this.finish(undefined, '', undefined, undefined, action.confirmed);
        return;
      case 'fail': {
        const origin: TftpErrorOrigin = action.failure === 'client-error' ? 'client' : action.failure;
        void this.finish(origin, action.message, action.errorCode, action.atBlock);
        return;
      }
    }
  }

  private send(packet: Buffer | Buffer[]): void {
    try {
      this.init.socket.send(packet);
    } catch {
      // The socket is closing; the timer or the finish path handles the rest.
    }
  }

  private sendBlocks(first: number, last: number): void {
    if (this.waitingForDisk) {
      this.backlog.push([first, last]);
      return;
    }
    const { config, source } = this.init;
    for (let block = first; block <= last; block++) {
      const where = describeBlock(config, block);
      if (where.length > ZERO_COPY_BYTES) {
        // Large blocks: a 4-byte header and a view of the chunk, sent as one two-part datagram,
        // instead of allocating and filling a fresh 8–64 KiB buffer per packet.
        const view = source.view(where.offset, where.length);
        if (view !== undefined) {
          this.send([encodeDataHeader(where.wireBlock), view]);
          continue;
        }
      }
      const packet = Buffer.allocUnsafe(4 + where.length);
      if (!source.copy(where.offset, where.length, packet, 4)) {
        this.waitForDisk(block, last);
        return;
      }
      writeDataHeader(packet, where.wireBlock);
      this.send(packet);
    }
  }

  private waitForDisk(first: number, last: number): void {
    this.waitingForDisk = true;
    this.backlog.unshift([first, last]);
    const from = describeBlock(this.init.config, first);
    const to = describeBlock(this.init.config, last);
    this.init.source.load(from.offset, to.offset + to.length - from.offset).then(
      () => {
        this.waitingForDisk = false;
        const ranges = this.backlog;
        this.backlog = [];
        for (const [a, b] of ranges) if (!this.ended) this.sendBlocks(a, b);
      },
      (err: unknown) => {
        const message = `read error: ${err instanceof Error ? err.message : String(err)}`;
        this.send(encodeErrorPacket(TftpWireError.notDefined, message));
        void this.finish('server', message, TftpWireError.notDefined, this.state.acked + 1);
      },
    );
  }

  private arm(deadlineMs: number): void {
    if (this.timer !== undefined && this.timerAtMs <= deadlineMs) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAtMs = deadlineMs;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.dispatch({ type: 'timer' });
      },
      Math.max(0, deadlineMs - this.host.now()),
    );
    this.timer.unref();
  }

  private async finish(origin: TftpErrorOrigin | undefined, message: string, errorCode?: number, atBlock?: number, confirmed = true): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.backlog = [];
    const { client, file, config, startedAtMs, socket, source } = this.init;
    const atMs = this.host.now();
    const c = this.state.counters;
    if (origin === undefined) {
      this.host.emit({
        type: 'done', atMs, client, file, bytes: config.fileSizeBytes, confirmed, durationMs: atMs - startedAtMs, blockSize: config.blockSize,
        windowSize: config.windowSize, retransmittedPackets: c.retransmittedPackets, duplicateAcks: c.duplicateAcks, timeouts: c.timeouts,
      });
    } else {
      this.host.emit({
        type: 'error', atMs, client, file, origin, message, bytes: this.bytesAcknowledged(), durationMs: atMs - startedAtMs,
        blockSize: config.blockSize, windowSize: config.windowSize,
        ...(errorCode === undefined ? {} : { errorCode }), ...(atBlock === undefined ? {} : { atBlock }),
      });
    }
    this.host.finished(this, origin === undefined, confirmed);
    // Let queued datagrams (an ERROR just sent) leave before the socket closes.
    await new Promise<void>((resolve) => {
      setImmediate(resolve);
    });
    try {
      socket.close();
    } catch {
      // Already closed.
    }
    await source.close().catch(() => undefined);
  }
}
