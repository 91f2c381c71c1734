/**
 * @module What `rackside get` and `rackside describe` print: the hosts table (kubectl's
 * `get bmh` columns plus POWERED; `-o wide` adds STATUS, BMC, BOOTMAC and metal3's spec.description), secrets and events tables, `-o json|yaml|name`, and the
 * describe view of one host (spec summary, status, the diagnosis of the status page's host view,
 * hardware, firmware (render-firmware.ts), operation history with durations, recent events). Time comes in as `nowMs`.
 * @pure
 */
import { stringify } from 'yaml';
import type { HostFirmware } from '../host/firmware-types.js';
import type { BareMetalHost, OperationMetric } from '../host/types.js';
import type { StoredEvent } from '../store/types.js';
import type { SecretSummary } from '../web/backend.js';
import type { Finding } from '../web/ui/diagnosis.js';
import { switchPort } from '../web/ui/host-model.js';
import { renderFirmwareSection } from './render-firmware.js';
import { formatAge, formatBytes, humanDuration, renderFields, renderTable } from './table.js';

/** `-o` values. `table` is the default; `wide` adds columns. */
export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name';
/** Every `-o` value a user may type. */
export const OUTPUT_FORMATS = ['wide', 'json', 'yaml', 'name'] as const;

/** The resource prefix of `-o name` and apply/delete messages (kubectl's `<resource>.<group>`). */
export const HOST_RESOURCE = 'baremetalhost.metal3.io';

const HOST_HEADERS = ['NAME', 'STATE', 'CONSUMER', 'ONLINE', 'POWERED', 'ERROR', 'AGE'];
const HOST_WIDE_HEADERS = ['NAME', 'STATUS', 'STATE', 'CONSUMER', 'BMC', 'BOOTMAC', 'ONLINE', 'POWERED', 'ERROR', 'AGE', 'DESCRIPTION'];

function hostCells(h: BareMetalHost, nowMs: number, wide: boolean): string[] {
  const consumer = h.spec.consumerRef?.name ?? '';
  const error = h.status.errorType ?? '';
  // The narrow table has no STATUS column: a host being serviced says so in STATE.
  const state = !wide && h.status.operationalStatus === 'servicing' ? `${h.status.provisioning.state} (servicing)` : h.status.provisioning.state;
  const common = { state, online: String(h.spec.online), powered: String(h.status.poweredOn) };
  const age = formatAge(h.metadata.creationTimestamp, nowMs);
  if (!wide) return [h.metadata.name, common.state, consumer, common.online, common.powered, error, age];
  return [
    h.metadata.name, h.status.operationalStatus, common.state, consumer, h.spec.bmc?.address ?? '',
    h.spec.bootMACAddress ?? '', common.online, common.powered, error, age, h.spec.description ?? '',
  ];
}

/** The `get hosts` table. */
export function renderHostsTable(hosts: readonly BareMetalHost[], nowMs: number, wide: boolean): string {
  return renderTable(wide ? HOST_WIDE_HEADERS : HOST_HEADERS, hosts.map((h) => hostCells(h, nowMs, wide)));
}

/** The `get secrets` table (key names are counted, never shown with values). */
export function renderSecretsTable(secrets: readonly SecretSummary[]): string {
  return renderTable(['NAMESPACE', 'NAME', 'TYPE', 'DATA'], secrets.map((s) => [s.namespace, s.name, s.type ?? '', String(s.keys.length)]));
}

/** Headers of the events table. */
export const EVENT_HEADERS = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];

/** One events-table row. */
export function eventCells(e: StoredEvent, nowMs: number): string[] {
  const object = e.host !== undefined ? `baremetalhost/${e.host}` : e.mac !== undefined ? `mac/${e.mac}` : e.source;
  return [formatAge(e.time, nowMs), e.type, e.reason, object, e.message];
}

