/**
 * @module Turns a ramdisk's clean result into a signed erase record (record.ts, book.ts): the
 * ramdisk API (agent/provisioner/local/ramdisk-service.ts) calls {@link EraseRecorder} before it
 * marks the clean done and acknowledges the result, so a crash in between loses nothing — the
 * ramdisk posts the result again and the record's stable id makes the second write a no-op.
 */
import type { CleanResultDetails } from '../../images/index.js';
import type { BareMetalHost } from '../host/types.js';
import type { EraseRecordBook } from './book.js';
import { buildEraseRecord, type EraseRecord } from './record.js';

/** One clean result, as the ramdisk API has it. */
export interface CleanResultInput {
  hostUid: string;
  hostName: string;
  commandId: string;
  /** When the clean operation started, steady epoch milliseconds (agent/clock.ts). */
  startedAtMs: number;
  softwareRaidKept: boolean;
  status: 'ok' | 'error';
  message: string | null;
  /** The per-disk reports; null when the ramdisk failed before cleaning any disk. */
  details: CleanResultDetails | null;
  /** The mode the clean was asked for (the record's mode when details are missing). */
  requestedMode: CleanResultDetails['mode'];
}

/**
 * Records one clean result; resolves to the record and whether this call added it (false: the
 * same result was recorded before); rejects when the record could not be written.
 */
export type EraseRecorder = (input: CleanResultInput) => Promise<{ record: EraseRecord; added: boolean }>;

/** Options of {@link createEraseRecorder}. */
export interface EraseRecorderOptions {
  book: EraseRecordBook;
  getHost: (name: string) => Promise<BareMetalHost | undefined>;
  agentId: string;
  /** Wall clock, epoch milliseconds (the record's timestamps are for people). */
  wallNowMs: () => number;
  /** Steady clock, epoch milliseconds (what `startedAtMs` is in). */
  steadyNowMs: () => number;
}

function hostOf(input: CleanResultInput, host: BareMetalHost | undefined): EraseRecord['host'] {
  const vendor = host?.status.hardware?.systemVendor;
  return {
    name: input.hostName,
    namespace: host?.metadata.namespace ?? 'default',
    uid: input.hostUid,
    bootMACAddress: host?.spec.bootMACAddress ?? null,
    system: vendor === undefined ? null : {
      manufacturer: vendor.manufacturer ?? null,
      productName: vendor.productName ?? null,
      serialNumber: vendor.serialNumber ?? null,
    },
    provisioningState: host?.status.provisioning.state ?? null,
  };
}

/** Creates the recorder the ramdisk API calls for every clean result. */
export function createEraseRecorder(options: EraseRecorderOptions): EraseRecorder {
  return async (input) => {
    const host = await options.getHost(input.hostName);
    const wallMs = options.wallNowMs();
    const elapsedMs = Math.max(0, options.steadyNowMs() - input.startedAtMs);
    const record = buildEraseRecord({
      agentId: options.agentId,
      host: hostOf(input, host?.metadata.uid === input.hostUid ? host : undefined),
      commandId: input.commandId,
      softwareRaidKept: input.softwareRaidKept,
      startedAt: new Date(wallMs - elapsedMs),
      finishedAt: new Date(wallMs),
      status: input.status,
      message: input.message,
      details: input.details ?? { mode: input.requestedMode, disks: [] },
    });
    return { record, added: (await options.book.add(record)) === 'added' };
  };
}
