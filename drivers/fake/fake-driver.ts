/**
 * @module The fake driver: every capability implemented over an in-memory {@link FakeBmc},
 * with knobs for failures and every call recorded. Registered for scheme `fake` by
 * `registerBuiltinDrivers`; tests and the demo may also register its factory under `redfish`
 * or `ipmi` to make any address fake. Unlike the noop (noop.ts), it simulates a working BMC.
 */
import type { BmcAddress } from '../bmc-address.js';
import type {
  BmcCapabilitySet, CapabilityName, InsertMediaRequest, OutOfBandInventory,
  PowerAction, RaidVolume, RaidVolumeRequest,
} from '../capabilities.js';
import { CAPABILITY_NAMES } from '../capabilities.js';
import { BmcError, BmcErrorCode, UnsupportedCapabilityError } from '../errors.js';
import type { DriverFactory, DriverImplementation } from '../registry.js';
import { FakeBmc, fakeMacAddress, type FakeBmcKnobs } from './fake-bmc.js';
import { checkBiosValue } from '../bios-value.js';

/** How one driver instance talks to its fake BMC. */
export interface FakeDriverOptions {
  /** Address named in errors. */
  readonly address: string;
  /** Password presented; checked against `bmc.password` when that is set. */
  readonly password?: string;
  /** Calls slower than this (knob `slowMs`) fail with a timeout. */
  readonly timeoutMs?: number;
}

const GIB = 1024 ** 3;
const DRIVES = ['Disk.0', 'Disk.1', 'Disk.2', 'Disk.3'];
const DRIVE_BYTES = 960 * 1000 ** 3;

function protocolError(address: string, message: string): BmcError {
  return new BmcError(BmcErrorCode.protocol, `BMC ${address}: ${message}`, { address });
}


function isHttpUrl(url: string): boolean {
  return /^https?:\/\/[^/\s]+/i.test(url);
}

/** Deterministic inventory for a fake host named `name`. */
function fakeInventory(bmc: FakeBmc): OutOfBandInventory {
  return {
    system: { manufacturer: 'rackside', model: 'Fake Server', serialNumber: bmc.bios.get('SystemSerial'), uuid: undefined },
    bios: { vendor: 'rackside', version: bmc.firmware.find((c) => c.id === 'BIOS')?.version, releaseDate: undefined },
    processors: [0, 1].map(() => ({ model: 'Fake CPU @ 2.40GHz', architecture: 'x86_64', cores: 16, threads: 32, maxSpeedMhz: 2400 })),
    memoryMebibytes: 128 * 1024,
    nics: [0, 1].map((i) => ({ id: `NIC.${i + 1}`, macAddress: fakeMacAddress(bmc.name, i), speedMbps: 25000, linkUp: i === 0 })),
    drives: DRIVES.map((id, i) => ({
      id, model: 'Fake SSD 960GB', serialNumber: `${bmc.name}-D${i}`, sizeBytes: DRIVE_BYTES, mediaType: 'SSD', protocol: 'SATA',
    })),
  };
}

function buildVolumes(address: string, requests: readonly RaidVolumeRequest[]): RaidVolume[] {
  return requests.map((r, i) => {
    const disks = r.physicalDisks ?? DRIVES.slice(0, r.diskCount ?? (r.level === '0' ? 1 : 2));
    const unknown = disks.find((d) => !DRIVES.includes(d));
    if (unknown !== undefined) throw protocolError(address, `unknown physical disk ${unknown}`);
    return {
      id: `Volume.${i}`, name: r.name ?? `volume-${i}`, level: r.level, controller: r.controller ?? 'RAID.Integrated.1',
      sizeBytes: r.sizeBytes ?? Math.floor((disks.length * DRIVE_BYTES) / GIB) * GIB, physicalDisks: disks,
    };
  });
}

function copyCapability<K extends CapabilityName>(
  from: Pick<BmcCapabilitySet, K>, to: { -readonly [P in K]?: BmcCapabilitySet[P] }, name: K,
): void {
  to[name] = from[name];
}

