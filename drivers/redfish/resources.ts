/**
 * @module Decoders for the Redfish resources the driver reads about the service, the host and
 * the BMC (DMTF schemas ServiceRoot v1, ComputerSystem v1, Manager v1, VirtualMedia v1,
 * SecureBoot v1, ActionInfo v1). Tasks, firmware inventory, event destinations and error bodies
 * live in resources-services.ts; BIOS, storage and hardware inventory in resources-config.ts;
 * both are re-exported here.
 * Every decoder takes the parsed body and a {@link DecodeContext}; it tolerates missing and odd
 * optional properties and throws only `BmcError(RACKSIDE_ERR_BMC_PROTOCOL)`.
 * @pure
 */
import type { PowerState } from '../capabilities.js';
import {
  expectObject, lastSegment, readActionTarget, readBoolean, readLink, readLinkList, readNumber, readObject,
  readOemVendors, readString, readStringList, isJsonObject, type DecodeContext, type JsonObject,
} from './json.js';

export * from './resources-config.js';
export * from './resources-services.js';

/** ServiceRoot (`/redfish/v1`): what the service offers and where. */
export interface ServiceRoot {
  readonly redfishVersion: string | undefined;
  readonly uuid: string | undefined;
  readonly product: string | undefined;
  /** ServiceRoot v1.5+ `Vendor`. */
  readonly vendor: string | undefined;
  readonly oemVendors: readonly string[];
  readonly systems: string | undefined;
  readonly managers: string | undefined;
  readonly chassis: string | undefined;
  readonly sessionService: string | undefined;
  /** `Links.Sessions`: where to POST a login (DSP0266 §13.3.4). */
  readonly sessions: string | undefined;
  readonly updateService: string | undefined;
  readonly taskService: string | undefined;
  readonly eventService: string | undefined;
  readonly registries: string | undefined;
}

/** Decodes the service root. */
export function decodeServiceRoot(body: unknown, ctx: DecodeContext): ServiceRoot {
  const o = expectObject(body, ctx);
  const sessionService = readLink(o, 'SessionService');
  return {
    redfishVersion: readString(o, 'RedfishVersion'),
    uuid: readString(o, 'UUID'),
    product: readString(o, 'Product'),
    vendor: readString(o, 'Vendor'),
    oemVendors: readOemVendors(o),
    systems: readLink(o, 'Systems'),
    managers: readLink(o, 'Managers'),
    chassis: readLink(o, 'Chassis'),
    sessionService,
    sessions: readLink(readObject(o, 'Links'), 'Sessions')
      ?? (sessionService === undefined ? undefined : `${sessionService.replace(/\/+$/, '')}/Sessions`),
    updateService: readLink(o, 'UpdateService'),
    taskService: readLink(o, 'Tasks') ?? readLink(o, 'TaskService'),
    eventService: readLink(o, 'EventService'),
    registries: readLink(o, 'Registries'),
  };
}

/** An action with its target and, when advertised, the allowed values of its main parameter. */
export interface RedfishAction {
  readonly target: string;
  /** `<Param>@Redfish.AllowableValues`, when the resource lists them inline. */
  readonly allowableValues: readonly string[] | undefined;
  /** `@Redfish.ActionInfo` URI, where the allowed values live otherwise. */
  readonly actionInfo: string | undefined;
}

function readAction(o: JsonObject, name: string, parameter: string): RedfishAction | undefined {
  const target = readActionTarget(o, name);
  if (target === undefined) return undefined;
  const action = readObject(readObject(o, 'Actions'), name);
  return {
    target,
    allowableValues: readStringList(action, `${parameter}@Redfish.AllowableValues`),
    actionInfo: readString(action, '@Redfish.ActionInfo'),
  };
}

