/**
 * @module The native IPMI 2.0 lanplus driver (registry type `ipmi`): power (Get Chassis Status,
 * Chassis Control), boot device (System Boot Options parameter 5 with the EFI and persistent
 * bits), BMC info (Get Device ID + FRU) and a minimal out-of-band inventory (FRU), over one
 * reused {@link IpmiSession} per BMC. Everything else is left to the registry's noop.
 *
 * Semantics chosen where IPMI differs from Redfish:
 * - `on`/`off`/`soft-off` read the chassis status first and do nothing when already there;
 *   `cycle` and `reset` of a host that is off power it on (as ironic's reboot does), because
 *   Power Cycle is undefined or refused (0xD5) by many BMCs when the host is off.
 * - `soft-reset` does not exist in IPMI → UnsupportedCapabilityError.
 * - `uefi-http` has no IPMI boot device selector → UnsupportedCapabilityError.
 * - Reading the boot override reports the device selector even when the BMC has cleared the
 *   valid bit (ipmi_sim never sets it, real BMCs clear it after the boot); persistence and mode
 *   are only reported when the valid bit is set.
 */
import { resolveIpmiTarget, type BmcAddress } from '../bmc-address.js';
import type {
  BmcInfo, BootDevice, BootDeviceControl, BootDeviceOptions, BootOverride, BmcInfoControl, CapabilityName, InventoryControl,
  OutOfBandInventory, PowerAction, PowerControl, PowerState,
} from '../capabilities.js';
import { BmcError, BmcErrorCode, UnsupportedCapabilityError } from '../errors.js';
import type { BmcCredentials, DriverFactory, DriverImplementation, DriverOptions } from '../registry.js';
import {
  ChassisControl, decodeBootFlagsResponse, decodeGetChassisStatus, decodeGetDeviceId, DeviceSupport, encodeChassisControl,
  encodeGetBootOptions, encodeGetChassisStatus, encodeGetDeviceId, encodeSetBootFlags, parsePrivilegeLevel,
  type BootFlags, type IpmiBootDevice,
} from './commands.js';
import { parseAllowedCipherSuites } from './cipher-suites.js';
import type { FruInventory } from './fru.js';
import { IPMI_MANUFACTURERS, readFru, readSensors, type IpmiSensorValue } from './ipmi-inventory.js';
import { IpmiSession, type IpmiSessionStats } from './ipmi-session.js';

/** IPMI-specific options (on top of the registry's {@link DriverOptions}). */
export interface IpmiDriverOptions {
  /**
   * Cipher suites allowed, in order of preference (the agent's setting); default [17, 3]. Only 17
   * and 3 are accepted. A host's {@link DriverOptions.ipmiCipherSuite} pin replaces it.
   */
  readonly cipherSuites?: readonly number[];
  /** Sends per request; default 3. */
  readonly attempts?: number;
  /** Per-attempt timeout; default 1000 ms, or `timeoutMs / attempts` when the registry gives `timeoutMs`. */
  readonly attemptTimeoutMs?: number;
  /** Keepalive period while idle; default 30 000 ms; 0 disables. */
  readonly keepaliveMs?: number;
  /** BMC key Kg, when the BMC has one. */
  readonly kg?: Buffer;
  /** Randomness source for tests. */
  readonly randomBytes?: (size: number) => Buffer;
}

/** What {@link createIpmiDriver} returns: the capabilities plus IPMI extras. */
export interface IpmiDriverImplementation extends DriverImplementation {
  readonly power: PowerControl;
  readonly bootDevice: BootDeviceControl;
  readonly info: BmcInfoControl;
  readonly inventory: InventoryControl;
  readonly close: () => Promise<void>;
  /** The session (for stats, ping and raw commands). */
  readonly session: IpmiSession;
  /** Reads the FRU inventory of FRU device 0; undefined when the BMC has none. */
  readFru(): Promise<FruInventory | undefined>;
  /** Reads all BMC-owned sensors from the SDR repository. */
  readSensors(): Promise<IpmiSensorValue[]>;
  /** Session counters (sent, retransmits, dropped datagrams by reason …). */
  stats(): IpmiSessionStats;
}

const TO_IPMI_DEVICE: Readonly<Record<Exclude<BootDevice, 'uefi-http'>, IpmiBootDevice>> = {
  pxe: 'pxe', disk: 'disk', cdrom: 'cdrom', bios: 'bios',
};

/** IPMI selectors that have a rackside name; the rest (floppy, diagnostic …) read as `none`. */
const FROM_IPMI_DEVICE: Partial<Record<IpmiBootDevice | 'reserved', BootDevice>> = {
  pxe: 'pxe', disk: 'disk', 'disk-safe-mode': 'disk', 'remote-disk': 'disk', cdrom: 'cdrom', 'remote-cdrom': 'cdrom', bios: 'bios',
};

