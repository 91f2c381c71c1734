/**
 * @module Request encoders and response decoders of the App and Chassis commands the driver
 * uses (IPMI v2.0 §22 and §28): Get Channel Authentication Capabilities, Get Device ID, Set
 * Session Privilege Level, Close Session, Get Chassis Status, Chassis Control, and Set/Get System
 * Boot Options parameter 5 (boot flags: device selector, EFI boot type, persistence, valid bit).
 * FRU commands live in fru.ts, SDR and sensor commands in sdr.ts. Decoders take the response
 * data after the completion code (the session layer has already checked it).
 * @pure
 */
import { IpmiDecodeError, requireLength } from './decode-error.js';
import { NetFn } from './messages.js';

/** What the session layer sends: NetFn, command and request data. */
export interface IpmiCommandRequest {
  readonly netFn: number;
  readonly command: number;
  readonly data: Buffer;
}

/** Privilege levels (IPMI v2.0 table 6-2 / §22.13). */
export const Privilege = { callback: 1, user: 2, operator: 3, administrator: 4, oem: 5 } as const;

/** Parses metal3's `privilegelevel` (`ADMINISTRATOR`, `OPERATOR`, `USER`, `CALLBACK`, `OEM`; any case). */
export function parsePrivilegeLevel(name: string): number | undefined {
  const key = name.trim().toLowerCase();
  if (key === 'admin' || key === 'administrator') return Privilege.administrator;
  return key === 'callback' || key === 'user' || key === 'operator' || key === 'oem' ? Privilege[key] : undefined;
}

/** Get Channel Authentication Capabilities for the current channel, asking for v2.0 data (§22.13). */
export function encodeGetChannelAuthCapabilities(privilege: number): IpmiCommandRequest {
  return { netFn: NetFn.app, command: 0x38, data: Buffer.from([0x80 | 0x0e, privilege & 0x0f]) };
}

/** Decoded Get Channel Authentication Capabilities response. */
export interface ChannelAuthCapabilities {
  readonly channel: number;
  /** The BMC reports IPMI v2.0 extended capabilities (auth type support bit 7). */
  readonly extendedCapabilities: boolean;
  /** Channel supports IPMI v2.0 / RMCP+ connections (extended capabilities bit 1). */
  readonly supportsIpmi20: boolean;
  readonly supportsIpmi15: boolean;
  /** A non-zero BMC key (Kg) is configured: SIK needs Kg, not the password (byte 3 bit 5). */
  readonly kgRequired: boolean;
  readonly perMessageAuthDisabled: boolean;
  readonly userLevelAuthDisabled: boolean;
  readonly nonNullUsernames: boolean;
  readonly nullUsernames: boolean;
  readonly anonymousLogin: boolean;
  readonly oemIana: number;
}

/** Decodes a Get Channel Authentication Capabilities response. */
export function decodeGetChannelAuthCapabilities(data: Buffer): ChannelAuthCapabilities {
  requireLength(data, 8, 'Get Channel Authentication Capabilities response');
  const support = data[1] ?? 0;
  const status = data[2] ?? 0;
  const extended = data[3] ?? 0;
  const hasExtended = (support & 0x80) !== 0;
  return {
    channel: (data[0] ?? 0) & 0x0f,
    extendedCapabilities: hasExtended,
    supportsIpmi20: hasExtended && (extended & 0x02) !== 0,
    supportsIpmi15: !hasExtended || (extended & 0x01) !== 0,
    kgRequired: (status & 0x20) !== 0,
    perMessageAuthDisabled: (status & 0x10) !== 0,
    userLevelAuthDisabled: (status & 0x08) !== 0,
    nonNullUsernames: (status & 0x04) !== 0,
    nullUsernames: (status & 0x02) !== 0,
    anonymousLogin: (status & 0x01) !== 0,
    oemIana: (data[4] ?? 0) | ((data[5] ?? 0) << 8) | ((data[6] ?? 0) << 16),
  };
}

/** Set Session Privilege Level (§22.18); the session starts at User level until raised. */
export function encodeSetSessionPrivilegeLevel(privilege: number): IpmiCommandRequest {
  return { netFn: NetFn.app, command: 0x3b, data: Buffer.from([privilege & 0x0f]) };
}

