/**
 * @module DHCP client messages for tests, built with the codec: a DISCOVER/REQUEST/… from a
 * given MAC with the options PXE firmware, iPXE or a relay would add, plus a reply decoder
 * shortcut. Used by the DHCP server unit tests and by the small in-namespace test client.
 */
import { Buffer } from 'node:buffer';
import { DhcpMessageType, DhcpOption } from '../../bootsvc/dhcp/options.js';
import { BootpOp, BROADCAST_FLAG, decodeDhcpPacket, encodeDhcpPacket, type DhcpPacket } from '../../bootsvc/dhcp/packet.js';

/** What a test client message carries. */
export interface ClientMessage {
  type: keyof typeof DhcpMessageType;
  mac: string;
  xid?: number;
  ciaddr?: string;
  giaddr?: string;
  broadcast?: boolean;
  /** Option 50. */
  requestedAddress?: string;
  /** Option 54. */
  serverId?: string;
  /** Option 60, e.g. `PXEClient:Arch:00007:UNDI:003016`. */
  vendorClass?: string;
  /** Option 93 (one architecture type). */
  archType?: number;
  /** Option 77 (one user class, sent bare as iPXE does). */
  userClass?: string;
  /** Option 82 (raw bytes). */
  relayInformation?: Uint8Array;
  /** Option 97: type 0 + 16-byte GUID. */
  uuid?: Uint8Array;
  /** Option 55. */
  parameterRequestList?: number[];
  /** Option 43 (raw bytes), e.g. a PXE boot item for a 4011 request. */
  vendorSpecific?: Uint8Array;
  hostName?: string;
}

function ipv4Bytes(address: string): Uint8Array {
  return Uint8Array.from(address.split('.').map(Number));
}

function macBytes(mac: string): Uint8Array {
  const chaddr = new Uint8Array(16);
  chaddr.set(mac.split(':').map((h) => parseInt(h, 16)));
  return chaddr;
}

/** Builds a client message as a packet model. */
export function clientPacket(m: ClientMessage): DhcpPacket {
  const options = new Map<number, Uint8Array>([[DhcpOption.messageType, Uint8Array.of(DhcpMessageType[m.type])]]);
  if (m.requestedAddress !== undefined) options.set(DhcpOption.requestedAddress, ipv4Bytes(m.requestedAddress));
  if (m.serverId !== undefined) options.set(DhcpOption.serverIdentifier, ipv4Bytes(m.serverId));
  if (m.hostName !== undefined) options.set(DhcpOption.hostName, Buffer.from(m.hostName, 'latin1'));
  if (m.vendorSpecific !== undefined) options.set(DhcpOption.vendorSpecific, m.vendorSpecific);
  options.set(DhcpOption.parameterRequestList, Uint8Array.from(m.parameterRequestList ?? [1, 3, 6, 15, 66, 67]));
  if (m.vendorClass !== undefined) options.set(DhcpOption.vendorClass, Buffer.from(m.vendorClass, 'latin1'));
  if (m.userClass !== undefined) options.set(DhcpOption.userClass, Buffer.from(m.userClass, 'latin1'));
  if (m.relayInformation !== undefined) options.set(DhcpOption.relayAgentInformation, m.relayInformation);
  if (m.archType !== undefined) options.set(DhcpOption.clientArchitecture, Uint8Array.of(m.archType >> 8, m.archType & 255));
  if (m.uuid !== undefined) options.set(DhcpOption.clientMachineId, m.uuid);
  return {
    op: BootpOp.request,
    htype: 1,
    hlen: 6,
    hops: m.giaddr === undefined ? 0 : 1,
    xid: m.xid ?? 0x12345678,
    secs: 0,
    flags: m.broadcast === true ? BROADCAST_FLAG : 0,
    ciaddr: m.ciaddr ?? '0.0.0.0',
    yiaddr: '0.0.0.0',
    siaddr: '0.0.0.0',
    giaddr: m.giaddr ?? '0.0.0.0',
    chaddr: macBytes(m.mac),
    sname: '',
    file: '',
    options,
  };
}

/** Builds and encodes a client message. */
export function encodeClientMessage(m: ClientMessage): Buffer {
  return encodeDhcpPacket(clientPacket(m));
}

/** The message type name of a reply, for assertions (`offer`, `ack`, `nak`, …). */
export function replyType(p: DhcpPacket): string | undefined {
  const t = p.options.get(DhcpOption.messageType)?.[0];
  return Object.entries(DhcpMessageType).find(([, v]) => v === t)?.[0];
}

/** Decodes a reply datagram. */
export function decodeReply(bytes: Uint8Array): DhcpPacket {
  return decodeDhcpPacket(bytes);
}

/** An option of `p` as Latin-1 text. */
export function optionText(p: DhcpPacket, code: number): string | undefined {
  const v = p.options.get(code);
  return v === undefined ? undefined : Buffer.from(v).toString('latin1');
}
