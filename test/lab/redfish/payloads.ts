/**
 * @module Redfish payloads of the virtual BMC, written from the DMTF schemas (ServiceRoot
 * v1_15, ComputerSystem v1_20, Bios v1_2 + AttributeRegistry v1_3, SecureBoot v1_1, Processor,
 * Memory, EthernetInterface, Storage v1_15 / Drive / Volume, Manager v1_19, VirtualMedia v1_6,
 * SessionService, TaskService / Task v1_7, EventService / EventDestination v1_13,
 * UpdateService v1_11 / SoftwareInventory, MessageRegistryFile) and the Redfish error body
 * (DSP0266 §9.6). Flavors change ids and a few details (iDRAC ids and Oem.Dell, iLO 5 trailing
 * slashes and Oem.Hpe).
 */
import type { HostPower } from './backend.js';
import {
  VIRTUAL_DRIVE_BYTES, VIRTUAL_DRIVES, type VirtualBmcState, type VirtualMediaSlotState, type VirtualSubscription, type VirtualSystem,
  type VirtualTask, type VirtualVolume,
} from './state.js';

/** A JSON payload. */
export type Payload = Record<string, unknown>;

/** Redfish-style paths for a flavor (iLO 5 ends @odata.id values with a slash). */
export class Paths {
  readonly #slash: boolean;
  constructor(state: VirtualBmcState) {
    this.#slash = state.flavor === 'ilo5';
  }
  /** `/redfish/v1/<rest>` as the flavor spells it. */
  at(rest: string): string {
    const path = rest === '' ? '/redfish/v1' : `/redfish/v1/${rest}`;
    return this.#slash ? `${path}/` : path;
  }
  /** `{"@odata.id": …}`. */
  link(rest: string): { '@odata.id': string } {
    return { '@odata.id': this.at(rest) };
  }
}

/** A collection payload. */
export function collection(paths: Paths, rest: string, type: string, name: string, members: readonly string[]): Payload {
  return {
    '@odata.id': paths.at(rest), '@odata.type': `#${type}.${type}`, Name: name,
    Members: members.map((m) => paths.link(m)), 'Members@odata.count': members.length,
  };
}

/** The Redfish error body (DSP0266 §9.6). */
export function errorBody(messageId: string, message: string): Payload {
  return {
    error: {
      code: 'Base.1.16.GeneralError', message: 'A general error has occurred. See ExtendedInfo for more information.',
      '@Message.ExtendedInfo': [{ '@odata.type': '#Message.v1_1_2.Message', MessageId: messageId, Message: message, Severity: 'Critical', Resolution: 'None' }],
    },
  };
}

/** ServiceRoot. */
export function serviceRoot(state: VirtualBmcState, paths: Paths): Payload {
  const oem = state.flavor === 'idrac' ? { Dell: { '@odata.type': '#DellServiceRoot.v1_0_0.DellServiceRoot', ServiceTag: 'VRT0001' } }
    : state.flavor === 'ilo5' ? { Hpe: { '@odata.type': '#HpeiLOServiceExt.v2_5_0.HpeiLOServiceExt', Manager: [{ ManagerType: 'iLO 5' }] } } : {};
  return {
    '@odata.id': paths.at(''), '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot', Id: 'RootService', Name: 'Root Service',
    RedfishVersion: '1.17.0', UUID: '92384634-2938-2342-8820-489239905423', Product: 'rackside virtual BMC',
    ...(state.flavor === 'generic' ? { Vendor: 'rackside' } : {}),
    Systems: paths.link('Systems'), Managers: paths.link('Managers'), Chassis: paths.link('Chassis'),
    ...(state.knobs.sessions ? { SessionService: paths.link('SessionService'), Links: { Sessions: paths.link('SessionService/Sessions') } } : {}),
    Tasks: paths.link('TaskService'), EventService: paths.link('EventService'), ...(state.knobs.updateService ? { UpdateService: paths.link('UpdateService') } : {}),
    Registries: paths.link('Registries'), Oem: oem,
  };
}

