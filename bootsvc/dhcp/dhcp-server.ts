/**
 * @module The DHCP server's I/O: interface-bound sockets on UDP 67 and 4011 (see
 * `bound-socket.ts`), decoding with drop-and-count for malformed datagrams, one
 * {@link BootLookup} per request, the pure request handler (`request-handler.ts`: the query,
 * the indexed responder's decision, the encoded reply and its route, the events), lease
 * persistence through the {@link LeaseCache}, and transmission along the RFC 2131 §4.1 route —
 * relay replies unicast to `giaddr:67`, hardware unicast as a link-layer frame to the client's
 * MAC (broadcast when the packet socket is not permitted), everything out of the provisioning
 * interface only. Modes: `full` (addresses and boot information, 67 + 4011), `proxy` (boot
 * information only beside the site's DHCP server, 67 + 4011), `off` (nothing opened).
 */
import { interfaceIpv4Addresses } from '../net/interface-addresses.js';
import type { BootDecision, BootLookup, BootQuery, LeaseStore } from '../boot-lookup.js';
import { decideBoot, type BootFileOptions } from '../ipxe/boot-files.js';
import type { BootEventListener } from '../events.js';
import { isIpv4 } from './address.js';
import { DEFAULT_RECEIVE_BUFFER_BYTES, openBoundSocket, type BoundDatagram, type BoundSocket, type OpenBoundSocketOptions } from './bound-socket.js';
import { isDhcpDecodeError } from './errors.js';
import type { LeaseIndex } from './indexed-respond.js';
import { LeaseCache } from './lease-cache.js';
import { decodeDhcpPacket, type DhcpPacket } from './packet.js';
import { reservedAddresses, type DhcpSubnet, type Reservation } from './pool.js';
import { DhcpPort, type ReplyRoute } from './reply-route.js';
import {
  bootQueryFor, decideRequest, planReply, replyEvent, requestEvents, sweepChanges,
  type DhcpHandlerSettings, type DhcpRequestOrigin, type ReplyResult,
} from './request-handler.js';
import type { ResponderResult, UnknownHostPolicy } from './responder-context.js';
import { steadyEpochMs } from '../steady-clock.js';
import type { TurnBudget } from '../turn-budget.js';
import { subnetsFromRanges, type DhcpRangeConfig, type DhcpServerStats } from './server-events.js';
import { emptyStats, makeReporter, type Reporter } from './server-reporter.js';

/** Log levels of {@link DhcpLogFunction}. */
export type DhcpLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A logger-ish callback (the agent adapts its pino logger to it). */
export type DhcpLogFunction = (level: DhcpLogLevel, message: string, fields?: Record<string, unknown>) => void;

