/**
 * @module Where a reply goes — RFC 2131 §4.1's transmission rule as a pure decision, executed
 * by the server's socket layer (netboot `Packet.txType`, smee `replyDestination`). The cases,
 * in the order the RFC gives them:
 * 1. `giaddr` ≠ 0 → the relay agent's server port, `giaddr:67` ("the server sends any return
 *    messages to the 'DHCP server' port on the BOOTP relay agent whose address appears in
 *    'giaddr'").
 * 2. DHCPNAK with `giaddr` = 0 → broadcast `255.255.255.255:68` ("In all cases, when 'giaddr'
 *    is zero, the server broadcasts any DHCPNAK messages").
 * 3. `ciaddr` ≠ 0 → unicast `ciaddr:68` (the client is configured: RENEWING, INFORM).
 * 4. BROADCAST flag set → broadcast `255.255.255.255:68`.
 * 5. Otherwise "unicasts ... to the client's hardware address and 'yiaddr' address". The
 *    client cannot answer ARP for `yiaddr` yet and Node's dgram cannot write the ARP cache, so
 *    this returns `hardware-unicast`: the executor sends a link-layer frame to `mac` when it has
 *    a packet socket, and otherwise broadcasts — which RFC 2131 §4.1 allows ("If unicasting is
 *    not possible, the message MAY be sent as an IP broadcast"). A reply without `yiaddr`
 *    (proxyDHCP) is broadcast.
 * Replies to the PXE boot-server port 4011 go back to the request's source address and port
 * (PXE 2.1 §2.2.5: the client unicasts its boot-server request and listens on its source port).
 * @pure
 */
import { BROADCAST_ADDRESS, formatMacAddress, ZERO_ADDRESS } from './address.js';
import { DhcpMessageType } from './options.js';
import { getMessageType } from './option-values.js';
import { BROADCAST_FLAG, type DhcpPacket } from './packet.js';

/** DHCP server and client ports (RFC 2131 §4.1) and the PXE boot-server port. */
export const DhcpPort = { server: 67, client: 68, pxeBootServer: 4011 } as const;

/** The limited broadcast destination of a reply. */
export const BROADCAST_DESTINATION = { address: BROADCAST_ADDRESS, port: DhcpPort.client } as const;

/** Where to send a reply, and which RFC 2131 §4.1 case chose it. */
export type ReplyRoute =
  | { kind: 'relay'; address: string; port: 67 }
  | { kind: 'broadcast'; address: typeof BROADCAST_ADDRESS; port: 68 }
  | { kind: 'client-address'; address: string; port: 68 }
  | {
      kind: 'hardware-unicast';
      /** The offered address the frame is for. */
      address: string;
      port: 68;
      /** Link-layer destination: the client's `chaddr`. */
      mac: string;
      /** Where to send instead when no link-layer unicast is possible. */
      fallback: typeof BROADCAST_DESTINATION;
    }
  | { kind: 'source'; address: string; port: number };

/** The UDP source of a request and the server port it arrived on. */
export interface RequestSource {
  address: string;
  port: number;
  /** 67, or 4011 for the PXE boot-server exchange. */
  serverPort: number;
}

/** Decides the destination of `reply` to `request` (see the module comment for the rules). */
export function routeReply(request: DhcpPacket, reply: DhcpPacket, source: RequestSource): ReplyRoute {
  if (source.serverPort === DhcpPort.pxeBootServer) return { kind: 'source', address: source.address, port: source.port };
  if (request.giaddr !== ZERO_ADDRESS) return { kind: 'relay', address: request.giaddr, port: DhcpPort.server };
  if (getMessageType(reply.options) === DhcpMessageType.nak) return { kind: 'broadcast', ...BROADCAST_DESTINATION };
  if (request.ciaddr !== ZERO_ADDRESS) return { kind: 'client-address', address: request.ciaddr, port: DhcpPort.client };
  if ((request.flags & BROADCAST_FLAG) !== 0 || reply.yiaddr === ZERO_ADDRESS) return { kind: 'broadcast', ...BROADCAST_DESTINATION };
  return {
    kind: 'hardware-unicast',
    address: reply.yiaddr,
    port: DhcpPort.client,
    mac: formatMacAddress(request.chaddr.subarray(0, Math.min(request.hlen, 16))),
    fallback: BROADCAST_DESTINATION,
  };
}
