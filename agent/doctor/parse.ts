/**
 * @module Small codecs `rackside doctor`'s probes need, kept pure so they are table-tested:
 * `ss -H -lunpt` lines, /etc/passwd uids, "is this ELF static", the probe's DHCPDISCOVER and
 * the OFFERs it hears, the RMCP/ASF presence ping for IPMI BMCs, where to knock for a BMC
 * address, and a thread's nice value from its `/proc/PID/stat`.
 * @pure
 */
import {
  BootpOp, BROADCAST_FLAG, decodeDhcpPacket, DhcpMessageType, DhcpOption, encodeDhcpPacket, getBootFileName, getMessageType,
  getServerIdentifier, normalizeMacAddress,
} from '../../bootsvc/index.js';
import { parseBmcAddress, resolveIpmiTarget, resolveRedfishTarget } from '../../drivers/index.js';
import type { DhcpOffer, PortHolder } from './types.js';

/** One listening socket from `ss -H -lunpt`. */
export interface SsListener {
  protocol: 'udp' | 'tcp';
  /** Local address without brackets or device, e.g. `0.0.0.0`, `::`, `*`. */
  address: string;
  port: number;
  device?: string;
  users: { command: string; pid: number }[];
}

/** Parses `ss -H -lunpt` output (Netid State Recv-Q Send-Q Local Peer Process); unparsable lines are skipped. */
export function parseSsListeners(text: string): SsListener[] {
  const out: SsListener[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    const [netid, , , , local] = fields;
    if ((netid !== 'udp' && netid !== 'tcp') || local === undefined) continue;
    const match = /^(.*?)(?:%([^:\]]+))?:(\d+|\*)$/.exec(local);
    if (match === null || match[3] === '*') continue;
    const address = (match[1] ?? '').replace(/^\[|\]$/g, '');
    const users = [...line.matchAll(/\("([^"]*)",pid=(\d+)/g)].map((m) => ({ command: m[1] ?? '', pid: Number(m[2]) }));
    out.push({ protocol: netid, address, port: Number(match[3]), ...(match[2] === undefined ? {} : { device: match[2] }), users });
  }
  return out;
}

function coversAddress(listener: SsListener, address: string): boolean {
  const wildcard = ['0.0.0.0', '*', '::', ''];
  return wildcard.includes(listener.address) || wildcard.includes(address) || listener.address === address;
}

/** The holders of `protocol` `address:port` among parsed listeners (wildcards overlap everything). */
export function holdersOf(listeners: readonly SsListener[], protocol: 'udp' | 'tcp', address: string, port: number): PortHolder[] {
  return listeners
    .filter((l) => l.protocol === protocol && l.port === port && coversAddress(l, address))
    .flatMap((l) => {
      const local = `${l.address}${l.device === undefined ? '' : `%${l.device}`}:${l.port}`;
      const base = { local, ...(l.device === undefined ? {} : { device: l.device }) };
      return l.users.length === 0 ? [{ command: '?', ...base }] : l.users.map((u) => ({ command: u.command, pid: u.pid, ...base }));
    });
}

/** The uid of `user` in /etc/passwd text, or undefined. */
export function uidOfUser(passwd: string, user: string): number | undefined {
  for (const line of passwd.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name === user && uid !== undefined && /^\d+$/.test(uid)) return Number(uid);
  }
  return undefined;
}

const PT_INTERP = 3;

/**
 * Whether an ELF file (its first bytes; 4 KiB covers the program headers of real binaries)
 * is statically linked: no PT_INTERP program header (ELF spec, "Program Header"). Returns
 * undefined when the bytes are no ELF or too short to tell.
 */
export function isStaticElf(head: Uint8Array): boolean | undefined {
  if (head.length < 52 || head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46) return undefined;
  const is64 = head[4] === 2;
  const little = head[5] === 1;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const u16 = (o: number): number => view.getUint16(o, little);
  const u32 = (o: number): number => view.getUint32(o, little);
  const phoff = is64 ? Number(view.getBigUint64(0x20, little)) : u32(0x1c);
  const phentsize = u16(is64 ? 0x36 : 0x2a);
  const phnum = u16(is64 ? 0x38 : 0x2c);
  if (phoff + phentsize * phnum > head.length) return undefined;
  for (let i = 0; i < phnum; i++) if (u32(phoff + i * phentsize) === PT_INTERP) return false;
  return true;
}

