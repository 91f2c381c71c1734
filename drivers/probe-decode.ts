/**
 * @module The BMC capability probe's pure half: the report's shape, reading the Redfish
 * documents a probe fetched (ServiceRoot, System, Manager, VirtualMedia, SecureBoot, Bios,
 * UpdateService…) into facts, reading IPMI lanplus answers (Get Channel Authentication
 * Capabilities, Get Channel Cipher Suites — drivers/ipmi/commands.ts and cipher-suites.ts), and
 * the recommendation: the metal3 address that uses the best boot path the BMC showed
 * (virtual media, then UEFI HTTP, then PXE over Redfish; `ipmi://` when only IPMI answers).
 * An address without a scheme keeps metal3's meaning (IPMI): the probe advises, never rewrites.
 * @pure
 */
import type { ListedCipherSuite } from './ipmi/cipher-suites.js';
import type { ChannelAuthCapabilities } from './ipmi/commands.js';

/** One thing the probe tried, and what it got. */
export interface ProbeAttempt {
  readonly protocol: 'redfish' | 'ipmi';
  /** What was asked, e.g. `GET https://10.0.0.5/redfish/v1/` or `Get Channel Cipher Suites`. */
  readonly request: string;
  readonly ok: boolean;
  /** The answer in a few words: `HTTP 200`, `connection refused`, `no answer within 1500 ms`… */
  readonly answer: string;
  readonly elapsedMs: number;
}

/** A capability and whether the BMC showed it (undefined: could not tell). */
export interface ProbeFeature {
  readonly name: string;
  readonly supported: boolean | undefined;
  readonly detail: string;
}

/** What the Redfish documents said. */
export interface RedfishFacts {
  /** `https://HOST[:PORT]` or `http://…` that answered the ServiceRoot. */
  base: string;
  /** The certificate was not trusted (probe ran with --insecure, or only read the ServiceRoot). */
  untrustedCertificate: boolean;
  redfishVersion?: string;
  vendor?: string;
  product?: string;
  /** `@odata.id` of the first system, e.g. `/redfish/v1/Systems/1`. */
  systemPath?: string;
  manufacturer?: string;
  model?: string;
  biosVersion?: string;
  bmcFirmware?: string;
  bootTargets?: string[];
  virtualMedia?: { slots: number; cd: boolean };
  secureBoot?: boolean;
  bios?: { attributes: number; registry: boolean };
  services: Record<'UpdateService' | 'SessionService' | 'EventService', boolean | undefined>;
  /** The System/Manager collections needed credentials the probe did not have (or were refused). */
  authRefused?: string;
}

/** What the IPMI lanplus answers said. */
export interface IpmiFacts {
  port: number;
  capabilities?: ChannelAuthCapabilities;
  /** Suites the BMC listed (undefined: not asked or not answered). */
  cipherSuites?: number[];
  /** Vendor from the OEM IANA number, when known. */
  vendor?: string;
}

/** The probe's report. */
export interface ProbeReport {
  /** The address as given. */
  readonly address: string;
  /** What metal3 would make of the address as given (`ipmi` for a bare host). */
  readonly givenType: string;
  readonly host: string;
  readonly vendor?: string;
  readonly model?: string;
  readonly firmware?: string;
  readonly redfish?: RedfishFacts;
  readonly ipmi?: IpmiFacts;
  readonly features: ProbeFeature[];
  readonly attempts: ProbeAttempt[];
  /** The metal3 address to use; undefined when nothing answered. */
  readonly recommendedAddress?: string;
  readonly notes: string[];
  /** False when neither Redfish nor IPMI answered. */
  readonly answered: boolean;
  readonly elapsedMs: number;
}

type Json = Record<string, unknown>;

