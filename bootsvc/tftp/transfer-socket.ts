/**
 * @module The socket of one TFTP transfer (its TID, RFC 1350 §4): bound to the listening
 * address, connected to the client. Two implementations behind one interface:
 *
 * - **native** (`native/udp-bind`'s `openConnected`, Linux, built by `npm run build:native`):
 *   a window of DATA goes out in one system call — `sendmsg(2)` with UDP segmentation offload
 *   (`UDP_SEGMENT`), or `sendmmsg(2)` where the route cannot segment — each datagram gathered
 *   from a 4-byte header and a view of the file chunk (no copy, no allocation per block);
 *   ACKs arrive up to 16 per
 *   `recvmmsg(2)` into a fixed buffer, with no per-datagram allocation. Node's dgram pays a
 *   JS/libuv round and a `sendmsg` per datagram and a 64 KiB allocation per received ACK, which
 *   was most of the server's CPU per block (docs/PERFORMANCE.md, TFTP).
 * - **dgram** (the fallback when the addon is missing or not wanted): `node:dgram`, one
 *   `send` per datagram.
 *
 * Either way a well-formed ACK is handed over as its block number (the packet that arrives
 * thousands of times a second), anything else as bytes to decode, and an ICMP port unreachable
 * from the client (ECONNREFUSED on the connected socket) as `unreachable`.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isPumpAddon, startPump, type PumpReturn, type PumpStartOptions, type PumpedTransfer } from './transfer-pump.js';

/** Where a transfer's socket reports what arrives. */
export interface TransferSocketHandlers {
  /** A well-formed ACK (opcode 4, at least 4 bytes) with its 16-bit block number. */
  ack(block: number): void;
  /** Any other datagram; `bytes` is only valid during the call (copy what you keep). */
  datagram(bytes: Buffer): void;
  /** The client's port answered ICMP port unreachable: it is gone. */
  unreachable(): void;
}

/** One transfer's connected socket (see the module comment). */
export interface TransferSocket {
  /** True for the addon's socket (batched sends), false for dgram. */
  readonly native: boolean;
  /**
   * True when buffers passed to {@link sendPairs} may be changed as soon as it returns (the
   * kernel copied them); false when the socket may still hold them (dgram queues on EAGAIN).
   */
  readonly reusesBuffers: boolean;
  /** Replaces the handlers (the socket is opened before its transfer exists). */
  setHandlers(handlers: TransferSocketHandlers): void;
  /** Sends one whole datagram (an OACK or an ERROR). */
  sendPacket(packet: Buffer): void;
  /**
   * Sends `count` datagrams, datagram i being `parts[2i]` followed by `parts[2i + 1]`, in as
   * few system calls as the implementation can. `segmentBytes`, when given, promises that
   * every datagram but the last is exactly that long (a run of DATA blocks): the native
   * socket then sends the run by UDP segmentation offload. Returns how many were handed to
   * the kernel: fewer when its send buffer is full (the caller treats the rest as lost; its
   * retransmission timer recovers them).
   */
  sendPairs(parts: readonly Buffer[], count: number, segmentBytes?: number): number;
  /**
   * Hands the transfer's sending phase to the addon's transfer thread (`transfer-pump.ts`): the
   * socket reports nothing to its handlers until `onReturn`. `undefined` when this socket cannot
   * (node:dgram, an addon built before the thread). Throws when the addon refuses the options.
   */
  startPump(options: PumpStartOptions, onReturn: (returned: PumpReturn) => void): PumpedTransfer | undefined;
  /** Closes the socket; idempotent. */
  close(): void;
}

const IGNORE: TransferSocketHandlers = { ack: () => undefined, datagram: () => undefined, unreachable: () => undefined };

/** Default path of the addon (`npm run build:native`), relative to this file in `dist/`. */
export const DEFAULT_NATIVE_ADDON_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../../../native/udp-bind/build/Release/udp_bind.node');

/** The addon's connected-socket handle (native/udp-bind/udp_connected.c). */
export interface ConnectedHandle {
  readonly localPort: number;
  /** 16 receive slots of 2048 bytes. */
  readonly buffer: Buffer;
  readonly lengths: Uint32Array;
}

/** The part of `udp_bind.node` this module uses (native/udp-bind/udp_connected.c). */
export interface ConnectedAddon {
  openConnected(options: {
    localAddress: string;
    remoteAddress: string;
    remotePort: number;
    onMessages: (count: number) => void;
    onError: (code: string, message: string) => void;
  }): ConnectedHandle;
  sendBatch(handle: ConnectedHandle, parts: readonly Buffer[], partsPerDatagram: number, datagrams: number, segmentBytes?: number): number;
  closeConnected(handle: ConnectedHandle): void;
}

const RECV_SLOT_BYTES = 2048;

const addons = new Map<string, ConnectedAddon | undefined>();

function isConnectedAddon(value: unknown): value is ConnectedAddon {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['openConnected', 'sendBatch', 'closeConnected'].every((name) => typeof v[name] === 'function');
}

/**
 * Loads the addon once per path; `undefined` when it is missing, fails to load (not built, not
 * Linux) or predates connected sockets. Never throws.
 */
export function loadConnectedAddon(path: string = DEFAULT_NATIVE_ADDON_PATH): ConnectedAddon | undefined {
  if (addons.has(path)) return addons.get(path);
  let addon: ConnectedAddon | undefined;
  try {
    const value: unknown = createRequire(import.meta.url)(path);
    addon = isConnectedAddon(value) ? value : undefined;
  } catch {
    addon = undefined;
  }
  addons.set(path, addon);
  return addon;
}

