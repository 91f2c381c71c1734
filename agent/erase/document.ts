/**
 * @module The erase record document (record.ts builds it; docs/erase-records.md describes it) and
 * its one-line outcome. No imports: the status page's browser bundle reads it too.
 * @pure
 */

/** One disk of an erase record. */
export interface EraseRecordDisk {
  /** Device path in the ramdisk (`/dev/sda`, `/dev/nvme0n1`, `/dev/md0` for a kept array's volume). */
  device: string;
  serial: string | null;
  wwn: string | null;
  model: string | null;
  sizeBytes: number;
  /**
   * `metadata`; `zeroout` (blkdiscard --zeroout) or `dd-zero`; `nvme-user-erase` or
   * `nvme-crypto-erase` (NVMe Format NVM with secure erase, then read back, zeroed too when the
   * drive does not read back zeros); or `kept` (a software RAID member left alone).
   */
  method: 'metadata' | 'zeroout' | 'dd-zero' | 'nvme-user-erase' | 'nvme-crypto-erase' | 'kept';
  bytesWiped: number;
  durationSeconds: number;
  /**
   * What the ramdisk read back after wiping: sampled regions (both ends of the disk, plus random
   * blocks in mode `erase`), bytes read, and samples that were not all zeros. Null for a kept
   * member, or from a ramdisk built before read-back existed.
   */
  verification: { samples: number; bytesRead: number; nonZeroSamples: number } | null;
  status: 'ok' | 'error';
  message: string | null;
}

/** The whole record (the signed document). Field order is the document's order. */
export interface EraseRecord {
  apiVersion: 'rackside.io/v1';
  kind: 'EraseRecord';
  id: string;
  /** `agent.id` of the rack head node that ran the clean. */
  agentId: string;
  host: {
    name: string;
    namespace: string;
    uid: string;
    bootMACAddress: string | null;
    /** From the host's last inspection; null when it was never inspected. */
    system: { manufacturer: string | null; productName: string | null; serialNumber: string | null } | null;
    /** The host's provisioning state when the result came (deprovisioning, provisioning, preparing…). */
    provisioningState: string | null;
  };
  mode: 'metadata' | 'erase';
  /** Automated cleaning keeps software RAID arrays' members (IPA's `erase_devices_metadata` does too). */
  softwareRaidKept: boolean;
  /** The ramdisk command this records. */
  commandId: string;
  startedAt: string;
  finishedAt: string;
  status: 'ok' | 'error';
  message: string | null;
  disks: EraseRecordDisk[];
}

/** A record's one-line outcome, for tables and events: `3 disks wiped (erase)`, `1 of 2 disks failed`. */
export function eraseRecordOutcome(record: Pick<EraseRecord, 'mode' | 'disks' | 'status'>): string {
  const failed = record.disks.filter((d) => d.status === 'error').length;
  const kept = record.disks.filter((d) => d.method === 'kept').length;
  const wiped = record.disks.length - failed - kept;
  const plural = (n: number): string => `${n} disk${n === 1 ? '' : 's'}`;
  if (failed > 0) return `${failed} of ${plural(record.disks.length)} failed`;
  if (record.status === 'error') return 'failed';
  return `${plural(wiped)} wiped (${record.mode})${kept > 0 ? `, ${kept} RAID member${kept === 1 ? '' : 's'} kept` : ''}`;
}