const MAC_BASE = 0x5254_0000_0000;

/** Deterministic MAC of NIC `index` of system `id`. */
export function virtualMac(id: string, index: number): string {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  const n = MAC_BASE + ((h & 0xffff) << 8) + index;
  return n.toString(16).padStart(12, '0').match(/../g)?.join(':') ?? '52:54:00:00:00:00';
}

/** ComputerSystem. */
export function computerSystem(state: VirtualBmcState, paths: Paths, sys: VirtualSystem, power: HostPower): Payload {
  const base = `Systems/${sys.id}`;
  return {
    '@odata.id': paths.at(base), '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem', Id: sys.id, Name: 'System',
    SystemType: 'Physical', Manufacturer: state.flavor === 'idrac' ? 'Dell Inc.' : state.flavor === 'ilo5' ? 'HPE' : 'rackside',
    Model: state.flavor === 'idrac' ? 'PowerEdge R650' : state.flavor === 'ilo5' ? 'ProLiant DL360 Gen10' : 'Virtual Server',
    SerialNumber: String(sys.bios.SerialNumber), UUID: `4c4c4544-0000-4000-8000-${sys.id.replace(/[^0-9]/g, '').padStart(12, '0').slice(-12)}`,
    PowerState: power, BiosVersion: state.firmware[1]?.version ?? '1.0.0', Status: { State: 'Enabled', Health: 'OK' },
    Boot: {
      BootSourceOverrideEnabled: sys.boot.enabled, BootSourceOverrideTarget: sys.boot.target, BootSourceOverrideMode: sys.boot.mode,
      'BootSourceOverrideTarget@Redfish.AllowableValues': ['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup', 'UefiHttp'],
      'BootSourceOverrideMode@Redfish.AllowableValues': ['UEFI', 'Legacy'],
      ...(state.flavor === 'idrac' ? {} : { HttpBootUri: sys.httpBootUri }),
    },
    ProcessorSummary: { Count: 2, Model: 'Virtual CPU @ 2.40GHz', LogicalProcessorCount: 32 },
    MemorySummary: { TotalSystemMemoryGiB: 128, Status: { State: 'Enabled', Health: 'OK' } },
    Bios: paths.link(`${base}/Bios`), SecureBoot: paths.link(`${base}/SecureBoot`), Processors: paths.link(`${base}/Processors`),
    Memory: paths.link(`${base}/Memory`), EthernetInterfaces: paths.link(`${base}/EthernetInterfaces`), Storage: paths.link(`${base}/Storage`),
    Links: { ManagedBy: [paths.link(`Managers/${state.managerId}`)], Chassis: [paths.link('Chassis/1')] },
    Actions: {
      '#ComputerSystem.Reset': {
        target: paths.at(`${base}/Actions/ComputerSystem.Reset`),
        ...(state.knobs.resetViaActionInfo
          ? { '@Redfish.ActionInfo': paths.at(`${base}/ResetActionInfo`) }
          : { 'ResetType@Redfish.AllowableValues': state.knobs.resetTypes }),
      },
    },
  };
}

/** Bios (`settings` false) or its settings object (`settings` true). */
export function bios(paths: Paths, sys: VirtualSystem, settings: boolean): Payload {
  const base = `Systems/${sys.id}/Bios`;
  return settings
    ? { '@odata.id': paths.at(`${base}/Settings`), '@odata.type': '#Bios.v1_2_0.Bios', Id: 'Settings', Name: 'BIOS pending settings', Attributes: { ...sys.pendingBios } }
    : {
      '@odata.id': paths.at(base), '@odata.type': '#Bios.v1_2_0.Bios', Id: 'Bios', Name: 'BIOS Configuration Current Settings',
      AttributeRegistry: 'BiosAttributeRegistry.v1_0_0', Attributes: { ...sys.bios },
      '@Redfish.Settings': {
        '@odata.type': '#Settings.v1_3_5.Settings', SettingsObject: paths.link(`${base}/Settings`),
        SupportedApplyTimes: ['OnReset', 'AtMaintenanceWindowStart'],
      },
      Actions: { '#Bios.ResetBios': { target: paths.at(`${base}/Actions/Bios.ResetBios`) } },
    };
}

