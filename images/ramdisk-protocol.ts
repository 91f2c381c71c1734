/**
 * @module The wire protocol between rackside's boot HTTP server and the in-ramdisk agent
 * (images/ramdisk/rackside-agent.sh), seen from the server: endpoint paths, the heartbeat
 * body the agent sends, and the line-based answer it understands. The answer is `KEY=VALUE`
 * lines rather than JSON because the agent is POSIX sh on busybox and must parse it without
 * evaluating anything.
 * @pure
 */

/** Path prefix of every ramdisk endpoint on the boot HTTP server. */
export const RAMDISK_API_PREFIX = '/ramdisk/v1';

/** Endpoints the agent POSTs to, each with `Authorization: Bearer <token>` and a JSON body. */
export const RamdiskEndpoint = {
  heartbeat: `${RAMDISK_API_PREFIX}/heartbeat`,
  inventory: `${RAMDISK_API_PREFIX}/inventory`,
  result: `${RAMDISK_API_PREFIX}/result`,
  /** The discovery ramdisk's one report (agent/discovery/discovery-routes.ts, images/ramdisk/lib-discovery.sh). */
  discovery: `${RAMDISK_API_PREFIX}/discovery`,
} as const;

/**
 * Commands the agent executes; anything else is answered with an error result. `report` is not
 * an operation: it asks the agent to post its saved inventory or result of `command_id` again
 * (sent when a heartbeat names the current command as done but its report never arrived — the
 * agent gave up retrying while rackside was down).
 */
export const RAMDISK_COMMANDS = ['none', 'inspect', 'deploy', 'clean', 'raid', 'poweroff', 'reboot', 'report'] as const;

/** A command the agent executes. */
export type RamdiskCommandName = (typeof RAMDISK_COMMANDS)[number];

/**
 * Root device hints with metal3's field names (`spec.rootDeviceHints`); the agent matches them
 * with ironic-lib's rules (see root-device-hints.ts).
 */
export interface RootDeviceHints {
  /** `/dev/sda`, or a `/dev/disk/by-path/…` link (sent as the by_path hint). */
  deviceName?: string;
  hctl?: string;
  model?: string;
  vendor?: string;
  serialNumber?: string;
  /** Disk bytes / 2^30 ≥ this (ironic-lib divides by GiB although the field says gigabytes). */
  minSizeGigabytes?: number;
  wwn?: string;
  wwnWithExtension?: string;
  wwnVendorExtension?: string;
  rotational?: boolean;
}

/** Parameters of `deploy`. */
export interface DeployParams {
  /** Plain `http://` URL of the raw image (rackside's image cache). */
  imageUrl: string;
  checksum: string;
  checksumType: 'md5' | 'sha256' | 'sha512';
  /** Exact size of the image; lets the agent refuse an image that does not fit before writing. */
  imageSizeBytes?: number;
  rootDeviceHints?: RootDeviceHints;
  /** Write to the first software RAID volume (`/dev/md0`) instead of a hinted disk. */
  raidRoot?: boolean;
  /** The config drive image (ISO 9660 `config-2`), written to a new partition at the end of the disk. */
  configDrive?: { url: string; sha256?: string };
  /** Attempts without progress before giving up (default 5). */
  maxAttempts?: number;
  /** Upper bound of one HTTP attempt (default 3600). */
  attemptTimeoutSeconds?: number;
}

/** Parameters of `clean`: `metadata` wipes signatures and both ends of every disk; `erase` zeroes every disk. */
export interface CleanParams {
  mode: 'metadata' | 'erase';
  /**
   * Automated cleaning: software RAID survives (ironic-python-agent's erase_devices_metadata
   * skips RAID members and cleans the md devices instead); without it arrays are stopped and
   * their members wiped, which is how software RAID is deleted while preparing.
   */
  keepSoftwareRaid?: boolean;
}

/** One software RAID volume (metal3 `SoftwareRAIDVolume`). */
export interface SoftwareRaidVolumeParams {
  level: '0' | '1' | '1+0';
  /** 0 or absent: the rest of each member disk. */
  sizeGibibytes?: number;
  /** At least 2 hint sets, one per member disk. */
  physicalDisks: RootDeviceHints[];
}

/** What the server answers to a heartbeat. */
export interface RamdiskCommand {
  command: RamdiskCommandName;
  /** Echoed back in the inventory/result so the server can match them. `[A-Za-z0-9._-]{1,64}`. */
  commandId?: string;
  /** Seconds until the next heartbeat (1..3600). */
  intervalSeconds?: number;
  /** Required for `deploy`. */
  deploy?: DeployParams;
  /** Optional for `clean` (default mode metadata). */
  clean?: CleanParams;
  /** Required for `raid`: at most 2 volumes, the first RAID1 (metal3 webhook rules). */
  raid?: { volumes: SoftwareRaidVolumeParams[] };
}

