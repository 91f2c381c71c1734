/**
 * @module Decoders for Redfish configuration and hardware resources: Bios (with its
 * `@Redfish.Settings` annotation, DSP0266 §9.8 "Settings resource"), AttributeRegistry
 * (mapped to metal3's SettingSchema, docs/metal3-mapping.md, "Firmware objects"), MessageRegistryFile,
 * Storage / Drive / Volume (RAIDType ↔ metal3 RAID level, "RAID"), Processor, Memory and
 * EthernetInterface. Same tolerance rules as resources.ts; only `BmcError(PROTOCOL)` is thrown.
 * @pure
 */
import type { BiosAttributeSchema, BiosAttributeType, RaidLevel } from '../capabilities.js';
import {
  expectObject, isJsonObject, lastSegment, readBoolean, readLink, readLinkList, readNumber, readObject, readString,
  readStringList, redfishProtocolError, type DecodeContext, type JsonObject,
} from './json.js';

/** A BIOS attribute value as Redfish carries it. */
export type BiosValue = string | number | boolean | null;

/** The Bios resource of a system. */
export interface BiosResource {
  readonly attributes: Readonly<Record<string, BiosValue>>;
  /** `AttributeRegistry`: the registry id, e.g. `BiosAttributeRegistry.v1_0_0`. */
  readonly attributeRegistry: string | undefined;
  /** `@Redfish.Settings.SettingsObject`: where pending values are PATCHed (`…/Bios/Settings`). */
  readonly settingsObject: string | undefined;
  /** `@Redfish.Settings.SupportedApplyTimes`, e.g. `OnReset`, `Immediate`. */
  readonly supportedApplyTimes: readonly string[] | undefined;
}

function decodeAttributes(o: JsonObject, ctx: DecodeContext): Record<string, BiosValue> {
  const raw = o.Attributes;
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) throw redfishProtocolError(ctx, '"Attributes" is not an object');
  const out: Record<string, BiosValue> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) out[name] = value;
  }
  return out;
}

/** Decodes a Bios resource (also its settings object, which has the same shape). */
export function decodeBios(body: unknown, ctx: DecodeContext): BiosResource {
  const o = expectObject(body, ctx);
  const settings = readObject(o, '@Redfish.Settings');
  return {
    attributes: decodeAttributes(o, ctx),
    attributeRegistry: readString(o, 'AttributeRegistry'),
    settingsObject: readLink(settings, 'SettingsObject'),
    supportedApplyTimes: readStringList(settings, 'SupportedApplyTimes'),
  };
}

/** Renders a Redfish BIOS value as the string metal3 stores (`true`, `42`, '' for null). */
export function biosValueToString(value: BiosValue): string {
  return value === null ? '' : String(value);
}

const ATTRIBUTE_TYPES: readonly BiosAttributeType[] = ['Enumeration', 'String', 'Integer', 'Boolean', 'Password'];

/** Maps one AttributeRegistry entry to a SettingSchema (unknown `Type` → ''). */
function decodeAttributeSchema(entry: JsonObject): BiosAttributeSchema {
  const type = readString(entry, 'Type');
  const attributeType = ATTRIBUTE_TYPES.find((t) => t === type) ?? '';
  const values = Array.isArray(entry.Value)
    ? entry.Value.flatMap((v) => {
      const name = isJsonObject(v) ? readString(v, 'ValueName') : undefined;
      return name === undefined ? [] : [name];
    })
    : undefined;
  const optional: { -readonly [K in keyof BiosAttributeSchema]?: BiosAttributeSchema[K] } = {};
  if (attributeType === 'Enumeration' && values !== undefined) optional.allowableValues = values;
  const numbers = [['LowerBound', 'lowerBound'], ['UpperBound', 'upperBound'], ['MinLength', 'minLength'], ['MaxLength', 'maxLength']] as const;
  for (const [field, key] of numbers) {
    const n = readNumber(entry, field);
    if (n !== undefined) optional[key] = n;
  }
  const readOnly = readBoolean(entry, 'ReadOnly');
  if (readOnly !== undefined) optional.readOnly = readOnly;
  const unique = readBoolean(entry, 'IsSystemUniqueProperty'); // AttributeRegistry v1 (sushy: unique)
  if (unique !== undefined) optional.unique = unique;
  return { attributeType, ...optional };
}

/** Decodes an AttributeRegistry into SettingSchemas by attribute name. */
export function decodeAttributeRegistry(body: unknown, ctx: DecodeContext): Record<string, BiosAttributeSchema> {
  const o = expectObject(body, ctx);
  const attributes = readObject(o, 'RegistryEntries')?.Attributes;
  if (!Array.isArray(attributes)) throw redfishProtocolError(ctx, 'attribute registry has no "RegistryEntries.Attributes" array');
  const out: Record<string, BiosAttributeSchema> = {};
  for (const entry of attributes) {
    const name = isJsonObject(entry) ? readString(entry, 'AttributeName') : undefined;
    if (isJsonObject(entry) && name !== undefined && name !== '') out[name] = decodeAttributeSchema(entry);
  }
  return out;
}