function str(doc: Json | undefined, key: string): string | undefined {
  const v = doc?.[key];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** The `@odata.id` of a link (`{"@odata.id": …}`) under `key`, if any. */
export function linkOf(doc: Json | undefined, key: string): string | undefined {
  const v = doc?.[key];
  return typeof v === 'object' && v !== null ? str(v as Json, '@odata.id') : undefined;
}

/** The `@odata.id` of every member of a collection. */
export function membersOf(doc: Json | undefined): string[] {
  const members = doc?.Members;
  if (!Array.isArray(members)) return [];
  return members.map((m) => (typeof m === 'object' && m !== null ? str(m as Json, '@odata.id') : undefined)).filter((m): m is string => m !== undefined);
}

/** ServiceRoot facts: version, vendor, product. */
export function readServiceRoot(facts: RedfishFacts, root: Json): void {
  const version = str(root, 'RedfishVersion');
  if (version !== undefined) facts.redfishVersion = version;
  const vendor = str(root, 'Vendor');
  if (vendor !== undefined) facts.vendor = vendor;
  const product = str(root, 'Product');
  if (product !== undefined) facts.product = product;
  for (const service of ['UpdateService', 'SessionService', 'EventService'] as const) {
    facts.services[service] = linkOf(root, service) !== undefined ? true : facts.services[service];
  }
}

/** ComputerSystem facts: manufacturer, model, BIOS version, allowed boot targets. */
export function readSystem(facts: RedfishFacts, system: Json): void {
  const m = str(system, 'Manufacturer');
  if (m !== undefined) facts.manufacturer = m;
  const model = str(system, 'Model');
  if (model !== undefined) facts.model = model;
  const bios = str(system, 'BiosVersion');
  if (bios !== undefined) facts.biosVersion = bios;
  const boot = system.Boot;
  const allowed = typeof boot === 'object' && boot !== null ? (boot as Json)['BootSourceOverrideTarget@Redfish.AllowableValues'] : undefined;
  if (Array.isArray(allowed)) facts.bootTargets = allowed.filter((t): t is string => typeof t === 'string');
}

/** VirtualMedia facts from the members read: how many slots, and whether one takes a CD/DVD. */
export function readVirtualMedia(facts: RedfishFacts, slots: readonly Json[]): void {
  const cd = slots.some((s) => Array.isArray(s.MediaTypes) && s.MediaTypes.some((t) => t === 'CD' || t === 'DVD'));
  facts.virtualMedia = { slots: slots.length, cd };
}

/** Vendor names of the OEM IANA numbers BMCs report most. */
const IANA_VENDORS: Readonly<Record<number, string>> = {
  2: 'IBM', 11: 'HPE', 343: 'Intel', 674: 'Dell', 4413: 'OpenBMC', 10876: 'Supermicro', 19046: 'Lenovo', 2011: 'Huawei', 7244: 'Quanta', 40981: 'ASRock Rack', 49622: 'Ampere',
};

/** The vendor of an OEM IANA number, or undefined (0 = none given). */
export function ianaVendor(iana: number): string | undefined {
  return IANA_VENDORS[iana];
}

/** Suite ids of the cipher suite records a BMC listed (standard records only, in order, unique). */
export function listedSuiteIds(listed: readonly ListedCipherSuite[]): number[] {
  return [...new Set(listed.filter((s) => s.oemIana === undefined).map((s) => s.id))];
}

/** `host` plus `:port` unless the port is the scheme's default. */
function authority(host: string, port: number | undefined, defaultPort: number): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return port === undefined || port === defaultPort ? h : `${h}:${port}`;
}

/** The driver prefix for a Redfish BMC: iDRAC's own for Dell, plain Redfish otherwise. */
function redfishScheme(facts: RedfishFacts): { scheme: string; boot: string } {
  const dell = /dell/i.test(facts.manufacturer ?? facts.vendor ?? '');
  if (facts.virtualMedia?.cd === true) return { scheme: dell ? 'idrac-virtualmedia' : 'redfish-virtualmedia', boot: 'virtual media' };
  if (facts.bootTargets?.includes('UefiHttp') === true) return { scheme: 'redfish-uefihttp', boot: 'UEFI HTTP boot' };
  return { scheme: dell ? 'idrac-redfish' : 'redfish', boot: 'network boot (PXE)' };
}

/**
 * The recommended metal3 address and the notes that go with it: Redfish when its ServiceRoot
 * answered (with the best boot path seen), else `ipmi://` when lanplus answered, else none.
 */
