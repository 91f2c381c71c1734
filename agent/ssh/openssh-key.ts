/**
 * @module Encoder of unencrypted ed25519 keys in OpenSSH's formats: the public key blob and
 * line (RFC 8709 §4: `string "ssh-ed25519"`, `string key` of exactly 32 bytes) and the
 * "openssh-key-v1" private key file (OpenSSH PROTOCOL.key: magic, cipher/kdf `none`, one
 * public key, then the private section with two equal check integers, the key, the comment
 * and padding 1, 2, 3… to the 8-byte block size; base64 wrapped at 70 columns).
 *
 * Why in-house: ssh2 1.17's `utils.generateKeyPairSync('ed25519')` strips leading zero bytes
 * from the public key, so about one key in 256 comes out 31 bytes long and unusable
 * (mscdex/ssh2 issues #1390, #1513). node:crypto generates the key; this module writes it.
 * @pure
 */

/** Encodes an SSH `string` (RFC 4251 §5: uint32 length + bytes). */
function sshString(data: Uint8Array | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

function checkLengths(seed: Uint8Array, publicKey: Uint8Array): void {
  if (seed.length !== 32) throw new Error(`ed25519 private seed must be 32 bytes, got ${seed.length}`);
  if (publicKey.length !== 32) throw new Error(`ed25519 public key must be 32 bytes, got ${publicKey.length}`);
}

/** The RFC 8709 public key blob of a 32-byte ed25519 public key. */
export function encodeEd25519PublicBlob(publicKey: Uint8Array): Buffer {
  if (publicKey.length !== 32) throw new Error(`ed25519 public key must be 32 bytes, got ${publicKey.length}`);
  return Buffer.concat([sshString('ssh-ed25519'), sshString(publicKey)]);
}

/** The public key line `ssh-ed25519 AAAA… comment` (no comment part when `comment` is ''). */
export function encodeEd25519PublicLine(publicKey: Uint8Array, comment: string): string {
  const line = `ssh-ed25519 ${encodeEd25519PublicBlob(publicKey).toString('base64')}`;
  return comment === '' ? line : `${line} ${comment}`;
}

/**
 * The unencrypted OpenSSH private key file for an ed25519 key. `checkInt` is any 32-bit number
 * (OpenSSH uses a random one; it only detects wrong passphrases, meaningless without one).
 */
export function encodeEd25519PrivateKey(seed: Uint8Array, publicKey: Uint8Array, comment: string, checkInt: number): string {
  checkLengths(seed, publicKey);
  const check = Buffer.alloc(8);
  check.writeUInt32BE(checkInt >>> 0, 0);
  check.writeUInt32BE(checkInt >>> 0, 4);
  const privateSection = Buffer.concat([
    check,
    sshString('ssh-ed25519'),
    sshString(publicKey),
    sshString(Buffer.concat([Buffer.from(seed), Buffer.from(publicKey)])),
    sshString(comment),
  ]);
  const padLength = (8 - (privateSection.length % 8)) % 8;
  const padding = Buffer.from(Array.from({ length: padLength }, (_, i) => i + 1));
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    Buffer.from([0, 0, 0, 1]),
    sshString(encodeEd25519PublicBlob(publicKey)),
    sshString(Buffer.concat([privateSection, padding])),
  ]);
  const base64 = body.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 70) lines.push(base64.slice(i, i + 70));
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}