/** Options of {@link startDhcpServer}. */
export interface DhcpServerOptions {
  /** `full` = addresses + boot information; `proxy` = boot information only; `off` = start nothing. */
  mode: 'full' | 'proxy' | 'off';
  /** The provisioning interface: the only one requests are taken from and replies leave by. */
  interface: string;
  /** Our address on that interface: option 54, `siaddr`, the reply source. */
  serverAddress: string;
  /** Address pools (full mode): the local subnet and any relayed ones. Or give `ranges`. */
  subnets?: readonly DhcpSubnet[];
  /** Config-shaped pools (`dhcp.range` decoded), converted with {@link subnetsFromRanges}. */
  ranges?: readonly DhcpRangeConfig[];
  /** Lease time (default 3600). */
  leaseSeconds?: number;
  /** Unknown MACs: `ignore` (default) or `discover`. */
  unknownHosts?: UnknownHostPolicy;
  /** Static addresses (from hosts' `bootMACAddress`), read per request. */
  reservations?: () => readonly Reservation[];
  /** What each client boots: the DHCP decision is derived from its target (`decideBoot`). */
  bootLookup: BootLookup;
  /** Boot HTTP's base URL and the UEFI iPXE flavour, for the first-stage files and script URLs. */
  bootFiles: BootFileOptions;
  /**
   * With `unknownHosts: discover`: what unknown MACs boot (the discovery ramdisk chain). Its
   * `undefined` answer means "refused": the client is ignored (`discovery-refused`).
   */
  discoveryLookup?: BootLookup;
  /** Lease persistence; required in full mode. */
  leaseStore?: LeaseStore;
  /**
   * Flight-recorder events: each client message (`discover`, `request`, …), each reply
   * (`offer`, `ack`, `nak` with address and boot file), and `ignored` with the reason when the
   * server stayed silent. Exceptions thrown here are logged and ignored.
   */
  onEvent?: BootEventListener;
  /** Counter increments (`dhcp_received_total{port}`, `dhcp_replies_total{type}`, `dhcp_ignored_total{reason}`, `dhcp_dropped_total{reason}`). */
  metrics?: (name: string, labels: Record<string, string>) => void;
  log?: DhcpLogFunction;
  /**
   * Clock in milliseconds since the epoch; default {@link steadyEpochMs} (lease, offer and
   * quarantine expiry are durations: a wall-clock step must not expire every lease at once).
   */
  now?: () => number;
  /** Offer hold (default 60 s) and DECLINE quarantine (default 600 s). */
  offerHoldSeconds?: number;
  declineQuarantineSeconds?: number;
  /** Requests handled at once; more are dropped as `overload` (default 1024). */
  maxInFlight?: number;
  /** Lease writes in flight across MACs (default 8; one per MAC, always in order). */
  leaseWriteConcurrency?: number;
  /** Send hardware-unicast replies as link-layer frames (default true; false = broadcast them). */
  linkLayerUnicast?: boolean;
  /** Interval of the sweep that forgets expired offers and quarantines (default 60 s). */
  sweepIntervalMs?: number;
  /** How long `stop()` waits for requests in flight and lease writes (default 5000). */
  stopTimeoutMs?: number;
  /** Socket factory (default: the native interface-bound socket); tests inject fakes. */
  openSocket?: (options: OpenBoundSocketOptions) => BoundSocket;
  /** Shared per-turn handling budget (turn-budget.ts): a burst of requests is handled over several event-loop turns. */
  turnBudget?: TurnBudget;
}

/** A running DHCP server. */
export interface DhcpServer {
  readonly mode: 'full' | 'proxy' | 'off';
  /** Closes the sockets, waits (up to `stopTimeoutMs`) for requests being handled and lease writes. Idempotent. */
  stop(): Promise<void>;
  /** Counters since start. */
  stats(): DhcpServerStats;
}

/** Wraps a socket with its logical role: the DHCP server port or the PXE boot-server port. */
interface Listener {
  socket: BoundSocket;
  serverPort: typeof DhcpPort.server | typeof DhcpPort.pxeBootServer;
}

/** No reservations configured: one array, so its (empty) address set is built once. */
const NO_RESERVATIONS: readonly Reservation[] = [];

/** The lease table of proxy mode: always empty. */
const EMPTY_INDEX: LeaseIndex = { all: () => [], byClient: () => undefined, byAddress: () => [] };

const FRAME_UNAVAILABLE = new Set(['EPERM', 'EACCES', 'EAFNOSUPPORT', 'ENOTSUP', 'EOPNOTSUPP']);

/** Checks options that may come from untyped callers; throws a RangeError naming the bad one. */
function validate(o: DhcpServerOptions, subnets: readonly DhcpSubnet[]): void {
  const mode: unknown = o.mode;
  if (mode !== 'full' && mode !== 'proxy' && mode !== 'off') throw new RangeError(`dhcp mode must be full, proxy or off, got ${String(mode)}`);
  if (mode === 'off') return;
  const iface: unknown = o.interface;
  if (typeof iface !== 'string' || !/^[A-Za-z0-9._@:-]{1,15}$/.test(iface)) throw new RangeError(`dhcp interface "${String(iface)}" is not an interface name`);
  if (!isIpv4(o.serverAddress) || o.serverAddress === '0.0.0.0') throw new RangeError(`dhcp serverAddress "${o.serverAddress}" is not an IPv4 address`);
  const lease = o.leaseSeconds ?? 3600;
  if (!Number.isSafeInteger(lease) || lease < 1) throw new RangeError(`dhcp leaseSeconds must be a positive integer, got ${String(lease)}`);
  if (o.mode === 'full') {
    if (subnets.length === 0) throw new RangeError('dhcp mode full needs at least one range');
    if (o.leaseStore === undefined) throw new RangeError('dhcp mode full needs a leaseStore');
  }
}

