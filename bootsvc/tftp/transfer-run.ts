/**
 * @module The `event-loop` transfer engine (`transfer-engine.ts`): one running transfer — its
 * TID socket, its block source, its timer and the pure reducer of `transfer.ts`. Socket events
 * become reducer events; the reducer's actions become datagrams, a timer and the final
 * flight-recorder event. `transfer-thread.ts` extends it with the addon's transfer thread.
 *
 * Per-block economy (lock-step pays it on every round trip, docs/PERFORMANCE.md):
 * - A run of blocks goes out as header + payload pairs in one call to the socket (one
 *   segmentation-offload `sendmsg`, or `sendmmsg`, with the native socket): the payload is a
 *   view of the file chunk that holds it (a copy only for the rare block that straddles two
 *   chunks), and with the native socket the 4-byte headers are slots of one buffer allocated
 *   with the transfer, rewritten per window.
 * - Timer: the reducer moves its deadline forward on every acknowledged window, which at tens
 *   of thousands of ACKs per second would churn `setTimeout`. The run keeps its one timer when
 *   it would fire no later than the new deadline; an early firing is handed to the reducer,
 *   which re-arms for the rest, and re-arming reuses the same Timeout (`refresh`) whenever the
 *   delay is unchanged.
 */
import { TftpWireError, isTftpDecodeError } from './errors.js';
import { decodeTftpPacket, encodeErrorPacket, writeDataHeader } from './packet.js';
import type { TftpClient, TftpErrorOrigin, TftpTransferMetrics } from './server-types.js';
import { createTransfer, describeBlock, reduceTransfer, type TransferAction, type TransferEvent, type TransferState } from './transfer.js';
import type { TransferEngine, TransferEngineKind, TransferHost, TransferRunInit } from './transfer-engine.js';

/** Datagrams handed to the socket per call (and header slots kept per transfer). */
const SEND_BATCH = 64;

/** A transfer run by the reducer on the event loop (see the module comment). */
export class EventLoopTransfer implements TransferEngine {
  readonly key: string;
  readonly client: TftpClient;
  readonly file: string;
  readonly kind: TransferEngineKind = 'event-loop';
  state: TransferState;
  handOvers = 0;
  protected readonly init: TransferRunInit;
  private timer: NodeJS.Timeout | undefined;
  private timerAtMs = 0;
  /** Block ranges waiting for the disk, in order. */
  private backlog: [number, number][] = [];
  protected waitingForDisk = false;
  protected ended = false;
  /** Header + payload pairs of the datagrams being sent, reused across windows. */
  private readonly parts: Buffer[] = [];
  /** With a native socket: SEND_BATCH 4-byte DATA headers, reused. */
  private readonly headers: Buffer[];
  private timerDelayMs = -1;
  /** True while the timer is pending (after it fires, `timer` is kept for `refresh`). */
  private armed = false;

  constructor(
    protected readonly host: TransferHost,
    init: TransferRunInit,
  ) {
    this.key = init.key;
    this.client = init.client;
    this.file = init.file;
    this.init = init;
    this.state = createTransfer(init.config);
    const slots = init.socket.reusesBuffers ? Math.min(SEND_BATCH, init.config.windowSize) : 0;
    const headerBytes = Buffer.alloc(4 * slots);
    this.headers = Array.from({ length: slots }, (_, i) => headerBytes.subarray(4 * i, 4 * i + 4));
    init.socket.setHandlers({
      ack: (block) => {
        this.dispatch({ type: 'ack', block });
      },
      datagram: (bytes) => {
        this.onDatagram(bytes);
      },
      unreachable: () => {
        this.dispatch({ type: 'unreachable' });
      },
    });
  }

  start(): void {
    if (this.init.config.oack.length > 0) {
      const { client, file } = this.init;
      this.host.emit({ type: 'oack', atMs: this.host.now(), client, file, options: this.init.config.oack, ignoredOptions: this.init.ignoredOptions });
    }
    this.dispatch({ type: 'start' });
  }

  clientMovedOn(): void {
    this.dispatch({ type: 'moved-on' });
  }

  async abort(reason: string): Promise<void> {
    // The thread may hand back an event that ends the transfer before it hands back the cancel.
    await this.takeBack();
    if (this.ended) return;
    this.send(encodeErrorPacket(TftpWireError.notDefined, reason));
    await this.finish('server', reason, TftpWireError.notDefined);
  }

  bytesAcknowledged(): number {
    return this.bytesFor(this.progress().acked);
  }

