/**
 * @module The `thread` transfer engine (`transfer-engine.ts`): the event-loop engine of
 * `transfer-run.ts`, except that once the outstanding window is on the wire the run hands the
 * sending phase to the addon's transfer thread (`transfer-pump.ts`, native/udp-bind/tftp_pump.c)
 * and takes it back for the event the reducer must decide (the final ACK, an ERROR, a timer out
 * of retries, ...). The run's own timer is off while the thread has the transfer. When the
 * thread cannot take a transfer, the transfer stays on the event loop.
 */
import { TftpWireError } from './errors.js';
import { encodeErrorPacket } from './packet.js';
import { pumpStartOptions, stateAfterPump, type PumpReturn, type PumpedTransfer } from './transfer-pump.js';
import type { TransferState } from './transfer.js';
import type { TransferEngineKind } from './transfer-engine.js';
import { EventLoopTransfer } from './transfer-run.js';

/** A transfer whose sending phase runs on the addon's transfer thread (see the module comment). */
export class ThreadedTransfer extends EventLoopTransfer {
  override readonly kind: TransferEngineKind = 'thread';
  /** The transfer thread's hold on the transfer, while it has it. */
  private pumped: PumpedTransfer | undefined;
  private pumpUsable = this.init.transferThread !== false;
  /** `takeBack` calls waiting for the thread to hand the transfer back. */
  private pumpWaiters: (() => void)[] = [];

  override clientMovedOn(): void {
    const pumped = this.pumped;
    // Only a transfer whose final block is out is ended by it: ask the thread for it back then.
    if (pumped === undefined || pumped.progress().sent < this.state.totalBlocks) {
      super.clientMovedOn();
      return;
    }
    void this.takeBack().then(() => {
      super.clientMovedOn();
    });
  }

  protected override progress(): Pick<TransferState, 'acked' | 'sent' | 'counters'> {
    return this.pumped === undefined ? this.state : this.pumped.progress();
  }

  protected override onThread(): boolean {
    return this.pumped !== undefined;
  }

  /** Gives the sending phase to the transfer thread when there is one and the window is on the wire. */
  protected override afterStep(): void {
    if (!this.pumpUsable || this.pumped !== undefined || this.ended || this.waitingForDisk || this.pumpWaiters.length > 0 || this.state.phase !== 'sending') return;
    const { config, source, socket } = this.init;
    try {
      this.pumped = socket.startPump(pumpStartOptions(config, this.state, source.direct(), this.host.now()), (returned) => {
        this.onPumpReturn(returned);
      });
    } catch {
      this.pumped = undefined;
    }
    if (this.pumped === undefined) {
      this.pumpUsable = false;
      return;
    }
    this.handOvers++;
    this.disarm();
  }

  /** Resolves once the transfer thread no longer has the transfer (asking for it back). */
  protected override takeBack(): Promise<void> {
    const pumped = this.pumped;
    if (pumped === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      this.pumpWaiters.push(resolve);
      pumped.cancel();
    });
  }

  /** The thread handed the transfer back: the reducer decides the event it could not. */
  private onPumpReturn(returned: PumpReturn): void {
    this.pumped = undefined;
    const before = this.state.acked;
    this.state = stateAfterPump(this.state, returned, this.host.now());
    if (this.state.acked > before) this.init.source.release(this.state.acked * this.init.config.blockSize);
    const waiters = this.pumpWaiters;
    this.pumpWaiters = [];
    for (const resolve of waiters) resolve();
    if (this.ended) return;
    this.arm(this.state.deadlineMs);
    switch (returned.reason) {
      case 'ack':
        this.dispatch({ type: 'ack', block: returned.block });
        return;
      case 'datagram':
        this.onDatagram(returned.bytes);
        this.afterStep();
        return;
      case 'unreachable':
      case 'timer':
        this.dispatch({ type: returned.reason });
        return;
      case 'read-error':
        this.send(encodeErrorPacket(TftpWireError.notDefined, returned.message));
        void this.finish('server', returned.message, TftpWireError.notDefined, this.state.acked + 1);
        return;
      case 'refused':
        this.pumpUsable = false;
        return;
      case 'cancelled':
        return;
    }
  }
}
