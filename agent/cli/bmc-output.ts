/**
 * @module What `rackside bmc` prints and how it exits: its usage text, the exit codes of BMC
 * failures (on top of {@link ExitCode}: authentication, unsupported capability, TLS, busy), the
 * message for a capability the address's driver lacks, and the text renderers (kubectl-like
 * tables and `Key: value` blocks, agent/cli/table.ts) for info, inventory, boot override,
 * virtual media, BIOS settings, firmware and Secure Boot. JSON/YAML keep every key (undefined
 * becomes null) so scripts can rely on the shape.
 * @pure
 */
import { stringify } from 'yaml';
import type {
  BiosAttributeSchema, BiosSettings, BmcAddress, BmcCapabilities, BmcInfo, BootOverride, CapabilityName, FirmwareComponent,
  OutOfBandInventory, SecureBootState, VirtualMediaSlot,
} from '../../drivers/index.js';
import { ExitCode } from './io.js';
import { formatBytes, renderFields, renderTable } from './table.js';

/** Exit codes of `rackside bmc`: the CLI's own, plus four for BMC failures scripts branch on. */
export const BmcExitCode = {
  ...ExitCode,
  /** The BMC rejected the username or password (HTTP 401/403, RAKP failure, unknown user). */
  auth: 8,
  /** The driver for this scheme, or this BMC, does not offer the capability or action. */
  unsupported: 9,
  /** TLS certificate verification failed (self-signed BMC without `--insecure`). */
  tls: 10,
  /** The BMC is busy (HTTP 409/429/503, IPMI node busy); retry later. */
  busy: 11,
} as const;

/** Usage of `rackside bmc` (also in `rackside --help`). */
export const BMC_USAGE = `usage: rackside bmc ADDRESS --username USER [--password-file FILE] [--insecure] [-o json|yaml] COMMAND
       rackside bmc probe ADDRESS [--username USER --password-file FILE] [--insecure] [-o json|yaml]
commands:
  power status|on|off|soft|soft-reset|cycle|reset [--wait [--timeout 60s]]
  boot pxe|disk|cd|http|bios [--uefi|--legacy] [--persistent]
  boot status
  info
  inventory
  vmedia insert URL | vmedia eject | vmedia status
  bios get [NAME...] | bios set NAME=VALUE...
  firmware list
  secureboot on|off|status
the password comes from --password-file FILE ('-' = stdin) or RACKSIDE_BMC_PASSWORD, never from the command line`;

/** The code a BMC failure exits with; `tlsCode` marks a TLS verification failure (RedfishTlsError). */
export function bmcExitCodeOf(err: unknown): number {
  if (typeof err !== 'object' || err === null) return BmcExitCode.failure;
  const { code, tlsCode } = err as { code?: unknown; tlsCode?: unknown };
  if (typeof tlsCode === 'string') return BmcExitCode.tls;
  switch (code) {
    case 'RACKSIDE_ERR_BMC_AUTH': return BmcExitCode.auth;
    case 'RACKSIDE_ERR_BMC_UNSUPPORTED': return BmcExitCode.unsupported;
    case 'RACKSIDE_ERR_BMC_UNREACHABLE': return BmcExitCode.unreachable;
    case 'RACKSIDE_ERR_BMC_TIMEOUT': return BmcExitCode.timeout;
    case 'RACKSIDE_ERR_BMC_BUSY': return BmcExitCode.busy;
    default: return BmcExitCode.failure;
  }
}

/** Human name of a capability for messages. */
export const CAPABILITY_TITLES: Readonly<Record<CapabilityName, string>> = {
  power: 'power control', bootDevice: 'boot device selection', virtualMedia: 'virtual media', biosSettings: 'BIOS settings',
  firmware: 'firmware inventory', tasks: 'BMC tasks', raid: 'hardware RAID', eventSubscriptions: 'event subscriptions',
  secureBoot: 'Secure Boot', inventory: 'out-of-band inventory', info: 'BMC identification',
};

/** Message for a capability the address's driver does not implement; names the capability and the scheme. */
export function unsupportedMessage(address: BmcAddress, capability: CapabilityName, supported: readonly CapabilityName[]): string {
  return `${address.raw}: ${CAPABILITY_TITLES[capability]} (capability ${capability}) is not supported for scheme ${address.scheme} `
    + `(${address.type} driver); it supports: ${supported.join(', ') || 'nothing'}`;
}

