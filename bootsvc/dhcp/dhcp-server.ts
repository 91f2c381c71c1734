/**
 * @module The DHCP server's I/O: interface-bound sockets on UDP 67 and 4011 (see
 * `bound-socket.ts`), decoding with drop-and-count for malformed datagrams, one
 * {@link BootLookup} per request, the pure responder (indexed: `indexed-respond.ts`), lease persistence through
 * the {@link LeaseCache}, and transmission along {@link routeReply}'s RFC 2131 §4.1 route —
 * relay replies unicast to `giaddr:67`, hardware unicast as a link-layer frame to the client's
 * MAC (broadcast when the packet socket is not permitted), everything out of the provisioning
 * interface only. Modes: `full` (addresses and boot information, 67 + 4011), `proxy` (boot
 * information only beside the site's DHCP server, 67 + 4011), `off` (nothing opened).
 */
import { networkInterfaces } from 'node:os';
import { leaseKey, type BootDecision, type BootLookup, type BootQuery, type LeaseStore } from '../boot-lookup.js';
import { decideBoot, type BootFileOptions } from '../ipxe/boot-files.js';
import { emitBootEvent, type BootEventListener, type DhcpBootEvent } from '../events.js';
import { isIpv4 } from './address.js';
import { DEFAULT_RECEIVE_BUFFER_BYTES, openBoundSocket, type BoundDatagram, type BoundSocket, type OpenBoundSocketOptions } from './bound-socket.js';
import { classifyClient, type ClientInfo } from './client-info.js';
import { isDhcpDecodeError } from './errors.js';
import { LeaseCache } from './lease-cache.js';
import { DhcpMessageType } from './options.js';
import { getMessageType, getRequestedAddress } from './option-values.js';
import { BootpOp, decodeDhcpPacket, encodeDhcpPacket, maxReplyBytes, type DhcpPacket } from './packet.js';
import type { DhcpSubnet, Reservation } from './pool.js';
import { DhcpPort, routeReply, type ReplyRoute } from './reply-route.js';
import { respondIndexed, type LeaseIndex } from './indexed-respond.js';
import type { LeaseChange, ResponderContext, ResponderResult, UnknownHostPolicy } from './responder-context.js';
import { steadyEpochMs } from '../steady-clock.js';
import type { TurnBudget } from '../turn-budget.js';
import { dhcpEvent, requestEventMessage, subnetsFromRanges, type DhcpDropReason, type DhcpRangeConfig, type DhcpServerStats } from './server-events.js';

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
  /** With `unknownHosts: discover`: what unknown MACs boot (the discovery ramdisk chain). */
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

