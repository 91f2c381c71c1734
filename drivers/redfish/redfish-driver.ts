/**
 * @module The Redfish driver: builds a {@link RedfishClient} for the address's endpoint
 * (`resolveRedfishTarget`: https unless `+http`), picks vendor quirks from the scheme's vendor
 * field, and assembles every capability (power-boot.ts, media.ts, bios.ts, services.ts,
 * storage.ts) plus BMC info from the service root, the Manager and the System. Nothing
 * connects before the first call; `close()` logs out and closes the connection.
 */
import { resolveRedfishTarget, type BmcAddress } from '../bmc-address.js';
import type { BmcVendor } from '../bmc-schemes.js';
import type { BmcInfo, BmcInfoControl, CapabilityName } from '../capabilities.js';
import type { BmcCredentials, DriverFactory, DriverImplementation, DriverOptions } from '../registry.js';
import { createBiosSettingsControl, createSecureBootControl } from './bios.js';
import { RedfishClient, type RedfishAuthMode } from './client.js';
import { RedfishContext } from './context.js';
import { createVirtualMediaControl } from './media.js';
import { createBootDeviceControl, createPowerControl } from './power-boot.js';
import { decodeManager, type Manager, type ServiceRoot } from './resources.js';
import { createEventSubscriptionControl, createFirmwareControl, createTaskControl } from './services.js';
import { createInventoryControl } from './inventory.js';
import { createRaidControl } from './storage.js';
import { IDRAC_QUIRKS } from './vendors/idrac.js';
import { ILO_QUIRKS } from './vendors/ilo.js';
import { selectQuirks, type RedfishQuirks } from './vendors/quirks.js';

/** Options of {@link createRedfishDriver}: the registry's options plus Redfish tuning. */
export interface RedfishDriverOptions extends DriverOptions {
  /** Default `auto` (session when the BMC offers one, else basic). */
  readonly auth?: RedfishAuthMode;
  /** PEM CA bundle to trust for this BMC (pinned self-signed certificate). */
  readonly ca?: string;
  readonly maxBodyBytes?: number;
  readonly retries?: number;
  readonly retryDelayMs?: number;
  readonly taskPollMs?: number;
  readonly taskTimeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const VENDOR_QUIRKS: Partial<Record<BmcVendor, RedfishQuirks>> = { idrac: IDRAC_QUIRKS, ilo4: ILO_QUIRKS, ilo5: ILO_QUIRKS };

/** Quirks the driver uses for an address (by its scheme's vendor field). */
export function quirksForAddress(address: BmcAddress): RedfishQuirks {
  return selectQuirks(address.vendor, VENDOR_QUIRKS);
}

const OEM_VENDORS: Readonly<Record<string, string>> = {
  Dell: 'Dell', Hpe: 'HPE', Hp: 'HPE', Lenovo: 'Lenovo', Supermicro: 'Supermicro', Fujitsu: 'Fujitsu', Huawei: 'Huawei', Ami: 'AMI',
};

/** The BMC vendor from the service root `Vendor`, else the first known `Oem` key, else the Manager's manufacturer. */
export function vendorOf(root: ServiceRoot, manager: Manager | undefined, systemManufacturer: string | undefined): string | undefined {
  if (root.vendor !== undefined && root.vendor !== '') return root.vendor;
  for (const key of [...root.oemVendors, ...(manager?.oemVendors ?? [])]) {
    const known = OEM_VENDORS[key];
    if (known !== undefined) return known;
  }
  return manager?.manufacturer ?? systemManufacturer;
}

function createInfoControl(ctx: RedfishContext): BmcInfoControl {
  return {
    async getBmcInfo(): Promise<BmcInfo> {
      const root = await ctx.root();
      const { value: system } = await ctx.system();
      let manager: Manager | undefined;
      try {
        manager = (await ctx.fetch(await ctx.managerUri(), decodeManager)).value;
      } catch {
        manager = undefined; // a System without a Manager still answers the rest
      }
      const probed: CapabilityName[] = [];
      const offer = (name: CapabilityName, present: boolean): void => { if (present) probed.push(name); };
      offer('power', system.reset !== undefined);
      offer('bootDevice', system.boot.target !== undefined || system.boot.enabled !== undefined);
      offer('virtualMedia', system.links.virtualMedia !== undefined || manager?.virtualMedia !== undefined);
      offer('biosSettings', system.links.bios !== undefined);
      offer('firmware', root.updateService !== undefined);
      offer('tasks', root.taskService !== undefined || ctx.quirks.taskPath !== undefined);
      offer('raid', system.links.storage !== undefined);
      offer('eventSubscriptions', root.eventService !== undefined);
      offer('secureBoot', system.links.secureBoot !== undefined);
      offer('inventory', true);
      offer('info', true);
      return {
        vendor: vendorOf(root, manager, system.manufacturer),
        model: manager?.model ?? system.model,
        firmwareVersion: manager?.firmwareVersion,
        protocolVersion: root.redfishVersion === undefined ? 'Redfish' : `Redfish ${root.redfishVersion}`,
        probed,
      };
    },
  };
}

/** Builds the Redfish driver for one BMC (no I/O until the first call). */
export function createRedfishDriver(address: BmcAddress, credentials: BmcCredentials, options: RedfishDriverOptions = {}): DriverImplementation {
  const { endpoint } = resolveRedfishTarget(address);
  const client = new RedfishClient({
    endpoint, address: address.raw, credentials,
    ...(options.disableCertificateVerification === undefined ? {} : { disableCertificateVerification: options.disableCertificateVerification }),
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
    ...(options.retries === undefined ? {} : { retries: options.retries }),
    ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    ...(options.taskPollMs === undefined ? {} : { taskPollMs: options.taskPollMs }),
    ...(options.taskTimeoutMs === undefined ? {} : { taskTimeoutMs: options.taskTimeoutMs }),
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  });
  const ctx = new RedfishContext(address, client, quirksForAddress(address));
  return {
    power: createPowerControl(ctx),
    bootDevice: createBootDeviceControl(ctx),
    virtualMedia: createVirtualMediaControl(ctx),
    biosSettings: createBiosSettingsControl(ctx),
    firmware: createFirmwareControl(ctx),
    tasks: createTaskControl(ctx),
    raid: createRaidControl(ctx),
    eventSubscriptions: createEventSubscriptionControl(ctx),
    secureBoot: createSecureBootControl(ctx),
    inventory: createInventoryControl(ctx),
    info: createInfoControl(ctx),
    close: () => client.close(),
  };
}

/** A registry factory for `redfish`; `defaults` apply under each call's options. */
export function createRedfishDriverFactory(defaults: Omit<RedfishDriverOptions, keyof DriverOptions> = {}): DriverFactory {
  return (address, credentials, options) => createRedfishDriver(address, credentials, { ...defaults, ...options });
}
