/**
 * @module What a simulated client puts on the wire for DHCP, as real firmware does: the
 * identity of client `i` (MAC, SMBIOS UUID), and the DISCOVER/REQUEST of a PXE firmware client
 * (option 60 `PXEClient:Arch:xxxxx:UNDI:yyyzzz` per PXE 2.1 §2.2.1, option 93 client
 * architecture and 94 UNDI version per RFC 4578 §2.1–2.2, 97 machine id per RFC 4578 §2.3,
 * broadcast flag set per RFC 2131 §4.1 since the client has no address yet) and of iPXE
 * (option 77 user class `iPXE`, option 175 with iPXE's feature indicators, as iPXE's
 * `dhcp_create_request` adds them), plus the reading of a reply (type, lease, boot file).
 * Built with the project's own DHCP codec; the reference run against dnsmasq checks that the
 * bytes interoperate.
 * @pure
 */
import { Buffer } from 'node:buffer';
import { encodeEncapsulatedOptions, IpxeFeature } from '../../../bootsvc/dhcp/encapsulated.js';
import { DhcpMessageType, DhcpOption } from '../../../bootsvc/dhcp/options.js';
import { encodeDhcpPacket, type DhcpPacket } from '../../../bootsvc/dhcp/packet.js';
import { clientPacket, optionText, replyType } from '../../helpers/dhcp-packets.js';
import type { FirmwareArch } from './types.js';

/**
 * How client indexes become the last three MAC bytes: `sequential` (`index + 1`, as NICs of one
 * purchase often are) or `scattered` (`(index + 1) × 0x6b4f1d mod 2²⁴`, a bijection: distinct,
 * never 0, neighbours far apart). dnsmasq picks a client's first address from a hash of its MAC
 * that keeps neighbours neighbours and reserves nothing for an OFFER, so a storm of sequential
 * MACs chains "address in use" NAKs there; scattered MACs avoid that.
 */
export type MacOrder = 'sequential' | 'scattered';

/** The MAC of client `index`: `prefix` (three bytes), then 24 bits from `index` by `order` (default `scattered`). */
export function clientMac(index: number, prefix = '02:00:00', order: MacOrder = 'scattered'): string {
  if (!/^[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}$/i.test(prefix)) throw new RangeError(`MAC prefix must be three bytes like 02:00:00, got ${JSON.stringify(prefix)}`);
  if (!Number.isInteger(index) || index < 0 || index + 1 > 0xffffff) throw new RangeError(`client index must be 0…${0xffffff - 1}, got ${index}`);
  const n = order === 'sequential' ? index + 1 : Number((BigInt(index + 1) * 0x6b4f1dn) & 0xffffffn);
  const hex = (b: number): string => b.toString(16).padStart(2, '0');
  return `${prefix.toLowerCase()}:${hex((n >> 16) & 0xff)}:${hex((n >> 8) & 0xff)}:${hex(n & 0xff)}`;
}

/** The 16-byte SMBIOS UUID of client `index` (option 97 carries type 0 then these bytes). */
export function clientUuid(index: number): Uint8Array {
  const uuid = new Uint8Array(16);
  uuid.set([0x5c, 0xa1, 0xab, 0x1e, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00]);
  new DataView(uuid.buffer).setUint32(12, index);
  return uuid;
}

/** Option 93 architecture type of `arch` (RFC 4578 §2.1 / IANA: 0 x86 BIOS, 7 x64 UEFI). */
export function archType(arch: FirmwareArch): number {
  return arch === 'efi' ? 7 : 0;
}

/** The message a client is about to send. */
export interface ClientDhcpMessage {
  type: 'discover' | 'request';
  /** Firmware PXE (`pxe`) or iPXE's own DHCP (`ipxe`). */
  stage: 'pxe' | 'ipxe';
  mac: string;
  index: number;
  arch: FirmwareArch;
  xid: number;
  /** Seconds since the client began (RFC 2131 `secs`). */
  secs: number;
  /** For a REQUEST: option 50 and 54. */
  requestedAddress?: string;
  serverId?: string;
}

/** Option 60 of the firmware or iPXE: `PXEClient:Arch:<type>:UNDI:<major><minor>` (UNDI 2.1 for firmware, 3.16 for EFI firmware, iPXE says 2.1 / 3.10). */
export function vendorClassOf(arch: FirmwareArch, stage: 'pxe' | 'ipxe'): string {
  const undi = arch === 'efi' ? (stage === 'pxe' ? '003016' : '003010') : '002001';
  return `PXEClient:Arch:${String(archType(arch)).padStart(5, '0')}:UNDI:${undi}`;
}