class NativeTransferSocket implements TransferSocket {
  readonly native = true;
  readonly reusesBuffers = true;
  private handlers: TransferSocketHandlers = IGNORE;
  private closed = false;
  private readonly handle: ConnectedHandle;
  private readonly single: Buffer[] = [];

  constructor(
    private readonly addon: ConnectedAddon,
    localAddress: string,
    remoteAddress: string,
    remotePort: number,
  ) {
    this.handle = addon.openConnected({
      localAddress,
      remoteAddress,
      remotePort,
      onMessages: (count) => {
        this.onMessages(count);
      },
      onError: (code) => {
        if (code === 'ECONNREFUSED' && !this.closed) this.handlers.unreachable();
      },
    });
  }

  setHandlers(handlers: TransferSocketHandlers): void {
    this.handlers = handlers;
  }

  sendPacket(packet: Buffer): void {
    this.single[0] = packet;
    this.sendBatch(this.single, 1, 1);
  }

  sendPairs(parts: readonly Buffer[], count: number, segmentBytes?: number): number {
    return this.sendBatch(parts, 2, count, segmentBytes);
  }

  startPump(options: PumpStartOptions, onReturn: (returned: PumpReturn) => void): PumpedTransfer | undefined {
    if (this.closed || !isPumpAddon(this.addon)) return undefined;
    return startPump(this.addon, this.handle, options, onReturn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.addon.closeConnected(this.handle);
  }

  private sendBatch(parts: readonly Buffer[], per: number, count: number, segmentBytes?: number): number {
    if (this.closed || count === 0) return 0;
    try {
      return this.addon.sendBatch(this.handle, parts, per, count, segmentBytes);
    } catch (err) {
      // A pending ICMP error surfaces on the next send too; report it after the caller's step.
      if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
        queueMicrotask(() => {
          if (!this.closed) this.handlers.unreachable();
        });
      }
      return 0;
    }
  }

  private onMessages(count: number): void {
    const { buffer, lengths } = this.handle;
    for (let i = 0; i < count && !this.closed; i++) {
      const at = i * RECV_SLOT_BYTES;
      const length = lengths[i] ?? 0;
      if (length >= 4 && buffer[at] === 0 && buffer[at + 1] === 4) this.handlers.ack(buffer.readUInt16BE(at + 2));
      else this.handlers.datagram(buffer.subarray(at, at + Math.min(length, RECV_SLOT_BYTES)));
    }
  }
}

class DgramTransferSocket implements TransferSocket {
  readonly native = false;
  readonly reusesBuffers = false;
  private handlers: TransferSocketHandlers = IGNORE;
  private closed = false;

  constructor(private readonly socket: Socket) {
    socket.removeAllListeners('error');
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A connected UDP socket reports the client's ICMP port unreachable as ECONNREFUSED.
      if (err.code === 'ECONNREFUSED' && !this.closed) this.handlers.unreachable();
    });
    socket.on('message', (bytes) => {
      if (bytes.length >= 4 && bytes[0] === 0 && bytes[1] === 4) this.handlers.ack(bytes.readUInt16BE(2));
      else this.handlers.datagram(bytes);
    });
  }

  setHandlers(handlers: TransferSocketHandlers): void {
    this.handlers = handlers;
  }

  sendPacket(packet: Buffer): void {
    this.send(packet);
  }

  startPump(): undefined {
    return undefined;
  }

  sendPairs(parts: readonly Buffer[], count: number): number {
    for (let i = 0; i < count; i++) {
      const header = parts[2 * i];
      const data = parts[2 * i + 1];
      if (header !== undefined && data !== undefined) this.send([header, data]);
    }
    return count;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.socket.close();
    } catch {
      // Already closed.
    }
  }

  private send(packet: Buffer | Buffer[]): void {
    if (this.closed) return;
    try {
      this.socket.send(packet);
    } catch {
      // The socket is closing; the timer or the finish path handles the rest.
    }
  }
}

function bindSocket(socket: Socket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(err);
    };
    socket.once('error', onError);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

function connectSocket(socket: Socket, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.connect(port, address, (err?: Error) => {
      if (err) reject(err);
      else resolve();
    });
  });
}

/**
 * Opens a dgram socket bound to `localAddress` (port 0) and connected to the client; for
 * request-stage errors, and for transfers when the addon is not used.
 */
export async function openDgramSocket(localAddress: string, remoteAddress: string, remotePort: number): Promise<Socket> {
  const socket = createSocket({ type: isIP(localAddress) === 6 ? 'udp6' : 'udp4' });
  socket.on('error', () => undefined); // replaced by the transfer's own listener once it runs
  try {
    await bindSocket(socket, localAddress, 0);
    await connectSocket(socket, remoteAddress, remotePort);
  } catch (err) {
    try {
      socket.close();
    } catch {
      // Never bound.
    }
    throw err;
  }
  return socket;
}

/**
 * Opens a transfer's socket: the addon's when `addon` is given and both addresses are IP
 * literals of one family, else — or when the addon refuses them (an IPv6 zone such as
 * `fe80::1%eth0`, which it does not parse) — dgram. Rejects when the address cannot be bound
 * or connected.
 */
export async function openTransferSocket(addon: ConnectedAddon | undefined, localAddress: string, remoteAddress: string, remotePort: number): Promise<TransferSocket> {
  const family = isIP(localAddress);
  if (addon !== undefined && family !== 0 && family === isIP(remoteAddress)) {
    try {
      return new NativeTransferSocket(addon, localAddress, remoteAddress, remotePort);
    } catch {
      // dgram below reports the failure in its own words if it is real.
    }
  }
  return new DgramTransferSocket(await openDgramSocket(localAddress, remoteAddress, remotePort));
}
