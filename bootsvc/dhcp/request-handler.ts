/**
 * @module The DHCP server's request handler as pure steps, executed in order by the socket loop
 * (`dhcp-server.ts`): which {@link BootQuery} a request needs ({@link bootQueryFor}), the
 * decision over the lease table ({@link decideRequest}, the responder of `indexed-respond.ts`),
 * what to put on the wire and where ({@link planReply}: the encoded reply, its RFC 2131 §4.1
 * route, whether it waits for its lease write), the flight-recorder events of each outcome
 * ({@link requestEvents}, {@link replyEvent}), and the expired records the sweep forgets
 * ({@link sweepChanges}). Nothing here does I/O or reads a clock: the loop passes the time in.
 * @pure
 */
import { leaseKey, type BootDecision, type BootQuery, type Lease } from '../boot-lookup.js';
import type { DhcpBootEvent } from '../events.js';
import { ZERO_ADDRESS } from './address.js';
import { classifyClient } from './client-info.js';
import { respondIndexed, type IndexedResponderContext, type LeaseIndex } from './indexed-respond.js';
import { DhcpMessageType } from './options.js';
import { getMessageType, getRequestedAddress } from './option-values.js';
import { BootpOp, encodeDhcpPacket, maxReplyBytes, type DhcpPacket } from './packet.js';
import type { DhcpSubnet, Reservation } from './pool.js';
import { DhcpPort, routeReply, type ReplyRoute } from './reply-route.js';
import type { LeaseChange, ResponderResult, UnknownHostPolicy } from './responder-context.js';
import { dhcpEvent, requestEventMessage } from './server-events.js';

/** The server's settings a decision needs (from its options, fixed while it runs). */
export interface DhcpHandlerSettings {
  mode: 'full' | 'proxy';
  serverAddress: string;
  subnets: readonly DhcpSubnet[];
  leaseSeconds: number;
  unknownHosts: UnknownHostPolicy;
  offerHoldSeconds?: number;
  declineQuarantineSeconds?: number;
}

/** Where a request came from: its UDP source and the server port (67 or 4011) it arrived on. */
export interface DhcpRequestOrigin {
  serverPort: typeof DhcpPort.server | typeof DhcpPort.pxeBootServer;
  sourceAddress: string;
  sourcePort: number;
}

/**
 * The boot lookup a request needs, or `undefined` when the responder decides without one: not
 * a BOOTREQUEST with a DHCP message type from an Ethernet client, or a RELEASE/DECLINE to the
 * full server's port 67 (pure lease bookkeeping).
 */
export function bootQueryFor(request: DhcpPacket, mode: 'full' | 'proxy', serverPort: number): BootQuery | undefined {
  const messageType = getMessageType(request.options);
  if (request.op !== BootpOp.request || messageType === undefined || request.htype !== 1 || request.hlen !== 6) return undefined;
  if (mode === 'full' && serverPort === DhcpPort.server && (messageType === DhcpMessageType.release || messageType === DhcpMessageType.decline)) return undefined;
  const client = classifyClient(request);
  const q: BootQuery = { mac: client.mac, arch: client.arch, firmware: client.firmware, transport: client.transport, isIpxe: client.isIpxe };
  if (client.archType !== undefined) q.archType = client.archType;
  if (client.userClasses[0] !== undefined) q.userClass = client.userClasses[0];
  if (client.uuid !== undefined) q.uuid = client.uuid;
  if (request.giaddr !== ZERO_ADDRESS) q.relayAddress = request.giaddr;
  return q;
}

/** What one decision is made against, beside the request (see {@link decideRequest}). */
export interface DhcpDecisionInput {
  settings: DhcpHandlerSettings;
  serverPort: number;
  /** The lease table and its index (proxy mode: an empty one). */
  leases: LeaseIndex;
  /** Whether the store holds the record under a key as the table does (full mode). */
  leaseSettled?: (key: string) => boolean;
  reservations: readonly Reservation[];
  /** `reservations`' addresses as numbers (pool.ts `reservedAddresses`), built once per array. */
  reservedAddresses?: ReadonlySet<number>;
  bootDecision: BootDecision | undefined;
  discoveryDecision: BootDecision | undefined;
  /** Discovery is on and its lookup refused this unknown MAC (responder-context.ts). */
  discoveryRefused?: boolean;
  nowMs: number;
}

