/**
 * @module The DHCPv6 server's I/O (RFC 8415 §7.1, §18.3): Node `dgram` udp6 sockets on UDP 547
 * — the native `udp-bind` addon has no IPv6 path — one bound to `ff02::1:2%<interface>` and
 * joined to that group (binding a link-scoped multicast address ties the socket to the
 * interface, as SO_BINDTODEVICE does for DHCPv4), one bound to the server's own address for
 * relays (Relay-Forw sent to it by unicast). Decoding with drop-and-count for malformed
 * datagrams, the host's MAC (identity.ts), one boot lookup per request, the pure responder,
 * leases through the {@link Lease6Table}, replies to the client's link-local address or back
 * through its relays. Mode `full` (stateful IA_NA and boot options) or `off` (nothing opened).
 */
import { randomBytes } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { networkInterfaces } from 'node:os';
import type { BootDecision, BootLookup, BootQuery, LeaseStore } from '../boot-lookup.js';
import { emitBootEvent, type BootEventListener } from '../events.js';
import { decideBoot, type BootFileOptions } from '../ipxe/boot-files.js';
import { steadyEpochMs } from '../steady-clock.js';
import type { TurnBudget } from '../turn-budget.js';
import { canonicalIpv6, isIpv6 } from './address6.js';
import { isDhcp6DecodeError } from './errors.js';
import { Lease6Table } from './lease-table.js';
import { decodeDhcp6Message, encodeDhcp6Message, type Dhcp6Message } from './message.js';
import { link6, type Link6 } from './pool.js';
import { bootQuery6, events6, linkOfRequest, MESSAGE_NAMES, unwrap6, wrapReply, type Unwrapped6 } from './request-handler.js';
import { respond6, type Responder6Settings } from './responder.js';
import { duidLl } from './values.js';

/** All DHCP relay agents and servers, link scope (RFC 8415 §7.1). */
export const ALL_DHCP_RELAY_AGENTS_AND_SERVERS = 'ff02::1:2';

/** Log levels and logger callback, as DHCPv4's. */
export type Dhcp6LogFunction = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

/** Options of {@link startDhcp6Server}. */
export interface Dhcp6ServerOptions {
  mode: 'full' | 'off';
  /** The provisioning interface. */
  interface: string;
  /** Our global (or ULA) address on it: relays send to it, `tftp://[…]/` URLs name it. */
  serverAddress: string;
  /**
   * Address ranges, one per link: `subnet` (`ADDRESS/LENGTH`, the on-link prefix) and
   * `first`–`last` inside it. The one holding `serverAddress` serves the interface's own link;
   * the others serve links behind relays (chosen by the relay's link-address).
   */
  ranges: readonly { subnet: string; first: string; last: string }[];
  /** Binding lifetime (default 3600). */
  leaseSeconds?: number;
  /** Honour Rapid Commit (default true). */
  rapidCommit?: boolean;
  /** Option 23. */
  dns?: readonly string[];
  unknownHosts?: 'ignore' | 'discover';
  bootLookup: BootLookup;
  discoveryLookup?: BootLookup;
  /** Boot HTTP's base URL as IPv6 clients reach it (a bracketed literal). */
  bootFiles: BootFileOptions;
  /** Lease persistence, kept apart from DHCPv4's records. */
  leaseStore: LeaseStore;
  onEvent?: BootEventListener;
  metrics?: (name: string, labels: Record<string, string>) => void;
  log?: Dhcp6LogFunction;
  /** Steady clock in epoch milliseconds (default {@link steadyEpochMs}). */
  now?: () => number;
  /** This server's DUID (default: DUID-LL of the interface's MAC). */
  serverDuid?: Uint8Array;
  /** UDP port to listen on (default 547; tests only). */
  port?: number;
  /** Requests handled at once; more are dropped as `overload` (default 1024). */
  maxInFlight?: number;
  /** How long `stop()` waits for requests in flight and lease writes (default 5000). */
  stopTimeoutMs?: number;
  turnBudget?: TurnBudget;
}

/** Counters since start. */
export interface Dhcp6ServerStats {
  received: number;
  replies: Record<string, number>;
  ignored: Record<string, number>;
  dropped: Record<string, number>;
  lookupErrors: number;
  leases: { records: number; writes: number; writeErrors: number; pending: number };
}

