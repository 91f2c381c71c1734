/**
 * @module Classifies a DHCP request: which MAC, PXE or UEFI HTTP boot firmware or iPXE,
 * which architecture and firmware family (option 93 per the IANA "Processor Architecture
 * Types" registry, RFC 4578 §2.1 as corrected by its 2016 erratum, falling back to the
 * `Arch:xxxxx` field of option 60), and its UUID (option 97).
 * @pure
 */
import type { BootTransport, ClientArch, FirmwareKind } from '../boot-lookup.js';
import { formatMacAddress } from './address.js';
import { DhcpOption } from './options.js';
import {
  getClientArchitectures,
  getClientIdentifier,
  getClientMachineId,
  getHostName,
  getUserClasses,
  getVendorClass,
} from './option-values.js';
import type { DhcpPacket } from './packet.js';

/** What an IANA processor architecture type means for booting. */
export interface ArchTypeInfo {
  arch: ClientArch;
  firmware: FirmwareKind;
  /** True for the "boot from HTTP" types (UEFI HTTP boot). */
  http: boolean;
}

/**
 * IANA processor architecture types (option 93). 7 and 9 both mean x64 UEFI in practice: RFC
 * 4578 had them swapped against the registry until its erratum; EDK2 sends 7.
 */
const ARCH_TYPES: ReadonlyMap<number, ArchTypeInfo> = new Map([
  [0, { arch: 'x86', firmware: 'bios', http: false }],
  [2, { arch: 'unknown', firmware: 'uefi', http: false }],
  [6, { arch: 'x86', firmware: 'uefi', http: false }],
  [7, { arch: 'x86_64', firmware: 'uefi', http: false }],
  [9, { arch: 'x86_64', firmware: 'uefi', http: false }],
  [10, { arch: 'arm32', firmware: 'uefi', http: false }],
  [11, { arch: 'arm64', firmware: 'uefi', http: false }],
  [15, { arch: 'x86', firmware: 'uefi', http: true }],
  [16, { arch: 'x86_64', firmware: 'uefi', http: true }],
  [18, { arch: 'arm32', firmware: 'uefi', http: true }],
  [19, { arch: 'arm64', firmware: 'uefi', http: true }],
  [20, { arch: 'x86', firmware: 'bios', http: true }],
  [25, { arch: 'riscv32', firmware: 'uefi', http: false }],
  [26, { arch: 'riscv32', firmware: 'uefi', http: true }],
  [27, { arch: 'riscv64', firmware: 'uefi', http: false }],
  [28, { arch: 'riscv64', firmware: 'uefi', http: true }],
  [39, { arch: 'loongarch64', firmware: 'uefi', http: false }],
  [40, { arch: 'loongarch64', firmware: 'uefi', http: true }],
]);

/** Describes an IANA architecture type; unknown types read as `unknown` architecture and firmware. */
export function describeArchType(archType: number): ArchTypeInfo {
  return ARCH_TYPES.get(archType) ?? { arch: 'unknown', firmware: 'unknown', http: false };
}

/** A network-boot client's class as DHCPv4 and DHCPv6 both tell it (the vendor class is option 60 in v4, option 16 in v6). */
export interface ClientBootClass {
  /** Vendor class `PXEClient…` (PXE firmware or iPXE). */
  isPxeClient: boolean;
  /** Vendor class `HTTPClient…`, or an HTTP architecture type (UEFI HTTP boot). */
  isHttpClient: boolean;
  /** iPXE: user class `iPXE` (or, in DHCPv4, option 175 present). */
  isIpxe: boolean;
  /** The architecture type used: the first of option 93 (v4) / 61 (v6), else the vendor class's `Arch:` field. */
  archType?: number;
  arch: ClientArch;
  firmware: FirmwareKind;
  transport: BootTransport;
  /** The vendor class text, e.g. `PXEClient:Arch:00007:UNDI:003016`. */
  vendorClass?: string;
  userClasses: string[];
}

/** Everything the responder and the flight recorder want to know about a requesting client. */
export interface ClientInfo extends ClientBootClass {
  /** Lower-case colon-separated `chaddr` (its first `hlen` bytes). */
  mac: string;
  uuid?: string;
  /** Option 61 as hex. */
  clientIdentifier?: string;
  /** Option 12. */
  hostName?: string;
}

const ARCH_FIELD = /^(?:PXEClient|HTTPClient):Arch:(\d{5})/;

/** True when the client network-boots (PXE, UEFI HTTP boot or iPXE) and so wants boot information. */
export function isNetbootClient(c: ClientInfo): boolean {
  return c.isPxeClient || c.isHttpClient || c.isIpxe;
}

/** Classifies a request from its vendor class, user class, options 93/97/175 and `chaddr`. */
export function classifyClient(p: DhcpPacket): ClientInfo {
  const vendorClass = getVendorClass(p.options);
  const userClasses = getUserClasses(p.options);
  const isPxeClient = vendorClass?.startsWith('PXEClient') ?? false;
  const isHttpClient = vendorClass?.startsWith('HTTPClient') ?? false;
  const isIpxe = userClasses.includes('iPXE') || p.options.has(DhcpOption.ipxeEncapsulated);
  let archType: number | undefined = getClientArchitectures(p.options)[0];
  if (archType === undefined && vendorClass !== undefined) {
    const m = ARCH_FIELD.exec(vendorClass);
    if (m?.[1] !== undefined) archType = Number(m[1]);
  }
  const info = archType === undefined ? undefined : describeArchType(archType);
  const out: ClientInfo = {
    mac: formatMacAddress(p.chaddr.subarray(0, Math.min(p.hlen, 16))),
    isPxeClient,
    isHttpClient,
    isIpxe,
    arch: info?.arch ?? 'unknown',
    firmware: info?.firmware ?? 'unknown',
    transport: isHttpClient || info?.http === true ? 'http' : 'tftp',
    userClasses,
  };
  if (archType !== undefined) out.archType = archType;
  if (vendorClass !== undefined) out.vendorClass = vendorClass;
  const uuid = getClientMachineId(p.options);
  if (uuid !== undefined) out.uuid = uuid;
  const clientIdentifier = getClientIdentifier(p.options);
  if (clientIdentifier !== undefined) out.clientIdentifier = clientIdentifier;
  const hostName = getHostName(p.options);
  if (hostName !== undefined) out.hostName = hostName;
  return out;
}
