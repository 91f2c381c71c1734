/**
 * @module The BMC's out-of-band inventory (drivers' `OutOfBandInventory`: Redfish System,
 * Processors, Memory, EthernetInterfaces, Storage drives) → metal3 HardwareDetails, for
 * `inspectionMode: fast` (docs/metal3-mapping.md: "Enums and annotations", "Hardware details").
 * What the BMC cannot know is left out: no IPs, LLDP, PCI addresses, CPU flags or Linux device
 * names; a disk is named by its BMC id. Like Ironic's redfish inspection: `cpu.count` is the
 * logical CPUs (threads, else cores), the clock the fastest processor's maximum, NIC speed
 * in whole Gbps, the NIC carrying the boot MAC marked `pxe`.
 * @pure
 */
import type { OutOfBandInventory } from '../../../drivers/index.js';
import type { DiskType, HardwareDetails, NIC, Storage } from '../../host/types.js';

/** Drops undefined fields so the result matches upstream's omitempty JSON. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

function sum(values: (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => positive(v) !== undefined);
  return known.length === 0 ? undefined : known.reduce((a, b) => a + b, 0);
}

function diskType(drive: OutOfBandInventory['drives'][number]): DiskType | undefined {
  if (drive.protocol !== undefined && /nvme/i.test(drive.protocol)) return 'NVME';
  return drive.mediaType;
}

/**
 * Returns HardwareDetails for `inventory`; `bootMac` marks the PXE NIC, `fallbackArch` is
 * used when the BMC names no processor architecture (the host's `spec.architecture`).
 */
export function hardwareDetailsFromOutOfBand(inventory: OutOfBandInventory, bootMac: string, fallbackArch: string): HardwareDetails {
  const processors = inventory.processors;
  const first = processors.find((p) => p.model !== undefined || p.architecture !== undefined);
  const clocks = processors.map((p) => positive(p.maxSpeedMhz)).filter((c): c is number => c !== undefined);
  const boot = bootMac.toLowerCase();
  const nics: NIC[] = inventory.nics.map((n) => {
    const mac = n.macAddress?.toLowerCase();
    const speed = positive(n.speedMbps);
    return compact({
      name: n.id,
      mac,
      speedGbps: speed === undefined ? undefined : Math.floor(speed / 1000),
      pxe: mac !== undefined && boot !== '' ? mac === boot : undefined,
    });
  });
  const storage: Storage[] = inventory.drives.map((d) => {
    const type = diskType(d);
    return compact({
      name: d.id,
      rotational: d.mediaType === undefined ? undefined : d.mediaType === 'HDD',
      type,
      sizeBytes: positive(d.sizeBytes),
      model: d.model,
      serialNumber: d.serialNumber,
    });
  });
  return compact({
    systemVendor: compact({ manufacturer: inventory.system.manufacturer, productName: inventory.system.model, serialNumber: inventory.system.serialNumber }),
    firmware: { bios: compact({ date: inventory.bios.releaseDate, vendor: inventory.bios.vendor, version: inventory.bios.version }) },
    ramMebibytes: positive(inventory.memoryMebibytes),
    nics,
    storage,
    cpu: compact({
      arch: first?.architecture ?? (fallbackArch === '' ? undefined : fallbackArch),
      model: first?.model,
      clockMegahertz: clocks.length === 0 ? undefined : Math.max(...clocks),
      count: sum(processors.map((p) => p.threads ?? p.cores)),
    }),
  });
}
