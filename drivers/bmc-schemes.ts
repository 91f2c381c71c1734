/**
 * @module The BMC scheme table: every metal3 BMC address scheme (docs/metal3-mapping.md, "Scheme table";
 * BMO `pkg/hardwareutils/bmc/*.go`) with its Ironic driver and interfaces, and the capability
 * answers derived from them. `+http`/`+https` variants are derived from each row's
 * `transports`, as BMO's `RegisterFactory(name, fn, schemes)` does. Schemes BMO removed stay
 * in the table, marked with `removedUpstream`, so old manifests get a precise answer.
 * Which rackside driver serves a scheme is `type` (`ipmi`, `redfish`, `fake`).
 * @pure
 */

/** Protocol family of a rackside driver; the {@link DriverRegistry} key. */
export type BmcDriverType = 'ipmi' | 'redfish' | 'fake';

/** Vendor variant that selects small quirk overrides inside a protocol driver. */
export type BmcVendor = 'idrac' | 'ilo4' | 'ilo5' | 'irmc' | 'ibmc';

/** Transport suffix of a scheme (`redfish+http`); none means the driver's default. */
export type BmcTransport = 'http' | 'https';

/** How a host can be booted into the rackside ramdisk: network (i)PXE, virtual media ISO, UEFI HTTP. */
export type BootPath = 'pxe' | 'virtual-media' | 'uefi-http';

/** Ironic interface names BMO sets for a scheme; '' means "Ironic's default for the driver". */
export interface IronicInterfaces {
  readonly boot: string;
  readonly bios: string;
  readonly management: string;
  readonly power: string;
  readonly vendor: string;
  readonly raid: string;
  readonly firmware: string;
  /** Out-of-band inspection interface ('' = none; BMO main's `InspectInterface()`). */
  readonly inspect: string;
}

/** One row of the scheme table (a base scheme, without `+transport`). */
export interface BmcSchemeRow {
  /** Ironic hardware type (BMO `Driver()`): `ipmi`, `redfish`, `idrac`, `ilo`, … */
  readonly driver: string;
  readonly type: BmcDriverType;
  readonly vendor: BmcVendor | undefined;
  /** `+suffix` variants BMO registers for this scheme. */
  readonly transports: readonly BmcTransport[];
  readonly needsMac: boolean;
  readonly supportsSecureBoot: boolean;
  readonly supportsIsoPreprovisioningImage: boolean;
  readonly requiresProvisioningNetwork: boolean;
  /** Whether Ironic's BIOS interface for this driver (explicit or default) manages settings. */
  readonly supportsBiosSettings: boolean;
  readonly interfaces: IronicInterfaces;
  /** Explicit boot paths; when absent they are derived from `interfaces.boot`. */
  readonly bootPaths?: readonly BootPath[];
  /** When BMO dropped the scheme (still accepted here; the agent should warn). */
  readonly removedUpstream?: string;
}

/** Capability answers for one address scheme; what the provisioner asks instead of vendor names. */
export interface BmcCapabilities {
  /** Base scheme (no `+transport`), e.g. `idrac-virtualmedia`. */
  readonly scheme: string;
  readonly driver: string;
  readonly type: BmcDriverType;
  readonly vendor: BmcVendor | undefined;
  /** BMO `NeedsMAC()`: `bootMACAddress` is required up front (also when inspection is disabled). */
  readonly needsMac: boolean;
  readonly supportsIsoPreprovisioningImage: boolean;
  readonly supportsSecureBoot: boolean;
  readonly requiresProvisioningNetwork: boolean;
  /** Ironic RAID interface; `no-raid` means hardware RAID volumes are rejected. */
  readonly raidInterface: string;
  readonly supportsHardwareRaid: boolean;
  readonly supportsFirmwareUpdate: boolean;
  readonly supportsBiosSettings: boolean;
  readonly supportsOutOfBandInspection: boolean;
  /** Boot paths in preference order (first = the one BMO configures). */
  readonly bootPaths: readonly BootPath[];
  /** `iso` only with ISO preprovisioning support; `initrd` always (BMO rule). */
  readonly preprovisioningImageFormats: readonly ('iso' | 'initrd')[];
  readonly interfaces: IronicInterfaces;
  readonly removedUpstream: string | undefined;
}