/** The BIOS AttributeRegistry (RegistryEntries.Attributes). */
export function biosRegistry(paths: Paths): Payload {
  const enumeration = (name: string, values: readonly string[]): Payload => ({
    AttributeName: name, Type: 'Enumeration', ReadOnly: false, ResetRequired: true, DisplayName: name,
    Value: values.map((v) => ({ ValueName: v, ValueDisplayName: v })),
  });
  return {
    '@odata.id': paths.at('Registries/BiosAttributeRegistry.v1_0_0/BiosAttributeRegistry.v1_0_0.json'),
    '@odata.type': '#AttributeRegistry.v1_3_6.AttributeRegistry', Id: 'BiosAttributeRegistry.v1_0_0', Name: 'BIOS Attribute Registry',
    Language: 'en', RegistryVersion: '1.0.0', OwningEntity: 'rackside',
    RegistryEntries: {
      Attributes: [
        enumeration('BootMode', ['Uefi', 'LegacyBios']),
        enumeration('ProcVirtualization', ['Enabled', 'Disabled']),
        enumeration('ProcHyperthreading', ['Enabled', 'Disabled']),
        enumeration('SriovGlobalEnable', ['Enabled', 'Disabled']),
        { AttributeName: 'NumaNodesPerSocket', Type: 'Integer', LowerBound: 1, UpperBound: 4, ScalarIncrement: 1, ReadOnly: false },
        { AttributeName: 'AssetTag', Type: 'String', MinLength: 0, MaxLength: 32, ReadOnly: false },
        { AttributeName: 'SerialNumber', Type: 'String', ReadOnly: true },
        { AttributeName: 'SetupPassword', Type: 'Password', ReadOnly: false },
        { AttributeName: 'PxeEnabled', Type: 'Boolean', ReadOnly: false },
      ],
    },
  };
}

/** A VirtualMedia slot. */
export function virtualMedia(state: VirtualBmcState, paths: Paths, slot: VirtualMediaSlotState): Payload {
  const base = `Managers/${state.managerId}/VirtualMedia/${slot.id}`;
  return {
    '@odata.id': paths.at(base), '@odata.type': '#VirtualMedia.v1_6_0.VirtualMedia', Id: slot.id, Name: 'Virtual Removable Media',
    MediaTypes: slot.mediaTypes, Image: slot.image ?? null, ImageName: slot.image?.split('/').pop() ?? '', Inserted: slot.inserted,
    WriteProtected: slot.writeProtected, ConnectedVia: slot.inserted ? 'URI' : 'NotConnected', TransferMethod: 'Stream',
    Actions: {
      '#VirtualMedia.InsertMedia': { target: paths.at(`${base}/Actions/VirtualMedia.InsertMedia`) },
      '#VirtualMedia.EjectMedia': { target: paths.at(`${base}/Actions/VirtualMedia.EjectMedia`) },
    },
  };
}