/** The body of a heartbeat as the agent sends it. */
export interface RamdiskHeartbeat {
  version: string | null;
  bootMac: string | null;
  ip: string | null;
  uptimeSeconds: number | null;
  lastCommandId: string | null;
}

/** Thrown for a command or heartbeat that does not follow the protocol. */
export class RamdiskProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RamdiskProtocolError';
  }
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** A value on one answer line: printable, no newline (the agent reads line by line, never evaluates). */
function line(key: string, value: string | number | boolean): string {
  const text = String(value);
  if (text === '' || hasControlCharacter(text)) throw new RamdiskProtocolError(`${key} must be non-empty and free of control characters`);
  return `${key}=${text}\n`;
}

function hintLines(prefix: string, hints: RootDeviceHints): string {
  let out = '';
  const str = (key: string, v: string | undefined): void => {
    if (v !== undefined) out += line(`${prefix}${key}`, v.trim());
  };
  if (hints.deviceName !== undefined) {
    if (!hints.deviceName.startsWith('/dev/')) throw new RamdiskProtocolError('deviceName must start with /dev/');
    str(hints.deviceName.startsWith('/dev/disk/by-path/') ? 'by_path' : 'name', hints.deviceName);
  }
  str('hctl', hints.hctl);
  str('model', hints.model);
  str('vendor', hints.vendor);
  str('serial', hints.serialNumber);
  if (hints.minSizeGigabytes !== undefined) {
    if (!Number.isSafeInteger(hints.minSizeGigabytes) || hints.minSizeGigabytes < 0) throw new RamdiskProtocolError('minSizeGigabytes must be a non-negative integer');
    // 0 means "any size" (ironic-lib rejects 0 as a hint; metal3 allows it): not sent.
    if (hints.minSizeGigabytes > 0) out += line(`${prefix}size`, hints.minSizeGigabytes);
  }
  str('wwn', hints.wwn);
  str('wwn_with_extension', hints.wwnWithExtension);
  str('wwn_vendor_extension', hints.wwnVendorExtension);
  if (hints.rotational !== undefined) out += line(`${prefix}rotational`, hints.rotational);
  return out;
}

const checksumLengths = { md5: 32, sha256: 64, sha512: 128 } as const;

function positiveInt(key: string, v: number | undefined, max: number): string {
  if (v === undefined) return '';
  if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new RamdiskProtocolError(`${key} must be an integer 1..${max}`);
  return line(key, v);
}

function deployLines(d: DeployParams): string {
  // https:// only for a ramdisk calling over TLS (its rackside.url is https://; lib-deploy.sh refuses a scheme other than its own).
  if (!/^https?:\/\/[^\s/]+\/\S*$/.test(d.imageUrl)) throw new RamdiskProtocolError('deploy.imageUrl must be an http:// or https:// URL');
  const hexLength = checksumLengths[d.checksumType] as number | undefined;
  if (hexLength === undefined) throw new RamdiskProtocolError('deploy.checksumType must be md5, sha256 or sha512');
  if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(d.checksum)) throw new RamdiskProtocolError(`deploy.checksum must be ${hexLength} hex digits for ${d.checksumType}`);
  if (d.raidRoot === true && d.rootDeviceHints !== undefined) throw new RamdiskProtocolError('deploy.raidRoot cannot be combined with rootDeviceHints');
  let out = line('image_url', d.imageUrl) + line('image_checksum', d.checksum.toLowerCase()) + line('image_checksum_type', d.checksumType);
  if (d.imageSizeBytes !== undefined) {
    if (!Number.isSafeInteger(d.imageSizeBytes) || d.imageSizeBytes < 1) throw new RamdiskProtocolError('deploy.imageSizeBytes must be a positive integer');
    out += line('image_size_bytes', d.imageSizeBytes);
  }
  out += positiveInt('image_attempts', d.maxAttempts, 100) + positiveInt('image_attempt_timeout_seconds', d.attemptTimeoutSeconds, 86_400);
  if (d.raidRoot === true) out += line('raid_root', 1);
  if (d.rootDeviceHints !== undefined) out += hintLines('hint_', d.rootDeviceHints);
  if (d.configDrive !== undefined) {
    if (!/^https?:\/\/[^\s/]+\/\S*$/.test(d.configDrive.url)) throw new RamdiskProtocolError('deploy.configDrive.url must be an http:// or https:// URL');
    out += line('configdrive_url', d.configDrive.url);
    if (d.configDrive.sha256 !== undefined) {
      if (!/^[0-9a-fA-F]{64}$/.test(d.configDrive.sha256)) throw new RamdiskProtocolError('deploy.configDrive.sha256 must be 64 hex digits');
      out += line('configdrive_sha256', d.configDrive.sha256.toLowerCase());
    }
  }
  return out;
}