/** Whether `address` is configured on `iface` (then replies name it as their source), carrier or not. */
async function interfaceHasAddress(iface: string, address: string): Promise<boolean> {
  return (await interfaceIpv4Addresses(iface)).some((a) => a.address === address);
}

/** The state of one running (full or proxy) server, shared by the loop's functions below. */
interface ServerState {
  readonly options: DhcpServerOptions;
  readonly settings: DhcpHandlerSettings;
  readonly now: () => number;
  /** Event stamps follow the wall clock (they sit beside other events in the host's timeline). */
  readonly wallNow: () => number;
  readonly stats: DhcpServerStats;
  readonly report: Reporter;
  readonly cache: LeaseCache | undefined;
  /** The address replies leave from, when it is configured on the interface. */
  readonly sourceAddress: string | undefined;
  readonly maxInFlight: number;
  readonly handling: Set<Promise<void>>;
  readonly listeners: Listener[];
  framesUsable: boolean;
  stopping: boolean;
  /** The reservations array last read and its addresses as numbers (rebuilt when the array changes). */
  reservations: { list: readonly Reservation[]; reserved: ReadonlySet<number> } | undefined;
}

/** Loads the lease table of a full-mode server. */
function loadLeases(options: DhcpServerOptions, report: Reporter): Promise<LeaseCache> | undefined {
  if (options.mode !== 'full' || options.leaseStore === undefined) return undefined;
  return LeaseCache.load(options.leaseStore, {
    ...(options.leaseWriteConcurrency === undefined ? {} : { concurrency: options.leaseWriteConcurrency }),
    onWriteError: (err, change) => {
      report.logLimited('lease-write', 'error', 'dhcp lease could not be stored', { err, change });
    },
    onInvalid: (record) => {
      report.log('warn', 'dhcp lease store holds a malformed record; ignored', { record });
    },
  });
}

/** The current reservations and their address set, rebuilt only when the callback returns a new array. */
function currentReservations(state: ServerState): { list: readonly Reservation[]; reserved: ReadonlySet<number> } {
  const list = state.options.reservations?.() ?? NO_RESERVATIONS;
  if (state.reservations?.list !== list) state.reservations = { list, reserved: reservedAddresses(list) };
  return state.reservations;
}

/** Asks `which`; a rejection counts, is logged, and makes the client unknown. */
async function lookup(state: ServerState, q: BootQuery, which: BootLookup, label: string): Promise<BootDecision | undefined> {
  try {
    return decideBoot(await which.target(q), q, state.options.bootFiles);
  } catch (err) {
    state.stats.lookupErrors++;
    state.report.logLimited(`lookup:${label}`, 'warn', `dhcp ${label} failed; treating ${q.mac} as unknown`, { err, mac: q.mac });
    return undefined;
  }
}

/** Sends `payload` along `route`: a link-layer frame for hardware unicast while the socket can, else the fallback broadcast. Returns the route taken. */
function sendReply(state: ServerState, listener: Listener, payload: Buffer, route: ReplyRoute): string {
  const { socket } = listener;
  const { options, stats, report } = state;
  if (route.kind !== 'hardware-unicast') {
    socket.send(payload, route.address, route.port, state.sourceAddress);
    return route.kind;
  }
  if (state.framesUsable) {
    try {
      socket.sendFrame(payload, route.mac, options.serverAddress, socket.port, route.address, route.port);
      stats.hardwareUnicast++;
      return route.kind;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && FRAME_UNAVAILABLE.has(code)) {
        state.framesUsable = false;
        report.log('warn', `dhcp cannot send link-layer frames on ${options.interface} (${code}: needs CAP_NET_RAW); broadcasting replies instead (RFC 2131 §4.1 allows it)`);
      } else {
        report.logLimited('frame', 'warn', 'dhcp link-layer unicast failed; broadcasting this reply', { err });
      }
    }
  }
  stats.hardwareUnicastFallbacks++;
  socket.send(payload, route.fallback.address, route.fallback.port, state.sourceAddress);
  return 'broadcast-fallback';
}

/** Reports the client's message of `result` (and why it got no reply), when anyone listens. */
function reportRequest(state: ServerState, request: DhcpPacket, result: ResponderResult, origin: DhcpRequestOrigin, atMs: number, ignoredBecause?: string): void {
  if (state.options.onEvent === undefined) return;
  for (const e of requestEvents(request, result, origin, atMs, ignoredBecause)) state.report.emit(e);
}

