/**
 * @module The host page's data sections: spec and status as description lists, the operation
 * history with durations, hardware details as tables (system, CPU, NICs, disks), the events
 * table, and the diagnosis list. All text is inserted as text.
 */
import { eraseRecordOutcome, type EraseRecord } from '../../../erase/document.js';
import type { BareMetalHost, HardwareDetails } from '../../../host/types.js';
import type { StoredEvent } from '../../../store/types.js';
import type { Finding } from '../diagnosis.js';
import { formatDuration, operationRows, switchPort } from '../host-model.js';
import { formatBytes } from '../status-report.js';
import { h, timeElement, type Child } from './dom.mjs';

/** A titled section card. */
export function section(id: string, title: string, ...body: (Child | readonly Child[])[]): HTMLElement {
  return h('section', { class: 'section', id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title), ...body);
}

/** A description list from `[term, value]` pairs; empty values show `—`. */
export function descriptionList(entries: readonly (readonly [string, Child])[]): HTMLElement {
  return h('dl', {}, entries.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value === undefined || value === null || value === '' || value === false ? '—' : value)]));
}

function table(caption: string, headers: readonly string[], rows: readonly (readonly Child[])[], numeric: readonly number[] = []): HTMLElement {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((text) => h('th', { scope: 'col' }, text)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'None'))
      : rows.map((cells) => h('tr', {}, cells.map((cell, i) => h('td', numeric.includes(i) ? { class: 'num' } : {}, cell ?? '—')))))));
}

/** `spec` of the host. */
export function specSection(host: BareMetalHost): HTMLElement {
  const spec = host.spec;
  return section('spec', 'Spec', descriptionList([
    // metal3's free-text spec.description, as the operator wrote it.
    ['Description', spec.description ?? ''],
    ['Online', spec.online ? 'yes' : 'no'],
    ['Boot MAC', spec.bootMACAddress === undefined ? '' : h('span', { class: 'mono' }, spec.bootMACAddress)],
    ['BMC', spec.bmc === undefined ? '' : h('span', { class: 'mono' }, spec.bmc.address)],
    ['Credentials', spec.bmc?.credentialsName ?? ''],
    ['Boot mode', spec.bootMode ?? 'UEFI'],
    ['Image', spec.image === undefined ? '' : h('span', { class: 'mono' }, spec.image.url)],
    ['Checksum', spec.image?.checksum ?? ''],
    ['Custom deploy', spec.customDeploy?.method ?? ''],
    ['Root device hints', spec.rootDeviceHints === undefined ? '' : h('span', { class: 'mono' }, JSON.stringify(spec.rootDeviceHints))],
    ['Cleaning', cleaningText(host)],
    ['Architecture', spec.architecture ?? ''],
    ['Externally provisioned', spec.externallyProvisioned === true ? 'yes' : ''],
  ]));
}

/** `status` of the host (besides hardware and history). */
export function statusSection(host: BareMetalHost): HTMLElement {
  const st = host.status;
  return section('status', 'Status', descriptionList([
    ['Provisioning state', st.provisioning.state === '' ? 'new' : st.provisioning.state],
    ['Operational status', st.operationalStatus],
    ['Powered on', st.poweredOn ? 'yes' : 'no'],
    ['Error', st.errorMessage === '' ? '' : h('span', { 'data-testid': 'status-error' }, `${st.errorType ?? ''}: ${st.errorMessage}`)],
    ['Error count', st.errorCount === 0 ? '' : String(st.errorCount)],
    ['Provisioned image', st.provisioning.image.url === '' ? '' : h('span', { class: 'mono' }, st.provisioning.image.url)],
    ['Provisioner ID', st.provisioning.ID],
    ['Hardware profile', st.hardwareProfile],
    ['Good credentials', st.goodCredentials.credentials?.name ?? ''],
    ['Last updated', timeElement(st.lastUpdated)],
    ['Deletion requested', host.metadata.deletionTimestamp === undefined ? '' : timeElement(host.metadata.deletionTimestamp)],
  ]));
}

/** Automated cleaning as it will run: disabled, metadata, or the annotation's whole-disk erase. */
function cleaningText(host: BareMetalHost): string {
  if (host.spec.automatedCleaningMode === 'disabled') return 'disabled';
  return host.metadata.annotations?.['rackside.io/cleaning-mode'] === 'erase' ? 'erase (every disk zeroed whole)' : 'metadata';
}

/**
 * The host's erase records (newest first): when, mode, disks, outcome, and links to the signed
 * text and its signature (`ssh-keygen -Y verify` checks them; docs/erase-records.md).
 */
