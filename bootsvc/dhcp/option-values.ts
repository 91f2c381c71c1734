/**
 * @module Typed accessors for the options a boot server reads from requests: message type
 * (53), requested address (50), lease time (51), server identifier (54), parameter request list
 * (55), maximum message size (57), vendor class (60), client identifier (61), TFTP server (66),
 * boot file (67), user class (77), relay agent information (82), client architecture (93),
 * network interface (94) and machine identifier (97). Accessors never throw: an absent or
 * malformed value reads as `undefined` (fixed-length options were already checked by the decoder).
 * @pure
 */
import { decodeIpv4, formatHexBytes } from './address.js';
import { decodeText, DhcpOption, type DhcpOptions } from './options.js';

/** Reads an unsigned big-endian integer of `bytes.length` (1, 2 or 4) bytes. */
function readUint(bytes: Uint8Array): number {
  let v = 0;
  for (const b of bytes) v = v * 256 + b;
  return v;
}

/** The DHCP message type (option 53), or `undefined` for plain BOOTP. */
export function getMessageType(options: DhcpOptions): number | undefined {
  const v = options.get(DhcpOption.messageType);
  return v?.length === 1 ? v[0] : undefined;
}

/** Reads a 4-byte address option. */
function getAddress(options: DhcpOptions, code: number): string | undefined {
  const v = options.get(code);
  return v?.length === 4 ? decodeIpv4(v) : undefined;
}

/** The requested IP address (option 50). */
export function getRequestedAddress(options: DhcpOptions): string | undefined {
  return getAddress(options, DhcpOption.requestedAddress);
}

/** The server identifier (option 54). */
export function getServerIdentifier(options: DhcpOptions): string | undefined {
  return getAddress(options, DhcpOption.serverIdentifier);
}

/** The lease time in seconds (option 51). */
export function getLeaseSeconds(options: DhcpOptions): number | undefined {
  const v = options.get(DhcpOption.leaseTime);
  return v?.length === 4 ? readUint(v) : undefined;
}

/** The option codes the client asked for (option 55), in its order; `[]` when absent. */
export function getParameterRequestList(options: DhcpOptions): number[] {
  return Array.from(options.get(DhcpOption.parameterRequestList) ?? []);
}

/** The maximum DHCP message size the client accepts (option 57), as sent. */
export function getMaxMessageSize(options: DhcpOptions): number | undefined {
  const v = options.get(DhcpOption.maxMessageSize);
  return v?.length === 2 ? readUint(v) : undefined;
}

/** Reads an option as Latin-1 text. */
function getText(options: DhcpOptions, code: number): string | undefined {
  const v = options.get(code);
  return v === undefined ? undefined : decodeText(v);
}

/** The vendor class identifier (option 60), e.g. `PXEClient:Arch:00007:UNDI:003016`. */
export function getVendorClass(options: DhcpOptions): string | undefined {
  return getText(options, DhcpOption.vendorClass);
}

/** The client identifier (option 61) as lower-case hex, e.g. `01525400123456`. */
export function getClientIdentifier(options: DhcpOptions): string | undefined {
  const v = options.get(DhcpOption.clientIdentifier);
  return v === undefined ? undefined : formatHexBytes(v);
}

/** The host name the client sent (option 12). */
export function getHostName(options: DhcpOptions): string | undefined {
  return getText(options, DhcpOption.hostName);
}

/** The TFTP server name (option 66). */
export function getTftpServerName(options: DhcpOptions): string | undefined {
  return getText(options, DhcpOption.tftpServerName);
}

/** The boot file name (option 67). */
export function getBootFileName(options: DhcpOptions): string | undefined {
  return getText(options, DhcpOption.bootFileName);
}

/**
 * Decodes a user class value (option 77). RFC 3004 §4 frames it as a sequence of
 * length-prefixed class strings; iPXE and several other clients send one bare string instead
 * (`iPXE`). A value that does not parse exactly as RFC 3004 framing is read as one bare string.
 * QUIRK(iPXE): `iPXE` = 0x69 'P' 'X' 'E' cannot be valid framing (0x69 > 3 remaining bytes).
 */
export function decodeUserClasses(value: Uint8Array): string[] {
  const classes: string[] = [];
  let i = 0;
  while (i < value.length) {
    const length = value[i] ?? 0;
    if (length === 0 || i + 1 + length > value.length) return value.length === 0 ? [] : [decodeText(value)];
    classes.push(decodeText(value.subarray(i + 1, i + 1 + length)));
    i += 1 + length;
  }
  return classes;
}

/** The user classes of the client (option 77); `[]` when absent. */
export function getUserClasses(options: DhcpOptions): string[] {
  const v = options.get(DhcpOption.userClass);
  return v === undefined ? [] : decodeUserClasses(v);
}

/** One sub-option of the relay agent information option (RFC 3046 §2.0). */
export interface RelayAgentSubOption {
  /** 1 = agent circuit id, 2 = agent remote id, others per RFC 3046 successors. */
  code: number;
  value: Uint8Array;
}

/**
 * Decodes the sub-options of a relay agent information value (option 82), or `undefined` when
 * the framing is malformed. Servers echo the raw value unchanged (RFC 3046 §2.2); this view is
 * for logging and the flight recorder.
 */
export function decodeRelayAgentInformation(value: Uint8Array): RelayAgentSubOption[] | undefined {
  const out: RelayAgentSubOption[] = [];
  let i = 0;
  while (i < value.length) {
    const code = value[i] ?? 0;
    const length = value[i + 1];
    if (length === undefined || i + 2 + length > value.length) return undefined;
    out.push({ code, value: new Uint8Array(value.subarray(i + 2, i + 2 + length)) });
    i += 2 + length;
  }
  return out;
}

/** The client's architecture types (option 93), most preferred first (RFC 4578 §2.1); `[]` when absent. */
export function getClientArchitectures(options: DhcpOptions): number[] {
  const v = options.get(DhcpOption.clientArchitecture);
  const out: number[] = [];
  if (v === undefined) return out;
  for (let i = 0; i + 1 < v.length; i += 2) out.push(((v[i] ?? 0) << 8) | (v[i + 1] ?? 0));
  return out;
}

/** The client network device interface (option 94, RFC 4578 §2.2): type 1 = UNDI, and its version. */
export interface ClientNetworkInterface {
  type: number;
  major: number;
  minor: number;
}

/** The client network device interface (option 94). */
export function getClientNetworkInterface(options: DhcpOptions): ClientNetworkInterface | undefined {
  const v = options.get(DhcpOption.clientNetworkInterface);
  if (v?.length !== 3) return undefined;
  return { type: v[0] ?? 0, major: v[1] ?? 0, minor: v[2] ?? 0 };
}

/**
 * The client machine identifier (option 97, RFC 4578 §2.3) as a lower-case 8-4-4-4-12 GUID, or
 * `undefined` unless the value is type 0 followed by 16 bytes. The bytes are printed in wire
 * order. QUIRK(EDK2/SMBIOS): firmware copies the SMBIOS UUID, whose first three fields are
 * little-endian, so this may differ from `dmidecode -s system-uuid` in those fields.
 */
export function getClientMachineId(options: DhcpOptions): string | undefined {
  const v = options.get(DhcpOption.clientMachineId);
  if (v?.length !== 17 || v[0] !== 0) return undefined;
  const hex = formatHexBytes(v.subarray(1));
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
