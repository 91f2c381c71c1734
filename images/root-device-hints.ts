/**
 * @module Root device hints matched the way ironic-lib does (`find_devices_by_hints`), the
 * TypeScript twin of the ramdisk agent's matcher (images/ramdisk/lib-disks.sh), so the server can
 * check hints against an inventory before it sends a deploy. Every given hint must match (AND);
 * string values are stripped and lowercased on both sides; name, by-path, hctl, serial and the
 * wwn hints are exact, model and vendor are substrings; `minSizeGigabytes` is compared as
 * `bytes / 2^30 >= N` (ironic-lib divides by GiB); rotational is a boolean; a disk without a value
 * for a hinted attribute never matches. Without hints the smallest disk of at least 4 GiB is
 * chosen, as ironic-python-agent does.
 * @pure
 */
import type { RootDeviceHints } from './ramdisk-protocol.js';
import type { RamdiskDisk } from './ramdisk-results.js';

/** Smallest disk ironic-python-agent considers without hints: 4 GiB. */
export const MIN_ROOT_DISK_BYTES = 4 * 2 ** 30;

const norm = (v: string): string => v.trim().toLowerCase();

function exact(have: string | null, want: string): boolean {
  return have !== null && norm(have) !== '' && norm(have) === norm(want);
}

function contains(have: string | null, want: string): boolean {
  return have !== null && norm(have) !== '' && norm(have).includes(norm(want));
}

/** Returns true when `disk` satisfies every hint. */
export function diskMatchesHints(disk: RamdiskDisk, hints: RootDeviceHints): boolean {
  if (hints.deviceName !== undefined) {
    if (hints.deviceName.startsWith('/dev/disk/by-path/')) {
      if (!exact(disk.byPath, hints.deviceName)) return false;
    } else {
      const want = hints.deviceName.startsWith('/dev/') ? hints.deviceName : `/dev/${hints.deviceName}`;
      if (!exact(disk.name, want)) return false;
    }
  }
  if (hints.hctl !== undefined && !exact(disk.hctl, hints.hctl)) return false;
  if (hints.model !== undefined && !contains(disk.model, hints.model)) return false;
  if (hints.vendor !== undefined && !contains(disk.vendor, hints.vendor)) return false;
  if (hints.serialNumber !== undefined && !exact(disk.serial, hints.serialNumber)) return false;
  if (hints.wwn !== undefined && !exact(disk.wwn, hints.wwn)) return false;
  if (hints.wwnWithExtension !== undefined && !exact(disk.wwnWithExtension, hints.wwnWithExtension)) return false;
  if (hints.wwnVendorExtension !== undefined && !exact(disk.wwnVendorExtension, hints.wwnVendorExtension)) return false;
  if (hints.minSizeGigabytes !== undefined && hints.minSizeGigabytes > 0 && disk.sizeBytes < hints.minSizeGigabytes * 2 ** 30) return false;
  if (hints.rotational !== undefined && disk.rotational !== hints.rotational) return false;
  return true;
}

function hasHints(hints: RootDeviceHints | undefined): hints is RootDeviceHints {
  return hints !== undefined && Object.values(hints).some((v) => v !== undefined && !(typeof v === 'number' && v === 0));
}

/**
 * Returns the disk the agent will choose: the first disk (in the given order, the agent's is by
 * kernel name) matching all hints, or without hints the smallest of at least 4 GiB; undefined
 * when none qualifies.
 */
export function pickRootDisk(disks: readonly RamdiskDisk[], hints?: RootDeviceHints): RamdiskDisk | undefined {
  if (hasHints(hints)) return disks.find((d) => diskMatchesHints(d, hints));
  return disks
    .filter((d) => d.sizeBytes >= MIN_ROOT_DISK_BYTES)
    .reduce<RamdiskDisk | undefined>((best, d) => (best === undefined || d.sizeBytes < best.sizeBytes ? d : best), undefined);
}
