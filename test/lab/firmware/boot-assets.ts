/**
 * @module The signed boot loaders of the shim → GRUB chains, as rackside's asset catalog names
 * them (bootsvc/ipxe/asset-catalog.ts): the Microsoft-signed shim (`shim-signed`) and
 * Debian-signed network GRUB (`grub-efi-amd64-signed`, `grub-efi-arm64-signed`; its
 * `grubnet*.efi.signed` served as `grub*.efi`, the name shim loads next to itself). Fetched with
 * `apt-get download` and unpacked, never installed — installing them runs postinst scripts that
 * reconfigure this machine's own boot loader (docs/test-peers.md, "Secure Boot"); amd64 through the images
 * builder's package cache, arm64 through the private apt configuration of arm64-apt.ts (images/foreign-apt.ts).
 */
import { join } from 'node:path';
import { BOOT_ASSETS, type BootAssetGroup } from '../../../bootsvc/index.js';
import { fetchDebianPackage } from '../../../images/debian-package.js';
import { hostCandidate } from './apt-memo.js';
import { fetchArm64Package } from './arm64-apt.js';
import { DEBIAN_PACKAGE_CACHE } from '../rack/ramdisk-cache.js';

/** Served name → unpacked file, for the asset group `group` (`secure-boot-x64` or `arm64`). */
export async function fetchSignedBootLoaders(group: Exclude<BootAssetGroup, 'ipxe'>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const spec of BOOT_ASSETS.filter((s) => s.group === group)) {
    const root = group === 'arm64' ? (await fetchArm64Package(spec.package)).rootDir : (await fetchDebianPackage(spec.package, DEBIAN_PACKAGE_CACHE, await hostCandidate(spec.package))).rootDir;
    const path = spec.paths[0];
    if (path === undefined) throw new Error(`asset ${spec.name} has no package path`);
    out.set(spec.name, join(root, path));
  }
  return out;
}

/**
 * Package path (`usr/lib/shim/shimaa64.efi.signed` …) → unpacked file, for the asset group
 * `group`: the layout `dpkg-deb -x` leaves in rackside's boot assets directory
 * (agent/boot/assets-dir.ts), where the agent itself finds and serves them.
 */
export async function fetchBootAssetLayout(group: Exclude<BootAssetGroup, 'ipxe'>): Promise<Map<string, string>> {
  const files = await fetchSignedBootLoaders(group);
  const out = new Map<string, string>();
  for (const spec of BOOT_ASSETS.filter((s) => s.group === group)) {
    const file = files.get(spec.name);
    const path = spec.paths[0];
    if (file !== undefined && path !== undefined) out.set(path.replace(/^\/+/, ''), file);
  }
  return out;
}
