/**
 * @module The DHCP responder: one pure decision per request — reply (with the packet and lease
 * records to store), no reply (RELEASE/DECLINE bookkeeping), or ignore with a reason for the
 * flight recorder. It validates what every mode needs (a BOOTREQUEST, a DHCP message type,
 * Ethernet `chaddr`, sane option 82), classifies the client, applies the unknown-host policy,
 * and dispatches to the boot-server exchange (port 4011), full mode or proxy mode. It never
 * throws for a packet the decoder accepted.
 * @pure
 */
import type { BootDecision } from '../boot-lookup.js';
import { classifyClient } from './client-info.js';
import { respondDecline, respondDiscover, respondInform, respondRelease, respondRequest } from './full-mode.js';
import { DhcpMessageType, DhcpOption } from './options.js';
import { getMessageType } from './option-values.js';
import { BootpOp, type DhcpPacket } from './packet.js';
import { respondBootServer, respondProxy } from './proxy-mode.js';
import { DhcpPort } from './reply-route.js';
import { ignore, type ResponderContext, type ResponderResult } from './responder-context.js';

/** The decision to serve this client by, or `undefined` to ignore it as an unknown host. */
function effectiveDecision(ctx: ResponderContext): BootDecision | undefined {
  if (ctx.bootDecision !== undefined) return ctx.bootDecision;
  if (ctx.unknownHosts === 'ignore' || ctx.discoveryRefused === true) return undefined;
  return ctx.discoveryDecision ?? { kind: 'none' };
}

/**
 * Decides the answer to one decoded request. Lease changes in the result must be applied (in
 * order) whether or not a packet is sent; the reply's destination comes from `routeReply`.
 */
export function respond(request: DhcpPacket, ctx: ResponderContext): ResponderResult {
  if (request.op !== BootpOp.request) return ignore('not-a-request');
  const type = getMessageType(request.options);
  if (type === undefined) return ignore('bootp-unsupported');
  // Leases and reservations are keyed by Ethernet MAC; other link types are not served.
  if (request.htype !== 1 || request.hlen !== 6) return ignore('unsupported-hardware');
  const client = classifyClient(request);
  // RFC 3046 §2.0: a relay adds one instance of at most 255 bytes; anything longer cannot be echoed faithfully.
  if ((request.options.get(DhcpOption.relayAgentInformation)?.length ?? 0) > 255) return ignore('malformed-relay-information', client);
  if (ctx.mode === 'full' && ctx.serverPort !== DhcpPort.pxeBootServer) {
    if (type === DhcpMessageType.release) return respondRelease(request, client, ctx);
    if (type === DhcpMessageType.decline) return respondDecline(request, client, ctx);
  }
  const decision = effectiveDecision(ctx);
  if (decision === undefined) return ignore(ctx.discoveryRefused === true ? 'discovery-refused' : 'unknown-host', client);
  if (ctx.serverPort === DhcpPort.pxeBootServer) return respondBootServer(request, client, ctx, decision);
  if (ctx.mode === 'proxy') return respondProxy(request, client, ctx, decision);
  switch (type) {
    case DhcpMessageType.discover:
      return respondDiscover(request, client, ctx, decision);
    case DhcpMessageType.request:
      return respondRequest(request, client, ctx, decision);
    case DhcpMessageType.inform:
      return respondInform(request, client, ctx, decision);
    default:
      return ignore('unsupported-message', client);
  }
}