/** Whether `address` is configured on `iface` (then replies name it as their source). */
function interfaceHasAddress(iface: string, address: string): boolean {
  return (networkInterfaces()[iface] ?? []).some((a) => a.family === 'IPv4' && a.address === address);
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
  const stats: DhcpServerStats = {
    received: {}, replies: {}, ignored: {}, dropped: {}, lookupErrors: 0, released: 0, declined: 0,
    hardwareUnicast: 0, hardwareUnicastFallbacks: 0, inFlight: 0,
    leases: { records: 0, writes: 0, writeErrors: 0, coalesced: 0, pending: 0, memoryOnly: 0 },
  };
  if (options.mode === 'off') {
    return { mode: 'off', stop: () => Promise.resolve(), stats: () => structuredClone(stats) };
  }
  const mode = options.mode;
  const now = options.now ?? steadyEpochMs;
  /** Event stamps follow the wall clock (they sit beside other events in the host's timeline). */
  const wallNow = options.now ?? Date.now;
  const log: DhcpLogFunction = (level, message, fields) => {
    try {
      options.log?.(level, message, fields);
    } catch {
      // A broken logger must not take DHCP down with it.
    }
  };
  const lastLogged = new Map<string, number>();
  /** Logs at most once per 10 s per key, so a flood cannot flood the log. */
  const logLimited = (key: string, level: DhcpLogLevel, message: string, fields?: Record<string, unknown>): void => {
    const t = now();
    if ((lastLogged.get(key) ?? -Infinity) + 10_000 > t) return;
    lastLogged.set(key, t);
    log(level, message, fields);
  };
  const count = (name: string, labels: Record<string, string>): void => {
    try {
      options.metrics?.(name, labels);
    } catch (err) {
      logLimited('metrics', 'warn', 'dhcp metrics callback threw', { err });
    }
  };
  const drop = (reason: DhcpDropReason): void => {
    stats.dropped[reason] = (stats.dropped[reason] ?? 0) + 1;
    count('dhcp_dropped_total', { reason });
  };
  const emit = (event: DhcpBootEvent): void => {
    const err = emitBootEvent(options.onEvent, event);
    if (err !== undefined) logLimited('onEvent', 'warn', 'dhcp event listener threw', { err });
  };

  const cache =
    mode === 'full' && options.leaseStore !== undefined
      ? await LeaseCache.load(options.leaseStore, {
          ...(options.leaseWriteConcurrency === undefined ? {} : { concurrency: options.leaseWriteConcurrency }),
          onWriteError: (err, change) => {
            logLimited('lease-write', 'error', 'dhcp lease could not be stored', { err, change });
          },
          onInvalid: (record) => {
            log('warn', 'dhcp lease store holds a malformed record; ignored', { record });
          },
        })
      : undefined;

  const sourceAddress = interfaceHasAddress(options.interface, options.serverAddress) ? options.serverAddress : undefined;
  if (sourceAddress === undefined) {
    log('warn', `dhcp serverAddress ${options.serverAddress} is not configured on ${options.interface}; replies leave with the interface's own address`);
  }
  const maxInFlight = options.maxInFlight ?? 1024;
  let framesUsable = options.linkLayerUnicast ?? true;
  let stopping = false;
  const handling = new Set<Promise<void>>();
  const listeners: Listener[] = [];

  const lookup = async (q: BootQuery, which: BootLookup, label: string): Promise<BootDecision | undefined> => {
    try {
      return decideBoot(await which.target(q), q, options.bootFiles);
    } catch (err) {
      stats.lookupErrors++;
      logLimited(`lookup:${label}`, 'warn', `dhcp ${label} failed; treating ${q.mac} as unknown`, { err, mac: q.mac });
      return undefined;
    }
  };

  const sendReply = (listener: Listener, payload: Buffer, route: ReplyRoute): string => {
    const socket = listener.socket;
    if (route.kind === 'hardware-unicast') {
      if (framesUsable) {
        try {
          socket.sendFrame(payload, route.mac, options.serverAddress, socket.port, route.address, route.port);
          stats.hardwareUnicast++;
          return route.kind;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (typeof code === 'string' && FRAME_UNAVAILABLE.has(code)) {
            framesUsable = false;
            log('warn', `dhcp cannot send link-layer frames on ${options.interface} (${code}: needs CAP_NET_RAW); broadcasting replies instead (RFC 2131 §4.1 allows it)`);
          } else {
            logLimited('frame', 'warn', 'dhcp link-layer unicast failed; broadcasting this reply', { err });
          }
        }
      }
      stats.hardwareUnicastFallbacks++;
      socket.send(payload, route.fallback.address, route.fallback.port, sourceAddress);
      return 'broadcast-fallback';
    }
    socket.send(payload, route.address, route.port, sourceAddress);
    return route.kind;
  };

  const decide = (request: DhcpPacket, listener: Listener, bootDecision: BootDecision | undefined, discoveryDecision: BootDecision | undefined): ResponderResult => {
    const ctx: Omit<ResponderContext, 'leases'> = {
      mode,
      serverAddress: options.serverAddress,
      serverPort: listener.serverPort,
      subnets,
      reservations: options.reservations?.() ?? [],
      leaseSeconds: options.leaseSeconds ?? 3600,
      ...(cache !== undefined ? { leaseSettled: (key: string) => cache.settled(key) } : {}),
      bootDecision,
      unknownHosts: options.unknownHosts ?? 'ignore',
      nowMs: now(),
    };
    if (discoveryDecision !== undefined) ctx.discoveryDecision = discoveryDecision;
    if (options.offerHoldSeconds !== undefined) ctx.offerHoldSeconds = options.offerHoldSeconds;
    if (options.declineQuarantineSeconds !== undefined) ctx.declineQuarantineSeconds = options.declineQuarantineSeconds;
    return respondIndexed(request, ctx, cache ?? EMPTY_INDEX);
  };

  /** Handles one decoded request end to end; never throws. */
  const handleRequest = async (listener: Listener, d: BoundDatagram, request: DhcpPacket): Promise<void> => {
    if (options.turnBudget !== undefined) {
      await options.turnBudget.enter();
      if (stopping) return;
    }
    const messageType = getMessageType(request.options);
    const lookupWanted =
      request.op === BootpOp.request && messageType !== undefined && request.htype === 1 && request.hlen === 6 &&
      !(mode === 'full' && listener.serverPort === DhcpPort.server && (messageType === DhcpMessageType.release || messageType === DhcpMessageType.decline));
    let client: ClientInfo | undefined;
    let bootDecision: BootDecision | undefined;
    let discoveryDecision: BootDecision | undefined;
    if (lookupWanted) {
      client = classifyClient(request);
      const q: BootQuery = { mac: client.mac, arch: client.arch, firmware: client.firmware, transport: client.transport, isIpxe: client.isIpxe };
      if (client.archType !== undefined) q.archType = client.archType;
      if (client.userClasses[0] !== undefined) q.userClass = client.userClasses[0];
      if (client.uuid !== undefined) q.uuid = client.uuid;
      if (request.giaddr !== '0.0.0.0') q.relayAddress = request.giaddr;
      bootDecision = await lookup(q, options.bootLookup, 'boot lookup');
      if (bootDecision === undefined && options.unknownHosts === 'discover' && options.discoveryLookup !== undefined) {
        discoveryDecision = await lookup(q, options.discoveryLookup, 'discovery lookup');
      }
      if (stopping) return;
    }
    const result = decide(request, listener, bootDecision, discoveryDecision);
    const durable = cache === undefined ? Promise.resolve() : cache.apply(result.leaseChanges);
    const message = requestEventMessage(messageType);
    const at = { atMs: wallNow(), serverPort: listener.serverPort, sourceAddress: d.sourceAddress };
    const who = result.client;
    /** Reports the client's message and, when it got no reply, why. */
    const report = (ignoredBecause?: string): void => {
      if (who === undefined || message === undefined || options.onEvent === undefined) return;
      const e = dhcpEvent(message, request, who, at);
      const asked = getRequestedAddress(request.options) ?? (request.ciaddr === '0.0.0.0' ? undefined : request.ciaddr);
      if (asked !== undefined) e.address = asked;
      emit(e);
      if (ignoredBecause !== undefined) emit({ ...dhcpEvent('ignored', request, who, at), detail: `${message}: ${ignoredBecause}` });
    };
    if (result.kind !== 'reply') {
      durable.catch(() => undefined);
      if (result.kind === 'ignore') {
        stats.ignored[result.reason] = (stats.ignored[result.reason] ?? 0) + 1;
        count('dhcp_ignored_total', { reason: result.reason });
        if (result.reason === 'pool-exhausted') logLimited('pool-exhausted', 'warn', `dhcp pool exhausted: no address for ${result.client?.mac ?? 'a client'}`, { giaddr: request.giaddr });
        report(result.reason);
      } else {
        if (result.event === 'released') stats.released++;
        else stats.declined++;
        report();
      }
      return;
    }
    let payload: Buffer;
    try {
      payload = encodeDhcpPacket(result.packet, { maxPacketBytes: maxReplyBytes(request) });
    } catch (err) {
      durable.catch(() => undefined);
      drop('encode-error');
      logLimited('encode', 'error', `dhcp reply to ${result.client.mac} cannot be encoded`, { err });
      report('encode-error');
      return;
    }
    if (result.messageType === 'ack' && result.leaseChanges.length > 0) {
      // The binding is durable before the client hears of it, so a restart cannot hand its address to another.
      try {
        await durable;
      } catch {
        drop('lease-store-error');
        report('lease-store-error');
        return;
      }
      if (stopping) return;
    } else {
      durable.catch(() => undefined);
    }
    const route = routeReply(request, result.packet, { address: d.sourceAddress, port: d.sourcePort, serverPort: listener.serverPort });
    let routeTaken: string;
    try {
      routeTaken = sendReply(listener, payload, route);
    } catch (err) {
      drop('send-error');
      logLimited(`send:${route.kind}`, 'warn', `dhcp reply to ${result.client.mac} could not be sent (${route.kind} ${route.address}:${route.port})`, { err });
      report(`send-error (${route.kind} ${route.address})`);
      return;
    }
    stats.replies[result.messageType] = (stats.replies[result.messageType] ?? 0) + 1;
    count('dhcp_replies_total', { type: result.messageType });
    report();
    if (options.onEvent === undefined) return;
    const reply = dhcpEvent(result.messageType, request, result.client, at);
    if (result.packet.yiaddr !== '0.0.0.0') reply.address = result.packet.yiaddr;
    if (result.bootFile !== undefined) reply.bootFile = result.bootFile;
    reply.detail = result.detail === undefined ? `sent ${routeTaken}` : `${result.detail}; sent ${routeTaken}`;
    emit(reply);
  };

  const onDatagram = (listener: Listener, d: BoundDatagram): void => {
    if (stopping) return;
    const portLabel = String(listener.serverPort);
    stats.received[portLabel] = (stats.received[portLabel] ?? 0) + 1;
    count('dhcp_received_total', { port: portLabel });
    // SO_BINDTODEVICE already guarantees this; IP_PKTINFO lets us check rather than trust.
    if (d.interfaceIndex !== 0 && d.interfaceIndex !== listener.socket.interfaceIndex) {
      drop('wrong-interface');
      return;
    }
    if (handling.size >= maxInFlight) {
      drop('overload');
      logLimited('overload', 'warn', `dhcp is handling ${handling.size} requests; dropping new ones until it catches up`);
      return;
    }
    let request: DhcpPacket;
    try {
      request = decodeDhcpPacket(d.payload);
    } catch (err) {
      if (isDhcpDecodeError(err)) {
        drop('malformed');
        logLimited('malformed', 'debug', `dhcp dropped a malformed datagram from ${d.sourceAddress}:${d.sourcePort}: ${err.message}`);
      } else {
        drop('internal-error');
        logLimited('decode-internal', 'error', 'dhcp decoder failed unexpectedly', { err });
      }
      return;
    }
    const task = handleRequest(listener, d, request).catch((err: unknown) => {
      drop('internal-error');
      logLimited('internal', 'error', 'dhcp request handling failed', { err });
    });
    handling.add(task);
    stats.inFlight = handling.size;
    void task.finally(() => {
      handling.delete(task);
      stats.inFlight = handling.size;
    });
  };

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
            if (listener !== undefined) onDatagram(listener, d);
          } catch (err) {
            drop('internal-error');
            logLimited('datagram', 'error', 'dhcp datagram handling failed', { err });
          }
        },
        onError: (err) => {
          logLimited(`socket:${serverPort}`, 'warn', `dhcp socket ${options.interface}:${serverPort} error`, { err });
        },
      });
      listeners.push({ socket, serverPort });
      if (socket.receiveBufferBytes < DEFAULT_RECEIVE_BUFFER_BYTES) {
        log('warn', `dhcp socket ${options.interface}:${serverPort} got a ${Math.round(socket.receiveBufferBytes / 1024)} KiB receive buffer of the ${DEFAULT_RECEIVE_BUFFER_BYTES / 1024} KiB asked: ` +
          'net.core.rmem_max caps it (the service has no CAP_NET_ADMIN to force it). A burst of DISCOVERs larger than that queue is dropped by the kernel ' +
          '(counted as rackside_dhcp_dropped_total{reason="socket-queue-full"}) and resent by the firmware seconds later; ' +
          `raise the cap: sysctl -w net.core.rmem_max=${DEFAULT_RECEIVE_BUFFER_BYTES}, and persist it in /etc/sysctl.d/`);
      }
    }
  } catch (err) {
    for (const l of listeners) l.socket.close();
    await cache?.flush();
    throw err;
  }

  const sweep = (): void => {
    if (cache === undefined) return;
    const t = now();
    const records = cache.snapshot();
    const newest = new Map<string, number>();
    for (const l of records) newest.set(l.address, Math.max(newest.get(l.address) ?? -Infinity, l.expiresAtMs));
    const changes: LeaseChange[] = [];
    for (const l of records) {
      if (l.expiresAtMs > t) continue;
      // Expired offers and quarantines are forgotten; an expired binding only once another record holds its address.
      const superseded = (newest.get(l.address) ?? -Infinity) > l.expiresAtMs;
      if (l.state !== 'bound' || superseded) changes.push({ op: 'delete', key: leaseKey(l) });
    }
    if (changes.length > 0) cache.apply(changes).catch(() => undefined);
  };
  const sweepTimer = setInterval(sweep, options.sweepIntervalMs ?? 60_000);
  sweepTimer.unref();

  log('info', `dhcp ${mode} server on ${options.interface} (${options.serverAddress}), ports 67 and 4011`, { subnets: subnets.length, leases: cache?.stats().records ?? 0 });
  let stopped: Promise<void> | undefined;
  return {
    mode,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        clearInterval(sweepTimer);
        for (const l of listeners) l.socket.close();
        // A BootLookup or lease store that never answers must not hold the agent's shutdown forever.
        let timer: NodeJS.Timeout | undefined;
        const gaveUp = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => { resolve('timeout'); }, options.stopTimeoutMs ?? 5000)));
        const drained = (async () => {
          await Promise.all([...handling]);
          await cache?.flush();
          return 'drained' as const;
        })();
        if ((await Promise.race([drained, gaveUp])) === 'timeout') log('warn', `dhcp stop: gave up waiting for ${handling.size} requests and ${cache?.stats().pending ?? 0} lease writes`);
        clearTimeout(timer);
      })();
      return stopped;
    },
    stats() {
      const out = structuredClone(stats);
      if (cache !== undefined) out.leases = cache.stats();
      const kernelDrops = listeners.reduce((sum, l) => sum + l.socket.kernelDrops(), 0);
      if (kernelDrops > 0) out.dropped['socket-queue-full'] = kernelDrops;
      return out;
    },
  };
}