/** Builds the capabilities of one driver instance over `bmc` (minus `bmc.knobs.omit`). */
export function createFakeDriver(bmc: FakeBmc, options: FakeDriverOptions): DriverImplementation {
  const { address } = options;
  const gate = (capability: CapabilityName, operation: string, args: readonly unknown[]): void => {
    bmc.calls.push({ capability, operation, args });
    const k: FakeBmcKnobs = bmc.knobs;
    bmc.virtualElapsedMs += k.slowMs;
    if (k.unreachable) throw new BmcError(BmcErrorCode.unreachable, `BMC ${address} is unreachable`, { address });
    if (k.authFails || (bmc.password !== undefined && options.password !== bmc.password)) {
      throw new BmcError(BmcErrorCode.auth, `BMC ${address} rejected the credentials`, { address });
    }
    if (k.busyCalls > 0) {
      k.busyCalls -= 1;
      throw new BmcError(BmcErrorCode.busy, `BMC ${address} is busy`, { address });
    }
    if (options.timeoutMs !== undefined && k.slowMs > options.timeoutMs) {
      throw new BmcError(BmcErrorCode.timeout, `BMC ${address} did not answer within ${options.timeoutMs} ms`, { address });
    }
  };
  const run = <T>(capability: CapabilityName, operation: string, args: readonly unknown[], body: () => T): Promise<T> => {
    try {
      gate(capability, operation, args);
      return Promise.resolve(body());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  };
  const powerOn = (): void => {
    if (bmc.knobs.failPowerOn) throw protocolError(address, 'power on failed');
  };
  const setPower = (action: PowerAction): void => {
    if (action === 'on') {
      if (bmc.power === 'off') powerOn();
      bmc.requestPower('on');
    } else if (action === 'off' || action === 'soft-off') {
      bmc.requestPower('off');
    } else {
      if (bmc.power === 'off') powerOn();
      bmc.reboot();
    }
  };
  const insertMedia = (request: InsertMediaRequest): void => {
    const device = request.device ?? 'cd';
    if (device === 'floppy') throw new UnsupportedCapabilityError('virtualMedia', 'insertMedia(floppy)', { address, driver: 'fake' });
    if (!isHttpUrl(request.imageUrl)) throw protocolError(address, `virtual media image must be an http(s) URL, got "${request.imageUrl}"`);
    bmc.media.set(device, request.imageUrl);
  };
  const applyBios = (changes: Readonly<Record<string, string | number | boolean>>): { rebootRequired: boolean; taskId: undefined } => {
    const schema = bmc.biosSchema();
    const staged = Object.entries(changes).map(([name, v]): [string, string] => [name, String(v)]);
    for (const [name, value] of staged) {
      const problem = checkBiosValue(name, Object.hasOwn(schema, name) ? schema[name] : undefined, value);
      if (problem !== undefined) throw protocolError(address, problem);
    }
    const effective = staged.filter(([name, value]) => (bmc.pendingBios.get(name) ?? bmc.bios.get(name)) !== value);
    for (const [name, value] of effective) bmc.pendingBios.set(name, value);
    return { rebootRequired: bmc.pendingBios.size > 0, taskId: undefined };
  };
  const simpleUpdate = (imageUrl: string, targets: readonly string[] | undefined): { taskId: string } => {
    if (!isHttpUrl(imageUrl)) throw protocolError(address, `firmware image must be an http(s) URL, got "${imageUrl}"`);
    const ids = targets ?? ['BIOS'];
    const components = ids.map((id) => {
      const found = bmc.firmware.find((c) => c.id === id);
      if (found === undefined) throw protocolError(address, `unknown firmware component ${id}`);
      return found;
    });
    const file = imageUrl.split(/[?#]/, 1)[0]?.split('/').pop() ?? '';
    const version = /[0-9]+(?:\.[0-9]+)+/.exec(file)?.[0] ?? file;
    const taskId = bmc.startTask(`update of ${ids.join(', ')}`, () => {
      for (const c of components) bmc.firmware[bmc.firmware.indexOf(c)] = { ...c, version };
    });
    return { taskId };
  };

  const all: BmcCapabilitySet = {
    power: {
      getPowerState: () => run('power', 'getPowerState', [], () => bmc.reportPowerState()),
      setPower: (action) => run('power', 'setPower', [action], () => { setPower(action); }),
    },
    bootDevice: {
      setBootDevice: (device, o = {}) => run('bootDevice', 'setBootDevice', [device, o], () => {
        bmc.bootOverride = { device, persistent: o.persistent ?? false, mode: o.mode, ...(device === 'uefi-http' && o.httpBootUri !== undefined ? { httpBootUri: o.httpBootUri } : {}) };
      }),
      getBootDevice: () => run('bootDevice', 'getBootDevice', [], () => ({ ...bmc.bootOverride })),
    },
    virtualMedia: {
      insertMedia: (request) => run('virtualMedia', 'insertMedia', [request], () => { insertMedia(request); }),
      ejectMedia: (device = 'cd') => run('virtualMedia', 'ejectMedia', [device], () => { bmc.media.delete(device); }),
      getMediaStatus: () => run('virtualMedia', 'getMediaStatus', [], () => bmc.mediaSlots()),
    },
    biosSettings: {
      getBiosSettings: () => run('biosSettings', 'getBiosSettings', [], () => ({
        current: Object.fromEntries(bmc.bios), schema: bmc.biosSchema(), pending: Object.fromEntries(bmc.pendingBios),
      })),
      applyBiosSettings: (changes) => run('biosSettings', 'applyBiosSettings', [changes], () => applyBios(changes)),
    },
    firmware: {
      getFirmwareInventory: () => run('firmware', 'getFirmwareInventory', [], () => bmc.firmware.map((c) => ({ ...c }))),
      simpleUpdate: (request) => run('firmware', 'simpleUpdate', [request], () => simpleUpdate(request.imageUrl, request.targets)),
    },
    tasks: {
      getTask: (taskId) => run('tasks', 'getTask', [taskId], () => {
        const status = bmc.pollTask(taskId);
        if (status === undefined) throw protocolError(address, `unknown task ${taskId}`);
        return status;
      }),
    },
    raid: {
      getRaidConfig: () => run('raid', 'getRaidConfig', [], () => ({
        controllers: [{ id: 'RAID.Integrated.1', name: 'Fake RAID controller', drives: DRIVES, supportedLevels: ['0', '1', '5', '1+0'] as const }],
        volumes: bmc.volumes.map((v) => ({ ...v })),
      })),
      applyRaidConfig: (volumes) => run('raid', 'applyRaidConfig', [volumes], () => {
        const next = buildVolumes(address, volumes);
        if (JSON.stringify(next) === JSON.stringify(bmc.volumes)) return { rebootRequired: false, taskId: undefined };
        return { rebootRequired: false, taskId: bmc.startTask('RAID configuration', () => { bmc.volumes = next; }) };
      }),
    },
    eventSubscriptions: {
      createSubscription: (request) => run('eventSubscriptions', 'createSubscription', [{ ...request, httpHeaders: undefined }], () => {
        if (!isHttpUrl(request.destination)) throw protocolError(address, `event destination must be an http(s) URL, got "${request.destination}"`);
        const id = bmc.nextId('sub');
        bmc.subscriptions.set(id, { id, destination: request.destination, context: request.context ?? '' });
        return { id };
      }),
      deleteSubscription: (id) => run('eventSubscriptions', 'deleteSubscription', [id], () => { bmc.subscriptions.delete(id); }),
      listSubscriptions: () => run('eventSubscriptions', 'listSubscriptions', [], () => [...bmc.subscriptions.values()]),
    },
    secureBoot: {
      getSecureBoot: () => run('secureBoot', 'getSecureBoot', [], () => ({
        enabled: bmc.secureBoot, currentBoot: bmc.power === 'on' ? (bmc.secureBoot ? 'enabled' as const : 'disabled' as const) : undefined,
      })),
      setSecureBoot: (enabled) => run('secureBoot', 'setSecureBoot', [enabled], () => {
        if (enabled && (bmc.pendingBios.get('BootMode') ?? bmc.bios.get('BootMode')) !== 'Uefi') {
          throw protocolError(address, 'Secure Boot needs BIOS BootMode Uefi');
        }
        bmc.secureBoot = enabled;
      }),
    },
    inventory: { getInventory: () => run('inventory', 'getInventory', [], () => fakeInventory(bmc)) },
    info: {
      getBmcInfo: () => run('info', 'getBmcInfo', [], () => ({
        vendor: 'rackside', model: 'Fake BMC', firmwareVersion: bmc.firmware.find((c) => c.id === 'BMC')?.version,
        protocolVersion: 'fake 1', probed: CAPABILITY_NAMES.filter((n) => !bmc.knobs.omit.includes(n)),
      })),
    },
  };
  const offered: { -readonly [K in CapabilityName]?: BmcCapabilitySet[K] } = {};
  for (const name of CAPABILITY_NAMES) {
    if (!bmc.knobs.omit.includes(name)) copyCapability(all, offered, name);
  }
  return { ...offered, close: () => { bmc.closeCount += 1; return Promise.resolve(); } };
}

/** Fake BMCs by host (`host[:port]` of the address), created on first use with shared default knobs. */
export class FakeBmcPool {
  readonly #bmcs = new Map<string, FakeBmc>();
  readonly defaults: Partial<FakeBmcKnobs>;

  constructor(defaults: Partial<FakeBmcKnobs> = {}) {
    this.defaults = defaults;
  }

  /** The fake BMC for `host`, created when first asked for. */
  get(host: string): FakeBmc {
    const key = host.toLowerCase();
    let bmc = this.#bmcs.get(key);
    if (bmc === undefined) {
      bmc = new FakeBmc(key, { ...this.defaults, omit: [...(this.defaults.omit ?? [])] });
      this.#bmcs.set(key, bmc);
    }
    return bmc;
  }

  /** The fake BMC an address maps to. */
  forAddress(address: BmcAddress): FakeBmc {
    return this.get(address.host);
  }

  /** Every fake BMC created so far. */
  list(): FakeBmc[] {
    return [...this.#bmcs.values()];
  }
}

/** A registry factory serving every address from `pool`. */
export function createFakeDriverFactory(pool: FakeBmcPool): DriverFactory {
  return (address, credentials, options) =>
    createFakeDriver(pool.forAddress(address), { address: address.raw, password: credentials.password, timeoutMs: options.timeoutMs });
}
