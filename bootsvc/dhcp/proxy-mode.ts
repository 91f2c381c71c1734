/**
 * @module proxyDHCP and the PXE boot-server exchange (PXE 2.1 §2.2): boot information without
 * ever an address, so rackside can sit beside the site's own DHCP server. A PXE/HTTP boot
 * DISCOVER gets a proxy OFFER (`yiaddr` 0, option 60 `PXEClient`/`HTTPClient`, 97 echoed, 43
 * for BIOS); a REQUEST to UDP 4011 — EDK2's "BINL" retry, or iPXE's ProxyDHCPREQUEST — gets an
 * ACK with the boot file. Both modes answer port 4011.
 * @pure
 */
import type { BootDecision } from '../boot-lookup.js';
import { isNetbootClient, type ClientInfo } from './client-info.js';
import { DhcpMessageType } from './options.js';
import { getMessageType, getServerIdentifier } from './option-values.js';
import type { DhcpPacket } from './packet.js';
import { addBootInfo, chooseBootFile, createReply, type PxeStyle } from './reply-builder.js';
import { ignore, type ResponderContext, type ResponderResult } from './responder-context.js';

/** A boot-information-only reply (`yiaddr` 0), or the reason there is none. */
function bootOnlyReply(
  request: DhcpPacket,
  client: ClientInfo,
  ctx: ResponderContext,
  decision: BootDecision,
  messageType: number,
  style: PxeStyle,
): ResponderResult {
  if (!isNetbootClient(client)) return ignore('not-netboot-client', client);
  const choice = chooseBootFile(decision, client);
  if (choice.kind === 'refuse') return ignore(choice.reason, client);
  if (choice.kind === 'none') return ignore('no-boot', client);
  const reply = createReply(request, messageType, ctx.serverAddress);
  if (messageType === DhcpMessageType.ack) reply.ciaddr = request.ciaddr;
  addBootInfo(reply, request, client, choice.bootFile, ctx.serverAddress, style);
  return {
    kind: 'reply',
    packet: reply,
    messageType: messageType === DhcpMessageType.ack ? 'ack' : 'offer',
    client,
    bootFile: choice.bootFile,
    detail: style,
    leaseChanges: [],
  };
}

/**
 * Proxy mode on port 67: DISCOVER → proxy OFFER; a REQUEST naming us in option 54 → ACK with
 * boot information only; every other REQUEST belongs to the site's DHCP server (ignored), and
 * INFORM, RELEASE and DECLINE are not ours to answer.
 */
export function respondProxy(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext, decision: BootDecision): ResponderResult {
  const type = getMessageType(request.options);
  if (type === DhcpMessageType.discover) return bootOnlyReply(request, client, ctx, decision, DhcpMessageType.offer, 'proxy');
  if (type === DhcpMessageType.request) {
    if (getServerIdentifier(request.options) !== ctx.serverAddress) return ignore('other-server', client);
    return bootOnlyReply(request, client, ctx, decision, DhcpMessageType.ack, 'proxy');
  }
  return ignore('not-for-proxy', client);
}

/** Port 4011 (either mode): a boot-server REQUEST or INFORM → ACK with the boot file and echoed boot item. */
export function respondBootServer(request: DhcpPacket, client: ClientInfo, ctx: ResponderContext, decision: BootDecision): ResponderResult {
  const type = getMessageType(request.options);
  if (type !== DhcpMessageType.request && type !== DhcpMessageType.inform) return ignore('unsupported-message', client);
  return bootOnlyReply(request, client, ctx, decision, DhcpMessageType.ack, 'boot-server');
}