/** Adds the scheme to a driver's "does not support" message when it does not name it yet. */
export function withScheme(message: string, address: BmcAddress): string {
  return message.includes(`scheme ${address.scheme}`) ? message : `${message} (scheme ${address.scheme})`;
}

/** JSON (undefined → null, 2-space indent) or YAML of `value`. */
export function renderStructured(format: 'json' | 'yaml', value: unknown): string {
  const json = JSON.stringify(value, (_key, v: unknown) => (v === undefined ? null : v), 2);
  return format === 'json' ? `${json}\n` : stringify(JSON.parse(json), { lineWidth: 0 });
}

const show = (value: string | number | boolean | undefined): string => (value === undefined || value === '' ? '<none>' : String(value));
const yesNo = (value: boolean): string => (value ? 'yes' : 'no');

/** `boot status` text. */
export function renderBootOverride(override: BootOverride): string {
  return renderFields([
    ['Device', override.device],
    ['Mode', show(override.mode)],
    ['Persistent', yesNo(override.persistent)],
  ]);
}

/** What `rackside bmc info` reports. */
export interface BmcInfoReport {
  readonly address: string;
  readonly scheme: string;
  readonly driver: string;
  /** BMC answer; undefined when the driver cannot identify the BMC. */
  readonly info: BmcInfo | undefined;
  /** Capabilities the driver implements. */
  readonly supported: readonly CapabilityName[];
  readonly schemeCapabilities: BmcCapabilities;
}

/** `info` text: identity, probed and implemented capabilities, then the scheme's capability answers. */
export function renderBmcInfo(report: BmcInfoReport): string {
  const { info, schemeCapabilities: c } = report;
  const identity = renderFields([
    ['Address', report.address],
    ['Scheme', report.scheme],
    ['Driver', report.driver],
    ['Vendor', show(info?.vendor)],
    ['Model', show(info?.model)],
    ['Firmware', show(info?.firmwareVersion)],
    ['Protocol', show(info?.protocolVersion)],
    ['Capabilities (probed)', info === undefined ? '<not probed>' : info.probed.join(', ')],
    ['Capabilities (driver)', report.supported.join(', ')],
  ]);
  const scheme = renderFields([
    ['Ironic driver', c.driver],
    ['Vendor variant', show(c.vendor)],
    ['Needs boot MAC', yesNo(c.needsMac)],
    ['Boot paths', c.bootPaths.join(', ')],
    ['Preprovisioning images', c.preprovisioningImageFormats.join(', ')],
    ['Needs provisioning network', yesNo(c.requiresProvisioningNetwork)],
    ['Secure Boot', yesNo(c.supportsSecureBoot)],
    ['BIOS settings', yesNo(c.supportsBiosSettings)],
    ['Firmware update', yesNo(c.supportsFirmwareUpdate)],
    ['Hardware RAID', c.supportsHardwareRaid ? `yes (${c.raidInterface})` : 'no'],
    ['Out-of-band inspection', yesNo(c.supportsOutOfBandInspection)],
    ...(c.removedUpstream === undefined ? [] : [['Removed upstream', c.removedUpstream] as const]),
  ], '  ');
  return `${identity}Scheme ${c.scheme}:\n${scheme}`;
}

/** `inventory` text: system and BIOS fields, then CPU, NIC and drive tables. */
export function renderInventory(inv: OutOfBandInventory): string {
  const fields = renderFields([
    ['Manufacturer', show(inv.system.manufacturer)],
    ['Model', show(inv.system.model)],
    ['Serial number', show(inv.system.serialNumber)],
    ['UUID', show(inv.system.uuid)],
    ['BIOS', [inv.bios.vendor, inv.bios.version, inv.bios.releaseDate].filter((v) => v !== undefined && v !== '').join(' ') || '<none>'],
    ['Memory', inv.memoryMebibytes === undefined ? '<none>' : `${inv.memoryMebibytes} MiB`],
  ]);
  const cpus = renderTable(['CPU', 'MODEL', 'ARCH', 'CORES', 'THREADS', 'MHZ'],
    inv.processors.map((p, i) => [String(i), show(p.model), show(p.architecture), show(p.cores), show(p.threads), show(p.maxSpeedMhz)]));
  const nics = renderTable(['NIC', 'MAC', 'SPEED', 'LINK'],
    inv.nics.map((n) => [n.id, show(n.macAddress), n.speedMbps === undefined ? '<none>' : `${n.speedMbps} Mb/s`, n.linkUp === undefined ? '<none>' : n.linkUp ? 'up' : 'down']));
  const drives = renderTable(['DRIVE', 'MODEL', 'SERIAL', 'SIZE', 'TYPE', 'PROTOCOL'],
    inv.drives.map((d) => [d.id, show(d.model), show(d.serialNumber), formatBytes(d.sizeBytes) || '<none>', show(d.mediaType), show(d.protocol)]));
  return [fields, inv.processors.length > 0 ? cpus : '', inv.nics.length > 0 ? nics : '', inv.drives.length > 0 ? drives : '']
    .filter((part) => part !== '').join('\n');
}