/** Decodes Set Session Privilege Level: the new privilege level. */
export function decodeSetSessionPrivilegeLevel(data: Buffer): number {
  requireLength(data, 1, 'Set Session Privilege Level response');
  return (data[0] ?? 0) & 0x0f;
}

/** Close Session (§22.19) for the BMC's session ID. */
export function encodeCloseSession(bmcSessionId: number): IpmiCommandRequest {
  const data = Buffer.alloc(4);
  data.writeUInt32LE(bmcSessionId >>> 0, 0);
  return { netFn: NetFn.app, command: 0x3c, data };
}

/** Get Device ID (§20.1). */
export function encodeGetDeviceId(): IpmiCommandRequest {
  return { netFn: NetFn.app, command: 0x01, data: Buffer.alloc(0) };
}

/** Decoded Get Device ID response. */
export interface DeviceId {
  readonly deviceId: number;
  readonly deviceRevision: number;
  readonly providesDeviceSdrs: boolean;
  /** False while the device updates firmware/SDRs or initializes (byte 3 bit 7 set). */
  readonly deviceAvailable: boolean;
  /** `major.minor`, minor from BCD with two digits, e.g. `9.08` (as ipmitool prints it). */
  readonly firmwareRevision: string;
  /** IPMI version, e.g. `2.0`. */
  readonly ipmiVersion: string;
  /** Additional Device Support bits (bit 7 chassis, 3 FRU, 1 SDR repository, 0 sensor). */
  readonly additionalDeviceSupport: number;
  /** IANA enterprise number of the manufacturer (20 bits). */
  readonly manufacturerId: number;
  readonly productId: number;
  readonly auxFirmwareRevision: Buffer | undefined;
}

function bcd(byte: number): string {
  return `${(byte >> 4) & 0x0f}${byte & 0x0f}`;
}

/** Decodes a Get Device ID response. */
export function decodeGetDeviceId(data: Buffer): DeviceId {
  requireLength(data, 11, 'Get Device ID response');
  const version = data[4] ?? 0;
  return {
    deviceId: data[0] ?? 0,
    deviceRevision: (data[1] ?? 0) & 0x0f,
    providesDeviceSdrs: ((data[1] ?? 0) & 0x80) !== 0,
    deviceAvailable: ((data[2] ?? 0) & 0x80) === 0,
    firmwareRevision: `${(data[2] ?? 0) & 0x7f}.${bcd(data[3] ?? 0)}`,
    ipmiVersion: `${version & 0x0f}.${(version >> 4) & 0x0f}`,
    additionalDeviceSupport: data[5] ?? 0,
    manufacturerId: ((data[6] ?? 0) | ((data[7] ?? 0) << 8) | ((data[8] ?? 0) << 16)) & 0x0fffff,
    productId: data.readUInt16LE(9),
    auxFirmwareRevision: data.length >= 15 ? Buffer.from(data.subarray(11, 15)) : undefined,
  };
}

/** Additional Device Support bits of Get Device ID. */
export const DeviceSupport = { sensor: 0x01, sdrRepository: 0x02, sel: 0x04, fru: 0x08, eventReceiver: 0x10, eventGenerator: 0x20, bridge: 0x40, chassis: 0x80 } as const;

/** Get Chassis Status (§28.2). */
export function encodeGetChassisStatus(): IpmiCommandRequest {
  return { netFn: NetFn.chassis, command: 0x01, data: Buffer.alloc(0) };
}

/** Decoded Get Chassis Status response. */
export interface ChassisStatus {
  readonly powerOn: boolean;
  readonly powerOverload: boolean;
  readonly interlock: boolean;
  readonly powerFault: boolean;
  readonly powerControlFault: boolean;
  readonly restorePolicy: 'always-off' | 'previous' | 'always-on' | 'unknown';
  readonly lastPowerEvent: number;
  readonly intrusion: boolean;
  readonly frontPanelLockout: boolean;
  readonly driveFault: boolean;
  readonly coolingFault: boolean;
}

const RESTORE_POLICIES = ['always-off', 'previous', 'always-on', 'unknown'] as const;

