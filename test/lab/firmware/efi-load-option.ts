/**
 * @module EFI load options and the device paths the lab's BMC writes into a guest's variable
 * store (edk2-varstore.ts) to make its next boot an HTTP boot of a given URI, as a BMC's
 * `HttpBootUri` does on real firmware.
 *
 * EFI_LOAD_OPTION (UEFI 2.10 §3.1.3): Attributes u32 (LOAD_OPTION_ACTIVE 0x1), FilePathListLength
 * u16, Description (UTF-16LE, NUL-terminated), FilePathList, OptionalData (none here). Device path
 * nodes (§10.3): Type u8, SubType u8, Length u16 (header included), then:
 * - ACPI (2/1) PciRoot: _HID EISA PNP0A03 = 0x0A0341D0, _UID u32 — 12 bytes;
 * - Hardware (1/1) Pci: Function u8, Device u8 — 6 bytes;
 * - Messaging (3/11) MAC: MacAddress[32] (zero-padded), IfType u8 (1 = Ethernet) — 37 bytes;
 * - Messaging (3/12) IPv4: Local, Remote u8[4], LocalPort, RemotePort, Protocol u16,
 *   StaticIpAddress u8 (0 = DHCP), Gateway, SubnetMask u8[4] — 27 bytes;
 * - Messaging (3/24) URI: the URI's bytes, no NUL — 4 + length;
 * - End entire (0x7F/0xFF) — 4 bytes.
 *
 * OVMF's boot manager matches such a path against its HTTP boot child (edk2
 * UefiBootManagerLib BmMatchHttpBootDevicePath: nodes must be equal except the IPv4/IPv6 and URI
 * ones) and HttpBootDxe boots the URI in the path instead of asking DHCP for a boot file. The
 * PciRoot/Pci prefix also keeps the option alive through OVMF's SetBootOrderFromQemu, which
 * drops unmatched PciRoot() options (QemuBootOrderLib BootOrderComplete) but keeps those the
 * NIC's `bootindex` matches.
 * @pure
 */

import { encodeUtf16z } from './edk2-varstore.js';

/** LOAD_OPTION_ACTIVE (UEFI 2.10 §3.1.3). */
export const LOAD_OPTION_ACTIVE = 0x1;

/** Where the NIC sits on the guest's root PCI bus, and its MAC. */
export interface NicLocation {
  readonly pciDevice: number;
  readonly pciFunction: number;
  /** Colon-separated MAC. */
  readonly mac: string;
}

function node(type: number, subType: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  out[0] = type;
  out[1] = subType;
  new DataView(out.buffer).setUint16(2, out.length, true);
  out.set(body, 4);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** ACPI PciRoot(uid) node. */
export function pciRootNode(uid = 0): Uint8Array {
  const body = new Uint8Array(8);
  const v = new DataView(body.buffer);
  v.setUint32(0, 0x0a0341d0, true); // EISA_PNP_ID(0x0A03)
  v.setUint32(4, uid, true);
  return node(0x02, 0x01, body);
}

/** Hardware Pci(device, function) node. */
export function pciNode(device: number, fn: number): Uint8Array {
  return node(0x01, 0x01, Uint8Array.of(fn, device));
}

/** Messaging MAC(mac, IfType 1) node. */
export function macNode(mac: string): Uint8Array {
  const bytes = mac.split(/[:-]/).map((h) => parseInt(h, 16));
  if (bytes.length !== 6 || bytes.some((b) => !Number.isInteger(b) || b < 0 || b > 255)) throw new Error(`not a MAC: ${mac}`);
  const body = new Uint8Array(33);
  body.set(bytes, 0);
  body[32] = 1; // NET_IFTYPE_ETHERNET
  return node(0x03, 0x0b, body);
}

/** Messaging IPv4 node with every address zero and StaticIpAddress false: "use DHCP". */
export function ipv4DhcpNode(): Uint8Array {
  return node(0x03, 0x0c, new Uint8Array(23));
}

/** Messaging URI node (RFC 3986 URI as bytes). */
export function uriNode(uri: string): Uint8Array {
  return node(0x03, 0x18, new TextEncoder().encode(uri));
}

/** End-of-device-path node. */
export function endNode(): Uint8Array {
  return node(0x7f, 0xff, new Uint8Array(0));
}

/** PciRoot(0)/Pci(d,f)/MAC(mac,1)/IPv4(DHCP)/Uri(uri)/End: an HTTP boot of `uri` through `nic`. */
export function httpBootDevicePath(nic: NicLocation, uri: string): Uint8Array {
  return concat([pciRootNode(0), pciNode(nic.pciDevice, nic.pciFunction), macNode(nic.mac), ipv4DhcpNode(), uriNode(uri), endNode()]);
}

/** An active EFI_LOAD_OPTION with `description` and `devicePath` (no optional data). */
export function encodeLoadOption(description: string, devicePath: Uint8Array, attributes = LOAD_OPTION_ACTIVE): Uint8Array {
  const desc = encodeUtf16z(description);
  const head = new Uint8Array(6);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, attributes, true);
  hv.setUint16(4, devicePath.length, true);
  return concat([head, desc, devicePath]);
}

/** The `Boot####` variable name of option `n` (four upper-case hex digits, UEFI 2.10 §3.1.1). */
export function bootOptionName(n: number): string {
  return `Boot${n.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A UINT16 variable value (`BootNext`). */
export function uint16Value(n: number): Uint8Array {
  return Uint8Array.of(n & 0xff, (n >> 8) & 0xff);
}
