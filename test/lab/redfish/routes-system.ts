/**
 * @module Routes of the virtual BMC under `/redfish/v1/Systems`: the System (boot override
 * PATCH with If-Match), `ComputerSystem.Reset` (applied after `powerDelayMs`), Bios and its
 * settings object, SecureBoot, Processors, Memory, EthernetInterfaces and Storage with
 * drives and volumes (create/delete answered with 202 task monitors when `asyncVolumes`).
 */
import type { LabContext, Route, RouteRequest, RouteResponse } from './lab-context.js';
import {
  bios, collection, computerSystem, drive, storage, task, virtualMac, volume, type Payload,
} from './payloads.js';
import { VIRTUAL_DRIVE_BYTES, VIRTUAL_DRIVES, type VirtualSystem } from './state.js';

const S = '^/redfish/v1/Systems/([^/]+)';
const BOOT_TARGETS = ['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup', 'UefiHttp'] as const;
const RAID_MIN_DRIVES: Readonly<Record<string, number>> = { RAID0: 1, RAID1: 2, RAID5: 3, RAID10: 4 };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds the Systems routes. */
export function systemRoutes(lab: LabContext): Route[] {
  const { state, paths } = lab;
  const sys = (req: RouteRequest): VirtualSystem | undefined => state.systems.get(req.params[0] ?? '');
  const withSystem = (fn: (s: VirtualSystem, req: RouteRequest) => Promise<RouteResponse> | RouteResponse) =>
    (req: RouteRequest): Promise<RouteResponse> | RouteResponse => {
      const s = sys(req);
      return s === undefined ? lab.error(404, 'Base.1.16.ResourceMissingAtURI', `no system ${req.params[0] ?? ''}`) : fn(s, req);
    };
  const systemPayload = async (s: VirtualSystem): Promise<Payload> => computerSystem(state, paths, s, await s.backend.powerState());
  const get = (pattern: string, fn: (s: VirtualSystem, req: RouteRequest) => Promise<Payload | undefined> | Payload | undefined): Route => ({
    method: 'GET', pattern: new RegExp(`${S}${pattern}$`),
    handle: withSystem(async (s, req) => {
      const payload = await fn(s, req);
      return payload === undefined ? lab.error(404, 'Base.1.16.ResourceMissingAtURI', `${req.path} not found`) : lab.ok(payload);
    }),
  });

  const reset = async (s: VirtualSystem, type: string): Promise<RouteResponse | undefined> => {
    if (!state.knobs.resetTypes.includes(type)) return lab.error(400, 'Base.1.16.ActionParameterValueNotInList', `ResetType ${type} is not allowed`);
    const power = await s.backend.powerState();
    const delay = state.knobs.powerDelayMs;
    const later = (fn: () => Promise<void>): RouteResponse | undefined => {
      lab.schedule(delay, fn);
      return undefined;
    };
    const off = async (): Promise<void> => {
      await s.backend.powerOff();
      lab.emitEvent('ResourceEvent.1.0.ResourcePowerStateChanged', `System ${s.id} powered off`, `Systems/${s.id}`);
    };
    switch (type) {
      case 'On': case 'ForceOn':
        return power === 'On' ? undefined : later(() => lab.bootSystem(s, 'on'));
      case 'ForceOff':
        return power === 'Off' ? undefined : later(off);
      case 'GracefulShutdown':
        return power === 'Off' ? undefined : later(async () => {
          await s.backend.shutdown();
          if ((await s.backend.powerState()) === 'Off') lab.emitEvent('ResourceEvent.1.0.ResourcePowerStateChanged', `System ${s.id} shut down`, `Systems/${s.id}`);
        });
      case 'ForceRestart': case 'PowerCycle': case 'GracefulRestart':
        if (power === 'Off') return lab.error(409, 'Base.1.16.ActionNotSupported', `${type} needs the system on`);
        return later(() => lab.bootSystem(s, 'reset'));
      case 'Nmi':
        return undefined;
      default:
        return lab.error(400, 'Base.1.16.ActionParameterValueNotInList', `ResetType ${type} is not allowed`);
    }
  };

  // SecureBootEnable takes effect at the next reset (DMTF SecureBoot v1_1); SecureBootCurrentBoot is
  // what the firmware booted with. A backend with real firmware reports both; else one flag stands for both.
  const secureBootPayload = async (s: VirtualSystem): Promise<Payload> => {
    const real = await s.backend.secureBoot?.state();
    const enable = real?.enable ?? s.secureBoot;
    const current = real?.currentBoot ?? s.secureBoot;
    return {
      '@odata.id': paths.at(`Systems/${s.id}/SecureBoot`), '@odata.type': '#SecureBoot.v1_1_0.SecureBoot', Id: 'SecureBoot', Name: 'UEFI Secure Boot',
      SecureBootEnable: enable, SecureBootCurrentBoot: current ? 'Enabled' : 'Disabled', SecureBootMode: 'DeployedMode',
    };
  };

  const createVolume = (s: VirtualSystem, body: unknown): RouteResponse => {
    if (!isObject(body)) return lab.error(400, 'Base.1.16.MalformedJSON', 'body must be an object');
    const raidType = typeof body.RAIDType === 'string' ? body.RAIDType : '';
    const links = isObject(body.Links) && Array.isArray(body.Links.Drives) ? body.Links.Drives : [];
    const drives = links.map((d) => (isObject(d) && typeof d['@odata.id'] === 'string' ? d['@odata.id'].replace(/\/+$/, '').split('/').pop() ?? '' : ''));
    const min = RAID_MIN_DRIVES[raidType];
    if (min === undefined) return lab.error(400, 'Base.1.16.PropertyValueNotInList', `RAIDType ${raidType} is not supported`);
    const inUse = new Set(s.volumes.flatMap((v) => v.drives));
    if (drives.length < min || drives.some((d) => !(VIRTUAL_DRIVES as readonly string[]).includes(d) || inUse.has(d))) {
      return lab.error(400, 'Base.1.16.PropertyValueIncorrect', `RAIDType ${raidType} needs ${min} free drives of ${VIRTUAL_DRIVES.join(', ')}`);
    }
    const dataDrives = raidType === 'RAID1' || raidType === 'RAID10' ? drives.length / 2 : raidType === 'RAID5' ? drives.length - 1 : drives.length;
    const capacity = typeof body.CapacityBytes === 'number' ? body.CapacityBytes : Math.floor(dataDrives) * VIRTUAL_DRIVE_BYTES;
    const create = (): Promise<void> => {
      s.volumes.push({ id: `Volume.${s.nextVolume++}`, name: typeof body.Name === 'string' ? body.Name : 'volume', raidType, capacityBytes: capacity, drives });
      return Promise.resolve();
    };
    if (!state.knobs.asyncVolumes) {
      void create();
      return { status: 201, headers: { location: paths.at(`Systems/${s.id}/Storage/RAID.Integrated.1/Volumes/Volume.${s.nextVolume - 1}`) } };
    }
    const t = lab.startTask('Create volume', create);
    return lab.accepted(t, task(paths, t));
  };

  return [
    { method: 'GET', pattern: /^\/redfish\/v1\/Systems$/, handle: () => lab.ok(collection(paths, 'Systems', 'ComputerSystemCollection', 'Systems', [...state.systems.keys()].map((id) => `Systems/${id}`))) },
    get('', (s) => systemPayload(s)),
    {
      method: 'PATCH', pattern: new RegExp(`${S}$`),
      handle: withSystem(async (s, req) => {
        const refused = lab.checkIfMatch(await systemPayload(s), req.ifMatch);
        if (refused !== undefined) return refused;
        const boot = isObject(req.body) && isObject(req.body.Boot) ? req.body.Boot : undefined;
        if (boot === undefined) return lab.error(400, 'Base.1.16.PropertyUnknown', 'only Boot can be changed');
        const { BootSourceOverrideTarget: target, BootSourceOverrideEnabled: enabled, BootSourceOverrideMode: mode } = boot;
        if (target !== undefined && !BOOT_TARGETS.some((t) => t === target)) return lab.error(400, 'Base.1.16.PropertyValueNotInList', `BootSourceOverrideTarget ${JSON.stringify(target)}`);
        if (enabled !== undefined && enabled !== 'Once' && enabled !== 'Continuous' && enabled !== 'Disabled') return lab.error(400, 'Base.1.16.PropertyValueNotInList', `BootSourceOverrideEnabled ${JSON.stringify(enabled)}`);
        if (mode !== undefined && (state.flavor === 'ilo5' || (mode !== 'UEFI' && mode !== 'Legacy'))) return lab.error(400, 'Base.1.16.PropertyNotWritable', 'BootSourceOverrideMode');
        const uri: unknown = boot.HttpBootUri;
        if (uri !== undefined && state.flavor === 'idrac') return lab.error(400, 'Base.1.16.PropertyUnknown', 'HttpBootUri');
        if (uri !== undefined && uri !== null && typeof uri !== 'string') return lab.error(400, 'Base.1.16.PropertyValueTypeError', 'HttpBootUri');
        const next = { ...s.boot };
        const t = BOOT_TARGETS.find((x) => x === target);
        if (t !== undefined) next.target = t;
        if (enabled === 'Once' || enabled === 'Continuous' || enabled === 'Disabled') next.enabled = enabled;
        else if (t !== undefined && t !== 'None' && next.enabled === 'Disabled') next.enabled = 'Once';
        if (mode === 'UEFI' || mode === 'Legacy') next.mode = mode;
        s.boot = next;
        if (uri === null || typeof uri === 'string') s.httpBootUri = uri;
        return { status: 204 };
      }),
    },
    {
      method: 'POST', pattern: new RegExp(`${S}/Actions/ComputerSystem\\.Reset$`),
      handle: withSystem(async (s, req) => {
        const type = isObject(req.body) && typeof req.body.ResetType === 'string' ? req.body.ResetType : '';
        return (await reset(s, type)) ?? { status: 204 };
      }),
    },
    get('/ResetActionInfo', (s) => ({
      '@odata.id': paths.at(`Systems/${s.id}/ResetActionInfo`), '@odata.type': '#ActionInfo.v1_3_0.ActionInfo', Id: 'ResetActionInfo', Name: 'Reset Action Info',
      Parameters: [{ Name: 'ResetType', Required: true, DataType: 'String', AllowableValues: state.knobs.resetTypes }],
    })),
    get('/Bios', (s) => bios(paths, s, false)),
    get('/Bios/Settings', (s) => bios(paths, s, true)),
    {
      method: 'PATCH', pattern: new RegExp(`${S}/Bios/Settings$`),
      handle: withSystem((s, req) => {
        const refused = lab.checkIfMatch(bios(paths, s, true), req.ifMatch);
        if (refused !== undefined) return refused;
        const attrs = isObject(req.body) && isObject(req.body.Attributes) ? req.body.Attributes : undefined;
        if (attrs === undefined) return lab.error(400, 'Base.1.16.PropertyMissing', 'Attributes');
        for (const [k, v] of Object.entries(attrs)) {
          if (!Object.hasOwn(s.bios, k) || k === 'SerialNumber') return lab.error(400, 'Base.1.16.PropertyNotWritable', `${k} cannot be set`);
          if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return lab.error(400, 'Base.1.16.PropertyValueTypeError', k);
          s.pendingBios[k] = v;
        }
        return { status: 204 };
      }),
    },
    get('/SecureBoot', secureBootPayload),
    {
      method: 'PATCH', pattern: new RegExp(`${S}/SecureBoot$`),
      handle: withSystem(async (s, req) => {
        const refused = lab.checkIfMatch(await secureBootPayload(s), req.ifMatch);
        if (refused !== undefined) return refused;
        const enable = isObject(req.body) ? req.body.SecureBootEnable : undefined;
        if (typeof enable !== 'boolean') return lab.error(400, 'Base.1.16.PropertyValueTypeError', 'SecureBootEnable');
        if (enable && s.bios.BootMode !== 'Uefi') return lab.error(409, 'Base.1.16.PropertyValueConflict', 'Secure Boot needs BootMode Uefi');
        s.secureBoot = enable;
        await s.backend.secureBoot?.setEnable(enable);
        return { status: 204 };
      }),
    },
    get('/Processors', (s) => collection(paths, `Systems/${s.id}/Processors`, 'ProcessorCollection', 'Processors', ['CPU.0', 'CPU.1'].map((c) => `Systems/${s.id}/Processors/${c}`))),
    get('/Processors/([^/]+)', (s, req) => ({
      '@odata.id': paths.at(`Systems/${s.id}/Processors/${req.params[1] ?? ''}`), '@odata.type': '#Processor.v1_18_0.Processor', Id: req.params[1],
      ProcessorType: 'CPU', ProcessorArchitecture: 'x86', InstructionSet: 'x86-64', Model: 'Virtual CPU @ 2.40GHz', Manufacturer: 'rackside',
      TotalCores: 16, TotalThreads: 32, MaxSpeedMHz: 2400, Status: { State: 'Enabled', Health: 'OK' },
    })),
    get('/Memory', (s) => collection(paths, `Systems/${s.id}/Memory`, 'MemoryCollection', 'Memory', [0, 1, 2, 3].map((i) => `Systems/${s.id}/Memory/DIMM.${i}`))),
    get('/Memory/([^/]+)', (s, req) => ({
      '@odata.id': paths.at(`Systems/${s.id}/Memory/${req.params[1] ?? ''}`), '@odata.type': '#Memory.v1_17_0.Memory', Id: req.params[1],
      MemoryDeviceType: 'DDR4', CapacityMiB: 32768, OperatingSpeedMhz: 3200, Status: { State: 'Enabled', Health: 'OK' },
    })),
    get('/EthernetInterfaces', (s) => collection(paths, `Systems/${s.id}/EthernetInterfaces`, 'EthernetInterfaceCollection', 'NICs', ['NIC.1', 'NIC.2'].map((n) => `Systems/${s.id}/EthernetInterfaces/${n}`))),
    get('/EthernetInterfaces/NIC\\.([12])', (s, req) => ({
      '@odata.id': paths.at(`Systems/${s.id}/EthernetInterfaces/NIC.${req.params[1] ?? ''}`), '@odata.type': '#EthernetInterface.v1_12_0.EthernetInterface',
      Id: `NIC.${req.params[1] ?? ''}`, MACAddress: virtualMac(s.id, Number(req.params[1])).toUpperCase(), SpeedMbps: 25000,
      LinkStatus: req.params[1] === '1' ? 'LinkUp' : 'LinkDown', InterfaceEnabled: true, Status: { State: 'Enabled', Health: 'OK' },
    })),
    get('/Storage', (s) => collection(paths, `Systems/${s.id}/Storage`, 'StorageCollection', 'Storage', [`Systems/${s.id}/Storage/RAID.Integrated.1`])),
    get('/Storage/RAID\\.Integrated\\.1', (s) => storage(paths, s)),
    get('/Storage/RAID\\.Integrated\\.1/Drives/([^/]+)', (s, req) => ((VIRTUAL_DRIVES as readonly string[]).includes(req.params[1] ?? '') ? drive(paths, s, req.params[1] ?? '') : undefined)),
    get('/Storage/RAID\\.Integrated\\.1/Volumes', (s) => collection(paths, `Systems/${s.id}/Storage/RAID.Integrated.1/Volumes`, 'VolumeCollection', 'Volumes', s.volumes.map((v) => `Systems/${s.id}/Storage/RAID.Integrated.1/Volumes/${v.id}`))),
    get('/Storage/RAID\\.Integrated\\.1/Volumes/([^/]+)', (s, req) => {
      const v = s.volumes.find((x) => x.id === req.params[1]);
      return v === undefined ? undefined : volume(paths, s, v);
    }),
    { method: 'POST', pattern: new RegExp(`${S}/Storage/RAID\\.Integrated\\.1/Volumes$`), handle: withSystem((s, req) => createVolume(s, req.body)) },
    {
      method: 'DELETE', pattern: new RegExp(`${S}/Storage/RAID\\.Integrated\\.1/Volumes/([^/]+)$`),
      handle: withSystem((s, req) => {
        const id = req.params[1];
        if (!s.volumes.some((v) => v.id === id)) return lab.error(404, 'Base.1.16.ResourceMissingAtURI', `no volume ${id ?? ''}`);
        const remove = (): Promise<void> => { s.volumes = s.volumes.filter((v) => v.id !== id); return Promise.resolve(); };
        if (!state.knobs.asyncVolumes) {
          void remove();
          return { status: 204 };
        }
        const t = lab.startTask('Delete volume', remove);
        return lab.accepted(t, task(paths, t));
      }),
    },
  ];
}