/** A running DHCPv6 server. */
export interface Dhcp6Server {
  readonly mode: 'full' | 'off';
  stop(): Promise<void>;
  stats(): Dhcp6ServerStats;
  /** The lease records (for status pages and tests). */
  leases(): { mac: string; address: string; state: string; expiresAtMs: number }[];
}

interface State6 {
  readonly options: Dhcp6ServerOptions;
  readonly settings: Responder6Settings;
  readonly links: readonly Link6[];
  readonly table: Lease6Table;
  readonly stats: Dhcp6ServerStats;
  readonly now: () => number;
  readonly handling: Set<Promise<void>>;
  readonly sockets: Socket[];
  stopping: boolean;
  /** The retry of the unicast socket while the server address is not usable yet. */
  retryTimer?: NodeJS.Timeout;
}

/** Retry interval of the unicast (relay) socket while its address is missing or tentative. */
const UNICAST_RETRY_MS = 1000;

/** The server DUID: DUID-LL of the interface MAC, or of a random locally administered one. */
function defaultDuid(iface: string): Uint8Array {
  const mac = networkInterfaces()[iface]?.find((a) => a.mac !== '00:00:00:00:00:00')?.mac;
  const bytes = mac === undefined ? Uint8Array.from(randomBytes(6)) : Uint8Array.from(mac.split(':').map((h) => parseInt(h, 16)));
  if (mac === undefined) bytes[0] = ((bytes[0] ?? 0) & 0xfe) | 0x02;
  return duidLl(bytes);
}

function validate(o: Dhcp6ServerOptions): void {
  if (!/^[A-Za-z0-9._@:-]{1,15}$/.test(o.interface)) throw new RangeError(`dhcp6 interface "${o.interface}" is not an interface name`);
  if (!isIpv6(o.serverAddress)) throw new RangeError(`dhcp6 serverAddress "${o.serverAddress}" is not an IPv6 address`);
  if (o.ranges.length === 0) throw new RangeError('dhcp6 needs at least one range');
  const lease = o.leaseSeconds ?? 3600;
  if (!Number.isSafeInteger(lease) || lease < 1) throw new RangeError(`dhcp6 leaseSeconds must be a positive integer, got ${lease}`);
}

function log(state: State6, level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
  try {
    state.options.log?.(level, message, fields);
  } catch {
    // A broken logger must not take DHCPv6 down.
  }
}

function count(state: State6, bucket: 'replies' | 'ignored' | 'dropped', label: string): void {
  state.stats[bucket][label] = (state.stats[bucket][label] ?? 0) + 1;
  try {
    state.options.metrics?.(`dhcp6_${bucket}_total`, { [bucket === 'replies' ? 'type' : 'reason']: label });
  } catch {
    // Metrics are best effort.
  }
}

/** The boot decision for `q`: the host's, or with `unknownHosts: discover` the discovery lookup's; a rejection counts and reads as unknown. */
async function decisionFor(state: State6, q: BootQuery): Promise<BootDecision | undefined> {
  const { options } = state;
  const ask = async (which: BootLookup): Promise<BootDecision | undefined> => {
    try {
      return decideBoot(await which.target(q), q, options.bootFiles);
    } catch (err) {
      state.stats.lookupErrors++;
      log(state, 'warn', `dhcp6 boot lookup failed; treating ${q.mac} as unknown`, { err });
      return undefined;
    }
  };
  const known = await ask(options.bootLookup);
  if (known !== undefined || options.unknownHosts !== 'discover' || options.discoveryLookup === undefined) return known;
  return ask(options.discoveryLookup);
}

/** Sends `message` to `address` (zone included for link-local) and `port` from `socket`. */
function send(socket: Socket, message: Dhcp6Message, address: string, port: number): Promise<void> {
  const payload = encodeDhcp6Message(message);
  return new Promise((resolve, reject) => {
    socket.send(payload, port, address, (err) => { if (err) reject(err); else resolve(); });
  });
}

/** Whether `stop()` was called (read through a call: it changes while a request awaits). */
function stopping(state: State6): boolean {
  return state.stopping;
}

