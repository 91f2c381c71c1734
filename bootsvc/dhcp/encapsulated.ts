/**
 * @module Encapsulated option spaces: option 43 with the PXE sub-options (PXE 2.1 spec
 * §2.4, RFC 4578 §2.4 note) and option 175 with iPXE's own sub-options (iPXE
 * `include/ipxe/dhcp.h`, `features.h`). Decoders are lenient — a malformed value reads as
 * `undefined` — because these options only steer boot behaviour and never justify dropping a
 * request; encoders write the PXE end marker (255).
 * @pure
 */
import { decodeIpv4 } from './address.js';
import { decodeText, DhcpOption, encodeAddressList, encodeText, encodeUint16, type DhcpOptions } from './options.js';

/** PXE vendor sub-option codes inside option 43 (PXE 2.1 table 2-1). */
export const PxeSubOption = {
  discoveryControl: 6,
  bootServers: 8,
  bootMenu: 9,
  menuPrompt: 10,
  bootItem: 71,
} as const;

/** Bits of PXE_DISCOVERY_CONTROL (sub-option 6). */
export const PxeDiscoveryControl = {
  /** Bit 0: disable broadcast discovery. */
  noBroadcast: 1,
  /** Bit 1: disable multicast discovery. */
  noMulticast: 2,
  /** Bit 2: only use and accept servers listed in PXE_BOOT_SERVERS. */
  onlyListedServers: 4,
  /** Bit 3: when a boot file name is present in the offer, download it without discovery or menu. */
  skipWhenFilePresent: 8,
} as const;

/** A PXE_BOOT_SERVERS entry: a boot server type and its addresses. */
export interface PxeBootServer {
  type: number;
  addresses: string[];
}

/** A PXE_BOOT_MENU entry: a boot server type and its description. */
export interface PxeBootMenuItem {
  type: number;
  description: string;
}

/** Decoded PXE vendor options (option 43 from or to a PXE client). */
export interface PxeVendorOptions {
  discoveryControl?: number;
  bootServers?: PxeBootServer[];
  bootMenu?: PxeBootMenuItem[];
  /** PXE_MENU_PROMPT: seconds before the first item is taken (255 = wait), and the prompt. */
  menuPrompt?: { timeoutSeconds: number; prompt: string };
  /** PXE_BOOT_ITEM: the boot server type and layer requested (client) or served (server). */
  bootItem?: { type: number; layer: number };
}

/**
 * Splits an encapsulated option value into sub-options (pad 0 skipped, end 255 stops), or
 * `undefined` when a sub-option runs past the end. Repeated sub-options are concatenated.
 */
export function decodeEncapsulatedOptions(value: Uint8Array): Map<number, Uint8Array> | undefined {
  const out = new Map<number, Uint8Array>();
  let i = 0;
  while (i < value.length) {
    const code = value[i] ?? 255;
    if (code === 0) {
      i += 1;
      continue;
    }
    if (code === 255) break;
    const length = value[i + 1];
    if (length === undefined || i + 2 + length > value.length) return undefined;
    const chunk = value.subarray(i + 2, i + 2 + length);
    const prev = out.get(code);
    out.set(code, prev === undefined ? new Uint8Array(chunk) : Uint8Array.from([...prev, ...chunk]));
    i += 2 + length;
  }
  return out;
}

/** Serialises sub-options (each value ≤ 255 bytes) followed by the end marker 255. */
export function encodeEncapsulatedOptions(subOptions: ReadonlyMap<number, Uint8Array>): Uint8Array {
  const parts: number[] = [];
  for (const [code, value] of subOptions) parts.push(code, Math.min(255, value.length), ...value.subarray(0, 255));
  parts.push(255);
  return Uint8Array.from(parts);
}

/** Reads a big-endian 16-bit value at `at`. */
function u16(b: Uint8Array, at: number): number {
  return ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
}

/** Decodes PXE vendor options from an option-43 value; `undefined` when malformed. */
export function decodePxeVendorOptions(value: Uint8Array): PxeVendorOptions | undefined {
  const subs = decodeEncapsulatedOptions(value);
  if (subs === undefined) return undefined;
  const out: PxeVendorOptions = {};
  const control = subs.get(PxeSubOption.discoveryControl);
  if (control?.length === 1) out.discoveryControl = control[0];
  const servers = subs.get(PxeSubOption.bootServers);
  if (servers !== undefined) {
    out.bootServers = [];
    for (let i = 0; i + 3 <= servers.length; ) {
      const count = servers[i + 2] ?? 0;
      if (i + 3 + count * 4 > servers.length) return undefined;
      const addresses = Array.from({ length: count }, (_, k) => decodeIpv4(servers, i + 3 + k * 4));
      out.bootServers.push({ type: u16(servers, i), addresses });
      i += 3 + count * 4;
    }
  }
  const menu = subs.get(PxeSubOption.bootMenu);
  if (menu !== undefined) {
    out.bootMenu = [];
    for (let i = 0; i + 3 <= menu.length; ) {
      const length = menu[i + 2] ?? 0;
      if (i + 3 + length > menu.length) return undefined;
      out.bootMenu.push({ type: u16(menu, i), description: decodeText(menu.subarray(i + 3, i + 3 + length)) });
      i += 3 + length;
    }
  }
  const prompt = subs.get(PxeSubOption.menuPrompt);
  if (prompt !== undefined && prompt.length >= 1) {
    out.menuPrompt = { timeoutSeconds: prompt[0] ?? 0, prompt: decodeText(prompt.subarray(1)) };
  }
  const item = subs.get(PxeSubOption.bootItem);
  if (item?.length === 4) out.bootItem = { type: u16(item, 0), layer: u16(item, 2) };
  return out;
}