/** Decodes a Get Chassis Status response. */
export function decodeGetChassisStatus(data: Buffer): ChassisStatus {
  requireLength(data, 3, 'Get Chassis Status response');
  const power = data[0] ?? 0;
  const misc = data[2] ?? 0;
  return {
    powerOn: (power & 0x01) !== 0, powerOverload: (power & 0x02) !== 0, interlock: (power & 0x04) !== 0,
    powerFault: (power & 0x08) !== 0, powerControlFault: (power & 0x10) !== 0,
    restorePolicy: RESTORE_POLICIES[(power >> 5) & 0x03] ?? 'unknown', lastPowerEvent: data[1] ?? 0,
    intrusion: (misc & 0x01) !== 0, frontPanelLockout: (misc & 0x02) !== 0, driveFault: (misc & 0x04) !== 0, coolingFault: (misc & 0x08) !== 0,
  };
}

/** Chassis Control actions (§28.3, data byte 1). */
export const ChassisControl = {
  powerDown: 0x00,
  powerUp: 0x01,
  powerCycle: 0x02,
  hardReset: 0x03,
  pulseDiagnosticInterrupt: 0x04,
  /** Initiate a soft shutdown via ACPI by emulating a fatal overtemperature. */
  softShutdown: 0x05,
} as const;

/** Chassis Control with one of {@link ChassisControl}. */
export function encodeChassisControl(action: number): IpmiCommandRequest {
  if (!Number.isInteger(action) || action < 0 || action > 5) throw new RangeError(`chassis control action ${action} is not 0–5`);
  return { netFn: NetFn.chassis, command: 0x02, data: Buffer.from([action]) };
}

/** Boot device selectors of boot flags data 2 bits 5:2 (§28.13, table 28-14). */
export const BOOT_DEVICE_SELECTORS = {
  none: 0x0, pxe: 0x1, disk: 0x2, 'disk-safe-mode': 0x3, diagnostic: 0x4, cdrom: 0x5, bios: 0x6,
  'remote-floppy': 0x7, 'remote-cdrom': 0x8, 'remote-media': 0x9, 'remote-disk': 0xb, floppy: 0xf,
} as const;

/** A boot device selector by name. */
export type IpmiBootDevice = keyof typeof BOOT_DEVICE_SELECTORS;

/** Boot flags (boot option parameter 5). */
export interface BootFlags {
  /** Bit 7 of data 1: the flags are valid (the BMC clears it after the boot or a timeout). */
  readonly valid: boolean;
  /** Bit 6: apply to all future boots (else next boot only). */
  readonly persistent: boolean;
  /** Bit 5: EFI boot type (else PC compatible / legacy). */
  readonly efi: boolean;
  readonly device: IpmiBootDevice | 'reserved';
}

/** Set System Boot Options, parameter 5 (boot flags); the other bytes stay zero (defaults). */
export function encodeSetBootFlags(flags: Omit<BootFlags, 'device'> & { readonly device: IpmiBootDevice }): IpmiCommandRequest {
  const data1 = (flags.valid ? 0x80 : 0) | (flags.persistent ? 0x40 : 0) | (flags.efi ? 0x20 : 0);
  const data2 = BOOT_DEVICE_SELECTORS[flags.device] << 2;
  return { netFn: NetFn.chassis, command: 0x08, data: Buffer.from([0x05, data1, data2, 0x00, 0x00, 0x00]) };
}

/** Get System Boot Options for `parameter` (set and block selector 0). */
export function encodeGetBootOptions(parameter: number): IpmiCommandRequest {
  return { netFn: NetFn.chassis, command: 0x09, data: Buffer.from([parameter & 0x7f, 0x00, 0x00]) };
}

/** Decodes a Get System Boot Options response for parameter 5 into boot flags. */
export function decodeBootFlagsResponse(data: Buffer): BootFlags {
  requireLength(data, 4, 'Get System Boot Options response');
  if (((data[1] ?? 0) & 0x7f) !== 0x05) throw new IpmiDecodeError('malformed', `boot option parameter ${(data[1] ?? 0) & 0x7f} is not 5`);
  const data1 = data[2] ?? 0;
  const selector = ((data[3] ?? 0) >> 2) & 0x0f;
  const device = (Object.keys(BOOT_DEVICE_SELECTORS) as IpmiBootDevice[]).find((k) => BOOT_DEVICE_SELECTORS[k] === selector);
  return { valid: (data1 & 0x80) !== 0, persistent: (data1 & 0x40) !== 0, efi: (data1 & 0x20) !== 0, device: device ?? 'reserved' };
}
