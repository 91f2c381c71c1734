/**
 * @module The in-ramdisk agent's IPA-compatible inventory → metal3 HardwareDetails, with
 * upstream's mapping rules (docs/metal3-mapping.md, "Inventory": one NIC entry per IP family, storage
 * named by its stable by-path when known, HDD/SSD/NVME from rotational and the device name,
 * MHz rounded, flags sorted), plus the LLDP neighbours rackside's ramdisk lists beside IPA's
 * fields (`lldp`, placed on their NICs). Untrusted input: every field is checked, odd ones are dropped.
 * @pure
 */
import type { DiskType, HardwareDetails, NIC, Storage } from '../../host/types.js';
import { isJsonObject } from '../../json-value.js';
import { decodeLldpNeighbors, nicsWithLldp, type LldpNeighbor } from './lldp.js';

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return isJsonObject(value) ? value : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown, maxLength = 256): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, maxLength);
}

function count(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** Drops undefined fields so the result matches upstream's omitempty JSON. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Thrown when the inventory is not an object with at least a cpu or memory section. */
export class InventoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InventoryError';
  }
}

function diskType(name: string, rotational: unknown): DiskType {
  if (rotational === true) return 'HDD';
  if (name.startsWith('/dev/nvme')) return 'NVME';
  return 'SSD';
}

function storageOf(disk: Json): Storage | undefined {
  const name = text(disk.name);
  if (name === undefined) return undefined;
  const byPath = text(disk.by_path);
  return compact<Storage>({
    name: byPath ?? name,
    alternateNames: byPath !== undefined ? [name, byPath] : [name],
    rotational: disk.rotational === true,
    type: diskType(name, disk.rotational),
    sizeBytes: count(disk.size),
    vendor: text(disk.vendor),
    model: text(disk.model),
    serialNumber: text(disk.serial),
    wwn: text(disk.wwn),
    wwnVendorExtension: text(disk.wwn_vendor_extension),
    wwnWithExtension: text(disk.wwn_with_extension),
    hctl: text(disk.hctl),
  });
}

function nicsOf(iface: Json): NIC[] {
  const name = text(iface.name);
  if (name === undefined) return [];
  const speedMbps = count(iface.speed_mbps);
  const lldpIn = record(iface.lldp);
  const lldp = compact({ switchID: text(lldpIn.switch_chassis_id), portID: text(lldpIn.switch_port_id), switchSystemName: text(lldpIn.switch_system_name) });
  const base = compact<NIC>({
    name,
    model: text([text(iface.vendor) ?? '', text(iface.product) ?? ''].join(' ')),
    mac: text(iface.mac_address)?.toLowerCase(),
    speedGbps: speedMbps === undefined ? undefined : Math.floor(speedMbps / 1000),
    pciAddress: text(iface.pci_address),
    pxe: iface.pxe_enabled === true,
    lldp: Object.keys(lldp).length > 0 ? lldp : undefined,
  });
  const v4 = text(iface.ipv4_address);
  const v6 = text(iface.ipv6_address);
  const entries: NIC[] = [];
  if (v4 !== undefined || v6 === undefined) entries.push(compact({ ...base, ip: v4 }));
  if (v6 !== undefined) entries.push({ ...base, ip: v6 });
  return entries;
}

/** The LLDP neighbours rackside's ramdisk adds to its inventory (`lldp`, lldp.ts); a malformed list is dropped. */
function lldpOf(inventory: Json): LldpNeighbor[] {
  try {
    return decodeLldpNeighbors(inventory.lldp, (field, message) => new InventoryError(`${field} ${message}`));
  } catch {
    return [];
  }
}

/** Maps an inventory (already JSON-parsed, untrusted) to HardwareDetails. */
export function hardwareDetailsFromInventory(input: unknown): HardwareDetails {
  const inventory = record(input);
  if (Object.keys(record(inventory.cpu)).length === 0 && Object.keys(record(inventory.memory)).length === 0) {
    throw new InventoryError('inventory has neither a cpu nor a memory section');
  }
  const cpu = record(inventory.cpu);
  const vendor = record(inventory.system_vendor);
  const bios = record(vendor.firmware);
  const frequency = count(cpu.frequency);
  const flags = list(cpu.flags).filter((f): f is string => typeof f === 'string' && f.length <= 64).slice(0, 512).sort();
  const storage = list(inventory.disks).map((d) => storageOf(record(d))).filter((s): s is Storage => s !== undefined);
  const nics = nicsWithLldp(list(inventory.interfaces).flatMap((i) => nicsOf(record(i))), lldpOf(inventory));
  return compact<HardwareDetails>({
    systemVendor: compact({ manufacturer: text(vendor.manufacturer), productName: text(vendor.product_name), serialNumber: text(vendor.serial_number) }),
    firmware: { bios: compact({ vendor: text(bios.vendor), version: text(bios.version), date: text(bios.build_date) }) },
    ramMebibytes: count(record(inventory.memory).physical_mb),
    nics,
    storage,
    cpu: compact({
      arch: text(cpu.architecture),
      model: text(cpu.model_name),
      clockMegahertz: frequency === undefined ? undefined : Math.round(frequency),
      flags,
      count: count(cpu.count),
    }),
    hostname: text(inventory.hostname),
  });
}