/** Encodes PXE vendor options as an option-43 value (sub-options in code order, then 255). */
export function encodePxeVendorOptions(o: PxeVendorOptions): Uint8Array {
  const subs = new Map<number, Uint8Array>();
  if (o.discoveryControl !== undefined) subs.set(PxeSubOption.discoveryControl, Uint8Array.of(o.discoveryControl));
  if (o.bootServers !== undefined) {
    subs.set(
      PxeSubOption.bootServers,
      Uint8Array.from(o.bootServers.flatMap((s) => [...encodeUint16(s.type), s.addresses.length, ...encodeAddressList(s.addresses)])),
    );
  }
  if (o.bootMenu !== undefined) {
    subs.set(
      PxeSubOption.bootMenu,
      Uint8Array.from(o.bootMenu.flatMap((m) => [...encodeUint16(m.type), m.description.length, ...encodeText(m.description)])),
    );
  }
  if (o.menuPrompt !== undefined) {
    subs.set(PxeSubOption.menuPrompt, Uint8Array.of(o.menuPrompt.timeoutSeconds, ...encodeText(o.menuPrompt.prompt)));
  }
  if (o.bootItem !== undefined) subs.set(PxeSubOption.bootItem, Uint8Array.of(...encodeUint16(o.bootItem.type), ...encodeUint16(o.bootItem.layer)));
  return encodeEncapsulatedOptions(subs);
}

/** iPXE sub-option codes inside option 175 (iPXE `dhcp.h` / `features.h`). */
export const IpxeSubOption = {
  priority: 1,
  /** Feature indicators occupy 0x10–0x7f (e.g. 0x13 HTTP, 0x14 HTTPS, 0x15 TFTP, 0x24 EFI). */
  firstFeature: 0x10,
  lastFeature: 0x7f,
  noPxeDhcp: 176,
  busId: 177,
  version: 235,
} as const;

/** Selected iPXE feature indicator codes. */
export const IpxeFeature = { pxeExt: 0x10, iscsi: 0x11, aoe: 0x12, http: 0x13, https: 0x14, tftp: 0x15, dns: 0x17, bzImage: 0x18, efi: 0x24 } as const;

/** What an iPXE client says about itself in option 175. */
export interface IpxeOptions {
  /** Feature indicator codes present (0x10–0x7f), ascending. */
  features: number[];
  /** `major.minor.patch` from sub-option 235. */
  version?: string;
  /** Network device: bus type (1 = PCI), vendor and device ids (sub-option 177). */
  busId?: { type: number; vendor: number; device: number };
  /** All sub-options, raw. */
  subOptions: Map<number, Uint8Array>;
}

/** Decodes an option-175 value; `undefined` when malformed. */
export function decodeIpxeOptions(value: Uint8Array): IpxeOptions | undefined {
  const subs = decodeEncapsulatedOptions(value);
  if (subs === undefined) return undefined;
  const features = [...subs.keys()].filter((c) => c >= IpxeSubOption.firstFeature && c <= IpxeSubOption.lastFeature).sort((a, b) => a - b);
  const out: IpxeOptions = { features, subOptions: subs };
  const version = subs.get(IpxeSubOption.version);
  if (version?.length === 3) out.version = `${version[0] ?? 0}.${version[1] ?? 0}.${version[2] ?? 0}`;
  const bus = subs.get(IpxeSubOption.busId);
  if (bus?.length === 5) out.busId = { type: bus[0] ?? 0, vendor: u16(bus, 1), device: u16(bus, 3) };
  return out;
}

/** The PXE vendor options of a packet (option 43), or `undefined` when absent or malformed. */
export function getPxeVendorOptions(options: DhcpOptions): PxeVendorOptions | undefined {
  const v = options.get(DhcpOption.vendorSpecific);
  return v === undefined ? undefined : decodePxeVendorOptions(v);
}

/** The iPXE options of a packet (option 175), or `undefined` when absent or malformed. */
export function getIpxeOptions(options: DhcpOptions): IpxeOptions | undefined {
  const v = options.get(DhcpOption.ipxeEncapsulated);
  return v === undefined ? undefined : decodeIpxeOptions(v);
}