/** Counts and reports a result that sends nothing (ignored, released, declined). */
function finishSilent(state: ServerState, request: DhcpPacket, result: Exclude<ResponderResult, ReplyResult>, origin: DhcpRequestOrigin, atMs: number): void {
  const { stats, report } = state;
  if (result.kind === 'ignore') {
    stats.ignored[result.reason] = (stats.ignored[result.reason] ?? 0) + 1;
    report.count('dhcp_ignored_total', { reason: result.reason });
    if (result.reason === 'pool-exhausted') report.logLimited('pool-exhausted', 'warn', `dhcp pool exhausted: no address for ${result.client?.mac ?? 'a client'}`, { giaddr: request.giaddr });
    reportRequest(state, request, result, origin, atMs, result.reason);
    return;
  }
  if (result.event === 'released') stats.released++;
  else stats.declined++;
  reportRequest(state, request, result, origin, atMs);
}

/** Encodes, (for a binding ACK) waits for the lease write, sends, counts and reports a reply. */
async function finishReply(state: ServerState, listener: Listener, request: DhcpPacket, result: ReplyResult, durable: Promise<void>, origin: DhcpRequestOrigin, atMs: number): Promise<void> {
  const { stats, report } = state;
  const plan = planReply(request, result, origin);
  if (plan.kind === 'encode-error') {
    durable.catch(() => undefined);
    report.drop('encode-error');
    report.logLimited('encode', 'error', `dhcp reply to ${result.client.mac} cannot be encoded`, { err: plan.error });
    reportRequest(state, request, result, origin, atMs, 'encode-error');
    return;
  }
  if (plan.awaitLeaseWrite) {
    try {
      await durable;
    } catch {
      report.drop('lease-store-error');
      reportRequest(state, request, result, origin, atMs, 'lease-store-error');
      return;
    }
    if (state.stopping) return;
  } else {
    durable.catch(() => undefined);
  }
  const { route } = plan;
  let routeTaken: string;
  try {
    routeTaken = sendReply(state, listener, plan.payload, route);
  } catch (err) {
    report.drop('send-error');
    report.logLimited(`send:${route.kind}`, 'warn', `dhcp reply to ${result.client.mac} could not be sent (${route.kind} ${route.address}:${route.port})`, { err });
    reportRequest(state, request, result, origin, atMs, `send-error (${route.kind} ${route.address})`);
    return;
  }
  stats.replies[result.messageType] = (stats.replies[result.messageType] ?? 0) + 1;
  report.count('dhcp_replies_total', { type: result.messageType });
  reportRequest(state, request, result, origin, atMs);
  if (state.options.onEvent !== undefined) report.emit(replyEvent(request, result, origin, atMs, routeTaken));
}

/** Handles one decoded request end to end: lookups, the pure decision, the lease write, the reply. Never throws. */
async function handleRequest(state: ServerState, listener: Listener, d: BoundDatagram, request: DhcpPacket): Promise<void> {
  const { options, settings, cache } = state;
  if (options.turnBudget !== undefined) {
    await options.turnBudget.enter();
    if (state.stopping) return;
  }
  const q = bootQueryFor(request, settings.mode, listener.serverPort);
  let bootDecision: BootDecision | undefined;
  let discoveryDecision: BootDecision | undefined;
  let discoveryRefused = false;
  if (q !== undefined) {
    bootDecision = await lookup(state, q, options.bootLookup, 'boot lookup');
    if (bootDecision === undefined && options.unknownHosts === 'discover' && options.discoveryLookup !== undefined) {
      discoveryDecision = await lookup(state, q, options.discoveryLookup, 'discovery lookup');
      discoveryRefused = discoveryDecision === undefined;
    }
    if (state.stopping) return;
  }
  const { list, reserved } = currentReservations(state);
  const result = decideRequest(request, {
    settings, serverPort: listener.serverPort, leases: cache ?? EMPTY_INDEX, reservations: list, reservedAddresses: reserved,
    ...(cache !== undefined ? { leaseSettled: (key: string) => cache.settled(key) } : {}),
    bootDecision, discoveryDecision, discoveryRefused, nowMs: state.now(),
  });
  const durable = cache === undefined ? Promise.resolve() : cache.apply(result.leaseChanges);
  const origin: DhcpRequestOrigin = { serverPort: listener.serverPort, sourceAddress: d.sourceAddress, sourcePort: d.sourcePort };
  const atMs = state.wallNow();
  if (result.kind !== 'reply') {
    durable.catch(() => undefined);
    finishSilent(state, request, result, origin, atMs);
    return;
  }
  await finishReply(state, listener, request, result, durable, origin, atMs);
}