const NONE: IronicInterfaces = { boot: 'ipxe', bios: '', management: '', power: '', vendor: '', raid: 'no-raid', firmware: '', inspect: '' };
const REDFISH: IronicInterfaces = { ...NONE, raid: 'redfish', firmware: 'redfish', inspect: 'redfish' };
const IDRAC_REDFISH: IronicInterfaces = {
  ...REDFISH, bios: 'idrac-redfish', management: 'idrac-redfish', power: 'idrac-redfish',
  vendor: 'idrac-redfish', raid: 'idrac-redfish',
};
const BOTH: readonly BmcTransport[] = ['http', 'https'];

const ipmiRow: BmcSchemeRow = {
  driver: 'ipmi', type: 'ipmi', vendor: undefined, transports: [], needsMac: false,
  supportsSecureBoot: false, supportsIsoPreprovisioningImage: false, requiresProvisioningNetwork: true,
  supportsBiosSettings: false, interfaces: NONE,
};
const redfishRow: BmcSchemeRow = {
  driver: 'redfish', type: 'redfish', vendor: undefined, transports: BOTH, needsMac: false,
  supportsSecureBoot: true, supportsIsoPreprovisioningImage: false, requiresProvisioningNetwork: true,
  supportsBiosSettings: true, interfaces: REDFISH,
};
const virtualMediaRow: BmcSchemeRow = {
  ...redfishRow, supportsIsoPreprovisioningImage: true, requiresProvisioningNetwork: false,
  interfaces: { ...REDFISH, boot: 'redfish-virtual-media' },
};
const legacyRow: BmcSchemeRow = { ...ipmiRow, needsMac: true, supportsSecureBoot: true, supportsBiosSettings: true };

/**
 * The scheme table. Sources: BMO `ipmi.go` (libvirt = VirtualBMC, needs a MAC), `redfish.go`,
 * `redfish_virtualmedia.go`, `redfish_https.go`, `idrac_virtualmedia.go`; removed drivers
 * from `ilo4.go`, `ilo5.go`, `irmc.go`, `ibmc.go` and the WSMAN `idrac` driver.
 * Removed vendor schemes are served by the Redfish driver with the vendor's quirks (iLO 4
 * ≥ 2.30, iLO 5, iBMC and iDRAC 7+ all speak Redfish); `irmc` keeps IPMI power as BMO did.
 */
export const BMC_SCHEMES: Readonly<Record<string, BmcSchemeRow>> = {
  ipmi: ipmiRow,
  libvirt: { ...ipmiRow, needsMac: true },
  redfish: redfishRow,
  'ilo5-redfish': { ...redfishRow, vendor: 'ilo5' },
  'idrac-redfish': { ...redfishRow, driver: 'idrac', vendor: 'idrac', interfaces: IDRAC_REDFISH },
  'redfish-virtualmedia': virtualMediaRow,
  'ilo5-virtualmedia': { ...virtualMediaRow, vendor: 'ilo5' },
  'idrac-virtualmedia': {
    ...virtualMediaRow, driver: 'idrac', vendor: 'idrac',
    interfaces: { ...IDRAC_REDFISH, boot: 'idrac-redfish-virtual-media' },
  },
  'redfish-uefihttp': { ...virtualMediaRow, interfaces: { ...REDFISH, boot: 'redfish-https' } },
  ilo4: {
    ...legacyRow, driver: 'ilo', type: 'redfish', vendor: 'ilo4', transports: ['https'],
    interfaces: { ...NONE, boot: 'ilo-ipxe' }, removedUpstream: '2025-10',
  },
  'ilo4-virtualmedia': {
    ...legacyRow, driver: 'ilo', type: 'redfish', vendor: 'ilo4', transports: ['https'],
    supportsIsoPreprovisioningImage: true, requiresProvisioningNetwork: false,
    interfaces: { ...NONE, boot: 'ilo-virtual-media' }, removedUpstream: '2025-10',
  },
  ilo5: {
    ...legacyRow, driver: 'ilo5', type: 'redfish', vendor: 'ilo5', transports: ['https'],
    interfaces: { ...NONE, boot: 'ilo-ipxe', raid: 'ilo5' }, removedUpstream: '2025-10',
  },
  irmc: {
    ...legacyRow, driver: 'irmc', vendor: 'irmc',
    interfaces: { ...NONE, power: 'ipmitool', raid: 'irmc' }, removedUpstream: '2026-02',
  },
  ibmc: {
    ...legacyRow, driver: 'ibmc', type: 'redfish', vendor: 'ibmc', transports: BOTH,
    supportsSecureBoot: false, supportsBiosSettings: false,
    interfaces: { ...NONE, management: 'ibmc', power: 'ibmc' }, removedUpstream: '2024-03',
  },
  idrac: {
    ...ipmiRow, driver: 'idrac', type: 'redfish', vendor: 'idrac', transports: BOTH,
    supportsBiosSettings: true, interfaces: { ...NONE, raid: 'idrac-wsman' }, removedUpstream: '2024-03',
  },
  // rackside's in-memory driver for tests and the demo: every capability, every boot path.
  fake: {
    driver: 'fake', type: 'fake', vendor: undefined, transports: [], needsMac: false,
    supportsSecureBoot: true, supportsIsoPreprovisioningImage: true, requiresProvisioningNetwork: false,
    supportsBiosSettings: true, bootPaths: ['pxe', 'virtual-media', 'uefi-http'],
    interfaces: { boot: 'fake', bios: 'fake', management: 'fake', power: 'fake', vendor: 'fake', raid: 'fake', firmware: 'fake', inspect: 'fake' },
  },
};

