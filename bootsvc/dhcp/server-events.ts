/**
 * @module What the DHCP server reports: {@link DhcpBootEvent}s for the flight recorder (one per
 * client message it understood, one per reply it sent, and an `ignored` one with the reason
 * when it stayed silent), the counters of `stats()`, and the conversion from config-shaped
 * address ranges to {@link DhcpSubnet}s.
 * @pure
 */
import type { DhcpBootEvent, DhcpEventMessage } from '../events.js';
import { isIpv4, ZERO_ADDRESS } from './address.js';
import type { ClientInfo } from './client-info.js';
import { DhcpMessageType } from './options.js';
import type { DhcpPacket } from './packet.js';
import type { DhcpSubnet } from './pool.js';
import type { IgnoreReason } from './responder-context.js';

/** Why a datagram was dropped before the responder saw it, or why a reply could not be sent. */
export type DhcpDropReason =
  | 'malformed'
  | 'wrong-interface'
  | 'overload'
  | 'internal-error'
  | 'encode-error'
  | 'lease-store-error'
  | 'send-error'
  /** Dropped by the kernel before the agent read them: the socket's receive queue was full (SO_RXQ_OVFL). */
  | 'socket-queue-full';

/** Counters of one DHCP server since start. */
export interface DhcpServerStats {
  /** Datagrams received per port. */
  received: Record<string, number>;
  /** Replies sent by message type (`offer`, `ack`, `nak`). */
  replies: Record<string, number>;
  /** Requests answered with silence, by responder reason. */
  ignored: Partial<Record<IgnoreReason, number>>;
  /** Datagrams dropped or replies lost, by reason. */
  dropped: Partial<Record<DhcpDropReason, number>>;
  /** BootLookup rejections (the client was then treated as unknown). */
  lookupErrors: number;
  /** RELEASE and DECLINE messages acted on. */
  released: number;
  declined: number;
  /** Replies sent as link-layer frames to the client's MAC, and those broadcast instead. */
  hardwareUnicast: number;
  hardwareUnicastFallbacks: number;
  /** Requests being handled now. */
  inFlight: number;
  leases: { records: number; writes: number; writeErrors: number; coalesced: number; pending: number; memoryOnly: number };
}

/** Client message types to flight-recorder messages; others (OFFER, ACK … from other servers) are not reported. */
const REQUEST_MESSAGE: ReadonlyMap<number, DhcpEventMessage> = new Map<number, DhcpEventMessage>([
  [DhcpMessageType.discover, 'discover'],
  [DhcpMessageType.request, 'request'],
  [DhcpMessageType.decline, 'decline'],
  [DhcpMessageType.release, 'release'],
  [DhcpMessageType.inform, 'inform'],
]);

/** The flight-recorder message of a client message type, or `undefined` when it is not a client message. */
export function requestEventMessage(messageType: number | undefined): DhcpEventMessage | undefined {
  return messageType === undefined ? undefined : REQUEST_MESSAGE.get(messageType);
}

/**
 * A {@link DhcpBootEvent} about `client`'s `request`: its boot identity (arch, firmware, vendor
 * and user class), the relay, the server port, and the UDP source when the client has an address.
 */
export function dhcpEvent(
  message: DhcpEventMessage,
  request: DhcpPacket,
  client: ClientInfo,
  at: { atMs: number; serverPort: number; sourceAddress: string },
): DhcpBootEvent {
  const e: DhcpBootEvent = { kind: 'dhcp', message, mac: client.mac, atMs: at.atMs, xid: request.xid, serverPort: at.serverPort, arch: client.arch, firmware: client.firmware };
  if (at.sourceAddress !== ZERO_ADDRESS) e.clientAddress = at.sourceAddress;
  if (client.archType !== undefined) e.archType = client.archType;
  if (client.vendorClass !== undefined) e.vendorClass = client.vendorClass;
  if (client.userClasses[0] !== undefined) e.userClass = client.userClasses[0];
  if (request.giaddr !== ZERO_ADDRESS) e.giaddr = request.giaddr;
  return e;
}

/** A config-shaped address range (agent/config-dhcp.ts `DhcpRange`, structurally). */
export interface DhcpRangeConfig {
  /** `192.0.2.0/24`. */
  subnet: string;
  first: string;
  last: string;
  router?: string;
  dns?: readonly string[];
  domainName?: string;
}

/**
 * Converts config ranges to responder subnets. Throws a RangeError naming the range when a
 * subnet, address or router is malformed (the config decoder normally catches these first).
 */
export function subnetsFromRanges(ranges: readonly DhcpRangeConfig[]): DhcpSubnet[] {
  return ranges.map((r, i) => {
    const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(r.subnet);
    const prefixLength = Number(m?.[2]);
    if (m?.[1] === undefined || !isIpv4(m[1]) || prefixLength > 32) throw new RangeError(`dhcp range ${i}: subnet "${r.subnet}" is not ADDRESS/PREFIX`);
    for (const [name, value] of [['first', r.first], ['last', r.last], ['router', r.router]] as const) {
      if (value !== undefined && !isIpv4(value)) throw new RangeError(`dhcp range ${i}: ${name} "${value}" is not an IPv4 address`);
    }
    const subnet: DhcpSubnet = { network: m[1], prefixLength, rangeStart: r.first, rangeEnd: r.last };
    if (r.router !== undefined) subnet.router = r.router;
    if (r.dns !== undefined && r.dns.length > 0) subnet.dnsServers = [...r.dns];
    if (r.domainName !== undefined) subnet.domainName = r.domainName;
    return subnet;
  });
}
