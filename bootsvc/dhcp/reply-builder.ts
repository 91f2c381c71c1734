/**
 * @module Builds reply packets for the responder: the BOOTP header copied from the request per
 * RFC 2131 table 3, subnet and lease options, and the boot information — `siaddr` and `file`
 * always (many PXE ROMs read only those), options 66/67 when asked, option 60 `PXEClient` or
 * `HTTPClient`, 97 echoed, 43 for BIOS PXE, 82 echoed last. Also picks the boot file for the
 * client's stage so iPXE never gets its own loader back.
 * @pure
 */
import type { BootDecision } from '../boot-lookup.js';
import { formatIpv4, prefixMask, ZERO_ADDRESS } from './address.js';
import { isNetbootClient, type ClientInfo } from './client-info.js';
import { decodePxeVendorOptions, encodePxeVendorOptions, PxeDiscoveryControl } from './encapsulated.js';
import { DhcpOption, encodeAddressList, encodeText, encodeUint32, encodeUint8 } from './options.js';
import { BootpOp, BROADCAST_FLAG, type DhcpPacket } from './packet.js';
import type { DhcpSubnet } from './pool.js';
import type { IgnoreReason } from './responder-context.js';

/** The boot file for a client, no boot information, or a refusal with its reason. */
export type BootChoice = { kind: 'file'; bootFile: string } | { kind: 'none' } | { kind: 'refuse'; reason: IgnoreReason };

const IPXE_LOADER = /(?:^|\/)(?:ipxe|snponly|snp|undionly)[^/]*\.(?:efi|kpxe|pxe|lkrn)$/i;
const HTTP_URL = /^https?:\/\//i;

/**
 * Picks what to put in `file`/67 for this client and decision. Clients that do not network-boot
 * get nothing; iPXE gets the script URL of an `ipxe-script` decision and is refused an iPXE
 * loader from a `boot-file` decision (`ipxe-loop`); a UEFI HTTP boot client needs an `http(s)://`
 * URL (`http-client-needs-url` otherwise — the firmware cannot use a TFTP name).
 */
export function chooseBootFile(decision: BootDecision, client: ClientInfo): BootChoice {
  if (!isNetbootClient(client)) return { kind: 'none' };
  let bootFile: string;
  if (decision.kind === 'ipxe-script') {
    bootFile = client.isIpxe ? decision.scriptUrl : decision.loader;
  } else if (decision.kind === 'boot-file') {
    bootFile = decision.bootFile;
    if (client.isIpxe && IPXE_LOADER.test(bootFile.split('?')[0] ?? '')) return { kind: 'refuse', reason: 'ipxe-loop' };
  } else {
    return { kind: 'none' };
  }
  if (client.isHttpClient && !HTTP_URL.test(bootFile)) return { kind: 'refuse', reason: 'http-client-needs-url' };
  return { kind: 'file', bootFile };
}

/**
 * A reply skeleton for `request` (RFC 2131 table 3): op BOOTREPLY, `xid`, `flags`, `giaddr`,
 * `htype`/`hlen`/`chaddr` copied; `siaddr` = our address; options 53 and 54; option 82 echoed.
 * A NAK has `siaddr` 0 and, when relayed, the BROADCAST flag set (RFC 2131 §4.3.2).
 */
export function createReply(request: DhcpPacket, messageType: number, serverAddress: string): DhcpPacket {
  const nak = messageType === 6;
  const options = new Map<number, Uint8Array>([
    [DhcpOption.messageType, encodeUint8(messageType)],
    [DhcpOption.serverIdentifier, encodeAddressList([serverAddress])],
  ]);
  const relayInfo = request.options.get(DhcpOption.relayAgentInformation);
  if (relayInfo !== undefined) options.set(DhcpOption.relayAgentInformation, relayInfo);
  return {
    op: BootpOp.reply,
    htype: request.htype,
    hlen: request.hlen,
    hops: 0,
    xid: request.xid,
    secs: 0,
    flags: nak && request.giaddr !== ZERO_ADDRESS ? request.flags | BROADCAST_FLAG : request.flags,
    ciaddr: ZERO_ADDRESS,
    yiaddr: ZERO_ADDRESS,
    siaddr: nak ? ZERO_ADDRESS : serverAddress,
    giaddr: request.giaddr,
    chaddr: new Uint8Array(request.chaddr),
    sname: '',
    file: '',
    options,
  };
}