/**
 * The probe's DHCPDISCOVER (RFC 2131 §4.4.1) from `mac` with transaction id `xid`: the
 * BROADCAST flag set so every server answers to 255.255.255.255 (we hold no address for a
 * unicast reply), and a parameter request list like a PXE ROM's.
 */
export function encodeProbeDiscover(mac: string, xid: number): Buffer {
  const normalized = normalizeMacAddress(mac);
  if (normalized === undefined) throw new Error(`"${mac}" is not a MAC address`);
  const chaddr = Uint8Array.from(normalized.split(':').map((h) => parseInt(h, 16)));
  return encodeDhcpPacket({
    op: BootpOp.request, htype: 1, hlen: 6, hops: 0, xid: xid >>> 0, secs: 0, flags: BROADCAST_FLAG,
    ciaddr: '0.0.0.0', yiaddr: '0.0.0.0', siaddr: '0.0.0.0', giaddr: '0.0.0.0', chaddr, sname: '', file: '',
    options: new Map([
      [DhcpOption.messageType, Uint8Array.of(DhcpMessageType.discover)],
      [DhcpOption.parameterRequestList, Uint8Array.of(1, 3, 6, 54, 66, 67)],
      [DhcpOption.clientIdentifier, Uint8Array.from([1, ...chaddr])],
    ]),
  });
}

/** Decodes a datagram heard on port 68: the OFFER answering `xid`, or undefined for anything else (malformed included). */
export function decodeProbeOffer(payload: Uint8Array, xid: number, sourceAddress: string): DhcpOffer | undefined {
  let packet;
  try {
    packet = decodeDhcpPacket(payload);
  } catch {
    return undefined;
  }
  if (packet.op !== BootpOp.reply || packet.xid !== xid >>> 0 || getMessageType(packet.options) !== DhcpMessageType.offer) return undefined;
  const serverId = getServerIdentifier(packet.options);
  const bootFile = getBootFileName(packet.options) ?? (packet.file === '' ? undefined : packet.file);
  return {
    ...(serverId === undefined ? {} : { serverId }),
    sourceAddress,
    offeredAddress: packet.yiaddr,
    ...(bootFile === undefined ? {} : { bootFile }),
  };
}

/** RMCP/ASF presence ping (DSP0136 §3.2.4.1; IPMI v2.0 §13.2.3): RMCP v6, no ack, class ASF, IANA 4542, type 0x80. */
export function encodeAsfPresencePing(tag: number): Buffer {
  return Buffer.from([0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x80, tag & 0xfe, 0x00, 0x00]);
}

/** True when a datagram is an ASF presence pong (type 0x40) answering `tag`. */
export function isAsfPresencePong(payload: Uint8Array, tag: number): boolean {
  return payload.length >= 12 && payload[0] === 0x06 && payload[3] === 0x06 && payload[8] === 0x40 && payload[9] === (tag & 0xfe);
}

/** Where to knock for a BMC: Redfish over TCP to the endpoint's port, IPMI over UDP (ASF ping). */
export type BmcKnock = { kind: 'target'; protocol: 'tcp' | 'udp'; hostname: string; port: number } | { kind: 'none'; reason: string };

/** Resolves a BMC address to a reachability target. @throws BmcAddressError on an invalid address. */
export function bmcKnock(address: string): BmcKnock {
  const parsed = parseBmcAddress(address);
  if (parsed.type === 'fake') return { kind: 'none', reason: 'fake BMC (no network)' };
  if (parsed.type === 'ipmi') {
    const t = resolveIpmiTarget(parsed);
    return { kind: 'target', protocol: 'udp', hostname: t.hostname, port: t.port };
  }
  const url = new URL(resolveRedfishTarget(parsed).endpoint);
  const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
  return { kind: 'target', protocol: 'tcp', hostname: parsed.hostname, port };
}

/**
 * The nice value in a `/proc/PID/stat` line (proc(5) field 19), counted from after the command
 * name's closing parenthesis (a name may hold spaces and parentheses); undefined when the line is
 * not one.
 */
export function niceFromStat(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const value = Number(stat.slice(close + 2).split(' ')[16]);
  return Number.isInteger(value) && value >= -20 && value <= 19 ? value : undefined;
}