/** Takes one datagram from a socket: counts it, checks interface and load, decodes it and starts its handling. */
function onDatagram(state: ServerState, listener: Listener, d: BoundDatagram): void {
  const { stats, report, handling } = state;
  if (state.stopping) return;
  const portLabel = String(listener.serverPort);
  stats.received[portLabel] = (stats.received[portLabel] ?? 0) + 1;
  report.count('dhcp_received_total', { port: portLabel });
  // SO_BINDTODEVICE already guarantees this; IP_PKTINFO lets us check rather than trust.
  if (d.interfaceIndex !== 0 && d.interfaceIndex !== listener.socket.interfaceIndex) {
    report.drop('wrong-interface');
    return;
  }
  if (handling.size >= state.maxInFlight) {
    report.drop('overload');
    report.logLimited('overload', 'warn', `dhcp is handling ${handling.size} requests; dropping new ones until it catches up`);
    return;
  }
  let request: DhcpPacket;
  try {
    request = decodeDhcpPacket(d.payload);
  } catch (err) {
    if (isDhcpDecodeError(err)) {
      report.drop('malformed');
      report.logLimited('malformed', 'debug', `dhcp dropped a malformed datagram from ${d.sourceAddress}:${d.sourcePort}: ${err.message}`);
    } else {
      report.drop('internal-error');
      report.logLimited('decode-internal', 'error', 'dhcp decoder failed unexpectedly', { err });
    }
    return;
  }
  const task = handleRequest(state, listener, d, request).catch((err: unknown) => {
    report.drop('internal-error');
    report.logLimited('internal', 'error', 'dhcp request handling failed', { err });
  });
  handling.add(task);
  stats.inFlight = handling.size;
  void task.finally(() => {
    handling.delete(task);
    stats.inFlight = handling.size;
  });
}

/** Opens the sockets on 67 and 4011 into `state.listeners`; on failure closes what it opened, flushes the leases and throws. */
async function openListeners(state: ServerState): Promise<void> {
  const { options, report, listeners } = state;
  const open = options.openSocket ?? openBoundSocket;
  try {
    for (const serverPort of [DhcpPort.server, DhcpPort.pxeBootServer] as const) {
      const socket = open({
        interface: options.interface,
        port: serverPort,
        onMessage: (d) => {
          const listener = listeners.find((l) => l.serverPort === serverPort);
          // Nothing may escape into the addon's callback: it would become an uncaught exception.
          try {
            if (listener !== undefined) onDatagram(state, listener, d);
          } catch (err) {
            report.drop('internal-error');
            report.logLimited('datagram', 'error', 'dhcp datagram handling failed', { err });
          }
        },
        onError: (err) => {
          report.logLimited(`socket:${serverPort}`, 'warn', `dhcp socket ${options.interface}:${serverPort} error`, { err });
        },
      });
      listeners.push({ socket, serverPort });
      if (socket.receiveBufferBytes < DEFAULT_RECEIVE_BUFFER_BYTES) {
        report.log('warn', `dhcp socket ${options.interface}:${serverPort} got a ${Math.round(socket.receiveBufferBytes / 1024)} KiB receive buffer of the ${DEFAULT_RECEIVE_BUFFER_BYTES / 1024} KiB asked: ` +
          'net.core.rmem_max caps it (the service has no CAP_NET_ADMIN to force it). A burst of DISCOVERs larger than that queue is dropped by the kernel ' +
          '(counted as rackside_dhcp_dropped_total{reason="socket-queue-full"}) and resent by the firmware seconds later; ' +
          `raise the cap: sysctl -w net.core.rmem_max=${DEFAULT_RECEIVE_BUFFER_BYTES}, and persist it in /etc/sysctl.d/`);
      }
    }
  } catch (err) {
    for (const l of listeners) l.socket.close();
    await state.cache?.flush();
    throw err;
  }
}

