/**
 * @module Unencrypted ed25519 keys in OpenSSH's formats: the public key blob and line
 * (RFC 8709 §4: `string "ssh-ed25519"`, `string key` of exactly 32 bytes) and the
 * "openssh-key-v1" private key file (OpenSSH PROTOCOL.key: magic, cipher/kdf `none`, one
 * public key, then the private section with two equal check integers, the key, the comment
 * and padding 1, 2, 3… to the 8-byte block size; base64 wrapped at 70 columns) — written by
 * {@link encodeEd25519PrivateKey}, read back by {@link decodeEd25519PrivateKey}. Also the SSH
 * wire primitives the SSH codecs share (RFC 4251 §5 `uint32` and `string`) and the DER
 * prefixes that turn a raw ed25519 key into a node:crypto KeyObject (RFC 8410).
 *
 * Why in-house: ssh2 1.17's `utils.generateKeyPairSync('ed25519')` strips leading zero bytes
 * from the public key, so about one key in 256 comes out 31 bytes long and unusable
 * (mscdex/ssh2 issues #1390, #1513). node:crypto generates the key; this module writes it.
 * @pure
 */

/** PKCS #8 DER of an Ed25519 private key up to its 32-byte seed (RFC 8410 §7). */
export const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** SubjectPublicKeyInfo DER of an Ed25519 public key up to its 32 bytes (RFC 8410 §4). */
export const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Encodes an SSH `string` (RFC 4251 §5: uint32 length + bytes; a JS string as UTF-8). */
export function sshString(data: Uint8Array | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

/** Thrown by {@link SshReader} when a field runs past the end of the data. */
export class SshWireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshWireError';
  }
}

/**
 * A cursor over SSH wire data (RFC 4251 §5). Each read names the field it reads so that a
 * short buffer is reported as "truncated at <field>".
 * @throws SshWireError from every read that would run past the end.
 */
export class SshReader {
  readonly #data: Buffer;
  #offset = 0;

  constructor(data: Uint8Array) {
    this.#data = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.#data.length - this.#offset;
  }

  /** `n` raw bytes. */
  bytes(n: number, field: string): Buffer {
    if (n > this.remaining) throw new SshWireError(`truncated at ${field}`);
    const out = this.#data.subarray(this.#offset, this.#offset + n);
    this.#offset += n;
    return out;
  }

  /** A `uint32` (big-endian). */
  uint32(field: string): number {
    return this.bytes(4, field).readUInt32BE(0);
  }

  /** A `string`: uint32 length, then that many bytes. */
  string(field: string): Buffer {
    return this.bytes(this.uint32(field), field);
  }
}

/**
 * OpenSSH's armor of a binary blob, as ssh-keygen writes private keys and SSHSIG signatures:
 * `-----BEGIN <label>-----`, the base64 wrapped at 70 columns, `-----END <label>-----`, each
 * line ending in a newline.
 */
export function armor(label: string, body: Uint8Array): string {
  const base64 = Buffer.from(body).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 70) lines.push(base64.slice(i, i + 70));
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * The blob inside {@link armor}'s text. As OpenSSH reads it: the header line must open the
 * text, the footer must follow a newline; line breaks inside the base64 are free. Only
 * whitespace may follow the footer.
 * @returns the blob, or an error message naming what is wrong.
 */
export function dearmor(text: string, label: string): Buffer | { error: string } {
  const header = `-----BEGIN ${label}-----\n`;
  const footer = `\n-----END ${label}-----`;
  if (!text.startsWith(header)) return { error: `does not start with the line "${header.trim()}"` };
  const end = text.indexOf(footer, header.length - 1);
  if (end < 0) return { error: `has no "${footer.trim()}" line (truncated?)` };
  if (text.slice(end + footer.length).trim() !== '') return { error: `has text after the "${footer.trim()}" line` };
  const base64 = text.slice(header.length, end).replace(/[ \t\r\n]/g, '');
  if (base64 === '' || base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    return { error: 'is not valid base64 between its BEGIN and END lines' };
  }
  return Buffer.from(base64, 'base64');
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
  return armor('OPENSSH PRIVATE KEY', body);
}

/** An unencrypted ed25519 key read from an OpenSSH private key file. */
export interface DecodedEd25519PrivateKey {
  /** The 32-byte private key (RFC 8032 §5.1.5 seed). */
  seed: Buffer;
  /** The 32-byte public key. */
  publicKey: Buffer;
  comment: string;
}

function printable(bytes: Uint8Array): string {
  return JSON.stringify(Buffer.from(bytes).toString('latin1').slice(0, 60));
}