/** A scheme split into its table row, base name and transport suffix. */
export interface ResolvedScheme {
  readonly baseScheme: string;
  readonly transport: BmcTransport | undefined;
  readonly row: BmcSchemeRow;
}

function rowOf(name: string): BmcSchemeRow | undefined {
  return Object.hasOwn(BMC_SCHEMES, name) ? BMC_SCHEMES[name] : undefined;
}

/**
 * Resolves a lower-case scheme (`redfish-virtualmedia+https`) to its row; undefined when the
 * scheme, or its `+transport` suffix, is not one BMO registers.
 */
export function resolveBmcScheme(scheme: string): ResolvedScheme | undefined {
  const direct = rowOf(scheme);
  if (direct !== undefined) return { baseScheme: scheme, transport: undefined, row: direct };
  const plus = scheme.indexOf('+');
  if (plus < 0) return undefined;
  const baseScheme = scheme.slice(0, plus);
  const suffix = scheme.slice(plus + 1);
  const row = rowOf(baseScheme);
  const transport = row?.transports.find((t) => t === suffix);
  if (row === undefined || transport === undefined) return undefined;
  return { baseScheme, transport, row };
}

/** Every accepted scheme spelled out, `+http`/`+https` variants included, in table order. */
export function listBmcSchemes(): string[] {
  return Object.entries(BMC_SCHEMES).flatMap(([name, row]) => [name, ...row.transports.map((t) => `${name}+${t}`)]);
}

/** Compact human list for error messages: `redfish(+http|+https), ipmi, …` (current schemes first). */
export function describeBmcSchemes(): string {
  const entries = Object.entries(BMC_SCHEMES);
  const current = entries.filter(([, row]) => row.removedUpstream === undefined);
  const removed = entries.filter(([, row]) => row.removedUpstream !== undefined);
  const spell = ([name, row]: [string, BmcSchemeRow]): string =>
    row.transports.length === 0 ? name : `${name}(${row.transports.map((t) => `+${t}`).join('|')})`;
  return `${current.map(spell).join(', ')}; legacy: ${removed.map(spell).join(', ')}`;
}

function bootPathOf(bootInterface: string): BootPath {
  if (bootInterface.includes('virtual-media')) return 'virtual-media';
  if (bootInterface === 'redfish-https') return 'uefi-http';
  return 'pxe'; // ipxe, pxe, ilo-ipxe
}

/** Capability answers for a resolved scheme row (pure table lookup, no I/O). */
export function capabilitiesOfScheme(baseScheme: string, row: BmcSchemeRow): BmcCapabilities {
  return {
    scheme: baseScheme,
    driver: row.driver,
    type: row.type,
    vendor: row.vendor,
    needsMac: row.needsMac,
    supportsIsoPreprovisioningImage: row.supportsIsoPreprovisioningImage,
    supportsSecureBoot: row.supportsSecureBoot,
    requiresProvisioningNetwork: row.requiresProvisioningNetwork,
    raidInterface: row.interfaces.raid,
    supportsHardwareRaid: row.interfaces.raid !== 'no-raid',
    supportsFirmwareUpdate: row.interfaces.firmware !== '',
    supportsBiosSettings: row.supportsBiosSettings,
    supportsOutOfBandInspection: row.interfaces.inspect !== '',
    bootPaths: row.bootPaths ?? [bootPathOf(row.interfaces.boot)],
    preprovisioningImageFormats: row.supportsIsoPreprovisioningImage ? ['iso', 'initrd'] : ['initrd'],
    interfaces: row.interfaces,
    removedUpstream: row.removedUpstream,
  };
}