/** Builds the packet (PXE 2.1 §2.2.1 required options; iPXE adds 77 and 175). */
export function clientDhcpPacket(m: ClientDhcpMessage): DhcpPacket {
  const p = clientPacket({
    type: m.type,
    mac: m.mac,
    xid: m.xid,
    broadcast: true,
    vendorClass: vendorClassOf(m.arch, m.stage),
    archType: archType(m.arch),
    uuid: Uint8Array.from([0, ...clientUuid(m.index)]),
    // PXE 2.1 §2.2.1: 1, 2, 3, 4, 5, 6, 11, 12, 13, 15, 16, 17, 18, 22, 23, 28, 40, 41, 42, 43, 50, 51, 54, 58, 59, 60, 66, 67, 97, 128–135.
    parameterRequestList: m.stage === 'pxe' ? [1, 2, 3, 4, 5, 6, 12, 13, 15, 17, 43, 54, 60, 66, 67, 97, 128, 129, 130, 131, 132, 133, 134, 135] : [1, 3, 6, 12, 15, 17, 26, 28, 43, 60, 66, 67, 119, 175, 203],
    ...(m.requestedAddress === undefined ? {} : { requestedAddress: m.requestedAddress }),
    ...(m.serverId === undefined ? {} : { serverId: m.serverId }),
    ...(m.stage === 'ipxe' ? { userClass: 'iPXE' } : {}),
  });
  const options = new Map(p.options);
  options.set(DhcpOption.maxMessageSize, Uint8Array.of(0x05, 0xc0)); // 1472: the UDP payload of a 1500-byte MTU
  options.set(DhcpOption.clientNetworkInterface, m.arch === 'efi' ? Uint8Array.of(1, 3, 16) : Uint8Array.of(1, 2, 1));
  if (m.stage === 'ipxe') {
    // iPXE features.h: each feature is a sub-option of 175 with value 1.
    const features = [IpxeFeature.pxeExt, IpxeFeature.http, IpxeFeature.dns, IpxeFeature.tftp, ...(m.arch === 'efi' ? [IpxeFeature.efi] : [IpxeFeature.bzImage])];
    options.set(DhcpOption.ipxeEncapsulated, encodeEncapsulatedOptions(new Map(features.map((f) => [f, Uint8Array.of(1)]))));
  }
  return { ...p, secs: Math.min(0xffff, Math.max(0, Math.floor(m.secs))), options };
}

/** Encodes {@link clientDhcpPacket}. */
export function encodeClientDhcp(m: ClientDhcpMessage): Buffer {
  return encodeDhcpPacket(clientDhcpPacket(m));
}

/** What a client reads out of an OFFER or ACK. */
export interface DhcpReplyView {
  type: 'offer' | 'ack' | 'nak' | 'other';
  xid: number;
  mac: string;
  yiaddr: string;
  /** Option 54, else the reply's `siaddr`. */
  serverId: string;
  /** Next server (`siaddr`), else option 66, else the server id: where firmware sends its TFTP request. */
  nextServer: string;
  /** `file`, else option 67; `''` when neither. */
  bootFile: string;
}

/** Reads a decoded reply as a client does; `undefined` for a BOOTREQUEST (another client's broadcast). */
export function viewReply(p: DhcpPacket): DhcpReplyView | undefined {
  if (p.op !== 2) return undefined;
  const t = replyType(p);
  const sid = p.options.get(DhcpOption.serverIdentifier);
  const serverId = sid?.length === 4 ? Array.from(sid).join('.') : p.siaddr;
  const tftpServer = optionText(p, DhcpOption.tftpServerName);
  const nextServer = p.siaddr !== '0.0.0.0' ? p.siaddr : tftpServer !== undefined && tftpServer !== '' ? tftpServer : serverId;
  const bootFile = p.file !== '' ? p.file : optionText(p, DhcpOption.bootFileName) ?? '';
  return {
    type: t === 'offer' || t === 'ack' || t === 'nak' ? t : 'other',
    xid: p.xid,
    mac: Array.from(p.chaddr.subarray(0, 6), (b) => b.toString(16).padStart(2, '0')).join(':'),
    yiaddr: p.yiaddr,
    serverId,
    nextServer,
    bootFile: bootFile.replace(/\0+$/, ''),
  };
}

/** The DHCP message type numbers, for callers that log them. */
export const MESSAGE_TYPE = DhcpMessageType;
