/**
 * @module Decoding what the ramdisk agent posts to `/ramdisk/v1/result`: the command's outcome,
 * its message, command-specific details (deploy: the chosen root device, bytes, checksum,
 * attempts, the config drive partition; clean: one report per disk, with the disk's identity and
 * what a read-back after the wipe found; raid: the md volumes) and the tail of the agent log,
 * which the server keeps as the host's console log.
 * @pure
 */
import { RamdiskProtocolError } from './ramdisk-protocol.js';

/** A disk as the agent reports it (IPA inventory shape, renamed to camelCase). */
export interface RamdiskDisk {
  name: string;
  sizeBytes: number;
  rotational: boolean | null;
  model: string | null;
  vendor: string | null;
  serial: string | null;
  wwn: string | null;
  wwnWithExtension: string | null;
  wwnVendorExtension: string | null;
  hctl: string | null;
  byPath: string | null;
}

/** Details of a successful deploy. */
export interface DeployResultDetails {
  rootDevice: RamdiskDisk;
  image: { url: string; bytes: number; checksumType: string; checksum: string; attempts: number };
  configDrive: { offsetBytes: number; sizeBytes: number } | null;
  durationSeconds: number;
}

/**
 * What the ramdisk read back after wiping a disk (lib-clean.sh verify_disk), past the page cache:
 * the first and the last MiB (what every clean zeroes), and in mode `erase` 16 more 4 KiB blocks
 * at random offsets of the whole disk. A sample with any byte not 0, or one that could not be
 * read whole, fails the disk.
 */
export interface CleanVerification {
  samples: number;
  bytesRead: number;
  /** Samples with a byte that is not 0. */
  nonZeroSamples: number;
}

/**
 * One disk of a clean. `wwn`, `model` and `verification` are null from a ramdisk built before
 * they existed (one still running through an upgrade) as much as for a disk without them.
 */
export interface CleanDiskReport {
  name: string;
  serial: string | null;
  /** The WWN in udev's ID_WWN_WITH_EXTENSION form (`0x5000c5001234abcd`), or another sysfs wwid as is. */
  wwn: string | null;
  /** The device's model string, trimmed. */
  model: string | null;
  sizeBytes: number;
  /** `kept`: a software RAID member an automated clean left alone (its array was cleaned instead). */
  method: 'metadata' | 'zeroout' | 'dd-zero' | 'nvme-user-erase' | 'nvme-crypto-erase' | 'kept';
  bytesWiped: number;
  durationSeconds: number;
  /** Null for a `kept` RAID member (nothing written, nothing read back). */
  verification: CleanVerification | null;
  /**
   * `error`: erasing failed, or the read-back found data (`verification found data in K of N
   * samples`) or could not read a sample whole (`verification could not read K of N samples`).
   */
  status: 'ok' | 'error';
  message: string | null;
}

/** Details of a clean. */
export interface CleanResultDetails {
  mode: 'metadata' | 'erase';
  disks: CleanDiskReport[];
}

/** Details of a raid command. */
export interface RaidResultDetails {
  volumes: { device: string; level: string; members: string[]; sizeBytes: number }[];
}

/** A decoded result. */
export interface RamdiskResult {
  commandId: string | null;
  command: string;
  status: 'ok' | 'error';
  message: string | null;
  details: DeployResultDetails | CleanResultDetails | RaidResultDetails | null;
  /** Last lines of the agent log. */
  log: string[];
}

type Rec = Record<string, unknown>;

function rec(v: unknown, what: string): Rec {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new RamdiskProtocolError(`${what} must be a JSON object`);
  return v as Rec;
}

function str(r: Rec, key: string, what: string): string {
  const v = r[key];
  if (typeof v !== 'string') throw new RamdiskProtocolError(`${what}.${key} must be a string`);
  return v;
}

