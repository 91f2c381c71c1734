/**
 * @module Per-host ramdisk callback tokens. Each host gets one random token, kept in its
 * `nodes` entry (`token`, beside the provisioner's own fields) and put on the ramdisk's kernel
 * command line as `rackside.token=`; the ramdisk API (`/ramdisk/v1/…`) accepts callbacks for that
 * host only with it. 32 random bytes, base64url (43 characters of `[A-Za-z0-9_-]`, inside the
 * `[A-Za-z0-9._~-]{16,512}` the ramdisk accepts). A token lives until the provisioner removes or
 * replaces it (e.g. when the host is deleted). In the agent every token is written through the
 * local provisioner's NodeTable (`ensureToken`, `update`), whose token index the ramdisk API
 * trusts (boot lookups get tokens through the provisioner's BootIntentSource, boot-intent.ts).
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';

/** Source of random bytes (tests pass a fixed one). */
export type RandomBytes = (size: number) => Uint8Array;

/** Bytes of randomness in a token. */
export const RAMDISK_TOKEN_BYTES = 32;

/** Returns a new token from `random` (default: node:crypto). */
export function generateRamdiskToken(random: RandomBytes = cryptoRandomBytes): string {
  return Buffer.from(random(RAMDISK_TOKEN_BYTES)).toString('base64url');
}
