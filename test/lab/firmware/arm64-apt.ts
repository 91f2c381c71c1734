/**
 * @module Debian arm64 packages for the firmware lab, through the product's private
 * foreign-architecture apt (images/foreign-apt.ts, docs/test-peers.md "arm64"): its state under
 * `<DEBIAN_PACKAGE_CACHE>/apt-arm64/`, packages unpacked into `<DEBIAN_PACKAGE_CACHE>/debian-arm64/`,
 * never installed, the machine's apt state untouched.
 */
import type { DebianPackage } from '../../../images/debian-package.js';
import { ForeignApt } from '../../../images/foreign-apt.js';
import { DEBIAN_PACKAGE_CACHE } from '../rack/ramdisk-cache.js';

/** The lab's arm64 apt (shared with the images tests' package cache). */
export const ARM64_APT = new ForeignApt('arm64', DEBIAN_PACKAGE_CACHE);

/** Resolves meta package `name` (`linux-image-arm64`) to its first dependency starting with `prefix`. */
export function resolveArm64Meta(name: string, prefix: string): Promise<string> {
  return ARM64_APT.resolveMeta(name, prefix);
}

/** Returns arm64 package `name` at apt's candidate version, unpacked in the cache; `prepare` runs before it is renamed into place. */
export function fetchArm64Package(name: string, prepare?: (rootDir: string) => Promise<void>): Promise<DebianPackage> {
  return ARM64_APT.fetch(name, prepare);
}
