/**
 * A minimal TFTP read client for tests and the benchmark: RRQ with options, OACK → ACK 0,
 * RFC 7440 windows (ACK the last block of each window; on an out-of-order block re-ACK the
 * last in-order one), re-ACK on its own timeout, rollover to 0. Debian's clients do not all
 * speak windowsize (curl and tftp-hpa do not), so windowed transfers are driven by this too.
 * Also: {@link RawPeer}, a UDP socket that records what it receives, for protocol-level tests.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { decodeTftpPacket, encodeAckPacket, encodeTftpRequest, type TftpOptionPair, type TftpPacket } from '../../../../bootsvc/tftp/packet.js';

/** What a fetch returned. */
export interface FetchResult {
  data: Buffer;
  oack?: readonly TftpOptionPair[];
  error?: { code: number; message: string };
  /** DATA packets received (duplicates included). */
  packets: number;
  /** The server's transfer port (its TID). */
  serverPort?: number;
}

/** Options of {@link fetchFile}. */
export interface FetchOptions {
  options?: readonly TftpOptionPair[];
  mode?: string;
  /** Re-ACK after this much silence (default 500 ms). */
  retransmitMs?: number;
  /** Give up after this long (default 30 s). */
  deadlineMs?: number;
}

/** Reads `file` from the server at `host:port`; resolves with the bytes or the server's ERROR. */
export function fetchFile(host: string, port: number, file: string, opts: FetchOptions = {}): Promise<FetchResult> {
  const options = opts.options ?? [];
  let blockSize = 512;
  let windowSize = 1;
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const chunks: Buffer[] = [];
    let expect = 1;
    let sinceAck = 0;
    let packets = 0;
    let server: RemoteInfo | undefined;
    let lastAck: Buffer | undefined;
    let oack: readonly TftpOptionPair[] | undefined;
    let silence: NodeJS.Timeout | undefined;
    const overall = setTimeout(() => {
      finish(new Error(`fetch ${file}: no completion after ${opts.deadlineMs ?? 30_000} ms (${chunks.length} blocks)`));
    }, opts.deadlineMs ?? 30_000);
    const finish = (result: FetchResult | Error): void => {
      clearTimeout(overall);
      if (silence) clearTimeout(silence);
      socket.close();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const send = (packet: Buffer): void => {
      if (server === undefined) return;
      lastAck = packet;
      socket.send(packet, server.port, server.address);
      armSilence();
    };
    const armSilence = (): void => {
      if (silence) clearTimeout(silence);
      silence = setTimeout(() => {
        if (lastAck !== undefined && server !== undefined) socket.send(lastAck, server.port, server.address);
        armSilence();
      }, opts.retransmitMs ?? 500);
    };
    socket.on('error', (err) => {
      finish(err);
    });
    socket.on('message', (bytes, rinfo) => {
      server ??= rinfo;
      if (rinfo.port !== server.port) return;
      const packet: TftpPacket = decodeTftpPacket(bytes);
      if (packet.kind === 'error') {
        finish({ data: Buffer.concat(chunks), error: { code: packet.errorCode, message: packet.message }, packets, serverPort: server.port, ...(oack ? { oack } : {}) });
      } else if (packet.kind === 'oack') {
        oack = packet.options;
        for (const o of packet.options) {
          if (o.name === 'blksize') blockSize = Number(o.value);
          if (o.name === 'windowsize') windowSize = Number(o.value);
        }
        send(encodeAckPacket(0));
      } else if (packet.kind === 'data') {
        packets++;
        if (packet.block !== (expect & 0xffff)) {
          sinceAck = 0;
          send(encodeAckPacket((expect - 1) & 0xffff));
          return;
        }
        chunks.push(Buffer.from(packet.data));
        expect++;
        sinceAck++;
        const last = packet.data.length < blockSize;
        if (last) {
          // The final ACK must leave before the socket closes.
          const result: FetchResult = { data: Buffer.concat(chunks), packets, serverPort: server.port, ...(oack ? { oack } : {}) };
          socket.send(encodeAckPacket(packet.block), server.port, server.address, () => {
            finish(result);
          });
          return;
        }
        if (sinceAck >= windowSize) {
          sinceAck = 0;
          send(encodeAckPacket(packet.block));
        }
      }
    });
    socket.bind(0, '127.0.0.1', () => {
      socket.send(encodeTftpRequest('rrq', file, opts.mode ?? 'octet', options), port, host);
    });
  });
}

/** A UDP socket that records every datagram it receives (decoded when possible). */
export class RawPeer {
  readonly socket: Socket;
  readonly received: { packet: TftpPacket | undefined; bytes: Buffer; from: RemoteInfo }[] = [];
  private waiters: (() => void)[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('message', (bytes, from) => {
      let packet: TftpPacket | undefined;
      try {
        packet = decodeTftpPacket(bytes);
      } catch {
        packet = undefined;
      }
      this.received.push({ packet, bytes, from });
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    });
    socket.on('error', () => undefined);
  }

  /** Binds a new peer on 127.0.0.1. */
  static async open(): Promise<RawPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new RawPeer(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  send(bytes: Buffer, port: number, host = '127.0.0.1'): void {
    this.socket.send(bytes, port, host);
  }

  /** Resolves with the first received datagram (from index `from` on) matching `match`; rejects after `timeoutMs`. */
  async waitFor(match: (p: TftpPacket | undefined) => boolean, timeoutMs = 5000, from = 0): Promise<{ packet: TftpPacket | undefined; from: RemoteInfo }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.received.slice(from).find((r) => match(r.packet));
      if (hit !== undefined) return hit;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching datagram within ${timeoutMs} ms (got ${this.received.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.socket.close();
  }
}
