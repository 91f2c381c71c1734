/**
 * @module The hosts of one {@link HostReader.hostSnapshot} by boot MAC (`spec.bootMACAddress`), and
 * each host's MAC by name — built once per snapshot and shared by every reader: the boot lookup
 * (which host a DHCP/TFTP/HTTP client is) and the flight recorder (which host a boot event is
 * about). A snapshot is the same array until the next host commit, so the index follows the
 * store by itself: no change notices, no invalidation. When two hosts name the same MAC, the
 * later one in the snapshot (by name) wins.
 */
import type { BareMetalHost } from '../host/types.js';

/** The index of one snapshot. */
export interface HostMacIndex {
  /** Hosts by normalized boot MAC ({@link normalizeBootMac}). */
  readonly byMac: ReadonlyMap<string, Readonly<BareMetalHost>>;
  /** The normalized boot MAC of each host in {@link byMac}, by host name. */
  readonly macByName: ReadonlyMap<string, string>;
}

/** A MAC as the index keys it: trimmed, lower case, colons (`52-54-00-…` → `52:54:00:…`). */
export function normalizeBootMac(mac: string): string {
  return mac.trim().toLowerCase().replaceAll('-', ':');
}

const bySnapshot = new WeakMap<readonly Readonly<BareMetalHost>[], HostMacIndex>();

/** The index of `hosts` (a snapshot), built on first use and kept as long as the snapshot is. */
export function hostMacIndex(hosts: readonly Readonly<BareMetalHost>[]): HostMacIndex {
  const known = bySnapshot.get(hosts);
  if (known !== undefined) return known;
  const byMac = new Map<string, Readonly<BareMetalHost>>();
  for (const host of hosts) {
    const mac = host.spec.bootMACAddress;
    if (mac !== undefined && mac !== '') byMac.set(normalizeBootMac(mac), host);
  }
  const macByName = new Map<string, string>();
  for (const [mac, host] of byMac) macByName.set(host.metadata.name, mac);
  const index = { byMac, macByName };
  bySnapshot.set(hosts, index);
  return index;
}
