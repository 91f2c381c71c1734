/**
 * @module SSH public key blobs (RFC 4253 §6.6: `string key-type` followed by type-specific
 * fields), their OpenSSH `SHA256:` fingerprints (unpadded base64 of the SHA-256 of the blob, as
 * `ssh-keygen -l` prints), and pinned host keys for the reverse tunnel: either a public key line
 * (`ssh-ed25519 AAAA… comment`, also a known_hosts line) or a `SHA256:` fingerprint.
 * @pure
 */
import { createHash } from 'node:crypto';

/** Key types rackside accepts for users and pins (no DSA, no FIDO `sk-` keys, no certificates). */
export const SUPPORTED_KEY_TYPES = [
  'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521',
] as const;

/** Key types OpenSSH knows that rackside recognizes only to report them as unsupported. */
export const UNSUPPORTED_KEY_TYPES = [
  'ssh-dss', 'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com',
  'ssh-ed25519-cert-v01@openssh.com', 'ssh-rsa-cert-v01@openssh.com', 'ssh-dss-cert-v01@openssh.com',
  'ecdsa-sha2-nistp256-cert-v01@openssh.com', 'ecdsa-sha2-nistp384-cert-v01@openssh.com',
  'ecdsa-sha2-nistp521-cert-v01@openssh.com', 'sk-ssh-ed25519-cert-v01@openssh.com',
  'sk-ecdsa-sha2-nistp256-cert-v01@openssh.com',
] as const;

/** True for a supported key type name. */
export function isSupportedKeyType(name: string): boolean {
  return (SUPPORTED_KEY_TYPES as readonly string[]).includes(name);
}

/** True for any key type name OpenSSH knows (supported or not). */
export function isKnownKeyType(name: string): boolean {
  return isSupportedKeyType(name) || (UNSUPPORTED_KEY_TYPES as readonly string[]).includes(name);
}

/** The OpenSSH fingerprint of a public key blob: `SHA256:` + unpadded base64. */
export function fingerprintSha256(blob: Uint8Array): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Decodes the base64 field of a public key line and checks that the blob's own type string
 * equals `expectedType`.
 * @returns the blob, or an error message.
 */
export function decodeKeyBlob(base64: string, expectedType: string): Buffer | { error: string } {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) return { error: 'key data is not valid base64' };
  const blob = Buffer.from(base64, 'base64');
  if (blob.length < 4) return { error: 'key data is too short' };
  const nameLength = blob.readUInt32BE(0);
  if (nameLength > blob.length - 4) return { error: 'key data is truncated' };
  const inner = blob.subarray(4, 4 + nameLength).toString('latin1');
  if (inner !== expectedType) return { error: `key data is a ${inner} key, but the line says ${expectedType}` };
  if (blob.length === 4 + nameLength) return { error: 'key data holds no key material' };
  return blob;
}

/** A pinned bastion host key: the full public key, or only its SHA-256 fingerprint. */
export type HostKeyPin =
  | { kind: 'key'; keyType: string; blob: Buffer; fingerprint: string }
  | { kind: 'fingerprint'; fingerprint: string };

/**
 * Parses a host key pin: `SHA256:<43 base64 chars>`, or a line containing `<key-type> <base64>`
 * (an `.pub` file line or a known_hosts line; a leading host field and a trailing comment are
 * ignored).
 * @returns the pin, or an error message saying what was expected.
 */
export function parseHostKeyPin(text: string): HostKeyPin | { error: string } {
  const trimmed = text.trim();
  const fp = /^SHA256:([A-Za-z0-9+/]{43})=?$/.exec(trimmed);
  if (fp !== null) return { kind: 'fingerprint', fingerprint: `SHA256:${fp[1] ?? ''}` };
  const fields = trimmed.split(/\s+/);
  const typeIndex = fields.findIndex((f) => isKnownKeyType(f));
  if (typeIndex < 0) {
    return { error: 'expected a SHA256:… fingerprint (ssh-keygen -lf KEY.pub) or a public key line "ssh-ed25519 AAAA…"' };
  }
  const keyType = fields[typeIndex] ?? '';
  if (!isSupportedKeyType(keyType)) return { error: `unsupported host key type ${keyType}` };
  const blob = decodeKeyBlob(fields[typeIndex + 1] ?? '', keyType);
  if ('error' in blob) return { error: `pinned host key: ${blob.error}` };
  return { kind: 'key', keyType, blob, fingerprint: fingerprintSha256(blob) };
}

/** True when the presented host key blob is the pinned key (or has the pinned fingerprint). */
export function matchesHostKeyPin(pin: HostKeyPin, presented: Uint8Array): boolean {
  if (pin.kind === 'fingerprint') return fingerprintSha256(presented) === pin.fingerprint;
  return Buffer.compare(pin.blob, presented) === 0;
}

/** The type name inside a key blob, or undefined when the blob is malformed. */
export function keyTypeOfBlob(blob: Uint8Array): string | undefined {
  const buffer = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  if (buffer.length < 4) return undefined;
  const length = buffer.readUInt32BE(0);
  if (length > buffer.length - 4) return undefined;
  return buffer.subarray(4, 4 + length).toString('latin1');
}