/** Serializes objects for `-o json|yaml|name`; lists become a kubectl `List`. */
export function renderObjects(format: 'json' | 'yaml' | 'name', items: readonly unknown[], single: boolean, nameOf: (item: unknown) => string): string {
  if (format === 'name') return items.map((i) => `${nameOf(i)}\n`).join('');
  const value = single ? items[0] : { apiVersion: 'v1', kind: 'List', items };
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 });
}

function orNone(text: string | undefined): string {
  return text === undefined || text === '' ? '<none>' : text;
}

function mapText(map: Record<string, string> | undefined): string {
  const entries = Object.entries(map ?? {});
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${v}`).join(', ');
}

/** `start → end` of an operation as START, END, DURATION cells (`running` while unfinished). */
function operationCells(name: string, m: OperationMetric, nowMs: number): string[] {
  const start = Date.parse(m.start);
  const end = Date.parse(m.end);
  // Sub-second operations (fixture and demo provisioners) show milliseconds rather than "0s".
  const span = (ms: number): string => (ms >= 0 && ms < 1000 ? `${Math.round(ms)}ms` : humanDuration(ms));
  const duration = Number.isNaN(start) ? '' : Number.isNaN(end) ? `${span(nowMs - start)} (running)` : span(end - start);
  return [name, m.start === '' ? '-' : m.start, m.end === '' ? '-' : m.end, duration === '' ? '-' : duration];
}

function renderHardware(h: BareMetalHost): string {
  const hw = h.status.hardware;
  if (hw === undefined) return 'Hardware:  <not inspected>\n';
  const sys = hw.systemVendor;
  const bios = hw.firmware.bios;
  const cpu = hw.cpu;
  const cpuParts = [cpu.model, cpu.count === undefined ? undefined : `${cpu.count} x ${cpu.arch ?? '?'}`, cpu.clockMegahertz === undefined ? undefined : `${cpu.clockMegahertz} MHz`];
  let text = 'Hardware:\n' + renderFields([
    ['System', [sys.manufacturer, sys.productName].filter(Boolean).join(' ') + (sys.serialNumber === undefined ? '' : ` (serial ${sys.serialNumber})`)],
    ['Firmware', orNone([bios.vendor, bios.version, bios.date === undefined ? undefined : `(${bios.date})`].filter(Boolean).join(' '))],
    ['CPU', orNone(cpuParts.filter(Boolean).join(', '))],
    ['RAM', hw.ramMebibytes === undefined ? '<unknown>' : `${hw.ramMebibytes} MiB`],
    ['Hostname', orNone(hw.hostname)],
  ], '  ');
  const nics = hw.nics ?? [];
  text += nics.length === 0 ? '  NICs:      <none>\n' : '  NICs:\n' + renderTable(['NAME', 'MAC', 'IP', 'SPEED', 'PXE', 'SWITCH / PORT'], nics.map((n) => [
    n.name ?? '', n.mac ?? '', n.ip ?? '', n.speedGbps === undefined ? '' : `${n.speedGbps} Gbps`, n.pxe === true ? 'yes' : 'no', switchPort(n),
  ]), '    ');
  const disks = hw.storage ?? [];
  text += disks.length === 0 ? '  Storage:   <none>\n' : '  Storage:\n' + renderTable(['NAME', 'TYPE', 'SIZE', 'MODEL', 'SERIAL'], disks.map((d) => [
    d.name ?? '', d.type ?? '', formatBytes(d.sizeBytes), d.model ?? '', d.serialNumber ?? '',
  ]), '    ');
  return text;
}

/** The diagnosis (agent/web/ui/diagnosis.ts, as on the host page): one line per finding, its detail below. */
function renderDiagnosis(findings: readonly Finding[]): string {
  if (findings.length === 0) return 'Diagnosis:  <nothing found>\n';
  return 'Diagnosis:\n' + findings.map((f) => `  ${f.severity.toUpperCase()}: ${f.title}\n    ${f.detail}\n`).join('');
}

/**
 * The `describe host` view. `events` are this host's recent events, oldest first; `firmware`
 * (when the agent has it) adds the Firmware section.
 */
export function renderHostDescription(h: BareMetalHost, events: readonly StoredEvent[], nowMs: number, firmware?: HostFirmware, findings: readonly Finding[] = []): string {
  const { metadata: meta, spec, status } = h;
  const image = spec.image === undefined ? '<none>'
    : `${spec.image.url}${spec.image.format === undefined ? '' : ` (${spec.image.format})`}${spec.image.checksum === undefined ? '' : ` checksum ${spec.image.checksumType ?? 'auto'}`}`;
  const hints = Object.entries(spec.rootDeviceHints ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(', ');
  const consumer = spec.consumerRef === undefined ? '' : `${spec.consumerRef.kind ?? ''}/${spec.consumerRef.name ?? ''}`;
  const error = status.errorType === undefined || status.errorType === ''
    ? (status.errorMessage === '' ? '<none>' : status.errorMessage)
    : `${status.errorType} (count ${status.errorCount}): ${status.errorMessage}`;
  let text = renderFields([
    ['Name', meta.name],
    ['Namespace', meta.namespace],
    ['UID', meta.uid],
    ['Resource Version', meta.resourceVersion],
    ['Created', `${meta.creationTimestamp} (${formatAge(meta.creationTimestamp, nowMs)} ago)`],
    ...(meta.deletionTimestamp === undefined ? [] : [['Deletion Requested', `${meta.deletionTimestamp} (${formatAge(meta.deletionTimestamp, nowMs)} ago)`] as const]),
    ['Labels', mapText(meta.labels)],
    ['Annotations', mapText(meta.annotations)],
  ]);
  text += 'Spec:\n' + renderFields([
    ['Online', String(spec.online)],
    ['BMC Address', orNone(spec.bmc?.address)],
    ['BMC Credentials', orNone(spec.bmc?.credentialsName)],
    ['Boot MAC Address', orNone(spec.bootMACAddress)],
    ['Boot Mode', spec.bootMode ?? 'UEFI'],
    ['Image', image],
    ...(spec.customDeploy === undefined ? [] : [['Custom Deploy', spec.customDeploy.method] as const]),
    ['Root Device Hints', orNone(hints)],
    ['Automated Cleaning', spec.automatedCleaningMode ?? 'metadata'],
    ['Externally Provisioned', String(spec.externallyProvisioned ?? false)],
    ['Consumer', orNone(consumer)],
    ...(spec.description === undefined ? [] : [['Description', spec.description] as const]),
  ], '  ');
  text += 'Status:\n' + renderFields([
    ['Provisioning State', orNone(status.provisioning.state)],
    ['Operational Status', orNone(status.operationalStatus)],
    ['Powered On', String(status.poweredOn)],
    ['Provisioning ID', orNone(status.provisioning.ID)],
    ['Provisioned Image', orNone(status.provisioning.image.url)],
    ['Error', error],
    ['Last Updated', orNone(status.lastUpdated)],
  ], '  ');
  text += renderDiagnosis(findings);
  text += renderHardware(h);
  if (firmware !== undefined) text += renderFirmwareSection(firmware);
  const history = status.operationHistory;
  text += 'Operation History:\n' + renderTable(['OPERATION', 'START', 'END', 'DURATION'], [
    operationCells('register', history.register, nowMs),
    operationCells('inspect', history.inspect, nowMs),
    operationCells('provision', history.provision, nowMs),
    operationCells('deprovision', history.deprovision, nowMs),
  ], '  ');
  text += events.length === 0 ? 'Events:  <none>\n' : 'Events:\n' + renderTable(['LAST SEEN', 'TYPE', 'REASON', 'SOURCE', 'MESSAGE'],
    events.map((e) => [formatAge(e.time, nowMs), e.type, e.reason, e.source, e.message]), '  ');
  return text;
}
