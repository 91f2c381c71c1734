/**
 * @module Text of the erase record commands: the `get erase-records` table and the `describe
 * erase-record` page.
 * @pure
 */
import { eraseRecordOutcome, type EraseRecord } from '../erase/record.js';
import { formatAge, formatBytes, renderFields, renderTable } from './table.js';

/** Columns of `rackside get erase-records`. */
export const ERASE_RECORD_HEADERS = ['ID', 'HOST', 'SERIAL', 'MODE', 'DISKS', 'RESULT', 'FINISHED'] as const;

/** The table of `rackside get erase-records`. */
export function renderEraseRecordsTable(records: readonly EraseRecord[], nowMs: number): string {
  return renderTable(ERASE_RECORD_HEADERS, records.map((r) => [
    r.id, r.host.name, r.host.system?.serialNumber ?? '', r.mode, String(r.disks.length), eraseRecordOutcome(r), formatAge(r.finishedAt, nowMs),
  ]));
}

function verificationText(v: EraseRecord['disks'][number]['verification']): string {
  if (v === null) return '-';
  return v.nonZeroSamples === 0 ? `${v.samples} samples zero` : `${v.nonZeroSamples} of ${v.samples} samples not zero`;
}

/** The page of `rackside describe erase-record ID`; `fingerprint` is the agent's signing key. */
export function renderEraseRecordDescription(r: EraseRecord, fingerprint: string | undefined): string {
  const system = r.host.system;
  let text = renderFields([
    ['ID', r.id],
    ['Host', `${r.host.namespace}/${r.host.name} (uid ${r.host.uid})`],
    ['System', system === null ? '<not inspected>' : [system.manufacturer, system.productName, system.serialNumber === null ? null : `serial ${system.serialNumber}`].filter((s) => s !== null && s !== '').join(', ') || '<unknown>'],
    ['Boot MAC', r.host.bootMACAddress ?? '<none>'],
    ['State', r.host.provisioningState ?? '<unknown>'],
    ['Mode', `${r.mode}${r.softwareRaidKept ? ' (software RAID kept)' : ''}`],
    ['Started', r.startedAt],
    ['Finished', r.finishedAt],
    ['Result', `${r.status}: ${eraseRecordOutcome(r)}${r.message === null || r.message === '' ? '' : ` — ${r.message}`}`],
    ['Agent', r.agentId],
    ['Signed by', fingerprint ?? '<unknown>'],
  ]);
  text += r.disks.length === 0 ? 'Disks:     <none>\n' : 'Disks:\n' + renderTable(['DEVICE', 'SERIAL', 'WWN', 'MODEL', 'SIZE', 'METHOD', 'WIPED', 'SECONDS', 'READ-BACK', 'STATUS'], r.disks.map((d) => [
    d.device, d.serial ?? '', d.wwn ?? '', d.model ?? '', formatBytes(d.sizeBytes), d.method, formatBytes(d.bytesWiped), String(d.durationSeconds),
    verificationText(d.verification), d.status === 'ok' ? 'ok' : `error: ${d.message ?? ''}`,
  ]), '  ');
  return text;
}