function optStr(r: Rec, key: string, what: string): string | null {
  const v = r[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new RamdiskProtocolError(`${what}.${key} must be a string or null`);
  return v;
}

function num(r: Rec, key: string, what: string): number {
  const v = r[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new RamdiskProtocolError(`${what}.${key} must be a non-negative number`);
  return v;
}

function oneOf<T extends string>(r: Rec, key: string, allowed: readonly T[], what: string): T {
  const v = r[key];
  const found = allowed.find((a) => a === v);
  if (found === undefined) throw new RamdiskProtocolError(`${what}.${key} must be one of ${allowed.join(', ')}`);
  return found;
}

/** Decodes one disk object of the agent (inventory or deploy root device). */
export function decodeRamdiskDisk(v: unknown, what = 'disk'): RamdiskDisk {
  const r = rec(v, what);
  const rotational = r.rotational;
  if (rotational !== null && rotational !== undefined && typeof rotational !== 'boolean') throw new RamdiskProtocolError(`${what}.rotational must be a boolean or null`);
  return {
    name: str(r, 'name', what),
    sizeBytes: num(r, 'size', what),
    rotational: typeof rotational === 'boolean' ? rotational : null,
    model: optStr(r, 'model', what),
    vendor: optStr(r, 'vendor', what),
    serial: optStr(r, 'serial', what),
    wwn: optStr(r, 'wwn', what),
    wwnWithExtension: optStr(r, 'wwn_with_extension', what),
    wwnVendorExtension: optStr(r, 'wwn_vendor_extension', what),
    hctl: optStr(r, 'hctl', what),
    byPath: optStr(r, 'by_path', what),
  };
}

function decodeDeploy(v: unknown): DeployResultDetails {
  const r = rec(v, 'details');
  const image = rec(r.image, 'details.image');
  const cd = r.config_drive === null || r.config_drive === undefined ? null : rec(r.config_drive, 'details.config_drive');
  return {
    rootDevice: decodeRamdiskDisk(r.root_device, 'details.root_device'),
    image: {
      url: str(image, 'url', 'details.image'),
      bytes: num(image, 'bytes', 'details.image'),
      checksumType: str(image, 'checksum_type', 'details.image'),
      checksum: str(image, 'checksum', 'details.image'),
      attempts: num(image, 'attempts', 'details.image'),
    },
    configDrive: cd === null ? null : { offsetBytes: num(cd, 'offset_bytes', 'details.config_drive'), sizeBytes: num(cd, 'size_bytes', 'details.config_drive') },
    durationSeconds: num(r, 'duration_seconds', 'details'),
  };
}

/** Absent (an older ramdisk) or null → null; otherwise every count must be there. */
function decodeVerification(r: Rec, what: string): CleanVerification | null {
  if (r.verification === null || r.verification === undefined) return null;
  const w = `${what}.verification`;
  const x = rec(r.verification, w);
  return { samples: num(x, 'samples', w), bytesRead: num(x, 'bytes_read', w), nonZeroSamples: num(x, 'nonzero_samples', w) };
}

function decodeClean(v: unknown): CleanResultDetails {
  const r = rec(v, 'details');
  if (!Array.isArray(r.disks)) throw new RamdiskProtocolError('details.disks must be a list');
  return {
    mode: oneOf(r, 'mode', ['metadata', 'erase'] as const, 'details'),
    disks: r.disks.map((d: unknown, i) => {
      const what = `details.disks[${i}]`;
      const x = rec(d, what);
      return {
        name: str(x, 'name', what),
        serial: optStr(x, 'serial', what),
        wwn: optStr(x, 'wwn', what),
        model: optStr(x, 'model', what),
        sizeBytes: num(x, 'size', what),
        method: oneOf(x, 'method', ['metadata', 'zeroout', 'dd-zero', 'nvme-user-erase', 'nvme-crypto-erase', 'kept'] as const, what),
        bytesWiped: num(x, 'bytes_wiped', what),
        durationSeconds: num(x, 'duration_seconds', what),
        verification: decodeVerification(x, what),
        status: oneOf(x, 'status', ['ok', 'error'] as const, what),
        message: optStr(x, 'message', what),
      };
    }),
  };
}

function decodeRaid(v: unknown): RaidResultDetails {
  const r = rec(v, 'details');
  if (!Array.isArray(r.volumes)) throw new RamdiskProtocolError('details.volumes must be a list');
  return {
    volumes: r.volumes.map((vol: unknown, i) => {
      const what = `details.volumes[${i}]`;
      const x = rec(vol, what);
      if (!Array.isArray(x.members) || !x.members.every((m) => typeof m === 'string')) throw new RamdiskProtocolError(`${what}.members must be a list of strings`);
      return { device: str(x, 'device', what), level: str(x, 'level', what), members: x.members, sizeBytes: num(x, 'size', what) };
    }),
  };
}

/**
 * Decodes a result body (already JSON-parsed); throws {@link RamdiskProtocolError} naming the
 * first wrong field. Details are decoded for ok results of deploy, clean and raid, and for clean
 * errors (which still carry the per-disk report).
 */
export function decodeRamdiskResult(body: unknown): RamdiskResult {
  const r = rec(body, 'result');
  const command = str(r, 'command', 'result');
  const status = oneOf(r, 'status', ['ok', 'error'] as const, 'result');
  const log = r.log ?? [];
  if (!Array.isArray(log) || !log.every((l) => typeof l === 'string')) throw new RamdiskProtocolError('result.log must be a list of strings');
  let details: RamdiskResult['details'] = null;
  if (r.details !== null && r.details !== undefined) {
    if (command === 'deploy' && status === 'ok') details = decodeDeploy(r.details);
    else if (command === 'clean') details = decodeClean(r.details);
    else if (command === 'raid' && status === 'ok') details = decodeRaid(r.details);
  }
  return { commandId: optStr(r, 'command_id', 'result'), command, status, message: optStr(r, 'message', 'result'), details, log: log };
}