/** A MessageRegistryFile (member of `/redfish/v1/Registries`). */
export interface RegistryFile {
  readonly id: string;
  readonly registry: string | undefined;
  /** `Location[].Uri` with its `Language`; entries without a local Uri are dropped. */
  readonly locations: readonly { readonly language: string | undefined; readonly uri: string }[];
}

/** Decodes a MessageRegistryFile. */
export function decodeRegistryFile(body: unknown, ctx: DecodeContext): RegistryFile {
  const o = expectObject(body, ctx);
  const locations = Array.isArray(o.Location)
    ? o.Location.flatMap((l) => {
      const uri = isJsonObject(l) ? readString(l, 'Uri') : undefined;
      return uri === undefined || uri === '' || !isJsonObject(l) ? [] : [{ language: readString(l, 'Language'), uri }];
    })
    : [];
  return { id: readString(o, 'Id') ?? lastSegment(ctx.uri), registry: readString(o, 'Registry'), locations };
}

const RAID_TYPES: readonly (readonly [RaidLevel, string])[] = [
  ['0', 'RAID0'], ['1', 'RAID1'], ['5', 'RAID5'], ['6', 'RAID6'], ['1+0', 'RAID10'], ['5+0', 'RAID50'], ['6+0', 'RAID60'],
];
const VOLUME_TYPES: Readonly<Record<string, RaidLevel>> = {
  NonRedundant: '0', Mirrored: '1', StripedWithParity: '5', SpannedMirrors: '1+0', SpannedStripesWithParity: '5+0',
};

/** metal3 RAID level → Redfish `RAIDType` (`1+0` → `RAID10`). */
export function raidTypeOfLevel(level: RaidLevel): string {
  return RAID_TYPES.find(([l]) => l === level)?.[1] ?? `RAID${level}`;
}

/** Redfish `RAIDType` → metal3 level; unknown → undefined. */
export function raidLevelOfType(raidType: string): RaidLevel | undefined {
  return RAID_TYPES.find(([, t]) => t === raidType)?.[0];
}

/** A Storage subsystem: its controllers' RAID abilities, drives and volumes. */
export interface StorageResource {
  readonly id: string;
  readonly name: string;
  readonly drives: readonly string[];
  readonly volumes: string | undefined;
  readonly supportedRaidTypes: readonly string[];
}

/** Decodes a Storage resource (controllers inline as `StorageControllers[]`). */
export function decodeStorage(body: unknown, ctx: DecodeContext): StorageResource {
  const o = expectObject(body, ctx);
  const controllers = Array.isArray(o.StorageControllers) ? o.StorageControllers.filter(isJsonObject) : [];
  const supported = new Set(controllers.flatMap((c) => readStringList(c, 'SupportedRAIDTypes') ?? []));
  const id = readString(o, 'Id') ?? lastSegment(ctx.uri);
  return {
    id,
    name: readString(o, 'Name') ?? readString(controllers[0], 'Name') ?? id,
    drives: readLinkList(o, 'Drives'),
    volumes: readLink(o, 'Volumes'),
    supportedRaidTypes: [...supported],
  };
}

/** A physical drive. */
export interface DriveResource {
  readonly id: string;
  readonly model: string | undefined;
  readonly serialNumber: string | undefined;
  readonly capacityBytes: number | undefined;
  readonly mediaType: 'HDD' | 'SSD' | undefined;
  readonly protocol: string | undefined;
}

/** Decodes a Drive (`MediaType` SMR counts as HDD). */
export function decodeDrive(body: unknown, ctx: DecodeContext): DriveResource {
  const o = expectObject(body, ctx);
  const media = readString(o, 'MediaType');
  return {
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    model: readString(o, 'Model'),
    serialNumber: readString(o, 'SerialNumber'),
    capacityBytes: readNumber(o, 'CapacityBytes'),
    mediaType: media === 'SSD' ? 'SSD' : media === 'HDD' || media === 'SMR' ? 'HDD' : undefined,
    protocol: readString(o, 'Protocol'),
  };
}

/**
 * The present devices of a SimpleStorage controller (SimpleStorage v1: `Devices[]` with `Name`,
 * `Model`, `CapacityBytes` and `Status.State`; no Drive resources, no serial number or media
 * type) as drives; devices whose state is `Absent` (empty bays) are left out. A device without a
 * name is named after the controller and its position.
 */