/** Stops taking requests, closes the sockets and waits (bounded) for requests being handled and lease writes. */
async function stopServer(state: ServerState, sweepTimer: NodeJS.Timeout): Promise<void> {
  state.stopping = true;
  clearInterval(sweepTimer);
  for (const l of state.listeners) l.socket.close();
  // A BootLookup or lease store that never answers must not hold the agent's shutdown forever.
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => { resolve('timeout'); }, state.options.stopTimeoutMs ?? 5000)));
  const drained = (async () => {
    await Promise.all([...state.handling]);
    await state.cache?.flush();
    return 'drained' as const;
  })();
  if ((await Promise.race([drained, gaveUp])) === 'timeout') state.report.log('warn', `dhcp stop: gave up waiting for ${state.handling.size} requests and ${state.cache?.stats().pending ?? 0} lease writes`);
  clearTimeout(timer);
}

/** The handle of a running server over `state`. */
function serverHandle(state: ServerState, mode: 'full' | 'proxy', sweepTimer: NodeJS.Timeout): DhcpServer {
  let stopped: Promise<void> | undefined;
  return {
    mode,
    stop() {
      stopped ??= stopServer(state, sweepTimer);
      return stopped;
    },
    stats() {
      const out = structuredClone(state.stats);
      if (state.cache !== undefined) out.leases = state.cache.stats();
      const kernelDrops = state.listeners.reduce((sum, l) => sum + l.socket.kernelDrops(), 0);
      if (kernelDrops > 0) out.dropped['socket-queue-full'] = kernelDrops;
      return out;
    },
  };
}

/**
 * Starts the DHCP server described by `options`: loads the leases (full mode) and opens
 * interface-bound sockets on UDP 67 and 4011. Mode `off` opens nothing and returns a server
 * whose `stop()` does nothing. Throws a RangeError for bad options, and the socket error
 * (`EADDRINUSE`, `ENODEV`, `EACCES`, or the missing-addon error) when a socket cannot be opened —
 * after closing whatever it had opened.
 */
export async function startDhcpServer(options: DhcpServerOptions): Promise<DhcpServer> {
  const subnets = options.subnets ?? subnetsFromRanges(options.ranges ?? []);
  validate(options, subnets);
  const stats = emptyStats();
  if (options.mode === 'off') {
    return { mode: 'off', stop: () => Promise.resolve(), stats: () => structuredClone(stats) };
  }
  const mode = options.mode;
  const now = options.now ?? steadyEpochMs;
  const report = makeReporter(options, stats, now);
  const cache = await loadLeases(options, report);
  const sourceAddress = (await interfaceHasAddress(options.interface, options.serverAddress)) ? options.serverAddress : undefined;
  if (sourceAddress === undefined) {
    report.log('warn', `dhcp serverAddress ${options.serverAddress} is not configured on ${options.interface}; replies leave with the interface's own address`);
  }
  const settings: DhcpHandlerSettings = { mode, serverAddress: options.serverAddress, subnets, leaseSeconds: options.leaseSeconds ?? 3600, unknownHosts: options.unknownHosts ?? 'ignore' };
  if (options.offerHoldSeconds !== undefined) settings.offerHoldSeconds = options.offerHoldSeconds;
  if (options.declineQuarantineSeconds !== undefined) settings.declineQuarantineSeconds = options.declineQuarantineSeconds;
  const state: ServerState = {
    options, settings, now, wallNow: options.now ?? Date.now, stats, report, cache, sourceAddress,
    maxInFlight: options.maxInFlight ?? 1024, handling: new Set(), listeners: [],
    framesUsable: options.linkLayerUnicast ?? true, stopping: false, reservations: undefined,
  };
  await openListeners(state);
  const sweep = (): void => {
    if (cache === undefined) return;
    const changes = sweepChanges(cache.snapshot(), now());
    if (changes.length > 0) cache.apply(changes).catch(() => undefined);
  };
  const sweepTimer = setInterval(sweep, options.sweepIntervalMs ?? 60_000);
  sweepTimer.unref();
  report.log('info', `dhcp ${mode} server on ${options.interface} (${options.serverAddress}), ports 67 and 4011`, { subnets: subnets.length, leases: cache?.stats().records ?? 0 });
  return serverHandle(state, mode, sweepTimer);
}
