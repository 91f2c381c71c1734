/**
 * @module Erase records: what rackside keeps of every disk clean it ran, as a document an
 * auditor can check without rackside. One record per clean command (automated cleaning before a
 * deploy or on deprovision, and the clean before a software RAID is built): which host (name,
 * uid, boot MAC, the system's vendor, model and serial from inspection; not the BMC address,
 * which never leaves the rack, docs/sync-wire-format.md), which mode
 * (`metadata`: signatures, partition tables and both ends of every disk, like IPA's
 * `erase_devices_metadata`; `erase`: the whole disk zeroed), and per disk its identity (device,
 * serial, WWN, model, size), the method, the bytes wiped, the time taken, the ramdisk's read-back
 * sample and the outcome. A failed clean is recorded too: the record says what failed.
 *
 * The record is kept as the exact text it was signed as ({@link encodeEraseRecord}), and signed
 * with OpenSSH's SSHSIG format in the namespace {@link ERASE_RECORD_NAMESPACE}, so
 * `ssh-keygen -Y verify` checks it (docs/erase-records.md). Records outlive their host: an RMA
 * or resale audit asks for them after the host is gone.
 * @pure
 */
import { createHash } from 'node:crypto';
import type { CleanDiskReport, CleanResultDetails } from '../../images/index.js';
import type { EraseRecord, EraseRecordDisk } from './document.js';

export { eraseRecordOutcome, type EraseRecord, type EraseRecordDisk } from './document.js';

/** The SSHSIG namespace of erase record signatures (PROTOCOL.sshsig: binds a signature to its purpose). */
export const ERASE_RECORD_NAMESPACE = 'rackside-erase-record';

/** Record ids: `er-` and 16 hex digits. */
export const ERASE_RECORD_ID = /^er-[0-9a-f]{16}$/;

/** What {@link buildEraseRecord} needs. */
export interface EraseRecordInput {
  agentId: string;
  host: EraseRecord['host'];
  commandId: string;
  softwareRaidKept: boolean;
  startedAt: Date;
  finishedAt: Date;
  status: 'ok' | 'error';
  message: string | null;
  details: CleanResultDetails;
}

/** The record id of one host's clean command: stable, so a result posted twice is one record. */
export function eraseRecordId(hostUid: string, commandId: string): string {
  return `er-${createHash('sha256').update(`${hostUid}\0${commandId}`).digest('hex').slice(0, 16)}`;
}

function diskOf(d: CleanDiskReport): EraseRecordDisk {
  return {
    device: d.name,
    serial: d.serial,
    wwn: d.wwn,
    model: d.model,
    sizeBytes: d.sizeBytes,
    method: d.method,
    bytesWiped: d.bytesWiped,
    durationSeconds: d.durationSeconds,
    verification: d.verification,
    status: d.status,
    message: d.message,
  };
}

/** Builds the record of one clean's result. */
export function buildEraseRecord(input: EraseRecordInput): EraseRecord {
  return {
    apiVersion: 'rackside.io/v1',
    kind: 'EraseRecord',
    id: eraseRecordId(input.host.uid, input.commandId),
    agentId: input.agentId,
    host: input.host,
    mode: input.details.mode,
    softwareRaidKept: input.softwareRaidKept,
    commandId: input.commandId,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
    status: input.status,
    message: input.message,
    disks: input.details.disks.map(diskOf),
  };
}

/**
 * The record as the text that is signed, stored and served byte for byte: JSON, two-space
 * indented, one trailing newline. A verifier checks these bytes, never a re-encoding.
 */
export function encodeEraseRecord(record: EraseRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}
