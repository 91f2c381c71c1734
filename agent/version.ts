/**
 * @module The product version, in a module of its own so that the CLI's client commands and
 * `rackside images build` (which records it in the ramdisk manifest) need not load the daemon.
 */

/** The product version reported by `rackside version` and the API, and built into the ramdisk's manifest. */
export const VERSION = '0.1.0';