export function decodeSimpleStorageDrives(body: unknown, ctx: DecodeContext): DriveResource[] {
  const o = expectObject(body, ctx);
  const controller = readString(o, 'Id') ?? lastSegment(ctx.uri);
  const devices = Array.isArray(o.Devices) ? o.Devices : [];
  const out: DriveResource[] = [];
  for (const [i, d] of devices.entries()) {
    if (!isJsonObject(d) || readString(readObject(d, 'Status'), 'State') === 'Absent') continue;
    out.push({
      id: readString(d, 'Name') ?? `${controller}-${i}`, model: readString(d, 'Model'), serialNumber: undefined,
      capacityBytes: readNumber(d, 'CapacityBytes'), mediaType: undefined, protocol: undefined,
    });
  }
  return out;
}

/** A logical volume. */
export interface VolumeResource {
  readonly uri: string;
  readonly id: string;
  readonly name: string;
  readonly level: RaidLevel | undefined;
  readonly capacityBytes: number | undefined;
  readonly drives: readonly string[];
}

/** Decodes a Volume; the level comes from `RAIDType`, else the deprecated `VolumeType`. */
export function decodeVolume(body: unknown, ctx: DecodeContext): VolumeResource {
  const o = expectObject(body, ctx);
  const raidType = readString(o, 'RAIDType');
  const volumeType = readString(o, 'VolumeType');
  const id = readString(o, 'Id') ?? lastSegment(ctx.uri);
  return {
    uri: readString(o, '@odata.id') ?? ctx.uri,
    id,
    name: readString(o, 'Name') ?? id,
    level: (raidType === undefined ? undefined : raidLevelOfType(raidType))
      ?? (volumeType !== undefined && Object.hasOwn(VOLUME_TYPES, volumeType) ? VOLUME_TYPES[volumeType] : undefined),
    capacityBytes: readNumber(o, 'CapacityBytes'),
    drives: readLinkList(readObject(o, 'Links'), 'Drives'),
  };
}

/** A processor socket; `present` is false for `Status.State: Absent` sockets. */
export interface ProcessorResource {
  readonly present: boolean;
  readonly isCpu: boolean;
  readonly model: string | undefined;
  /** `InstructionSet` mapped to a Linux arch name (`x86-64` → `x86_64`, `ARM-A64` → `aarch64`). */
  readonly architecture: string | undefined;
  readonly cores: number | undefined;
  readonly threads: number | undefined;
  readonly maxSpeedMhz: number | undefined;
}

const ARCHITECTURES: Readonly<Record<string, string>> = {
  'x86-64': 'x86_64', x86: 'i686', 'ARM-A64': 'aarch64', 'ARM-A32': 'armv7l', 'PowerISA': 'ppc64le', 'RV64': 'riscv64',
};

function stateOf(o: JsonObject): string | undefined {
  return readString(readObject(o, 'Status'), 'State');
}

/** Decodes a Processor. */
export function decodeProcessor(body: unknown, ctx: DecodeContext): ProcessorResource {
  const o = expectObject(body, ctx);
  const set = readString(o, 'InstructionSet') ?? readString(o, 'ProcessorArchitecture');
  const type = readString(o, 'ProcessorType');
  return {
    present: stateOf(o) !== 'Absent',
    isCpu: type === undefined || type === 'CPU',
    model: readString(o, 'Model'),
    architecture: set === undefined ? undefined : Object.hasOwn(ARCHITECTURES, set) ? ARCHITECTURES[set] : set,
    cores: readNumber(o, 'TotalCores'),
    threads: readNumber(o, 'TotalThreads'),
    maxSpeedMhz: readNumber(o, 'MaxSpeedMHz'),
  };
}

/** Decodes a Memory module: its size in MiB, or undefined when absent or unknown. */
export function decodeMemoryCapacityMib(body: unknown, ctx: DecodeContext): number | undefined {
  const o = expectObject(body, ctx);
  return stateOf(o) === 'Absent' ? undefined : readNumber(o, 'CapacityMiB');
}

/** An Ethernet interface of the host. */
export interface EthernetInterfaceResource {
  readonly id: string;
  readonly macAddress: string | undefined;
  readonly speedMbps: number | undefined;
  readonly linkUp: boolean | undefined;
}

/** Decodes an EthernetInterface; the MAC is lower-cased, `PermanentMACAddress` as fallback. */
export function decodeEthernetInterface(body: unknown, ctx: DecodeContext): EthernetInterfaceResource {
  const o = expectObject(body, ctx);
  const mac = readString(o, 'MACAddress') ?? readString(o, 'PermanentMACAddress');
  const link = readString(o, 'LinkStatus');
  return {
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    macAddress: mac === undefined || mac === '' ? undefined : mac.toLowerCase(),
    speedMbps: readNumber(o, 'SpeedMbps'),
    linkUp: link === 'LinkUp' ? true : link === 'LinkDown' || link === 'NoLink' ? false : undefined,
  };
}