/** `AllowableValues` of `parameter` in an ActionInfo resource, or undefined when not listed. */
export function decodeActionInfoAllowableValues(body: unknown, parameter: string, ctx: DecodeContext): string[] | undefined {
  const params = expectObject(body, ctx).Parameters;
  if (!Array.isArray(params)) return undefined;
  const entry = params.find((p): p is JsonObject => isJsonObject(p) && readString(p, 'Name') === parameter);
  return readStringList(entry, 'AllowableValues');
}

/** The boot override block of a ComputerSystem (`Boot`). */
export interface BootProperties {
  /** `BootSourceOverrideTarget`: `None`, `Pxe`, `Hdd`, `Cd`, `BiosSetup`, `UefiHttp` … */
  readonly target: string | undefined;
  /** `BootSourceOverrideEnabled`: `Disabled`, `Once`, `Continuous`. */
  readonly enabled: string | undefined;
  /** `BootSourceOverrideMode`: `UEFI` or `Legacy`. */
  readonly mode: string | undefined;
  readonly allowedTargets: readonly string[] | undefined;
  readonly allowedModes: readonly string[] | undefined;
  /** `HttpBootUri` (ComputerSystem v1_9): a string or null when the BMC has the property, undefined when it has not. */
  readonly httpBootUri: string | null | undefined;
}

/** A ComputerSystem: identity, power, boot override and links to its sub-resources. */
export interface ComputerSystem {
  readonly uri: string;
  readonly id: string;
  readonly manufacturer: string | undefined;
  readonly model: string | undefined;
  readonly serialNumber: string | undefined;
  readonly uuid: string | undefined;
  readonly powerState: PowerState;
  readonly biosVersion: string | undefined;
  readonly memoryGib: number | undefined;
  readonly boot: BootProperties;
  readonly reset: RedfishAction | undefined;
  readonly links: {
    readonly bios: string | undefined;
    readonly processors: string | undefined;
    readonly memory: string | undefined;
    readonly ethernetInterfaces: string | undefined;
    readonly storage: string | undefined;
    /** SimpleStorage collection (older BMCs list their disks only there). */
    readonly simpleStorage: string | undefined;
    readonly secureBoot: string | undefined;
    readonly virtualMedia: string | undefined;
    readonly managedBy: readonly string[];
  };
  readonly oemVendors: readonly string[];
}

const POWER_STATES: Readonly<Record<string, PowerState>> = {
  On: 'on', Off: 'off', PoweringOn: 'powering-on', PoweringOff: 'powering-off', Paused: 'on',
};

/** Maps Redfish `PowerState` to the driver vocabulary; unknown or missing → `unknown`. */
export function decodePowerState(value: string | undefined): PowerState {
  return value !== undefined && Object.hasOwn(POWER_STATES, value) ? POWER_STATES[value] ?? 'unknown' : 'unknown';
}

/** Decodes a ComputerSystem. */
export function decodeComputerSystem(body: unknown, ctx: DecodeContext): ComputerSystem {
  const o = expectObject(body, ctx);
  const boot = readObject(o, 'Boot');
  const links = readObject(o, 'Links');
  return {
    uri: readString(o, '@odata.id') ?? ctx.uri,
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    manufacturer: readString(o, 'Manufacturer'),
    model: readString(o, 'Model'),
    serialNumber: readString(o, 'SerialNumber'),
    uuid: readString(o, 'UUID'),
    powerState: decodePowerState(readString(o, 'PowerState')),
    biosVersion: readString(o, 'BiosVersion'),
    memoryGib: readNumber(readObject(o, 'MemorySummary'), 'TotalSystemMemoryGiB'),
    boot: {
      target: readString(boot, 'BootSourceOverrideTarget'),
      enabled: readString(boot, 'BootSourceOverrideEnabled'),
      mode: readString(boot, 'BootSourceOverrideMode'),
      allowedTargets: readStringList(boot, 'BootSourceOverrideTarget@Redfish.AllowableValues'),
      allowedModes: readStringList(boot, 'BootSourceOverrideMode@Redfish.AllowableValues'),
      httpBootUri: boot !== undefined && Object.hasOwn(boot, 'HttpBootUri') ? readString(boot, 'HttpBootUri') ?? null : undefined,
    },
    reset: readAction(o, '#ComputerSystem.Reset', 'ResetType'),
    links: {
      bios: readLink(o, 'Bios'),
      processors: readLink(o, 'Processors'),
      memory: readLink(o, 'Memory'),
      ethernetInterfaces: readLink(o, 'EthernetInterfaces'),
      storage: readLink(o, 'Storage'),
      simpleStorage: readLink(o, 'SimpleStorage'),
      secureBoot: readLink(o, 'SecureBoot'),
      virtualMedia: readLink(o, 'VirtualMedia'),
      managedBy: readLinkList(links, 'ManagedBy'),
    },
    oemVendors: readOemVendors(o),
  };
}