export function eraseRecordsSection(records: readonly EraseRecord[]): HTMLElement {
  const link = (href: string, text: string): HTMLElement => h('a', { href, class: 'mono' }, text);
  return section('erase-records', 'Erase records', table('Signed records of every disk clean, newest first', ['Finished', 'Mode', 'Disks', 'Result', 'Record'],
    records.map((r) => [
      timeElement(r.finishedAt), r.mode, String(r.disks.length),
      h('span', r.status === 'ok' ? {} : { class: 'error' }, eraseRecordOutcome(r)),
      h('span', {}, link(`/api/v1/erase-records/${r.id}`, r.id), ' · ', link(`/api/v1/erase-records/${r.id}/signature`, 'signature')),
    ]), [2]));
}

/** The operation history table. */
export function historySection(host: BareMetalHost, nowMs: number): HTMLElement {
  return section('history', 'Operation history', table('Operations and how long they took', ['Operation', 'Started', 'Ended', 'Duration'],
    operationRows(host.status.operationHistory, nowMs).map((row) => [row.operation, timeElement(row.start), timeElement(row.end), row.duration]), [3]));
}

function hardwareTables(hw: HardwareDetails): HTMLElement[] {
  const cpu = hw.cpu;
  return [
    descriptionList([
      ['Vendor', hw.systemVendor.manufacturer ?? ''],
      ['Product', hw.systemVendor.productName ?? ''],
      ['Serial', hw.systemVendor.serialNumber ?? ''],
      ['BIOS', [hw.firmware.bios.vendor, hw.firmware.bios.version, hw.firmware.bios.date].filter((x) => x !== undefined && x !== '').join(' · ')],
      ['CPU', [cpu.count === undefined ? undefined : `${cpu.count} ×`, cpu.model, cpu.arch, cpu.clockMegahertz === undefined ? undefined : `${cpu.clockMegahertz} MHz`].filter((x) => x !== undefined).join(' ')],
      ['Memory', hw.ramMebibytes === undefined ? '' : `${(hw.ramMebibytes / 1024).toFixed(hw.ramMebibytes % 1024 === 0 ? 0 : 1)} GiB`],
      ['Hostname', hw.hostname ?? ''],
    ]),
    table('Network interfaces', ['Name', 'MAC', 'IP', 'Speed', 'PXE', 'Model', 'Switch / port'],
      (hw.nics ?? []).map((n) => [n.name ?? '', h('span', { class: 'mono' }, n.mac ?? ''), n.ip ?? '', n.speedGbps === undefined ? '' : `${n.speedGbps} Gb/s`, n.pxe === true ? 'yes' : 'no', n.model ?? '', switchPort(n)]), [3]),
    table('Disks', ['Name', 'Type', 'Size', 'Model', 'Serial', 'Rotational'],
      (hw.storage ?? []).map((d) => [h('span', { class: 'mono' }, d.name ?? ''), d.type ?? '', d.sizeBytes === undefined ? '' : formatBytes(d.sizeBytes), [d.vendor, d.model].filter((x) => x !== undefined).join(' '), d.serialNumber ?? '', d.rotational === true ? 'yes' : 'no']), [2]),
  ];
}

/** Hardware details, or a note that inspection has not run. */
export function hardwareSection(host: BareMetalHost): HTMLElement {
  const hw = host.status.hardware;
  return section('hardware', 'Hardware', hw === undefined ? h('p', { class: 'muted' }, 'Not inspected yet.') : hardwareTables(hw));
}

/** The events table, newest first, at most `limit` rows. */
export function eventsSection(events: readonly StoredEvent[], limit: number): HTMLElement {
  const newest = [...events].sort((a, b) => b.seq - a.seq).slice(0, limit);
  return section('events', 'Events', h('div', { class: 'table-wrap' }, h('table', { class: 'data', 'data-testid': 'events' },
    h('caption', { class: 'visually-hidden' }, 'Events, newest first'),
    h('thead', {}, h('tr', {}, ['Time', 'Type', 'Source', 'Reason', 'Message'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, newest.length === 0
      ? h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No events yet.'))
      : newest.map((e) => h('tr', { 'data-type': e.type, 'data-seq': e.seq },
        h('td', { class: 'num' }, timeElement(e.time)), h('td', {}, e.type), h('td', {}, e.source), h('td', {}, e.reason), h('td', {}, e.message)))))));
}

/** The diagnosis findings, or an all-clear line. */
export function diagnosisSection(findings: readonly Finding[], nowMs: number): HTMLElement {
  return section('diagnosis', 'Diagnosis', findings.length === 0
    ? h('p', { class: 'all-clear' }, 'No problem found in the host status or its boot timeline.')
    : h('ul', { class: 'findings', 'data-testid': 'findings' }, findings.map((f) => h('li', { class: 'finding', 'data-severity': f.severity, 'data-rule': f.rule },
      h('strong', {}, h('span', { class: 'visually-hidden' }, `${f.severity}: `), f.title),
      h('p', {}, f.detail),
      f.atMs === undefined ? null : h('p', { class: 'muted' }, `${formatDuration(nowMs - f.atMs)} ago`)))));
}
