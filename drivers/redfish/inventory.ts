/**
 * @module Redfish out-of-band inventory for fast inspection: the System's identity, Processors,
 * Memory, EthernetInterfaces and the drives of its Storage controllers — or, when Storage is
 * missing or lists no drive, the devices of its SimpleStorage controllers (older BMCs list their
 * disks only there).
 *
 * A partial tree does not fail the inventory: a sub-collection, or one of its members, that
 * answers HTTP 404, 405 or 501 (DSP0266: not found, method not allowed, not implemented) is
 * skipped with a warning naming it, returned in `OutOfBandInventory.warnings`; the rest is kept.
 * Any other failure (credentials, timeouts, a broken System) still fails the call.
 */
import type { InventoryControl, OutOfBandInventory } from '../capabilities.js';
import type { RedfishContext } from './context.js';
import { httpStatusOf } from './http-errors.js';
import {
  decodeDrive, decodeEthernetInterface, decodeMemoryCapacityMib, decodeProcessor, decodeSimpleStorageDrives, decodeStorage,
  type DriveResource,
} from './resources.js';

/** Statuses meaning "this BMC does not have that part": skipped with a warning. */
export const SKIPPED_STATUSES: ReadonlySet<number> = new Set([404, 405, 501]);

type Decode<T> = (body: unknown, c: ReturnType<RedfishContext['at']>) => T;

/** Reads parts of the tree, skipping what the BMC does not have and noting it in `warnings`. */
class PartialReader {
  readonly warnings: string[] = [];
  constructor(private readonly ctx: RedfishContext) {}

  /** Runs `read`; a skippable status becomes a warning about `what` at `path` and `undefined`. */
  async tolerate<T>(what: string, path: string, read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === undefined || !SKIPPED_STATUSES.has(status)) throw err;
      this.warnings.push(`${what} ${path} answered HTTP ${status}: skipped, the rest of the inventory is kept`);
      return undefined;
    }
  }

  /** Each member of the collection `name` at `collection`, decoded; [] when absent or skipped. */
  async each<T>(name: string, collection: string | undefined, decode: Decode<T>): Promise<T[]> {
    if (collection === undefined) return [];
    const members = await this.tolerate(`${name} collection`, collection, () => this.ctx.members(collection));
    const out: T[] = [];
    for (const m of members ?? []) {
      const value = await this.tolerate(`${name} member`, m, async () => (await this.ctx.fetch(m, decode)).value);
      if (value !== undefined) out.push(value);
    }
    return out;
  }
}

/** Builds the out-of-band inventory capability. */
export function createInventoryControl(ctx: RedfishContext): InventoryControl {
  return {
    async getInventory(): Promise<OutOfBandInventory> {
      const reader = new PartialReader(ctx);
      const { value: system } = await ctx.system();
      const processors = (await reader.each('Processors', system.links.processors, decodeProcessor)).filter((p) => p.present && p.isCpu);
      const modules = (await reader.each('Memory', system.links.memory, decodeMemoryCapacityMib)).filter((m): m is number => m !== undefined);
      const nics = await reader.each('EthernetInterfaces', system.links.ethernetInterfaces, decodeEthernetInterface);
      const drives: DriveResource[] = [];
      for (const storage of await reader.each('Storage', system.links.storage, decodeStorage)) {
        for (const d of storage.drives) {
          const drive = await reader.tolerate('Storage drive', d, async () => (await ctx.fetch(d, decodeDrive)).value);
          if (drive !== undefined) drives.push(drive);
        }
      }
      if (drives.length === 0) {
        for (const devices of await reader.each('SimpleStorage', system.links.simpleStorage, decodeSimpleStorageDrives)) drives.push(...devices);
      }
      const inventory: OutOfBandInventory = {
        system: { manufacturer: system.manufacturer, model: system.model, serialNumber: system.serialNumber, uuid: system.uuid },
        bios: { vendor: system.manufacturer, version: system.biosVersion, releaseDate: undefined },
        processors: processors.map(({ present: _p, isCpu: _c, ...p }) => p),
        memoryMebibytes: modules.length > 0 ? modules.reduce((a, b) => a + b, 0)
          : system.memoryGib === undefined ? undefined : Math.round(system.memoryGib * 1024),
        nics,
        drives: drives.map(({ capacityBytes, ...d }) => ({ ...d, sizeBytes: capacityBytes })),
      };
      return reader.warnings.length === 0 ? inventory : { ...inventory, warnings: reader.warnings };
    },
  };
}