/** A Manager (the BMC itself). */
export interface Manager {
  readonly uri: string;
  readonly id: string;
  readonly managerType: string | undefined;
  readonly manufacturer: string | undefined;
  readonly model: string | undefined;
  readonly firmwareVersion: string | undefined;
  readonly virtualMedia: string | undefined;
  readonly oemVendors: readonly string[];
}

/** Decodes a Manager. */
export function decodeManager(body: unknown, ctx: DecodeContext): Manager {
  const o = expectObject(body, ctx);
  return {
    uri: readString(o, '@odata.id') ?? ctx.uri,
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    managerType: readString(o, 'ManagerType'),
    manufacturer: readString(o, 'Manufacturer'),
    model: readString(o, 'Model'),
    firmwareVersion: readString(o, 'FirmwareVersion'),
    virtualMedia: readLink(o, 'VirtualMedia'),
    oemVendors: readOemVendors(o),
  };
}

/** A VirtualMedia slot. */
export interface VirtualMediaResource {
  readonly uri: string;
  readonly id: string;
  /** `MediaTypes`: `CD`, `DVD`, `USBStick`, `Floppy` … */
  readonly mediaTypes: readonly string[];
  /** `Image`; `null`/empty when nothing is inserted. */
  readonly image: string | undefined;
  readonly inserted: boolean;
  readonly writeProtected: boolean | undefined;
  readonly insertTarget: string | undefined;
  readonly ejectTarget: string | undefined;
}

/** Decodes a VirtualMedia resource; `Inserted` missing falls back to "an Image is set". */
export function decodeVirtualMedia(body: unknown, ctx: DecodeContext): VirtualMediaResource {
  const o = expectObject(body, ctx);
  const image = readString(o, 'Image');
  const imageUrl = image === undefined || image === '' ? undefined : image;
  return {
    uri: readString(o, '@odata.id') ?? ctx.uri,
    id: readString(o, 'Id') ?? lastSegment(ctx.uri),
    mediaTypes: readStringList(o, 'MediaTypes') ?? [],
    image: imageUrl,
    inserted: readBoolean(o, 'Inserted') ?? imageUrl !== undefined,
    writeProtected: readBoolean(o, 'WriteProtected'),
    insertTarget: readActionTarget(o, '#VirtualMedia.InsertMedia'),
    ejectTarget: readActionTarget(o, '#VirtualMedia.EjectMedia'),
  };
}

/** The SecureBoot resource of a system. */
export interface SecureBootResource {
  readonly enabled: boolean | undefined;
  /** `SecureBootCurrentBoot`: `Enabled` / `Disabled`. */
  readonly currentBoot: 'enabled' | 'disabled' | undefined;
  readonly mode: string | undefined;
}

/** Decodes a SecureBoot resource. */
export function decodeSecureBoot(body: unknown, ctx: DecodeContext): SecureBootResource {
  const o = expectObject(body, ctx);
  const current = readString(o, 'SecureBootCurrentBoot');
  return {
    enabled: readBoolean(o, 'SecureBootEnable'),
    currentBoot: current === 'Enabled' ? 'enabled' : current === 'Disabled' ? 'disabled' : undefined,
    mode: readString(o, 'SecureBootMode'),
  };
}