/** Handles one decoded message end to end. Never throws. */
async function handle(state: State6, socket: Socket, u: Unwrapped6, rinfo: RemoteInfo, unicastSocket: boolean): Promise<void> {
  const { options, table } = state;
  if (options.turnBudget !== undefined) await options.turnBudget.enter();
  if (state.stopping) return;
  const decision = u.mac === undefined ? undefined : await decisionFor(state, bootQuery6(u.client, u.mac, u.relays[u.relays.length - 1]?.linkAddress));
  if (stopping(state)) return;
  const link = linkOfRequest(u, state.links, state.settings.tftpServer);
  const unicast = unicastSocket && u.relays.length === 0;
  const result = respond6(u.client, { settings: state.settings, leases: table, link, mac: u.mac, bootDecision: decision, nowMs: state.now(), unicast });
  const durable = table.apply(result.leaseChanges);
  for (const e of events6(u, result, Date.now())) {
    const err = emitBootEvent(options.onEvent, e);
    if (err !== undefined) log(state, 'warn', 'dhcp6 event listener threw', { err });
  }
  if (result.kind === 'ignore') {
    durable.catch(() => undefined);
    count(state, 'ignored', result.reason);
    return;
  }
  if (result.leaseChanges.some((c) => c.op === 'put' && c.lease.state === 'bound')) {
    try {
      await durable;
    } catch {
      count(state, 'dropped', 'lease-store-error');
      return;
    }
  } else durable.catch(() => undefined);
  if (stopping(state)) return;
  try {
    await send(socket, wrapReply(result.message, u.relays), rinfo.address, rinfo.port);
    count(state, 'replies', MESSAGE_NAMES[result.message.type] ?? String(result.message.type));
  } catch (err) {
    count(state, 'dropped', 'send-error');
    log(state, 'warn', `dhcp6 reply to ${rinfo.address} could not be sent`, { err });
  }
}

/** Takes one datagram: counts, decodes, unwraps, and starts its handling. */
function onDatagram(state: State6, socket: Socket, payload: Buffer, rinfo: RemoteInfo, unicastSocket: boolean): void {
  if (state.stopping) return;
  state.stats.received++;
  if (state.handling.size >= (state.options.maxInFlight ?? 1024)) {
    count(state, 'dropped', 'overload');
    return;
  }
  let u: Unwrapped6 | undefined;
  try {
    u = unwrap6(decodeDhcp6Message(payload), rinfo.address);
  } catch (err) {
    count(state, 'dropped', isDhcp6DecodeError(err) ? 'malformed' : 'internal-error');
    if (!isDhcp6DecodeError(err)) log(state, 'error', 'dhcp6 decoder failed unexpectedly', { err });
    return;
  }
  if (u === undefined) {
    count(state, 'ignored', 'not-a-request');
    return;
  }
  const task = handle(state, socket, u, rinfo, unicastSocket).catch((err: unknown) => {
    count(state, 'dropped', 'internal-error');
    log(state, 'error', 'dhcp6 request handling failed', { err });
  });
  state.handling.add(task);
  void task.finally(() => state.handling.delete(task));
}