/** Sets an option on a reply built by {@link createReply}. */
export function setOption(reply: DhcpPacket, code: number, value: Uint8Array): void {
  (reply.options as Map<number, Uint8Array>).set(code, value);
}

/** Adds the subnet's configuration (1, 3, 6, 15) and, with `leaseSeconds`, lease times 51/58/59. */
export function addSubnetOptions(reply: DhcpPacket, subnet: DhcpSubnet, leaseSeconds?: number, hostName?: string): void {
  setOption(reply, DhcpOption.subnetMask, encodeAddressList([formatIpv4(prefixMask(subnet.prefixLength))]));
  if (subnet.router !== undefined) setOption(reply, DhcpOption.router, encodeAddressList([subnet.router]));
  if (subnet.dnsServers !== undefined && subnet.dnsServers.length > 0) setOption(reply, DhcpOption.dnsServers, encodeAddressList(subnet.dnsServers));
  if (subnet.domainName !== undefined) setOption(reply, DhcpOption.domainName, encodeText(subnet.domainName));
  if (hostName !== undefined) setOption(reply, DhcpOption.hostName, encodeText(hostName));
  if (leaseSeconds !== undefined) {
    // RFC 2131 §4.4.5: T1 defaults to 0.5 and T2 to 0.875 of the lease.
    setOption(reply, DhcpOption.leaseTime, encodeUint32(leaseSeconds));
    setOption(reply, DhcpOption.renewalTime, encodeUint32(Math.floor(leaseSeconds / 2)));
    setOption(reply, DhcpOption.rebindingTime, encodeUint32(Math.floor((leaseSeconds * 7) / 8)));
  }
}

/** How much PXE identity a reply carries: none (full mode), or proxyDHCP / boot-server style. */
export type PxeStyle = 'dhcp' | 'proxy' | 'boot-server';

/**
 * Adds the boot information for `bootFile`. `file` holds it when it fits (127 bytes and a NUL);
 * option 67 carries it when asked (55), for HTTP boot, or when it does not fit `file`; option 66
 * when asked. HTTP boot clients get option 60 `HTTPClient` — without it the firmware makes no
 * HTTP request at all. `proxy` and `boot-server` replies identify as `PXEClient` (PXE 2.1
 * §2.2.2) and echo option 97; a proxy offer to BIOS PXE carries 43 with discovery control
 * "use the file name" — UEFI firmware gets no 43 and instead asks port 4011 (netboot's
 * observation: some UEFI firmware ignores proxy offers that carry 43). A boot-server ACK echoes
 * the PXE boot item the client asked for.
 */
export function addBootInfo(reply: DhcpPacket, request: DhcpPacket, client: ClientInfo, bootFile: string, serverAddress: string, style: PxeStyle): void {
  const asked = request.options.get(DhcpOption.parameterRequestList);
  // encodeText writes one byte per UTF-16 unit, so the encoded length is the string's.
  const fits = bootFile.length <= 127;
  reply.siaddr = serverAddress;
  reply.file = fits ? bootFile : '';
  if (!fits || client.isHttpClient || asked?.includes(DhcpOption.bootFileName) === true) setOption(reply, DhcpOption.bootFileName, encodeText(bootFile));
  if (asked?.includes(DhcpOption.tftpServerName) === true) setOption(reply, DhcpOption.tftpServerName, encodeText(serverAddress));
  const guid = request.options.get(DhcpOption.clientMachineId);
  if (guid?.length === 17 && style !== 'dhcp') setOption(reply, DhcpOption.clientMachineId, guid);
  if (client.isHttpClient) {
    setOption(reply, DhcpOption.vendorClass, encodeText('HTTPClient'));
    return;
  }
  if (style === 'dhcp') return;
  setOption(reply, DhcpOption.vendorClass, encodeText('PXEClient'));
  if (style === 'proxy' && client.firmware === 'bios') {
    setOption(reply, DhcpOption.vendorSpecific, encodePxeVendorOptions({ discoveryControl: PxeDiscoveryControl.skipWhenFilePresent }));
  }
  if (style === 'boot-server') {
    const requested = request.options.get(DhcpOption.vendorSpecific);
    const item = requested === undefined ? undefined : decodePxeVendorOptions(requested)?.bootItem;
    if (item !== undefined) setOption(reply, DhcpOption.vendorSpecific, encodePxeVendorOptions({ bootItem: item }));
  }
}
