/**
 * @module The messages of `rackside doctor`'s rogue-DHCPv6 probe (RFC 8415; agent/doctor/probe-net6.ts
 * sends and listens): the Solicit it multicasts from the provisioning interface, the decoder of
 * the Advertise messages it hears, and the server DUID rackside's own server uses there.
 * @pure
 */
import { normalizeMacAddress } from '../dhcp/address.js';
import { decodeDhcp6Message, encodeDhcp6Message } from './message.js';
import { Dhcp6MessageType, Dhcp6Option, firstOption } from './options.js';
import { decodeIaNa, duidLl, iaAddresses, iaNaOption } from './values.js';

/** One Advertise the probe heard. */
export interface Dhcp6Advertise {
  /** The Server Identifier (option 2, a DUID) as lower-case hex. */
  serverDuid: string;
  /** IPv6 source address of the datagram (a link-local address, with its zone). */
  sourceAddress: string;
  /** The first IA_NA address offered, when any. */
  offeredAddress?: string;
}

function macBytes(mac: string): Uint8Array {
  const normalized = normalizeMacAddress(mac);
  if (normalized === undefined) throw new Error(`"${mac}" is not a MAC address`);
  return Uint8Array.from(normalized.split(':').map((h) => parseInt(h, 16)));
}

/** The DUID-LL of `mac` as lower-case hex: the server DUID rackside's DHCPv6 server uses on that interface (dhcp6-server.ts). */
export function duidLlHex(mac: string): string {
  return Buffer.from(duidLl(macBytes(mac))).toString('hex');
}

/**
 * The probe's Solicit (RFC 8415 §18.2.1) from `mac` with transaction id `xid` (24 bits): a
 * DUID-LL client identifier, one IA_NA, Elapsed Time 0 and no Rapid Commit, so every server
 * answers with an Advertise and binds nothing.
 */
export function encodeProbeSolicit(mac: string, xid: number): Buffer {
  return encodeDhcp6Message({
    kind: 'client', type: Dhcp6MessageType.solicit, transactionId: xid & 0xffffff,
    options: [
      { code: Dhcp6Option.clientId, value: duidLl(macBytes(mac)) },
      iaNaOption({ iaid: 1, t1: 0, t2: 0, options: [] }),
      { code: Dhcp6Option.elapsedTime, value: Uint8Array.of(0, 0) },
    ],
  });
}

/** Decodes a datagram heard on port 546: the Advertise answering `xid`, or undefined for anything else (malformed included). */
export function decodeProbeAdvertise(payload: Uint8Array, xid: number, sourceAddress: string): Dhcp6Advertise | undefined {
  try {
    const m = decodeDhcp6Message(payload);
    if (m.kind !== 'client' || m.type !== Dhcp6MessageType.advertise || m.transactionId !== (xid & 0xffffff)) return undefined;
    const serverId = firstOption(m.options, Dhcp6Option.serverId);
    if (serverId === undefined) return undefined;
    const ia = firstOption(m.options, Dhcp6Option.iaNa);
    const address = ia === undefined ? undefined : iaAddresses(decodeIaNa(ia))[0]?.address;
    return { serverDuid: Buffer.from(serverId).toString('hex'), sourceAddress, ...(address === undefined ? {} : { offeredAddress: address }) };
  } catch {
    return undefined;
  }
}