  metrics(): TftpTransferMetrics {
    const { client, file, startedAtMs, config } = this.init;
    const { acked, counters } = this.progress();
    return {
      client,
      file,
      startedAtMs,
      phase: this.state.phase,
      sizeBytes: config.fileSizeBytes,
      bytesAcknowledged: this.bytesFor(acked),
      bufferedBytes: this.init.source.bufferedBytes(),
      blockSize: config.blockSize,
      windowSize: config.windowSize,
      counters,
      onTransferThread: this.onThread(),
    };
  }

  /** Acknowledged block and counters now (the thread's, while it has the transfer). */
  protected progress(): Pick<TransferState, 'acked' | 'sent' | 'counters'> {
    return this.state;
  }

  /** True while another engine part (the transfer thread) has the transfer: events wait for its return. */
  protected onThread(): boolean {
    return false;
  }

  /** Called after every step decided here, once its actions ran (the thread engine hands over). */
  protected afterStep(): void {
    // The event-loop engine keeps the transfer.
  }

  /** Resolves once the transfer is back on the event loop (at once here). */
  protected takeBack(): Promise<void> {
    return Promise.resolve();
  }

  private bytesFor(ackedBlocks: number): number {
    return Math.min(ackedBlocks * this.init.config.blockSize, this.init.config.fileSizeBytes);
  }

  /** Everything but a well-formed ACK (the socket hands those over as block numbers). */
  protected onDatagram(bytes: Buffer): void {
    let packet: ReturnType<typeof decodeTftpPacket>;
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

  protected dispatch(event: TransferEvent): void {
    if (this.ended || this.onThread()) return;
    const before = this.state.acked;
    const step = reduceTransfer(this.state, event, this.host.now());
    this.state = step.state;
    for (const action of step.actions) this.execute(action);
    if (step.state.acked > before) this.init.source.release(step.state.acked * this.init.config.blockSize);
    this.afterStep();
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

  protected send(packet: Buffer): void {
    this.init.socket.sendPacket(packet);
  }

  /**
   * Sends DATA for blocks `first`…`last` as header + payload pairs, up to SEND_BATCH per call
   * to the socket. A block whose bytes are not in memory yet waits for the disk with the rest
   * of the range (what was gathered before it goes out first).
   */
  private sendBlocks(first: number, last: number): void {
    if (this.waitingForDisk) {
      this.backlog.push([first, last]);
      return;
    }
    const { config, source, socket } = this.init;
    const parts = this.parts;
    const reuse = socket.reusesBuffers;
    // Every block but the file's last is full, and the last one ends any run it is in.
    const segment = 4 + config.blockSize;
    let count = 0;
    for (let block = first; block <= last; block++) {
      const offset = (block - 1) * config.blockSize;
      const length = Math.max(0, Math.min(config.blockSize, config.fileSizeBytes - offset));
      let payload = source.view(offset, length);
      if (payload === undefined) {
        // Straddles two chunks, or not read yet.
        const copy = Buffer.allocUnsafe(length);
        if (!source.copy(offset, length, copy, 0)) {
          if (count > 0) socket.sendPairs(parts, count, segment);
          this.waitForDisk(block, last);
          return;
        }
        payload = copy;
      }
      let header: Buffer | undefined = reuse ? this.headers[count] : undefined;
      if (header === undefined) header = Buffer.allocUnsafe(4);
      writeDataHeader(header, block & 0xffff);
      parts[2 * count] = header;
      parts[2 * count + 1] = payload;
      count++;
      if (count === SEND_BATCH || (reuse && count === this.headers.length)) {
        socket.sendPairs(parts, count, segment);
        count = 0;
      }
    }
    if (count > 0) socket.sendPairs(parts, count, segment);
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
        this.afterStep();
      },
      (err: unknown) => {
        const message = `read error: ${err instanceof Error ? err.message : String(err)}`;
        this.send(encodeErrorPacket(TftpWireError.notDefined, message));
        void this.finish('server', message, TftpWireError.notDefined, this.state.acked + 1);
      },
    );
  }

  protected disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDelayMs = -1;
    this.armed = false;
  }

  protected arm(deadlineMs: number): void {
    if (this.armed && this.timerAtMs <= deadlineMs) return;
    const delayMs = Math.max(0, deadlineMs - this.host.now());
    this.timerAtMs = deadlineMs;
    this.armed = true;
    if (this.timer !== undefined && delayMs === this.timerDelayMs) {
      this.timer.refresh();
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerDelayMs = delayMs;
    this.timer = setTimeout(() => {
      this.armed = false;
      this.dispatch({ type: 'timer' });
    }, delayMs);
    this.timer.unref();
  }

  protected async finish(origin: TftpErrorOrigin | undefined, message: string, errorCode?: number, atBlock?: number, confirmed = true): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armed = false;
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
    socket.close();
    await source.close().catch(() => undefined);
  }
}