/** Opens a udp6 socket bound to `address`:`port`, joined to the DHCP group when `group`. */
function openSocket(state: State6, address: string, port: number, group: boolean): Promise<Socket> {
  const socket = createSocket({ type: 'udp6' });
  socket.on('message', (msg, rinfo) => {
    try {
      onDatagram(state, socket, msg, rinfo, !group);
    } catch (err) {
      count(state, 'dropped', 'internal-error');
      log(state, 'error', 'dhcp6 datagram handling failed', { err });
    }
  });
  return new Promise((resolve, reject) => {
    const failed = (err: Error): void => { socket.close(); reject(err); };
    socket.once('error', failed);
    socket.bind({ address, port, exclusive: true }, () => {
      socket.off('error', failed);
      socket.on('error', (err) => { log(state, 'warn', `dhcp6 socket ${address}:${port} error`, { err }); });
      try {
        if (group) socket.addMembership(ALL_DHCP_RELAY_AGENTS_AND_SERVERS, `::%${state.options.interface}`);
        resolve(socket);
      } catch (err) {
        socket.close();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

/**
 * Opens the unicast socket for relays on `address`. While the address is not on the interface
 * or still tentative (duplicate address detection, RFC 4862 §5.4: `EADDRNOTAVAIL`), the server
 * runs on the multicast socket alone and retries every second; other errors are thrown.
 */
async function openUnicast(state: State6, address: string, port: number, warned = false): Promise<void> {
  try {
    const socket = await openSocket(state, address, port, false);
    if (state.stopping) socket.close();
    else state.sockets.push(socket);
    if (warned) log(state, 'info', `dhcp6 now receives relayed requests on ${address}`);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EADDRNOTAVAIL' || state.stopping) throw err;
    if (!warned) log(state, 'warn', `dhcp6 serverAddress ${address} is not usable on ${state.options.interface} yet (missing, or tentative during duplicate address detection): relayed requests are not received until it is; retrying every second`);
    state.retryTimer = setTimeout(() => { openUnicast(state, address, port, true).catch((e: unknown) => { log(state, 'error', `dhcp6 cannot open ${address}:${port}`, { err: e }); }); }, UNICAST_RETRY_MS);
    state.retryTimer.unref();
  }
}

/** The handle of a running server. */
function handleOf(state: State6, sweepTimer: NodeJS.Timeout): Dhcp6Server {
  let stopped: Promise<void> | undefined;
  return {
    mode: 'full',
    stop() {
      stopped ??= (async () => {
        state.stopping = true;
        clearInterval(sweepTimer);
        for (const s of state.sockets) s.close();
        // A boot lookup or lease store that never answers must not hold the agent's shutdown forever.
        let timer: NodeJS.Timeout | undefined;
        const gaveUp = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => { resolve('timeout'); }, state.options.stopTimeoutMs ?? 5000); });
        const drained = Promise.all([...state.handling]).then(() => state.table.flush()).then(() => 'drained' as const);
        if ((await Promise.race([drained, gaveUp])) === 'timeout') log(state, 'warn', `dhcp6 stop: gave up waiting for ${state.handling.size} requests and the lease writes`);
        clearTimeout(timer);
      })();
      return stopped;
    },
    stats: () => ({ ...structuredClone(state.stats), leases: state.table.stats() }),
    leases: () => state.table.all().map((l) => ({ mac: l.mac, address: l.address, state: l.state, expiresAtMs: l.expiresAtMs })),
  };
}

/**
 * Starts the DHCPv6 server: loads the leases and opens the two sockets on UDP 547 (the
 * multicast one on the interface, the unicast one on `serverAddress` for relays, retried in
 * the background while that address is missing or tentative). Mode `off` opens nothing.
 * Throws a RangeError for bad options and the socket error (`EADDRINUSE`, `ENODEV`, `EACCES`)
 * after closing what it opened.
 */
export async function startDhcp6Server(options: Dhcp6ServerOptions): Promise<Dhcp6Server> {
  const empty: Dhcp6ServerStats = { received: 0, replies: {}, ignored: {}, dropped: {}, lookupErrors: 0, leases: { records: 0, writes: 0, writeErrors: 0, pending: 0 } };
  if (options.mode === 'off') return { mode: 'off', stop: () => Promise.resolve(), stats: () => structuredClone(empty), leases: () => [] };
  validate(options);
  const serverAddress = canonicalIpv6(options.serverAddress) ?? options.serverAddress;
  const settings: Responder6Settings = {
    serverDuid: options.serverDuid ?? defaultDuid(options.interface), leaseSeconds: options.leaseSeconds ?? 3600, offerHoldSeconds: 60,
    declineQuarantineSeconds: 600, rapidCommit: options.rapidCommit ?? true, dns: options.dns ?? [], tftpServer: serverAddress,
  };
  const state: State6 = {
    options, settings, links: options.ranges.map((r) => link6(r.subnet, r.first, r.last)), stats: empty, now: options.now ?? steadyEpochMs, handling: new Set(), sockets: [], stopping: false,
    table: await Lease6Table.load(options.leaseStore, {
      onInvalid: (record) => { options.log?.('warn', 'dhcp6 lease store holds a malformed record; ignored', { record }); },
      onWriteError: (err) => { options.log?.('error', 'dhcp6 leases could not be stored', { err }); },
    }),
  };
  const port = options.port ?? 547;
  try {
    state.sockets.push(await openSocket(state, `${ALL_DHCP_RELAY_AGENTS_AND_SERVERS}%${options.interface}`, port, true));
    await openUnicast(state, serverAddress, port);
  } catch (err) {
    for (const s of state.sockets) s.close();
    throw err;
  }
  const sweepTimer = setInterval(() => { state.table.apply(state.table.expired(state.now())).catch(() => undefined); }, 60_000);
  sweepTimer.unref();
  log(state, 'info', `dhcp6 full server on ${options.interface} (${serverAddress}), port ${port}`, { leases: state.table.size() });
  return handleOf(state, sweepTimer);
}
