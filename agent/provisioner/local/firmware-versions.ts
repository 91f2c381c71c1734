/**
 * @module What HostFirmwareComponents reports per component, as Ironic keeps it for a node's
 * firmware components (`initial_version`, `current_version`, `last_version_flashed`,
 * `updated_at`; metal3's `status.components`): the version first seen stays the initial one;
 * when a later reading differs, the new version is the last one flashed, stamped with the time
 * the change was seen. The BMC's inventory alone says only the current version, so the versions
 * seen are kept with the host's node record (node.ts `LocalNode.firmware`).
 * @pure
 */
import type { FirmwareComponentStatus } from '../../host/types.js';

/** What is kept per component. */
export interface FirmwareVersionsSeen {
  initialVersion: string;
  currentVersion: string;
  lastVersionFlashed?: string;
  /** RFC 3339, when {@link lastVersionFlashed} was first read. */
  updatedAt?: string;
}

/** A component of the BMC's firmware inventory. */
export interface FirmwareReading {
  component: string;
  version: string;
}

/**
 * Merges a reading of the inventory into what was seen: new components start with their version
 * as initial and current; a changed version becomes current and last flashed at `nowIso`.
 * Components no longer in the reading are kept (a BMC may leave one out of a single answer).
 * Returns the statuses in reading order, the updated record and whether it changed.
 */
export function trackFirmwareVersions(
  seen: Readonly<Record<string, FirmwareVersionsSeen>> | undefined, reading: readonly FirmwareReading[], nowIso: string,
): { components: FirmwareComponentStatus[]; seen: Record<string, FirmwareVersionsSeen>; changed: boolean } {
  const next: Record<string, FirmwareVersionsSeen> = { ...seen };
  let changed = false;
  const components: FirmwareComponentStatus[] = [];
  for (const { component, version } of reading) {
    const known = next[component];
    let entry: FirmwareVersionsSeen;
    if (known === undefined) {
      entry = { initialVersion: version, currentVersion: version };
      changed = true;
    } else if (known.currentVersion !== version) {
      entry = { initialVersion: known.initialVersion, currentVersion: version, lastVersionFlashed: version, updatedAt: nowIso };
      changed = true;
    } else {
      entry = known;
    }
    next[component] = entry;
    components.push({
      component, initialVersion: entry.initialVersion, currentVersion: entry.currentVersion,
      ...(entry.lastVersionFlashed !== undefined ? { lastVersionFlashed: entry.lastVersionFlashed } : {}),
      ...(entry.updatedAt !== undefined ? { updatedAt: entry.updatedAt } : {}),
    });
  }
  return { components, seen: next, changed };
}

/** Reads a kept record written by any version; mistyped entries are dropped. */
export function decodeFirmwareVersionsSeen(value: unknown): Record<string, FirmwareVersionsSeen> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: Record<string, FirmwareVersionsSeen> = {};
  for (const [component, raw] of Object.entries(value as Record<string, unknown>)) {
    if (typeof raw !== 'object' || raw === null) continue;
    const r = raw as Record<string, unknown>;
    if (typeof r.initialVersion !== 'string' || typeof r.currentVersion !== 'string') continue;
    out[component] = {
      initialVersion: r.initialVersion, currentVersion: r.currentVersion,
      ...(typeof r.lastVersionFlashed === 'string' ? { lastVersionFlashed: r.lastVersionFlashed } : {}),
      ...(typeof r.updatedAt === 'string' ? { updatedAt: r.updatedAt } : {}),
    };
  }
  return out;
}
