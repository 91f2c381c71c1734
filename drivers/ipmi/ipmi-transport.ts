/**
 * @module The UDP side of one IPMI-over-LAN peer: a connected `node:dgram` socket (so the kernel
 * drops datagrams from other addresses and reports ICMP port-unreachable as ECONNREFUSED), one
 * exchange in flight at a time, retransmission after a per-attempt timeout, and the drop
 * counters. Every received datagram is judged by the waiting exchange's classifier; anything it
 * refuses (or anything arriving with nobody waiting) is counted under a reason and dropped —
 * a datagram never throws out of the socket handler. A host name goes through the drivers' one
 * resolver (host-lookup.ts) before the socket connects: a name that does not resolve rejects with
 * its `BmcHostUnresolvedError` (the name and the resolver's answer), never a socket error.
 */
import { createSocket, type Socket } from 'node:dgram';
import { resolveBmcHost, type HostLookup } from '../host-lookup.js';
import { IpmiDecodeError, type IpmiDecodeReason } from './decode-error.js';

/** Why a datagram was dropped: a decode failure, or a session-level refusal. */
export type DropReason = IpmiDecodeReason | 'sessionId' | 'replay' | 'unauthenticated' | 'unmatched';

/** Counters of one transport (and the session over it). */
export interface TransportStats {
  /** Datagrams sent, retransmissions included. */
  sent: number;
  received: number;
  retransmits: number;
  /** Exchanges that got no acceptable answer after every attempt. */
  timeouts: number;
  readonly dropped: Record<DropReason, number>;
}

/** What a classifier says about one datagram. */
export type Verdict<T> = { readonly value: T } | { readonly drop: DropReason };

/** Judges a datagram for the exchange in flight; may throw `IpmiDecodeError` (counted as its reason). */
export type Classifier<T> = (datagram: Buffer) => Verdict<T>;

/** Raised when an exchange got nothing acceptable in time. */
export class ExchangeTimeoutError extends Error {
  constructor(readonly attempts: number) {
    super(`no answer after ${attempts} attempt(s)`);
    this.name = 'ExchangeTimeoutError';
  }
}

/** Raised for socket failures: DNS, ECONNREFUSED (ICMP port unreachable), closed transport. */
export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

interface Waiter {
  readonly classify: Classifier<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

/** Creates zeroed counters. */
export function emptyStats(): TransportStats {
  return {
    sent: 0, received: 0, retransmits: 0, timeouts: 0,
    dropped: {
      truncated: 0, malformed: 0, checksum: 0, integrity: 0, padding: 0, unsupported: 0,
      sessionId: 0, replay: 0, unauthenticated: 0, unmatched: 0,
    },
  };
}

/** One UDP peer. Exchanges are serialized by the caller (IpmiSession's queue). */
export class IpmiTransport {
  readonly stats: TransportStats = emptyStats();
  #socket: Socket | undefined;
  #connecting: Promise<Socket> | undefined;
  #waiter: Waiter | undefined;
  #closed = false;

  readonly #lookup: HostLookup | undefined;
  readonly #address: string;

  /** `options.lookup` replaces the system resolver (tests); `options.address` is named in resolver errors (default `host:port`). */
  constructor(readonly host: string, readonly port: number, options: { readonly lookup?: HostLookup; readonly address?: string } = {}) {
    this.#lookup = options.lookup;
    this.#address = options.address ?? `${host}:${port}`;
  }

  /** Sends `build(attempt)` up to `attempts` times, `timeoutMs` apart, until `classify` yields a value. */
  async exchange<T>(build: (attempt: number) => Buffer, classify: Classifier<T>, timeoutMs: number, attempts: number): Promise<T> {
    const socket = await this.#connect();
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) this.stats.retransmits += 1;
      const answer = this.#await(classify, timeoutMs);
      try {
        await this.#send(socket, build(attempt));
      } catch (err) {
        this.#waiter = undefined;
        throw err;
      }
      const result = await answer;
      if (result.done) return result.value;
    }
    this.stats.timeouts += 1;
    throw new ExchangeTimeoutError(attempts);
  }

  /** Sends one datagram without waiting for anything (Close Session's best effort). */
  async sendOnly(datagram: Buffer): Promise<void> {
    await this.#send(await this.#connect(), datagram);
  }

  /** Closes the socket; a pending exchange fails. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#waiter?.reject(new TransportError('transport closed'));
    this.#waiter = undefined;
    try {
      this.#socket?.close();
    } catch {
      // already closed
    }
    this.#socket = undefined;
  }

  #await<T>(classify: Classifier<T>, timeoutMs: number): Promise<{ done: true; value: T } | { done: false }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        resolve({ done: false });
      }, timeoutMs);
      this.#waiter = {
        classify,
        resolve: (value) => { clearTimeout(timer); this.#waiter = undefined; resolve({ done: true, value: value as T }); },
        reject: (err) => { clearTimeout(timer); this.#waiter = undefined; reject(err); },
      };
    });
  }

  #send(socket: Socket, datagram: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      socket.send(datagram, (err) => {
        if (err === null) {
          this.stats.sent += 1;
          resolve();
        } else {
          reject(new TransportError(`send failed: ${err.message}`, { cause: err }));
        }
      });
    });
  }

  #connect(): Promise<Socket> {
    if (this.#closed) return Promise.reject(new TransportError('transport closed'));
    if (this.#socket !== undefined) return Promise.resolve(this.#socket);
    this.#connecting ??= this.#open().finally(() => { this.#connecting = undefined; });
    return this.#connecting;
  }

  async #open(): Promise<Socket> {
    const target = await resolveBmcHost(this.host, { address: this.#address, prefer: 4, ...(this.#lookup === undefined ? {} : { lookup: this.#lookup }) });
    if (this.#closed) throw new TransportError('transport closed');
    return new Promise<Socket>((resolve, reject) => {
      const socket = createSocket(target.family === 6 ? 'udp6' : 'udp4');
      const fail = (err: Error): void => {
        try { socket.close(); } catch { /* not open */ }
        reject(new TransportError(`cannot reach ${this.host}:${this.port}: ${err.message}`, { cause: err }));
      };
      socket.once('error', fail);
      socket.connect(this.port, target.address, () => {
        socket.off('error', fail);
        socket.on('error', (err) => { this.#onSocketError(err); });
        socket.on('message', (datagram) => { this.#onDatagram(datagram); });
        this.#socket = socket;
        resolve(socket);
      });
    });
  }

  #onSocketError(err: Error): void {
    // ECONNREFUSED on a connected UDP socket = ICMP port unreachable: nobody listens there.
    this.#waiter?.reject(new TransportError(`${this.host}:${this.port} refused: ${err.message}`, { cause: err }));
  }

  #onDatagram(datagram: Buffer): void {
    this.stats.received += 1;
    const waiter = this.#waiter;
    if (waiter === undefined) {
      this.stats.dropped.unmatched += 1;
      return;
    }
    let verdict: Verdict<unknown>;
    try {
      verdict = waiter.classify(datagram);
    } catch (err) {
      const reason: DropReason = err instanceof IpmiDecodeError ? err.reason : 'malformed';
      this.stats.dropped[reason] += 1;
      return;
    }
    if ('drop' in verdict) this.stats.dropped[verdict.drop] += 1;
    else waiter.resolve(verdict.value);
  }
}
