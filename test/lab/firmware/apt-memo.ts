/**
 * @module Remembered `apt-cache` answers for the firmware lab (images/apt-memo.ts): the machine's
 * own apt (`/var/lib/apt/lists`); the private arm64 configuration remembers its own answers
 * (images/foreign-apt.ts).
 */
import { join } from 'node:path';
import { aptAnswer, type AptMemoScope } from '../../../images/apt-memo.js';
import { candidateVersion, resolveMetaPackage } from '../../../images/debian-package.js';
import { DEBIAN_PACKAGE_CACHE } from '../rack/ramdisk-cache.js';

export { aptAnswer, type AptMemoScope } from '../../../images/apt-memo.js';

/** The machine's own apt. */
export const HOST_APT: AptMemoScope = { listsDir: '/var/lib/apt/lists', memoFile: join(DEBIAN_PACKAGE_CACHE, 'apt-host-resolved.json') };

/** apt's candidate version of `name` on this machine (the images builder's `candidateVersion`, remembered). */
export function hostCandidate(name: string): Promise<string> {
  return aptAnswer(HOST_APT, `candidate ${name}`, () => candidateVersion(name));
}

/** The versioned package meta package `name` depends on (`linux-image-amd64` → `linux-image-<abi>-amd64`), remembered. */
export function hostMetaDependency(name: string, prefix: string): Promise<string> {
  return aptAnswer(HOST_APT, `depends ${name} ${prefix}`, () => resolveMetaPackage(name, prefix));
}