/** Builds the IPMI driver for one BMC. No I/O until the first call. */
export function createIpmiDriver(
  address: BmcAddress, credentials: BmcCredentials, options: DriverOptions & IpmiDriverOptions = {},
): IpmiDriverImplementation {
  const target = resolveIpmiTarget(address);
  const privilege = parsePrivilegeLevel(target.privilegeLevel);
  if (privilege === undefined) {
    throw new BmcError(BmcErrorCode.unsupported, `BMC ${address.raw}: unknown IPMI privilege level '${target.privilegeLevel}'`, { address: address.raw });
  }
  const attempts = options.attempts ?? 3;
  const session = new IpmiSession({
    host: target.hostname, port: target.port, username: credentials.username, password: credentials.password, privilege,
    cipherSuites: allowedSuites(address, options), kg: options.kg, attempts, lookup: options.lookup,
    attemptTimeoutMs: options.attemptTimeoutMs ?? (options.timeoutMs === undefined ? undefined : Math.max(50, Math.floor(options.timeoutMs / attempts))),
    keepaliveMs: options.keepaliveMs, address: address.raw, randomBytes: options.randomBytes,
  });
  const unsupported = (capability: CapabilityName, operation: string): UnsupportedCapabilityError =>
    new UnsupportedCapabilityError(capability, operation, { address: address.raw, driver: 'ipmi' });

  const powerOn = async (): Promise<boolean> => (await session.call(encodeGetChassisStatus(), decodeGetChassisStatus)).powerOn;
  const control = async (action: number): Promise<void> => { await session.call(encodeChassisControl(action), () => undefined); };
  const readBootFlags = (): Promise<BootFlags> => session.call(encodeGetBootOptions(5), decodeBootFlagsResponse);
  const fruOrNothing = (): Promise<FruInventory | undefined> => readFru(session).catch((err: unknown) => {
    if (err instanceof BmcError && err.code === BmcErrorCode.protocol) return undefined; // a broken FRU must not hide the BMC
    throw err;
  });

  const power: PowerControl = {
    getPowerState: async (): Promise<PowerState> => ((await powerOn()) ? 'on' : 'off'),
    setPower: async (action: PowerAction): Promise<void> => {
      if (action === 'soft-reset') throw unsupported('power', 'setPower(soft-reset)');
      const on = await powerOn();
      switch (action) {
        case 'on': if (!on) await control(ChassisControl.powerUp); return;
        case 'off': if (on) await control(ChassisControl.powerDown); return;
        case 'soft-off': if (on) await control(ChassisControl.softShutdown); return;
        case 'reset': await control(on ? ChassisControl.hardReset : ChassisControl.powerUp); return;
        case 'cycle': await control(on ? ChassisControl.powerCycle : ChassisControl.powerUp); return;
      }
    },
  };

  const bootDevice: BootDeviceControl = {
    setBootDevice: async (device: BootDevice, opts: BootDeviceOptions = {}): Promise<void> => {
      if (device === 'uefi-http') throw unsupported('bootDevice', 'setBootDevice(uefi-http)');
      let efi: boolean;
      if (opts.mode === undefined) {
        const current = await readBootFlags();
        efi = current.valid && current.efi; // keep the BMC's current mode when it reports one
      } else {
        efi = opts.mode === 'uefi';
      }
      await session.call(encodeSetBootFlags({ valid: true, persistent: opts.persistent === true, efi, device: TO_IPMI_DEVICE[device] }), () => undefined);
    },
    getBootDevice: async (): Promise<BootOverride> => {
      const flags = await readBootFlags();
      return {
        device: FROM_IPMI_DEVICE[flags.device] ?? 'none',
        persistent: flags.valid && flags.persistent,
        mode: flags.valid ? (flags.efi ? 'uefi' : 'legacy') : undefined,
      };
    },
  };

  const info: BmcInfoControl = {
    getBmcInfo: async (): Promise<BmcInfo> => {
      const id = await session.call(encodeGetDeviceId(), decodeGetDeviceId);
      const fru = (id.additionalDeviceSupport & DeviceSupport.fru) !== 0 ? await fruOrNothing() : undefined;
      const probed: CapabilityName[] = [];
      if ((id.additionalDeviceSupport & DeviceSupport.chassis) !== 0) probed.push('power', 'bootDevice');
      if (fru !== undefined) probed.push('inventory');
      probed.push('info');
      return {
        vendor: IPMI_MANUFACTURERS[id.manufacturerId] ?? nonEmpty(fru?.product?.manufacturer) ?? `IANA ${id.manufacturerId}`,
        model: nonEmpty(fru?.product?.productName) ?? nonEmpty(fru?.board?.productName) ?? `product 0x${id.productId.toString(16).padStart(4, '0')}`,
        firmwareVersion: id.firmwareRevision,
        protocolVersion: `IPMI ${id.ipmiVersion}`,
        probed,
      };
    },
  };

  const inventory: InventoryControl = {
    getInventory: async (): Promise<OutOfBandInventory> => {
      const fru = await fruOrNothing();
      return {
        system: {
          manufacturer: nonEmpty(fru?.product?.manufacturer) ?? nonEmpty(fru?.board?.manufacturer),
          model: nonEmpty(fru?.product?.productName) ?? nonEmpty(fru?.board?.productName),
          serialNumber: nonEmpty(fru?.product?.serialNumber) ?? nonEmpty(fru?.board?.serialNumber),
          uuid: undefined,
        },
        bios: { vendor: undefined, version: undefined, releaseDate: undefined },
        processors: [], memoryMebibytes: undefined, nics: [], drives: [],
      };
    },
  };

  return {
    power, bootDevice, info, inventory, session,
    readFru: () => readFru(session),
    readSensors: () => readSensors(session),
    stats: () => session.stats(),
    close: () => session.close(),
  };
}

/** The host's pinned suite, else the factory's list; a refused pin is a permanent `unsupported` BmcError. */
function allowedSuites(address: BmcAddress, options: DriverOptions & IpmiDriverOptions): readonly number[] | undefined {
  if (options.ipmiCipherSuite === undefined) return options.cipherSuites;
  try {
    return parseAllowedCipherSuites(options.ipmiCipherSuite);
  } catch (err) {
    throw new BmcError(BmcErrorCode.unsupported, `BMC ${address.raw}: IPMI ${err instanceof Error ? err.message : String(err)}`, { address: address.raw });
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A registry factory for `ipmi` addresses; `defaults` apply to every driver it builds. */
export function createIpmiDriverFactory(defaults: IpmiDriverOptions = {}): DriverFactory {
  return (address, credentials, options) => createIpmiDriver(address, credentials, { ...defaults, ...options });
}