/** The responder's answer to `request` (indexed-respond.ts `respondIndexed`). */
export function decideRequest(request: DhcpPacket, input: DhcpDecisionInput): ResponderResult {
  const { settings } = input;
  const ctx: IndexedResponderContext = {
    mode: settings.mode,
    serverAddress: settings.serverAddress,
    serverPort: input.serverPort,
    subnets: settings.subnets,
    reservations: input.reservations,
    leaseSeconds: settings.leaseSeconds,
    bootDecision: input.bootDecision,
    unknownHosts: settings.unknownHosts,
    nowMs: input.nowMs,
  };
  if (input.reservedAddresses !== undefined) ctx.reservedAddresses = input.reservedAddresses;
  if (input.leaseSettled !== undefined) ctx.leaseSettled = input.leaseSettled;
  if (input.discoveryDecision !== undefined) ctx.discoveryDecision = input.discoveryDecision;
  if (input.discoveryRefused === true) ctx.discoveryRefused = true;
  if (settings.offerHoldSeconds !== undefined) ctx.offerHoldSeconds = settings.offerHoldSeconds;
  if (settings.declineQuarantineSeconds !== undefined) ctx.declineQuarantineSeconds = settings.declineQuarantineSeconds;
  return respondIndexed(request, ctx, input.leases);
}

/** A reply result of the responder. */
export type ReplyResult = Extract<ResponderResult, { kind: 'reply' }>;

/** What to do with a reply: send `payload` along `route` (after its lease write when `awaitLeaseWrite`), or drop it. */
export type ReplyPlan =
  | { kind: 'send'; payload: Buffer; route: ReplyRoute; awaitLeaseWrite: boolean }
  | { kind: 'encode-error'; error: unknown };

/**
 * Encodes `result`'s reply within the size the client accepts and routes it (reply-route.ts).
 * An ACK that binds (lease changes to store) waits for its write: the binding is durable
 * before the client hears of it, so a restart cannot hand its address to another.
 */
export function planReply(request: DhcpPacket, result: ReplyResult, origin: DhcpRequestOrigin): ReplyPlan {
  let payload: Buffer;
  try {
    payload = encodeDhcpPacket(result.packet, { maxPacketBytes: maxReplyBytes(request) });
  } catch (error) {
    return { kind: 'encode-error', error };
  }
  const route = routeReply(request, result.packet, { address: origin.sourceAddress, port: origin.sourcePort, serverPort: origin.serverPort });
  return { kind: 'send', payload, route, awaitLeaseWrite: result.messageType === 'ack' && result.leaseChanges.length > 0 };
}

/**
 * The flight-recorder events of the client's message in `result`: the message itself (with the
 * address it asked for, option 50 or `ciaddr`) and, when it got no reply, an `ignored` event
 * saying why. None for a result without a client or a message that is not a client's.
 */
export function requestEvents(request: DhcpPacket, result: ResponderResult, origin: DhcpRequestOrigin, atMs: number, ignoredBecause?: string): DhcpBootEvent[] {
  const message = requestEventMessage(getMessageType(request.options));
  const who = result.client;
  if (who === undefined || message === undefined) return [];
  const at = { atMs, serverPort: origin.serverPort, sourceAddress: origin.sourceAddress };
  const e = dhcpEvent(message, request, who, at);
  const asked = getRequestedAddress(request.options) ?? (request.ciaddr === ZERO_ADDRESS ? undefined : request.ciaddr);
  if (asked !== undefined) e.address = asked;
  if (ignoredBecause === undefined) return [e];
  return [e, { ...dhcpEvent('ignored', request, who, at), detail: `${message}: ${ignoredBecause}` }];
}

/** The flight-recorder event of a reply sent along `routeTaken` (a route kind, or `broadcast-fallback`). */
export function replyEvent(request: DhcpPacket, result: ReplyResult, origin: DhcpRequestOrigin, atMs: number, routeTaken: string): DhcpBootEvent {
  const reply = dhcpEvent(result.messageType, request, result.client, { atMs, serverPort: origin.serverPort, sourceAddress: origin.sourceAddress });
  if (result.packet.yiaddr !== ZERO_ADDRESS) reply.address = result.packet.yiaddr;
  if (result.bootFile !== undefined) reply.bootFile = result.bootFile;
  reply.detail = result.detail === undefined ? `sent ${routeTaken}` : `${result.detail}; sent ${routeTaken}`;
  return reply;
}

/**
 * The records the periodic sweep deletes at `nowMs`: expired offers and quarantines, and an
 * expired binding only once another record of its address expires later (until then it keeps
 * the client's address for its return).
 */
export function sweepChanges(records: readonly Lease[], nowMs: number): LeaseChange[] {
  const newest = new Map<string, number>();
  for (const l of records) newest.set(l.address, Math.max(newest.get(l.address) ?? -Infinity, l.expiresAtMs));
  const changes: LeaseChange[] = [];
  for (const l of records) {
    if (l.expiresAtMs > nowMs) continue;
    const superseded = (newest.get(l.address) ?? -Infinity) > l.expiresAtMs;
    if (l.state !== 'bound' || superseded) changes.push({ op: 'delete', key: leaseKey(l) });
  }
  return changes;
}
