/**
 * @module The discovery ramdisk's report (`POST /ramdisk/v1/discovery`, docs/discovery.md,
 * "The report"), decoded from untrusted JSON: the IPA-style inventory, the outcome of in-band BMC
 * enlistment, and the LLDP neighbours heard on each NIC. Every field is checked; a bad one is a
 * {@link DiscoveryReportError} naming it (the route answers 400 with that name). Also which BMC
 * addresses rackside can use ({@link usableBmcAddress}).
 * @pure
 */
import { isJsonObject, nestsDeeperThan } from '../json-value.js';
import { decodeLldpNeighbors, type LldpNeighbor } from '../provisioner/local/lldp.js';

/** A report field that is missing or wrong; `field` is its JSON path (`bmc.password`). */
export class DiscoveryReportError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'DiscoveryReportError';
  }
}

/** What in-band enlistment did: nothing (not asked, no IPMI system interface), failed, or made a user. */
export type BmcReport =
  | { kind: 'none'; message: string }
  | { kind: 'error'; channel?: number; message: string }
  | { kind: 'ok'; channel: number; address: string; ipv6: string[]; mac?: string; userId?: number; username: string; password: string };

/** A decoded discovery report. */
export interface DiscoveryReport {
  inventory: Record<string, unknown>;
  bmc: BmcReport;
  lldp: LldpNeighbor[];
}

/** Deepest nesting an inventory may have (the ramdisk's is 4 levels). */
const MAX_DEPTH = 32;
const MAX_TEXT = 512;


/** Printable text without control characters, trimmed and capped; undefined when absent or blank. */
function text(value: unknown, field: string, max = MAX_TEXT): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new DiscoveryReportError(field, 'must be a string');
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return clean === '' ? undefined : clean.slice(0, max);
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** True for a dotted-quad IPv4 address. */
export function isIpv4Address(value: string): boolean {
  return IPV4.test(value);
}

/** True for an IPv6 address in text form (RFC 4291 §2.2; no zone, no embedded IPv4). */
export function isIpv6Address(value: string): boolean {
  if (!/^[0-9a-fA-F:]{2,39}$/.test(value)) return false;
  const halves = value.split('::');
  if (halves.length > 2) return false;
  const groups = halves.map((h) => (h === '' ? [] : h.split(':')));
  if (groups.some((g) => g.some((x) => !/^[0-9a-fA-F]{1,4}$/.test(x)))) return false;
  const count = groups.reduce((n, g) => n + g.length, 0);
  return halves.length === 2 ? count <= 7 : count === 8;
}

function address(value: unknown, field: string): string {
  const a = text(value, field, 64);
  if (a === undefined || !(isIpv4Address(a) || isIpv6Address(a))) throw new DiscoveryReportError(field, 'must be an IPv4 or IPv6 address');
  return a.toLowerCase();
}

/**
 * Why rackside cannot reach a BMC at `addr`, or undefined when it can: unset (0.0.0.0, ::),
 * link-local (169.254/16, fe80::/10), broadcast and multicast addresses are refused. Loopback is
 * kept: a BMC simulator beside the agent (ipmi_sim) answers there.
 */
export function unusableBmcAddress(addr: string): string | undefined {
  if (isIpv4Address(addr)) {
    const [a, b] = addr.split('.').map(Number) as [number, number];
    if (addr === '0.0.0.0') return 'the BMC has no address (0.0.0.0)';
    if (a === 169 && b === 254) return `${addr} is link-local`;
    if (a >= 224) return `${addr} is multicast or broadcast`;
    return undefined;
  }
  const lower = addr.toLowerCase();
  if (/^[0:]+$/.test(lower)) return 'the BMC has no address (::)';
  if (/^fe[89ab]/.test(lower)) return `${addr} is link-local`;
  if (lower.startsWith('ff')) return `${addr} is multicast`;
  return undefined;
}

