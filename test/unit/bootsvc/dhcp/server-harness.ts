/**
 * A DHCP server under test with fake interface-bound sockets (no root, no network): datagrams
 * are injected with `deliver()`, and everything the server sends is recorded with its route
 * (`send` = IP unicast/broadcast out of the interface, `frame` = link-layer unicast to a MAC).
 * Also an in-memory LeaseStore with knobs for latency and failures.
 */
import type { BootLookup, BootTargetQuery, Lease, LeaseStore } from '../../../../bootsvc/boot-lookup.js';
import type { BootTarget } from '../../../../bootsvc/ipxe/boot-plan.js';
import type { BoundDatagram, BoundSocket, OpenBoundSocketOptions } from '../../../../bootsvc/dhcp/bound-socket.js';
import { startDhcpServer, type DhcpServer, type DhcpServerOptions } from '../../../../bootsvc/dhcp/dhcp-server.js';
import { decodeDhcpPacket, type DhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import type { BootEvent, DhcpBootEvent } from '../../../../bootsvc/events.js';
import { encodeClientMessage, type ClientMessage } from '../../../helpers/dhcp-packets.js';

/** One transmission by the server. */
export interface Sent {
  port: number;
  kind: 'send' | 'frame';
  address: string;
  destinationPort: number;
  mac?: string;
  packet: DhcpPacket;
}

/** A fake socket: records sends; `failFrames`/`failSends` make them throw like the addon does. */
export class FakeSocket implements BoundSocket {
  readonly interfaceName = 'prov0';
  readonly interfaceIndex = 7;
  readonly port: number;
  /** What the kernel granted; tests lower it to see the start-up warning. */
  receiveBufferBytes = 1 << 20;
  /** The kernel's receive-queue overflow count, as the addon reports it. */
  drops = 0;
  closed = false;
  failFrames: string | undefined;
  failSends: string | undefined;
  readonly options: OpenBoundSocketOptions;
  readonly #sent: Sent[];
  constructor(options: OpenBoundSocketOptions, sent: Sent[]) {
    this.options = options;
    this.port = options.port;
    this.#sent = sent;
  }
  send(payload: Buffer, address: string, port: number): void {
    if (this.failSends !== undefined) throw Object.assign(new Error(this.failSends), { code: this.failSends });
    this.#sent.push({ port: this.port, kind: 'send', address, destinationPort: port, packet: decodeDhcpPacket(payload) });
  }
  sendFrame(payload: Buffer, mac: string, _source: string, _sourcePort: number, destinationAddress: string, destinationPort: number): void {
    if (this.failFrames !== undefined) throw Object.assign(new Error(this.failFrames), { code: this.failFrames });
    this.#sent.push({ port: this.port, kind: 'frame', address: destinationAddress, destinationPort, mac, packet: decodeDhcpPacket(payload) });
  }
  kernelDrops(): number {
    return this.drops;
  }
  close(): void {
    this.closed = true;
  }
}

/** An in-memory LeaseStore; `delayMs` slows writes, `fail` makes puts reject. */
export class MemoryLeaseStore implements LeaseStore {
  readonly records = new Map<string, Lease>();
  readonly log: string[] = [];
  delayMs = 0;
  fail = false;
  inFlight = 0;
  maxInFlight = 0;
  async get(key: string): Promise<Lease | undefined> {
    return Promise.resolve(this.records.get(key));
  }
  async put(lease: Lease): Promise<void> {
    await this.#write(() => this.records.set(lease.state === 'declined' ? `declined:${lease.address}` : lease.mac, lease), `put ${lease.mac} ${lease.state} ${lease.address}`);
  }
  async delete(key: string): Promise<void> {
    await this.#write(() => this.records.delete(key), `delete ${key}`);
  }
  async list(): Promise<Lease[]> {
    return Promise.resolve([...this.records.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, l]) => l));
  }
  async #write(apply: () => unknown, what: string): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.fail) throw new Error('disk full');
      apply();
      this.log.push(what);
    } finally {
      this.inFlight--;
    }
  }
}

