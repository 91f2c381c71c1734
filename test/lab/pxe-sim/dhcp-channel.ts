/**
 * @module One DHCP client socket shared by every simulated client of a process: bound to
 * `0.0.0.0:68` with broadcast on (firmware has no address yet, so it sends from 0.0.0.0 to
 * 255.255.255.255, RFC 2131 §4.1) and `SO_REUSEADDR`, so several client processes in one
 * namespace each get a copy of every broadcast reply. Replies are routed to the client waiting
 * on their `xid` and `chaddr`; everything else (other processes' clients, our own broadcasts
 * looping back, garbage) is counted and dropped. The namespace needs a route for the limited
 * broadcast (`255.255.255.255/32 dev eth0`) since its interface has no address.
 */
import { createSocket, type Socket } from 'node:dgram';
import { decodeDhcpPacket } from '../../../bootsvc/dhcp/packet.js';
import { viewReply, type DhcpReplyView } from './dhcp-messages.js';

/** Counters of a {@link DhcpChannel}. */
export interface DhcpChannelStats {
  sent: number;
  received: number;
  /** Replies for no waiting client of this process (another process's, or late). */
  unmatched: number;
  /** Datagrams that did not decode as DHCP. */
  malformed: number;
}

type Waiter = (reply: DhcpReplyView) => void;

/** The shared socket (see the module comment). Create with {@link openDhcpChannel}; `close()` when done. */
export class DhcpChannel {
  readonly #socket: Socket;
  readonly #waiters = new Map<number, { mac: string; onReply: Waiter }>();
  readonly #stats: DhcpChannelStats = { sent: 0, received: 0, unmatched: 0, malformed: 0 };
  readonly #serverPort: number;

  constructor(socket: Socket, serverPort: number) {
    this.#socket = socket;
    this.#serverPort = serverPort;
    socket.on('message', (bytes) => {
      this.#stats.received++;
      let reply: DhcpReplyView | undefined;
      try {
        reply = viewReply(decodeDhcpPacket(bytes));
      } catch {
        this.#stats.malformed++;
        return;
      }
      if (reply === undefined) return; // a BOOTREQUEST: our own or a neighbour's broadcast
      const waiter = this.#waiters.get(reply.xid);
      if (waiter?.mac !== reply.mac) {
        this.#stats.unmatched++;
        return;
      }
      waiter.onReply(reply);
    });
  }

  /** Routes replies with `xid` and chaddr `mac` to `onReply` until the returned function is called. */
  listen(xid: number, mac: string, onReply: Waiter): () => void {
    if (this.#waiters.has(xid)) throw new Error(`xid ${xid.toString(16)} is already waiting`);
    this.#waiters.set(xid, { mac, onReply });
    return () => {
      this.#waiters.delete(xid);
    };
  }

  /** Broadcasts `bytes` to the DHCP server port. */
  broadcast(bytes: Uint8Array): Promise<void> {
    this.#stats.sent++;
    return new Promise((resolve, reject) => {
      this.#socket.send(bytes, this.#serverPort, '255.255.255.255', (err) => {
        if (err) reject(err);
        else resolve();
      });
    });
  }

  /** A copy of the counters. */
  stats(): DhcpChannelStats {
    return { ...this.#stats };
  }

  /** Closes the socket. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#socket.close(() => { resolve(); });
    });
  }
}

/** Opens the shared socket on `0.0.0.0:clientPort` (default 68; tests may use other ports). */
export async function openDhcpChannel(options: { clientPort?: number; serverPort?: number } = {}): Promise<DhcpChannel> {
  const socket = createSocket({ type: 'udp4', reuseAddr: true, recvBufferSize: 4 << 20 });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(options.clientPort ?? 68, '0.0.0.0', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  socket.setBroadcast(true);
  socket.on('error', () => undefined); // an ICMP error on a send is not a client failure; timeouts decide
  return new DhcpChannel(socket, options.serverPort ?? 67);
}
