/**
 * @module The full DHCP server's decisions (RFC 2131 §4.3): DISCOVER → OFFER, REQUEST in its
 * SELECTING / INIT-REBOOT / RENEWING / REBINDING forms → ACK, NAK or silence, RELEASE, DECLINE
 * (address quarantined) and INFORM (ACK without address or lease time). Addresses come from
 * `pool.ts`; boot information from `reply-builder.ts`.
 * @pure
 */
import { leaseKey, type BootDecision, type Lease } from '../boot-lookup.js';
import { ZERO_ADDRESS } from './address.js';
import type { ClientInfo } from './client-info.js';
import { DhcpMessageType, DhcpOption, encodeText } from './options.js';
import { getRequestedAddress, getServerIdentifier } from './option-values.js';
import type { DhcpPacket } from './packet.js';
import {
  allocateAddress,
  bindLease,
  checkAddress,
  findClientLease,
  findReservation,
  offerLease,
  quarantineAddress,
  reusableLeaseSeconds,
  selectSubnet,
  subnetContains,
  type PoolState,
} from './pool.js';
import { addBootInfo, addSubnetOptions, chooseBootFile, createReply, setOption } from './reply-builder.js';
import { ignore, type LeaseChange, type ResponderContext, type ResponderResult } from './responder-context.js';

const DEFAULT_OFFER_HOLD_SECONDS = 60;
const DEFAULT_QUARANTINE_SECONDS = 600;

/**
 * Pool state for the subnet a request belongs to: by `giaddr` when relayed; by `ciaddr` for a
 * RENEWING client, which unicasts straight to us from a relayed subnet ("the DHCP server will
 * trust the value in 'ciaddr'", RFC 2131 §4.3.2); else the local subnet.
 */
function poolFor(request: DhcpPacket, ctx: ResponderContext): PoolState | undefined {
  const renewing = request.giaddr === ZERO_ADDRESS && request.ciaddr !== ZERO_ADDRESS;
  const subnet =
    (renewing ? ctx.subnets.find((s) => subnetContains(s, request.ciaddr)) : undefined) ??
    selectSubnet(ctx.subnets, request.giaddr, ctx.serverAddress);
  if (subnet === undefined) return undefined;
  const pool: PoolState = { subnet, serverAddress: ctx.serverAddress, leases: ctx.leases, reservations: ctx.reservations, nowMs: ctx.nowMs };
  if (ctx.leaseIndex !== undefined) pool.index = ctx.leaseIndex;
  if (ctx.reservedAddresses !== undefined) pool.reserved = ctx.reservedAddresses;
  return pool;
}

/** The time left of the client's own `lease` on `address` when it is given again as it is, without a write (pool.ts `reusableLeaseSeconds`). */
function reusedLeaseSeconds(lease: Lease | undefined, address: string, client: ClientInfo, ctx: ResponderContext): number | undefined {
  if (lease === undefined) return undefined;
  return reusableLeaseSeconds(lease, address, client.hostName, ctx.nowMs, ctx.leaseSeconds, ctx.leaseSettled?.(leaseKey(lease)) ?? false);
}

/** An OFFER or ACK for `address` with subnet, lease (`leaseSeconds`, default the configured time) and boot options. */
function addressReply(
  request: DhcpPacket,
  client: ClientInfo,
  ctx: ResponderContext,
  decision: BootDecision,
  pool: PoolState,
  messageType: number,
  address: string,
  leaseSeconds = ctx.leaseSeconds,
): ResponderResult {
  const choice = chooseBootFile(decision, client);
  if (choice.kind === 'refuse') return ignore(choice.reason, client);
  const reply = createReply(request, messageType, ctx.serverAddress);
  reply.yiaddr = address;
  if (messageType === DhcpMessageType.ack) reply.ciaddr = request.ciaddr;
  addSubnetOptions(reply, pool.subnet, leaseSeconds, findReservation(pool, client.mac)?.hostName);
  const result: ResponderResult = { kind: 'reply', packet: reply, messageType: messageType === DhcpMessageType.ack ? 'ack' : 'offer', client, leaseChanges: [] };
  if (choice.kind === 'file') {
    addBootInfo(reply, request, client, choice.bootFile, ctx.serverAddress, 'dhcp');
    result.bootFile = choice.bootFile;
  }
  return result;
}

/** A NAK with the reason as option 56 (RFC 2131 §4.3.2; table 3 allows 56 in a DHCPNAK). */
function nak(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext, detail: string): ResponderResult {
  const reply = createReply(request, DhcpMessageType.nak, ctx.serverAddress);
  setOption(reply, DhcpOption.message, encodeText(detail));
  return { kind: 'reply', packet: reply, messageType: 'nak', client, detail, leaseChanges: [] };
}

/** DHCPDISCOVER → DHCPOFFER with an address from the pool (RFC 2131 §4.3.1), or silence when exhausted. */
export function respondDiscover(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext, decision: BootDecision): ResponderResult {
  const pool = poolFor(request, ctx);
  if (pool === undefined) return ignore('no-subnet', client);
  const allocation = allocateAddress(pool, client.mac, getRequestedAddress(request.options));
  if (allocation === undefined) return ignore('pool-exhausted', client);
  const own = findClientLease(ctx.leases, client.mac, ctx.leaseIndex);
  const reused = reusedLeaseSeconds(own, allocation.address, client, ctx);
  const result = addressReply(request, client, ctx, decision, pool, DhcpMessageType.offer, allocation.address, reused);
  if (result.kind !== 'reply') return result;
  result.detail = allocation.source;
  const held = offerLease(pool, client.mac, allocation.address, ctx.offerHoldSeconds ?? DEFAULT_OFFER_HOLD_SECONDS);
  if (held !== undefined) result.leaseChanges.push({ op: 'put', lease: held });
  return result;
}