/** Boot HTTP as the harness's clients are told it (the DHCP server's `bootFiles`). */
export const HTTP_BASE = 'http://10.20.0.1:8081';

/** A host booting the ramdisk: a UEFI x64 client chains iPXE (`ipxe.efi`, then its script). */
export const RAMDISK_TARGET: BootTarget = { host: 'node-0', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: HTTP_BASE } };

/** A BootLookup answering from a map (default: every MAC is a host booting the ramdisk). */
export class MapLookup implements BootLookup {
  readonly targets = new Map<string, BootTarget>();
  readonly queries: BootTargetQuery[] = [];
  fallback: BootTarget | undefined = RAMDISK_TARGET;
  reject = false;
  async target(q: BootTargetQuery): Promise<BootTarget | undefined> {
    this.queries.push(q);
    if (this.reject) throw new Error('backend down');
    return Promise.resolve(this.targets.get(q.mac) ?? this.fallback);
  }
}

/** A started server with its fakes. */
export interface Harness {
  server: DhcpServer;
  sockets: Map<number, FakeSocket>;
  sent: Sent[];
  events: DhcpBootEvent[];
  logs: string[];
  store: MemoryLeaseStore;
  lookup: MapLookup;
  clock: { now: number };
  /** Injects a datagram on `port` (67 by default) and waits until the server is idle again. */
  deliver(message: ClientMessage | Uint8Array, from?: Partial<BoundDatagram> & { port?: number }): Promise<void>;
  settle(): Promise<void>;
}

export const SERVER = '10.20.0.1';
export const T0 = 1_800_000_000_000;

/** Starts a server on fakes; `over` replaces options (defaults: full mode, 10.20.0.100–109). */
export async function startHarness(over: Partial<DhcpServerOptions> = {}, store = new MemoryLeaseStore(), lookup = new MapLookup()): Promise<Harness> {
  const sockets = new Map<number, FakeSocket>();
  const sent: Sent[] = [];
  const events: DhcpBootEvent[] = [];
  const logs: string[] = [];
  const clock = { now: T0 };
  const server = await startDhcpServer({
    mode: 'full',
    interface: 'prov0',
    serverAddress: SERVER,
    ranges: [
      { subnet: '10.20.0.0/24', first: '10.20.0.100', last: '10.20.0.109', router: '10.20.0.254', dns: ['10.20.0.1'] },
      { subnet: '10.30.0.0/24', first: '10.30.0.100', last: '10.30.0.101', router: '10.30.0.1' },
    ],
    leaseSeconds: 3600,
    bootLookup: lookup,
    bootFiles: { httpBaseUrl: HTTP_BASE },
    leaseStore: store,
    now: () => clock.now,
    onEvent: (e: BootEvent) => {
      if (e.kind === 'dhcp') events.push(e);
    },
    log: (level, message) => logs.push(`${level}: ${message}`),
    openSocket: (o) => {
      const s = new FakeSocket(o, sent);
      sockets.set(o.port, s);
      return s;
    },
    ...over,
  });
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 1000; i++) {
      await new Promise((r) => setImmediate(r));
      const s = server.stats();
      if (s.inFlight === 0 && s.leases.pending === 0) return;
    }
    throw new Error('server did not settle');
  };
  return {
    server, sockets, sent, events, logs, store, lookup, clock, settle,
    async deliver(message, from = {}) {
      const socket = sockets.get(from.port ?? 67);
      if (socket === undefined) throw new Error(`no socket on port ${from.port ?? 67}`);
      const payload = message instanceof Uint8Array ? Buffer.from(message) : encodeClientMessage(message);
      socket.options.onMessage({
        payload,
        sourceAddress: from.sourceAddress ?? '0.0.0.0',
        sourcePort: from.sourcePort ?? 68,
        interfaceIndex: from.interfaceIndex ?? socket.interfaceIndex,
        destinationAddress: from.destinationAddress ?? '255.255.255.255',
      });
      await settle();
    },
  };
}