function decodeBmc(value: unknown): BmcReport {
  if (value === undefined || value === null) return { kind: 'none', message: 'the ramdisk did not try in-band enlistment' };
  if (!isJsonObject(value)) throw new DiscoveryReportError('bmc', 'must be an object');
  const status = value.status;
  const channel = value.channel === undefined || value.channel === null ? undefined : value.channel;
  if (channel !== undefined && (typeof channel !== 'number' || !Number.isInteger(channel) || channel < 1 || channel > 11)) {
    throw new DiscoveryReportError('bmc.channel', 'must be a LAN channel 1..11');
  }
  const message = text(value.message, 'bmc.message') ?? '';
  if (status === 'none') return { kind: 'none', message: message || 'no IPMI system interface' };
  if (status === 'error') return { kind: 'error', ...(channel === undefined ? {} : { channel }), message: message || 'the BMC refused' };
  if (status !== 'ok') throw new DiscoveryReportError('bmc.status', 'must be ok, error or none');
  if (channel === undefined) throw new DiscoveryReportError('bmc.channel', 'is required with status ok');
  // IPMI 2.0 §22.28/§22.29: user names up to 16 bytes, passwords up to 20; rackside makes ≥ 16.
  const username = typeof value.username === 'string' ? value.username : '';
  if (!/^[\x21-\x7e]{1,16}$/.test(username)) throw new DiscoveryReportError('bmc.username', 'must be 1..16 printable characters');
  const password = typeof value.password === 'string' ? value.password : '';
  if (!/^[\x21-\x7e]{16,20}$/.test(password)) throw new DiscoveryReportError('bmc.password', 'must be 16..20 printable characters');
  const ipv6In: unknown = value.ipv6 ?? [];
  if (!Array.isArray(ipv6In) || ipv6In.length > 16) throw new DiscoveryReportError('bmc.ipv6', 'must be a list of at most 16 addresses');
  const ipv6 = ipv6In.map((a, i) => address(a, `bmc.ipv6[${i}]`));
  const mac = text(value.mac, 'bmc.mac', 17);
  if (mac !== undefined && !/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(mac)) throw new DiscoveryReportError('bmc.mac', 'must be a MAC address');
  const userId = value.user_id;
  if (userId !== undefined && (typeof userId !== 'number' || !Number.isInteger(userId) || userId < 1 || userId > 63)) {
    throw new DiscoveryReportError('bmc.user_id', 'must be a user slot 1..63');
  }
  return {
    kind: 'ok', channel, address: address(value.address, 'bmc.address'), ipv6, ...(mac === undefined ? {} : { mac: mac.toLowerCase() }),
    ...(typeof userId === 'number' ? { userId } : {}), username, password,
  };
}

/** Decodes a report body; throws {@link DiscoveryReportError} naming the first bad field. */
export function decodeDiscoveryReport(body: unknown): DiscoveryReport {
  if (!isJsonObject(body)) throw new DiscoveryReportError('body', 'must be a JSON object');
  const inventory = body.inventory;
  if (!isJsonObject(inventory)) throw new DiscoveryReportError('inventory', 'must be an object');
  if (nestsDeeperThan(inventory, MAX_DEPTH)) throw new DiscoveryReportError('inventory', `nests deeper than ${MAX_DEPTH} levels`);
  const lldp = decodeLldpNeighbors(body.lldp, (field, message) => new DiscoveryReportError(field, message));
  return { inventory, bmc: decodeBmc(body.bmc), lldp };
}

/** The system serial number the inventory reports (`system_vendor.serial_number`). */
export function inventorySerial(inventory: Record<string, unknown>): string | undefined {
  const vendor = inventory.system_vendor;
  if (!isJsonObject(vendor) || typeof vendor.serial_number !== 'string') return undefined;
  return vendor.serial_number;
}

/** The boot MAC the inventory names (`boot.pxe_interface`), lower case, if any. */
export function inventoryBootMac(inventory: Record<string, unknown>): string | undefined {
  const boot = inventory.boot;
  if (!isJsonObject(boot) || typeof boot.pxe_interface !== 'string' || boot.pxe_interface === '') return undefined;
  return boot.pxe_interface.toLowerCase();
}