/** `vmedia status` table. */
export function renderMediaSlots(slots: readonly VirtualMediaSlot[]): string {
  return renderTable(['DEVICE', 'INSERTED', 'IMAGE'], slots.map((s) => [s.device, yesNo(s.inserted), show(s.imageUrl)]));
}

function describeSchema(schema: BiosAttributeSchema | undefined): string {
  if (schema === undefined) return '';
  const parts: string[] = [];
  if (schema.allowableValues !== undefined) parts.push(schema.allowableValues.join('|'));
  if (schema.lowerBound !== undefined || schema.upperBound !== undefined) parts.push(`${schema.lowerBound ?? ''}..${schema.upperBound ?? ''}`);
  if (schema.maxLength !== undefined) parts.push(`length ${schema.minLength ?? 0}..${schema.maxLength}`);
  if (schema.readOnly === true) parts.push('read-only');
  return parts.join(' ');
}

/**
 * The BIOS settings restricted to `names` (all when empty), with values of `Password`
 * attributes shown as `<hidden>`; unknown names are returned separately.
 */
export function selectBiosSettings(settings: BiosSettings, names: readonly string[]): { readonly selected: BiosSettings; readonly unknown: readonly string[] } {
  const known = names.length === 0 ? undefined : names.filter((n) => Object.hasOwn(settings.current, n) || Object.hasOwn(settings.schema, n));
  const hide = (name: string, value: string): string =>
    Object.hasOwn(settings.schema, name) && settings.schema[name]?.attributeType === 'Password' && value !== '' ? '<hidden>' : value;
  const pick = <T>(record: Readonly<Record<string, T>>, map: (name: string, value: T) => T = (_n, v) => v): Record<string, T> =>
    Object.fromEntries(Object.entries(record).filter(([k]) => known === undefined || known.includes(k)).map(([k, v]) => [k, map(k, v)]));
  return {
    selected: { current: pick(settings.current, hide), schema: pick(settings.schema), pending: pick(settings.pending, hide) },
    unknown: known === undefined ? [] : names.filter((n) => !known.includes(n)),
  };
}

/** `bios get` table: name, current value, pending value, type and allowed values. */
export function renderBiosSettings(settings: BiosSettings): string {
  const names = [...new Set([...Object.keys(settings.current), ...Object.keys(settings.schema)])].sort();
  return renderTable(['NAME', 'VALUE', 'PENDING', 'TYPE', 'ALLOWED'], names.map((name) => {
    const schema = Object.hasOwn(settings.schema, name) ? settings.schema[name] : undefined;
    const pending = Object.hasOwn(settings.pending, name) ? settings.pending[name] : undefined;
    const current = Object.hasOwn(settings.current, name) ? settings.current[name] : undefined;
    return [name, current ?? '', pending ?? '', schema?.attributeType ?? '', describeSchema(schema)];
  }));
}

/** `firmware list` table. */
export function renderFirmware(components: readonly FirmwareComponent[]): string {
  return renderTable(['ID', 'COMPONENT', 'NAME', 'VERSION', 'UPDATEABLE'],
    components.map((c) => [c.id, c.component, c.name, c.version, yesNo(c.updateable)]));
}

/** `secureboot status` text. */
export function renderSecureBoot(state: SecureBootState): string {
  return renderFields([['Enabled', yesNo(state.enabled)], ['Current boot', show(state.currentBoot)]]);
}
