/**
 * @module The router-advertisement sender of an IPv6 provisioning network (docs/ipv6.md): on one
 * interface it multicasts Router Advertisements to ff02::1 at random intervals (RFC 4861 §6.2.4)
 * and answers Router Solicitations (§6.2.6), each advertisement carrying the Managed and Other
 * flags (hosts and firmware start DHCPv6), the provisioning prefix on-link, and a router
 * lifetime of 0 unless the agent is configured as a default router. Malformed solicitations
 * are dropped and counted. On stop it sends one last advertisement with router lifetime 0
 * (§6.2.5). The bytes come from `ra-codec.ts`, the timing from `ra-schedule.ts`.
 */
import { networkInterfaces } from 'node:os';
import { decodeRouterSolicitation, encodeRouterAdvertisement, RaDecodeError, type RouterAdvertisement } from './ra-codec.js';
import { DEFAULT_RA_INTERVALS, nextUnsolicitedDelayMs, solicitedDelayMs, type RaIntervals } from './ra-schedule.js';
import { openRawIcmp6, type Icmp6Datagram, type RawIcmp6Socket } from './raw-icmp6.js';

/** All-nodes multicast, where advertisements go (RFC 4861 §6.2.4). */
const ALL_NODES = 'ff02::1';

/** Options of {@link startRouterAdvertiser}. */
export interface RouterAdvertiserOptions {
  interface: string;
  /** The provisioning prefix, advertised on-link. */
  prefix: { address: string; length: number };
  /** A flag of the prefix (SLAAC); default false: DHCPv6 hands out the addresses. */
  autonomous?: boolean;
  /** 0 (default): not a default router. */
  routerLifetimeSeconds?: number;
  /** RDNSS servers (RFC 8106), left out when empty. */
  dns?: string[];
  /** Default {@link DEFAULT_RA_INTERVALS}. */
  intervals?: RaIntervals;
  log: (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** For tests: the socket (default: {@link openRawIcmp6} on `interface`). */
  openSocket?: (onMessage: (d: Icmp6Datagram) => void, onError: (err: Error) => void) => RawIcmp6Socket;
  /** For tests: [0, 1) (default Math.random). */
  random?: () => number;
}

/** Counters of {@link RouterAdvertiser}. */
export interface RouterAdvertiserStats {
  unsolicitedSent: number;
  solicitedSent: number;
  solicitationsReceived: number;
  /** Solicitations that failed RFC 4861 §6.1.1's checks, by reason. */
  dropped: { malformed: number };
  sendErrors: number;
}

/** A running sender. */
export interface RouterAdvertiser {
  /** The advertisement as sent (router lifetime as configured). */
  readonly advertisement: RouterAdvertisement;
  stats(): RouterAdvertiserStats;
  /** Sends a final advertisement with router lifetime 0, then closes the socket; idempotent. */
  stop(): Promise<void>;
}

/** The interface's MAC and link-local address from `os.networkInterfaces()`, when it has them. */
function interfaceIdentity(name: string): { mac?: string; linkLocal?: string } {
  const entries = networkInterfaces()[name] ?? [];
  const mac = entries.find((e) => e.mac !== '00:00:00:00:00:00')?.mac;
  const linkLocal = entries.find((e) => e.family === 'IPv6' && e.address.toLowerCase().startsWith('fe80:'))?.address.split('%')[0];
  return { ...(mac === undefined ? {} : { mac }), ...(linkLocal === undefined ? {} : { linkLocal }) };
}

/** The advertisement {@link startRouterAdvertiser} sends for `o` (pure but for the interface's MAC). */
export function advertisementFor(o: RouterAdvertiserOptions, sourceMac: string | undefined): RouterAdvertisement {
  const intervals = o.intervals ?? DEFAULT_RA_INTERVALS;
  // RFC 4861 §6.2.1 AdvValidLifetime 30 days, AdvPreferredLifetime 7 days.
  return {
    curHopLimit: 64, managed: true, other: true, routerLifetimeSeconds: o.routerLifetimeSeconds ?? 0,
    reachableTimeMs: 0, retransTimerMs: 0, ...(sourceMac === undefined ? {} : { sourceMac }),
    prefixes: [{ prefix: o.prefix.address, length: o.prefix.length, onLink: true, autonomous: o.autonomous ?? false, validSeconds: 2_592_000, preferredSeconds: 604_800 }],
    ...((o.dns ?? []).length === 0 ? {} : { dns: { addresses: o.dns ?? [], lifetimeSeconds: Math.ceil((3 * intervals.maxMs) / 1000) } }),
  };
}

/**
 * Opens the raw ICMPv6 socket on `o.interface` and starts advertising at once. Throws what
 * {@link openRawIcmp6} throws (`EPERM` without CAP_NET_RAW, `ENODEV`, addon missing).
 */
export function startRouterAdvertiser(o: RouterAdvertiserOptions): RouterAdvertiser {
  const random = o.random ?? Math.random;
  const intervals = o.intervals ?? DEFAULT_RA_INTERVALS;
  const identity = interfaceIdentity(o.interface);
  const advertisement = advertisementFor(o, identity.mac);
  const payload = encodeRouterAdvertisement(advertisement);
  const stats: RouterAdvertiserStats = { unsolicitedSent: 0, solicitedSent: 0, solicitationsReceived: 0, dropped: { malformed: 0 }, sendErrors: 0 };
  let lastSentMs: number | undefined;
  let periodic: NodeJS.Timeout | undefined;
  let solicited: NodeJS.Timeout | undefined;
  let stopped = false;

  const send = (bytes: Buffer): boolean => {
    try {
      // The link-local source (RFC 4861 §4.2); looked up per send as it may appear after DAD.
      socket.send(bytes, ALL_NODES, interfaceIdentity(o.interface).linkLocal);
      lastSentMs = Date.now();
      return true;
    } catch (err) {
      stats.sendErrors++;
      o.log('warn', `router advertisement on ${o.interface} not sent: ${(err as Error).message}`);
      return false;
    }
  };
  const schedule = (): void => {
    clearTimeout(periodic);
    if (stopped) return;
    periodic = setTimeout(() => {
      if (send(payload)) stats.unsolicitedSent++;
      schedule();
    }, nextUnsolicitedDelayMs(stats.unsolicitedSent + stats.solicitedSent, intervals, random));
    periodic.unref();
  };
  const onMessage = (d: Icmp6Datagram): void => {
    try {
      decodeRouterSolicitation(d.payload, d.sourceAddress, d.hopLimit);
    } catch (err) {
      if (!(err instanceof RaDecodeError)) throw err;
      stats.dropped.malformed++;
      o.log('debug', `router solicitation from ${d.sourceAddress} dropped: ${err.reason}`);
      return;
    }
    stats.solicitationsReceived++;
    if (solicited !== undefined || stopped) return; // one answer covers every solicitation pending
    solicited = setTimeout(() => {
      solicited = undefined;
      if (send(payload)) stats.solicitedSent++;
      schedule(); // §6.2.4: every multicast advertisement resets the timer
    }, solicitedDelayMs(Date.now(), lastSentMs, random));
    solicited.unref();
  };
  const onError = (err: Error): void => { o.log('warn', `router advertisement socket on ${o.interface}: ${err.message}`); };
  const socket = (o.openSocket ?? ((m, e) => openRawIcmp6({ interface: o.interface, onMessage: m, onError: e })))(onMessage, onError);
  if (send(payload)) stats.unsolicitedSent++;
  schedule();
  return {
    advertisement,
    stats: () => ({ ...stats, dropped: { ...stats.dropped } }),
    stop() {
      if (stopped) return Promise.resolve();
      stopped = true;
      clearTimeout(periodic);
      clearTimeout(solicited);
      send(encodeRouterAdvertisement({ ...advertisement, routerLifetimeSeconds: 0 }));
      socket.close();
      return Promise.resolve();
    },
  };
}
