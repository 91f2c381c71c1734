/**
 * @module Canned, deterministic hardware data for the fake provisioners (fixture.ts, demo.ts):
 * inspection details, BIOS settings with their schema and firmware component versions.
 * The shape follows upstream's fixture (128 GiB RAM, 2 NICs, 2 × 93 TiB "Dell CFJ61" disks,
 * x86_64 "FancyPants CPU" at 3 GHz, docs/metal3-mapping.md, "Fixture and demo"), dressed up as a plausible
 * 2U server so status pages and the demo rack look real. Same host name in, same data out.
 * @pure
 */
import type {
  FirmwareComponentStatus,
  HardwareDetails,
  SettingSchema,
  SettingsMap,
} from '../host/types.js';

/** 1 TiB in bytes (metal3 `TebiByte`). */
const TEBIBYTE = 1024 ** 4;

/** FNV-1a 32-bit hash of `text`: a stable per-host seed for serials, MACs and addresses. */
function hashName(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A locally administered unicast MAC (first octet 0x02) derived from `seed`. */
function derivedMac(seed: number, nicIndex: number): string {
  const bytes = [0x02, 0x5a, (seed >>> 16) & 0xff, (seed >>> 8) & 0xff, seed & 0xff, nicIndex & 0xff];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** Options of {@link cannedHardwareDetails}. */
export interface CannedHardwareOptions {
  /** The host's name: seeds serial numbers, MACs and addresses, and becomes `hostname`. */
  hostName: string;
  /** When set, the first (PXE) NIC reports this MAC, as real inspection would. */
  bootMACAddress?: string;
}

/**
 * Returns the canned inspection result for one host: deterministic for a given name and
 * boot MAC, so repeated inspections and tests compare equal.
 */
export function cannedHardwareDetails(options: CannedHardwareOptions): HardwareDetails {
  const seed = hashName(options.hostName);
  const serial = `FP${(seed % 1_000_000).toString().padStart(6, '0')}`;
  const hostOctet = 20 + (seed % 200);
  const bootMac = options.bootMACAddress !== undefined && options.bootMACAddress !== '' ? options.bootMACAddress.toLowerCase() : derivedMac(seed, 1);
  const disk = (slot: number): NonNullable<HardwareDetails['storage']>[number] => ({
    name: `/dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:${slot}:0`,
    alternateNames: [`/dev/sd${String.fromCharCode(0x61 + slot)}`, `/dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:${slot}:0`],
    rotational: false,
    type: 'SSD',
    sizeBytes: 93 * TEBIBYTE,
    vendor: 'DELL',
    model: 'Dell CFJ61',
    serialNumber: `${serial}D${slot}`,
    wwn: `0x5000c500${(seed + slot).toString(16).padStart(8, '0').slice(-8)}`,
    hctl: `0:2:${slot}:0`,
  });
  return {
    systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R750 (SKU=090E;ModelName=PowerEdge R750)', serialNumber: serial },
    firmware: { bios: { vendor: 'Dell Inc.', version: '1.10.2', date: '02/21/2023' } },
    ramMebibytes: 128 * 1024,
    nics: [
      {
        name: 'eno1',
        model: '0x8086 0x1593',
        mac: bootMac,
        ip: `192.168.111.${hostOctet}`,
        speedGbps: 25,
        pxe: true,
        vlanId: 0,
        pciAddress: '0000:31:00.0',
        lldp: { switchID: 'c4:7e:e0:00:10:01', portID: `Ethernet1/${(seed % 48) + 1}`, switchSystemName: 'rack1-tor-a' },
      },
      {
        name: 'eno2',
        model: '0x8086 0x1593',
        mac: derivedMac(seed, 2),
        ip: `192.168.112.${hostOctet}`,
        speedGbps: 25,
        pxe: false,
        vlanId: 0,
        pciAddress: '0000:31:00.1',
        lldp: { switchID: 'c4:7e:e0:00:20:01', portID: `Ethernet1/${(seed % 48) + 1}`, switchSystemName: 'rack1-tor-b' },
      },
    ],
    storage: [disk(0), disk(1)],
    cpu: {
      arch: 'x86_64',
      model: 'FancyPants CPU',
      clockMegahertz: 3000,
      flags: ['fpu', 'vme', 'sse', 'sse2', 'ht', 'vmx', 'aes', 'avx', 'avx2', 'avx512f', 'hypervisor'],
      count: 32,
    },
    hostname: options.hostName,
  };
}

/** Canned actual BIOS settings (Dell-style attribute names), as `getFirmwareSettings` reports them. */
export function cannedFirmwareSettings(): SettingsMap {
  return {
    BootMode: 'Uefi',
    LogicalProc: 'Enabled',
    ProcVirtualization: 'Enabled',
    SriovGlobalEnable: 'Disabled',
    NetworkBootRetryCount: '3',
    CustomPostMessage: '',
    AssetTag: '',
    SysPassword: '',
  };
}

/** The schema matching {@link cannedFirmwareSettings}. */
export function cannedFirmwareSchema(): Record<string, SettingSchema> {
  const enabledDisabled: SettingSchema = { attribute_type: 'Enumeration', allowable_values: ['Enabled', 'Disabled'], read_only: false };
  return {
    BootMode: { attribute_type: 'Enumeration', allowable_values: ['Bios', 'Uefi'], read_only: false },
    LogicalProc: enabledDisabled,
    ProcVirtualization: enabledDisabled,
    SriovGlobalEnable: enabledDisabled,
    NetworkBootRetryCount: { attribute_type: 'Integer', lower_bound: 0, upper_bound: 20, read_only: false },
    CustomPostMessage: { attribute_type: 'String', min_length: 0, max_length: 64, read_only: false },
    AssetTag: { attribute_type: 'String', min_length: 0, max_length: 10, read_only: true, unique: true },
    SysPassword: { attribute_type: 'Password', read_only: false },
  };
}

/** Canned firmware component versions (`bios`, `bmc`), as `getFirmwareComponents` reports them. */
export function cannedFirmwareComponents(): FirmwareComponentStatus[] {
  return [
    { component: 'bios', initialVersion: '1.10.2', currentVersion: '1.10.2' },
    { component: 'bmc', initialVersion: '6.10.30.00', currentVersion: '6.10.30.00' },
  ];
}