/** Manager. */
export function manager(state: VirtualBmcState, paths: Paths): Payload {
  const base = `Managers/${state.managerId}`;
  return {
    '@odata.id': paths.at(base), '@odata.type': '#Manager.v1_19_0.Manager', Id: state.managerId, Name: 'Manager', ManagerType: 'BMC',
    Manufacturer: state.flavor === 'idrac' ? 'Dell Inc.' : state.flavor === 'ilo5' ? 'HPE' : 'rackside',
    Model: state.flavor === 'idrac' ? '16G Monolithic' : state.flavor === 'ilo5' ? 'iLO 5' : 'Virtual BMC',
    FirmwareVersion: state.firmware[0]?.version ?? '1.0.0', Status: { State: 'Enabled', Health: 'OK' },
    VirtualMedia: paths.link(`${base}/VirtualMedia`),
    Links: { ManagerForServers: [...state.systems.keys()].map((id) => paths.link(`Systems/${id}`)) },
    ...(state.flavor === 'idrac' ? { Oem: { Dell: { Jobs: paths.link(`${base}/Jobs`) } } } : {}),
  };
}

/** Task. */
export function task(paths: Paths, t: VirtualTask): Payload {
  return {
    '@odata.id': paths.at(`TaskService/Tasks/${t.id}`), '@odata.type': '#Task.v1_7_0.Task', Id: t.id, Name: t.name,
    TaskState: t.state, TaskStatus: t.state === 'Exception' ? 'Critical' : 'OK',
    PercentComplete: t.state === 'Running' ? 50 : t.state === 'Pending' ? 0 : 100, TaskMonitor: paths.at(`TaskService/TaskMonitors/${t.id}`),
    Messages: t.messages.map((m) => ({ MessageId: 'TaskEvent.1.0.TaskProgressChanged', Message: m })),
  };
}

/** EventDestination (HttpHeaders read back as an empty list, per the schema). */
export function subscription(paths: Paths, s: VirtualSubscription): Payload {
  return {
    '@odata.id': paths.at(`EventService/Subscriptions/${s.id}`), '@odata.type': '#EventDestination.v1_13_0.EventDestination',
    Id: s.id, Name: 'Event Subscription', Destination: s.destination, Context: s.context, Protocol: 'Redfish', HttpHeaders: [],
    SubscriptionType: 'RedfishEvent', EventFormatType: 'Event',
  };
}

/** Storage with its controller and drives. */
export function storage(paths: Paths, sys: VirtualSystem): Payload {
  const base = `Systems/${sys.id}/Storage/RAID.Integrated.1`;
  return {
    '@odata.id': paths.at(base), '@odata.type': '#Storage.v1_15_0.Storage', Id: 'RAID.Integrated.1', Name: 'Virtual RAID Controller',
    StorageControllers: [{ MemberId: '0', Name: 'Virtual RAID Controller', SupportedRAIDTypes: ['RAID0', 'RAID1', 'RAID5', 'RAID10'], Status: { State: 'Enabled' } }],
    Drives: VIRTUAL_DRIVES.map((d) => paths.link(`${base}/Drives/${d}`)), Volumes: paths.link(`${base}/Volumes`),
  };
}

/** Drive. */
export function drive(paths: Paths, sys: VirtualSystem, id: string): Payload {
  return {
    '@odata.id': paths.at(`Systems/${sys.id}/Storage/RAID.Integrated.1/Drives/${id}`), '@odata.type': '#Drive.v1_17_0.Drive', Id: id,
    Name: `Solid State Disk ${id}`, Model: 'VIRT SSD 960GB', SerialNumber: `${sys.id}-${id}`, CapacityBytes: VIRTUAL_DRIVE_BYTES,
    MediaType: 'SSD', Protocol: 'SATA', Status: { State: 'Enabled', Health: 'OK' },
  };
}

/** Volume. */
export function volume(paths: Paths, sys: VirtualSystem, v: VirtualVolume): Payload {
  const base = `Systems/${sys.id}/Storage/RAID.Integrated.1`;
  return {
    '@odata.id': paths.at(`${base}/Volumes/${v.id}`), '@odata.type': '#Volume.v1_9_0.Volume', Id: v.id, Name: v.name,
    RAIDType: v.raidType, CapacityBytes: v.capacityBytes, Links: { Drives: v.drives.map((d) => paths.link(`${base}/Drives/${d}`)) },
  };
}