function raidLines(raid: { volumes: SoftwareRaidVolumeParams[] }): string {
  const volumes = raid.volumes;
  if (volumes.length < 1 || volumes.length > 2) throw new RamdiskProtocolError('raid needs 1 or 2 software volumes');
  if (volumes[0]?.level !== '1') throw new RamdiskProtocolError('the first software RAID volume must be RAID1');
  let out = line('raid_volumes', volumes.length);
  volumes.forEach((v, i) => {
    if (!['0', '1', '1+0'].includes(v.level)) throw new RamdiskProtocolError(`raid volume ${i}: level must be 0, 1 or 1+0`);
    if (v.physicalDisks.length < 2) throw new RamdiskProtocolError(`raid volume ${i}: at least 2 physical disks are needed`);
    out += line(`raid_${i}_level`, v.level);
    if (v.sizeGibibytes !== undefined) {
      if (!Number.isSafeInteger(v.sizeGibibytes) || v.sizeGibibytes < 0) throw new RamdiskProtocolError(`raid volume ${i}: sizeGibibytes must be a non-negative integer`);
      out += line(`raid_${i}_size_gib`, v.sizeGibibytes);
    }
    out += line(`raid_${i}_disks`, v.physicalDisks.length);
    v.physicalDisks.forEach((h, j) => {
      const lines = hintLines(`raid_${i}_disk_${j}_`, h);
      if (lines === '') throw new RamdiskProtocolError(`raid volume ${i} disk ${j}: at least one hint is needed`);
      out += lines;
    });
  });
  return out;
}

/**
 * Renders the text/plain answer to a heartbeat: `command=`, `command_id=`, `interval_seconds=`
 * and the command's parameters, one `KEY=VALUE` per line. Throws {@link RamdiskProtocolError}
 * for an unsafe id or value, a missing or invalid parameter block.
 */
export function encodeRamdiskCommand(cmd: RamdiskCommand): string {
  if (!(RAMDISK_COMMANDS as readonly string[]).includes(cmd.command)) throw new RamdiskProtocolError(`unknown command ${cmd.command}`);
  let out = `command=${cmd.command}\n`;
  if (cmd.commandId !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(cmd.commandId)) throw new RamdiskProtocolError('commandId must be 1-64 characters of [A-Za-z0-9._-]');
    out += `command_id=${cmd.commandId}\n`;
  }
  if (cmd.intervalSeconds !== undefined) {
    if (!Number.isInteger(cmd.intervalSeconds) || cmd.intervalSeconds < 1 || cmd.intervalSeconds > 3600) {
      throw new RamdiskProtocolError('intervalSeconds must be an integer 1..3600');
    }
    out += `interval_seconds=${cmd.intervalSeconds}\n`;
  }
  if (cmd.command === 'deploy') {
    if (cmd.deploy === undefined) throw new RamdiskProtocolError('deploy needs deploy parameters');
    out += deployLines(cmd.deploy);
  } else if (cmd.command === 'clean') {
    const mode = cmd.clean?.mode ?? 'metadata';
    if (!(['metadata', 'erase'] as readonly string[]).includes(mode)) throw new RamdiskProtocolError('clean.mode must be metadata or erase');
    out += line('clean_mode', mode);
    if (cmd.clean?.keepSoftwareRaid === true) out += line('clean_keep_raid', 1);
  } else if (cmd.command === 'raid') {
    if (cmd.raid === undefined) throw new RamdiskProtocolError('raid needs raid parameters');
    out += raidLines(cmd.raid);
  }
  return out;
}

function nullableString(body: Record<string, unknown>, key: string): string | null {
  const v = body[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new RamdiskProtocolError(`heartbeat field ${key} must be a string or null`);
  return v;
}

/** Decodes a heartbeat body (already JSON-parsed); throws {@link RamdiskProtocolError} on a wrong shape. */
export function decodeRamdiskHeartbeat(body: unknown): RamdiskHeartbeat {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RamdiskProtocolError('heartbeat body must be a JSON object');
  const rec = body as Record<string, unknown>;
  const uptime = rec.uptime_seconds;
  if (uptime !== null && uptime !== undefined && (typeof uptime !== 'number' || !Number.isFinite(uptime) || uptime < 0)) {
    throw new RamdiskProtocolError('heartbeat field uptime_seconds must be a non-negative number or null');
  }
  return {
    version: nullableString(rec, 'version'),
    bootMac: nullableString(rec, 'boot_mac'),
    ip: nullableString(rec, 'ip'),
    uptimeSeconds: typeof uptime === 'number' ? uptime : null,
    lastCommandId: nullableString(rec, 'last_command_id'),
  };
}