export function recommend(redfish: RedfishFacts | undefined, ipmi: IpmiFacts | undefined, host: string): { address?: string; notes: string[] } {
  const notes: string[] = [];
  if (redfish !== undefined) {
    const url = new URL(redfish.base);
    const https = url.protocol === 'https:';
    const { scheme, boot } = redfishScheme(redfish);
    const port = url.port === '' ? undefined : Number(url.port);
    const address = `${scheme}+${https ? 'https' : 'http'}://${authority(url.hostname.replace(/^\[|\]$/g, ''), port, https ? 443 : 80)}${redfish.systemPath ?? ''}`;
    notes.push(`Redfish answered: boot by ${boot}`);
    if (redfish.untrustedCertificate) notes.push('the BMC certificate is not trusted: set spec.bmc.disableCertificateVerification: true or give the agent its CA');
    if (redfish.authRefused !== undefined) notes.push(`${redfish.authRefused}: the system path and boot paths are unknown; probe again with --username and --password-file`);
    if (ipmi?.capabilities !== undefined) notes.push('IPMI lanplus answers too; Redfish is preferred');
    return { address, notes };
  }
  if (ipmi?.capabilities !== undefined) {
    if (!ipmi.capabilities.supportsIpmi20) notes.push('the BMC does not announce IPMI 2.0 (lanplus): rackside speaks lanplus only');
    const suites = ipmi.cipherSuites;
    if (suites !== undefined && !suites.includes(17) && !suites.includes(3)) notes.push(`no acceptable cipher suite listed (17 or 3), listed: ${suites.join(',') || 'none'}`);
    else if (suites !== undefined && !suites.includes(17)) notes.push('cipher suite 17 is not listed: pin 3 with the annotation rackside.io/ipmi-cipher-suite: "3" if negotiation fails');
    notes.push('only IPMI answered: power and PXE boot only (no virtual media)');
    return { address: `ipmi://${authority(host, ipmi.port, 623)}`, notes };
  }
  notes.push('nothing answered: neither Redfish (HTTPS, HTTP) nor IPMI lanplus (UDP)');
  return { notes };
}

/** The features list of a report, from the facts (one line per capability). */
export function featuresOf(redfish: RedfishFacts | undefined, ipmi: IpmiFacts | undefined): ProbeFeature[] {
  const out: ProbeFeature[] = [];
  const add = (name: string, supported: boolean | undefined, detail: string): void => {
    out.push({ name, supported, detail });
  };
  add('redfish', redfish !== undefined, redfish === undefined ? 'no ServiceRoot' : `${redfish.base} Redfish ${redfish.redfishVersion ?? '?'}`);
  if (redfish !== undefined) {
    add('redfish.system', redfish.systemPath !== undefined, redfish.systemPath ?? redfish.authRefused ?? 'no system listed');
    const vm = redfish.virtualMedia;
    add('redfish.virtualMedia', vm === undefined ? undefined : vm.cd, vm === undefined ? 'not read' : `${vm.slots} slot(s)${vm.cd ? ', CD/DVD' : ', no CD/DVD'}`);
    const targets = redfish.bootTargets;
    add('redfish.uefiHttp', targets === undefined ? undefined : targets.includes('UefiHttp'), targets === undefined ? 'not read' : `boot targets: ${targets.join(', ')}`);
    add('redfish.pxe', targets === undefined ? undefined : targets.includes('Pxe'), targets === undefined ? 'not read' : '');
    add('redfish.secureBoot', redfish.secureBoot, redfish.secureBoot === undefined ? 'not read' : '');
    add('redfish.bios', redfish.bios === undefined ? undefined : true, redfish.bios === undefined ? 'not read' : `${redfish.bios.attributes} attributes${redfish.bios.registry ? ', attribute registry' : ''}`);
    for (const service of ['UpdateService', 'SessionService', 'EventService'] as const) add(`redfish.${service}`, redfish.services[service], '');
  }
  const caps = ipmi?.capabilities;
  add('ipmi.lanplus', caps === undefined ? false : caps.supportsIpmi20, caps === undefined ? 'no answer' : `IPMI ${caps.supportsIpmi20 ? '2.0' : '1.5'}${caps.kgRequired ? ', BMC key (Kg) set' : ''}`);
  if (ipmi?.cipherSuites !== undefined) add('ipmi.cipherSuites', ipmi.cipherSuites.includes(17) || ipmi.cipherSuites.includes(3), ipmi.cipherSuites.join(','));
  return out;
}
