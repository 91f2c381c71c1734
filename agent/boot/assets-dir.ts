/**
 * @module Where rackside looks for unpacked boot assets (signed shim and GRUB, whose Debian
 * packages must not be installed on the head node: their scripts reconfigure its own boot
 * loader): `<stateDir>/boot-assets`, i.e. bootsvc's DEFAULT_ASSETS_DIR under the default state
 * directory. The boot services search it, and `doctor` checks it.
 */
import { join } from 'node:path';
import type { Config } from '../config.js';

/** The boot assets directory of `config`. */
export function bootAssetsDir(config: Config): string {
  return join(config.agent.stateDir, 'boot-assets');
}