/**
 * DHCPREQUEST (RFC 2131 §4.3.2). SELECTING (option 54 present): another server's id → silence
 * (dropping our held offer); ours → ACK the requested address if it is still the client's to
 * have, else NAK. INIT-REBOOT (option 50, no `ciaddr`) and RENEWING/REBINDING (`ciaddr` set):
 * wrong network or an address that is not the client's → NAK; no record of the client and an
 * address outside our range → silence, as the RFC requires for coexisting servers.
 */
export function respondRequest(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext, decision: BootDecision): ResponderResult {
  const serverId = getServerIdentifier(request.options);
  const held = findClientLease(ctx.leases, client.mac, ctx.leaseIndex);
  if (serverId !== undefined && serverId !== ctx.serverAddress) {
    const drop: LeaseChange[] = held?.state === 'offered' ? [{ op: 'delete', key: client.mac }] : [];
    return ignore('other-server', client, drop);
  }
  const selecting = serverId !== undefined;
  const address = selecting || request.ciaddr === ZERO_ADDRESS ? getRequestedAddress(request.options) : request.ciaddr;
  if (address === undefined) return ignore('malformed-request', client);
  const pool = poolFor(request, ctx);
  if (pool === undefined) return ignore('no-subnet', client);
  if (!subnetContains(pool.subnet, address)) return nak(request, client, ctx, `${address} is not on this network`);
  const reservation = findReservation(pool, client.mac);
  const recorded = reservation?.address ?? held?.address;
  if (recorded !== undefined && recorded !== address && (reservation !== undefined || !selecting)) {
    return nak(request, client, ctx, `${address} is not this client's address`);
  }
  const availability = checkAddress(pool, client.mac, address);
  if (availability !== 'available') {
    if (!selecting && recorded === undefined && availability === 'outside-range') return ignore('no-record', client);
    return nak(request, client, ctx, `${address} is not available (${availability})`);
  }
  // A lease given moments ago (the previous boot stage) is acknowledged again as it is, without a write.
  const reused = reusedLeaseSeconds(held, address, client, ctx);
  const result = addressReply(request, client, ctx, decision, pool, DhcpMessageType.ack, address, reused);
  if (result.kind === 'reply') {
    result.detail = selecting ? 'selecting' : request.ciaddr === ZERO_ADDRESS ? 'init-reboot' : 'renewing';
    if (reused === undefined) result.leaseChanges.push({ op: 'put', lease: bindLease(ctx.nowMs, client.mac, address, ctx.leaseSeconds, client.hostName) });
    else result.detail += ', lease reused';
  }
  return result;
}

/**
 * DHCPRELEASE (RFC 2131 §4.3.4): the address is freed but the record kept (expired now), so the
 * client gets the same address back next time.
 */
export function respondRelease(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext): ResponderResult {
  const serverId = getServerIdentifier(request.options);
  if (serverId !== undefined && serverId !== ctx.serverAddress) return ignore('other-server', client);
  const lease = findClientLease(ctx.leases, client.mac, ctx.leaseIndex);
  if (lease === undefined || lease.address !== request.ciaddr) return ignore('no-record', client);
  return { kind: 'no-reply', event: 'released', client, leaseChanges: [{ op: 'put', lease: { ...lease, expiresAtMs: ctx.nowMs } }] };
}

/**
 * DHCPDECLINE (RFC 2131 §4.3.3): the client found the address in use. Only the address this
 * client holds from us is quarantined (so a client cannot poison the pool), for
 * `declineQuarantineSeconds`; the client's lease record is dropped so its next DISCOVER gets a
 * fresh address.
 */
export function respondDecline(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext): ResponderResult {
  const serverId = getServerIdentifier(request.options);
  if (serverId !== undefined && serverId !== ctx.serverAddress) return ignore('other-server', client);
  const address = getRequestedAddress(request.options);
  if (address === undefined) return ignore('malformed-request', client);
  const lease = findClientLease(ctx.leases, client.mac, ctx.leaseIndex);
  if (lease?.address !== address) return ignore('no-record', client);
  const quarantine = quarantineAddress(ctx.nowMs, client.mac, address, ctx.declineQuarantineSeconds ?? DEFAULT_QUARANTINE_SECONDS);
  return {
    kind: 'no-reply',
    event: 'declined',
    client,
    leaseChanges: [{ op: 'delete', key: client.mac }, { op: 'put', lease: quarantine }],
  };
}

/**
 * DHCPINFORM (RFC 2131 §4.3.5): an ACK with configuration and boot information but no `yiaddr`
 * and no lease time ("MUST NOT" send 51), sent to `ciaddr`.
 */
export function respondInform(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext, decision: BootDecision): ResponderResult {
  const choice = chooseBootFile(decision, client);
  if (choice.kind === 'refuse') return ignore(choice.reason, client);
  const reply = createReply(request, DhcpMessageType.ack, ctx.serverAddress);
  reply.ciaddr = request.ciaddr;
  const subnet = ctx.subnets.find((s) => subnetContains(s, request.ciaddr));
  if (subnet !== undefined) addSubnetOptions(reply, subnet);
  const result: ResponderResult = { kind: 'reply', packet: reply, messageType: 'ack', client, detail: 'inform', leaseChanges: [] };
  if (choice.kind === 'file') {
    addBootInfo(reply, request, client, choice.bootFile, ctx.serverAddress, 'dhcp');
    result.bootFile = choice.bootFile;
  }
  return result;
}