/** The 32-byte key of an RFC 8709 ed25519 public key blob, or an error for any other blob. */
export function decodeEd25519PublicBlob(blob: Uint8Array): Buffer | { error: string } {
  try {
    const reader = new SshReader(blob);
    const type = reader.string('key type');
    if (type.toString('latin1') !== 'ssh-ed25519') return { error: `is a ${printable(type)} key; only ssh-ed25519 is supported` };
    const key = reader.string('ed25519 public key');
    if (key.length !== 32) return { error: `ed25519 public key must be 32 bytes, got ${key.length}` };
    if (reader.remaining !== 0) return { error: `public key blob has ${reader.remaining} bytes of trailing data` };
    return Buffer.from(key);
  } catch (err) {
    if (err instanceof SshWireError) return { error: `public key blob is ${err.message}` };
    throw err;
  }
}

function decodePrivateSection(section: Buffer, publicKey: Buffer): DecodedEd25519PrivateKey | { error: string } {
  const reader = new SshReader(section);
  if (reader.uint32('check integer') !== reader.uint32('check integer')) return { error: 'check integers differ (corrupt key)' };
  const type = reader.string('private key type').toString('latin1');
  if (type !== 'ssh-ed25519') return { error: `private section holds a ${JSON.stringify(type)} key; only ssh-ed25519 is supported` };
  const innerPublic = reader.string('ed25519 public key');
  const pair = reader.string('ed25519 private key');
  if (pair.length !== 64) return { error: `ed25519 private key must be 64 bytes (seed and public key), got ${pair.length}` };
  if (!innerPublic.equals(publicKey) || !pair.subarray(32).equals(publicKey)) {
    return { error: 'the private section\'s public key differs from the file\'s public key (corrupt key)' };
  }
  const comment = reader.string('comment').toString('utf8');
  const padding = reader.bytes(reader.remaining, 'padding');
  if (padding.length >= 8 || padding.some((byte, i) => byte !== i + 1)) return { error: 'bad padding after the private key (corrupt key)' };
  return { seed: Buffer.from(pair.subarray(0, 32)), publicKey, comment };
}

/**
 * Reads an unencrypted ed25519 key from OpenSSH private key file text ("openssh-key-v1", what
 * {@link encodeEd25519PrivateKey} and `ssh-keygen -t ed25519 -N ''` write), checking the
 * structure of OpenSSH PROTOCOL.key: magic, cipher and kdf `none`, exactly one key, equal
 * check integers, the public key repeated consistently, padding 1, 2, 3….
 * @returns the key, or an error message: a passphrase-protected key, another key type, a PEM
 * or PKCS #8 file, or a corrupt file each get their own.
 */
export function decodeEd25519PrivateKey(text: string): DecodedEd25519PrivateKey | { error: string } {
  const trimmed = text.trimStart();
  const label = /^-----BEGIN ([A-Z0-9 ]+)-----/.exec(trimmed)?.[1];
  if (label !== 'OPENSSH PRIVATE KEY') {
    return { error: label === undefined
      ? 'not an OpenSSH private key (no "-----BEGIN OPENSSH PRIVATE KEY-----" line)'
      : `not an OpenSSH private key: found "-----BEGIN ${label}-----" (convert it with ssh-keygen -p -f FILE)` };
  }
  const body = dearmor(trimmed, 'OPENSSH PRIVATE KEY');
  if ('error' in body) return { error: `OpenSSH private key ${body.error}` };
  const magic = Buffer.from('openssh-key-v1\0', 'latin1');
  if (!body.subarray(0, magic.length).equals(magic)) return { error: 'OpenSSH private key does not start with "openssh-key-v1"' };
  try {
    const reader = new SshReader(body.subarray(magic.length));
    const cipher = reader.string('cipher name').toString('latin1');
    const kdf = reader.string('kdf name').toString('latin1');
    reader.string('kdf options');
    if (cipher !== 'none' || kdf !== 'none') {
      return { error: `the key is encrypted with a passphrase (cipher ${JSON.stringify(cipher)}, kdf ${JSON.stringify(kdf)}); rackside needs an unencrypted key` };
    }
    const count = reader.uint32('number of keys');
    if (count !== 1) return { error: `the file holds ${count} keys; expected exactly 1` };
    const publicKey = decodeEd25519PublicBlob(reader.string('public key'));
    if ('error' in publicKey) return { error: `the key ${publicKey.error}` };
    const section = reader.string('private section');
    if (reader.remaining !== 0) return { error: `OpenSSH private key has ${reader.remaining} bytes of trailing data` };
    if (section.length % 8 !== 0) return { error: 'private section is not a multiple of 8 bytes (corrupt key)' };
    return decodePrivateSection(section, publicKey);
  } catch (err) {
    if (err instanceof SshWireError) return { error: `OpenSSH private key is ${err.message}` };
    throw err;
  }
}
