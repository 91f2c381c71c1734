/**
 * @module The DHCPv6 server's per-datagram steps that need no I/O: unwrapping relays into the
 * client message and what identifies it (RFC 8415 §9, §19), the boot query for the lookup,
 * wrapping a reply in one Relay-Repl per Relay-Forw with Interface-ID echoed (RFC 8415 §19.3),
 * and the flight-recorder events of a request and its reply (DHCPv4's event vocabulary with
 * `detail` naming the DHCPv6 message).
 * @pure
 */
import type { BootQuery } from '../boot-lookup.js';
import type { DhcpBootEvent, DhcpEventMessage } from '../events.js';
import { canonicalIpv6 } from './address6.js';
import { classifyClient6 } from './client-info.js';
import { resolveClientMac, type MacSource } from './identity.js';
import type { Dhcp6ClientMessage, Dhcp6Message, Dhcp6RelayMessage } from './message.js';
import { unwrapRelays } from './message.js';
import { linkOfAddress, type Link6 } from './pool.js';
import { Dhcp6MessageType as T, Dhcp6Option, firstOption } from './options.js';
import type { Responder6Result } from './responder.js';

/** A client message with its relays and its host's MAC. */
export interface Unwrapped6 {
  client: Dhcp6ClientMessage;
  /** Relay layers, outermost first; empty when the client is on our link. */
  relays: Dhcp6RelayMessage[];
  /** The client's own address: the innermost relay's peer-address, or the datagram's source. */
  clientAddress: string;
  mac?: string;
  macSource?: MacSource;
}

/** Unwraps `m` from `sourceAddress` (a `%zone` suffix allowed); `undefined` for anything that is not a client's request (a Relay-Repl, a server message). */
export function unwrap6(m: Dhcp6Message, sourceAddress: string): Unwrapped6 | undefined {
  if (m.kind === 'relay' && m.type !== T.relayForw) return undefined;
  const { client, relays } = unwrapRelays(m);
  if (relays.some((r) => r.type !== T.relayForw)) return undefined;
  const nearest = relays[relays.length - 1];
  const clientAddress = nearest?.peerAddress ?? canonicalIpv6(sourceAddress) ?? sourceAddress;
  const clientId = firstOption(client.options, Dhcp6Option.clientId);
  const who = resolveClientMac({
    sourceAddress: clientAddress,
    ...(clientId === undefined ? {} : { clientId }),
    ...(nearest === undefined ? {} : { nearestRelayOptions: nearest.options }),
  });
  const out: Unwrapped6 = { client, relays, clientAddress };
  if (who !== undefined) {
    out.mac = who.mac;
    out.macSource = who.source;
  }
  return out;
}

/**
 * The link a request came from (RFC 8415 §13.1): the server's own link when it was not relayed,
 * else the link named by the first relay link-address other than `::`, innermost first; then
 * the configured link whose prefix holds it, or `undefined`.
 */
export function linkOfRequest(u: Unwrapped6, links: readonly Link6[], serverAddress: string): Link6 | undefined {
  if (u.relays.length === 0) return linkOfAddress(links, serverAddress);
  for (let i = u.relays.length - 1; i >= 0; i--) {
    const address = u.relays[i]?.linkAddress;
    if (address !== undefined && address !== '::') return linkOfAddress(links, address);
  }
  return undefined;
}

/** The boot lookup's question for a client with `mac`. */
export function bootQuery6(client: Dhcp6ClientMessage, mac: string, relayLink?: string): BootQuery {
  const info = classifyClient6(client.options);
  const q: BootQuery = { mac, arch: info.arch, firmware: info.firmware, transport: info.transport, isIpxe: info.isIpxe };
  if (relayLink !== undefined) q.relayAddress = relayLink;
  if (info.archType !== undefined) q.archType = info.archType;
  if (info.userClasses[0] !== undefined) q.userClass = info.userClasses[0];
  return q;
}

/** `reply` wrapped for the way its request came: one Relay-Repl per relay, Interface-ID echoed (RFC 8415 §19.3). */
export function wrapReply(reply: Dhcp6ClientMessage, relays: readonly Dhcp6RelayMessage[]): Dhcp6Message {
  let out: Dhcp6Message = reply;
  for (let i = relays.length - 1; i >= 0; i--) {
    const r = relays[i];
    if (r === undefined) continue;
    const interfaceId = firstOption(r.options, Dhcp6Option.interfaceId);
    out = {
      kind: 'relay', type: T.relayRepl, hopCount: r.hopCount, linkAddress: r.linkAddress, peerAddress: r.peerAddress,
      options: interfaceId === undefined ? [] : [{ code: Dhcp6Option.interfaceId, value: interfaceId }], message: out,
    };
  }
  return out;
}

/** RFC 8415 message names, for events and metrics. */
export const MESSAGE_NAMES: Readonly<Record<number, string>> = {
  1: 'solicit', 2: 'advertise', 3: 'request', 4: 'confirm', 5: 'renew', 6: 'rebind', 7: 'reply', 8: 'release', 9: 'decline',
  10: 'reconfigure', 11: 'information-request', 12: 'relay-forw', 13: 'relay-repl',
};

/** The DHCPv4-vocabulary event message closest to a DHCPv6 message type. */
const EVENT_OF: Readonly<Record<number, DhcpEventMessage>> = {
  1: 'discover', 2: 'offer', 3: 'request', 4: 'request', 5: 'request', 6: 'request', 7: 'ack', 8: 'release', 9: 'decline', 11: 'inform',
};

/** The flight-recorder events of one handled request: what arrived, then the reply or why there was none. */
export function events6(u: Unwrapped6, result: Responder6Result, atMs: number): DhcpBootEvent[] {
  if (u.mac === undefined) return [];
  const name = MESSAGE_NAMES[u.client.type] ?? `type-${u.client.type}`;
  const base: DhcpBootEvent = { kind: 'dhcp', message: EVENT_OF[u.client.type] ?? 'ignored', mac: u.mac, xid: u.client.transactionId, atMs, clientAddress: u.clientAddress, serverPort: 547, detail: `dhcpv6 ${name}` };
  const c = result.client;
  if (c !== undefined) {
    if (c.arch !== 'unknown') base.arch = c.arch;
    if (c.archType !== undefined) base.archType = c.archType;
    base.firmware = c.firmware;
    if (c.vendorClass !== undefined) base.vendorClass = c.vendorClass;
    if (c.userClasses[0] !== undefined) base.userClass = c.userClasses[0];
  }
  const relay = u.relays[0];
  if (relay !== undefined) base.giaddr = relay.linkAddress;
  // The client's message says how its MAC was found (identity.ts), which is what ties its boot stages together.
  const received: DhcpBootEvent = u.macSource === undefined ? base : { ...base, detail: `dhcpv6 ${name} (MAC by ${u.macSource})` };
  if (result.kind === 'ignore') return [received, { ...base, message: 'ignored', detail: `dhcpv6 ${name}: ${result.reason}` }];
  const sent: DhcpBootEvent = { ...base, message: EVENT_OF[result.message.type] ?? 'ack', detail: `dhcpv6 ${MESSAGE_NAMES[result.message.type] ?? result.message.type}` };
  if (result.address !== undefined) sent.address = result.address;
  if (result.bootUrl !== undefined) sent.bootFile = result.bootUrl;
  return [received, sent];
}
