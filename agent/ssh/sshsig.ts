/**
 * @module OpenSSH SSHSIG signatures with ed25519 keys: what `ssh-keygen -Y sign` writes and
 * `ssh-keygen -Y verify` checks (OpenSSH PROTOCOL.sshsig). rackside signs its erase records
 * with its own key so that anyone can check one with stock OpenSSH:
 * `ssh-keygen -Y verify -f allowed_signers -I <identity> -n rackside-erase-record -s record.json.sig < record.json`.
 *
 * The format, as PROTOCOL.sshsig defines it (all `string`s per RFC 4251 §5: uint32 length +
 * bytes):
 * - §3 signed data: byte[6] "SSHSIG" ‖ string namespace ‖ string reserved ("") ‖
 *   string hash_algorithm ‖ string H(message);
 * - §2 blob: byte[6] "SSHSIG" ‖ uint32 version (1) ‖ string publickey ‖ string namespace ‖
 *   string reserved ‖ string hash_algorithm ‖ string signature, where publickey is the
 *   RFC 8709 §4 key blob and signature the RFC 8709 §6 encoding
 *   (string "ssh-ed25519" ‖ string 64-byte RFC 8032 signature);
 * - §1 armor: "-----BEGIN SSH SIGNATURE-----", the blob's base64 (ssh-keygen wraps it at 70
 *   columns), "-----END SSH SIGNATURE-----".
 * @pure
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { fingerprintSha256 } from './key-blob.js';
import {
  armor, dearmor, decodeEd25519PrivateKey, decodeEd25519PublicBlob, ED25519_PKCS8_PREFIX, ED25519_SPKI_PREFIX,
  encodeEd25519PublicBlob, encodeEd25519PublicLine, SshReader, sshString, SshWireError,
} from './openssh-key.js';

/** PROTOCOL.sshsig §2/§3 MAGIC_PREAMBLE. */
const MAGIC = Buffer.from('SSHSIG', 'latin1');
/** PROTOCOL.sshsig §2 SIG_VERSION: the only version there is; verifiers must reject greater ones. */
const VERSION = 1;
/** PROTOCOL.sshsig §2 armor label. */
const LABEL = 'SSH SIGNATURE';
/** The hash rackside signs with: ssh-keygen's default (HASHALG_DEFAULT in OpenSSH's sshsig.c). */
const SIGN_HASH = 'sha512';
/** PROTOCOL.sshsig §2: "The supported hash algorithms are "sha256" and "sha512"". */
const HASHES: readonly string[] = ['sha256', 'sha512'];

/**
 * An ed25519 private key ready to sign, with its public half in the forms verifiers use. Get
 * one from an OpenSSH private key file with {@link ed25519SigningKeyFromOpenSsh}.
 */
export interface Ed25519SigningKey {
  /** The node:crypto private key (type ed25519). */
  readonly privateKey: KeyObject;
  /** The RFC 8709 §4 public key blob, as embedded in every signature. */
  readonly publicKeyBlob: Buffer;
  /** `ssh-ed25519 AAAA… comment` (the file's comment; no comment part when it has none). */
  readonly publicKeyLine: string;
  /** `SHA256:…` of the blob, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
}

/** The outcome of {@link verifySshsig}. */
export type SshsigVerification =
  | { ok: true; publicKeyLine: string; fingerprint: string }
  | { ok: false; error: string };

/**
 * Builds a signing key from OpenSSH private key file text: an unencrypted ed25519
 * "openssh-key-v1" key, as `loadOrCreateHostKey`/`generateEd25519Key` and
 * `ssh-keygen -t ed25519 -N ''` write it. The public key stored in the file must be the one
 * its private key derives.
 * @throws Error saying why the text is unusable (encrypted, not ed25519, not OpenSSH format,
 * corrupt).
 */
export function ed25519SigningKeyFromOpenSsh(privateKeyText: string): Ed25519SigningKey {
  const decoded = decodeEd25519PrivateKey(privateKeyText);
  if ('error' in decoded) throw new Error(`cannot sign with this key: ${decoded.error}`);
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, decoded.seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  if (!spki.equals(Buffer.concat([ED25519_SPKI_PREFIX, decoded.publicKey]))) {
    throw new Error('cannot sign with this key: its public key is not the one its private key derives (corrupt key)');
  }
  const publicKeyBlob = encodeEd25519PublicBlob(decoded.publicKey);
  return {
    privateKey,
    publicKeyBlob,
    publicKeyLine: encodeEd25519PublicLine(decoded.publicKey, decoded.comment),
    fingerprint: fingerprintSha256(publicKeyBlob),
  };
}

/** PROTOCOL.sshsig §3: the bytes the key signs. The reserved field is empty, as OpenSSH writes and checks it. */
function signedData(namespace: Uint8Array | string, hash: string, message: Uint8Array): Buffer {
  const digest = createHash(hash).update(message).digest();
  return Buffer.concat([MAGIC, sshString(namespace), sshString(''), sshString(hash), sshString(digest)]);
}

/**
 * Signs `message` for `namespace` (e.g. `rackside-erase-record`) with sha512, as
 * `ssh-keygen -Y sign -n <namespace>` does. ed25519 is deterministic: the same message,
 * namespace and key always give the same text.
 * @returns the armored signature (PROTOCOL.sshsig §1), ending with a newline — the content of a
 * `.sig` file for `ssh-keygen -Y verify -s`.
 * @throws RangeError when `namespace` is empty (PROTOCOL.sshsig §2: it MUST NOT be).
 */
export function signSshsig(message: Uint8Array, namespace: string, key: Ed25519SigningKey): string {
  if (namespace === '') throw new RangeError('an SSHSIG namespace must not be empty');
  const signature = sign(null, signedData(namespace, SIGN_HASH, message), key.privateKey);
  const version = Buffer.alloc(4);
  version.writeUInt32BE(VERSION, 0);
  const blob = Buffer.concat([
    MAGIC, version, sshString(key.publicKeyBlob), sshString(namespace), sshString(''), sshString(SIGN_HASH),
    sshString(Buffer.concat([sshString('ssh-ed25519'), sshString(signature)])), // RFC 8709 §6
  ]);
  return armor(LABEL, blob);
}

/** A field for an error message: printable, quoted, cut at 100 characters. */
function shown(bytes: Uint8Array): string {
  return JSON.stringify(Buffer.from(bytes).toString('latin1').slice(0, 100));
}

interface SshsigFields {
  publicKey: Buffer;
  namespace: Buffer;
  hash: string;
  signature: Buffer;
}

/** PROTOCOL.sshsig §2: the blob's fields, with magic, version and trailing data checked. */
function parseBlob(blob: Buffer): SshsigFields | { error: string } {
  if (!blob.subarray(0, MAGIC.length).equals(MAGIC)) return { error: 'not an SSHSIG signature: the blob does not start with "SSHSIG"' };
  const reader = new SshReader(blob.subarray(MAGIC.length));
  const version = reader.uint32('version');
  if (version !== VERSION) return { error: `unsupported SSHSIG version ${version} (supported: ${VERSION})` };
  const publicKey = reader.string('publickey');
  const namespace = reader.string('namespace');
  reader.string('reserved'); // PROTOCOL.sshsig §2: ignored by verifiers, even when not empty.
  const hash = reader.string('hash_algorithm').toString('latin1');
  const signature = reader.string('signature');
  if (reader.remaining !== 0) return { error: `signature blob has ${reader.remaining} bytes of trailing data` };
  return { publicKey, namespace, hash, signature };
}

/** RFC 8709 §6: string "ssh-ed25519" ‖ string signature (64 bytes, RFC 8032 §5.1.6). */
function parseEd25519Signature(encoded: Buffer): Buffer | { error: string } {
  const reader = new SshReader(encoded);
  const type = reader.string('signature algorithm');
  if (type.toString('latin1') !== 'ssh-ed25519') return { error: `signature algorithm is ${shown(type)}, expected "ssh-ed25519"` };
  const raw = reader.string('ed25519 signature');
  if (raw.length !== 64) return { error: `ed25519 signature must be 64 bytes, got ${raw.length}` };
  if (reader.remaining !== 0) return { error: `signature field has ${reader.remaining} bytes of trailing data` };
  return raw;
}

function check(message: Uint8Array, armored: string, namespace: string): SshsigVerification {
  if (namespace === '') return { ok: false, error: 'the expected namespace is empty (PROTOCOL.sshsig forbids it)' };
  const blob = dearmor(armored, LABEL);
  if ('error' in blob) return { ok: false, error: `signature ${blob.error}` };
  const fields = parseBlob(blob);
  if ('error' in fields) return { ok: false, error: fields.error };
  const publicKey = decodeEd25519PublicBlob(fields.publicKey);
  if ('error' in publicKey) return { ok: false, error: `signing key ${publicKey.error}` };
  if (!HASHES.includes(fields.hash)) {
    return { ok: false, error: `unsupported hash algorithm ${shown(Buffer.from(fields.hash, 'latin1'))} (supported: ${HASHES.join(', ')})` };
  }
  if (!fields.namespace.equals(Buffer.from(namespace, 'utf8'))) {
    return { ok: false, error: `namespace mismatch: the signature is for ${shown(fields.namespace)}, expected ${JSON.stringify(namespace)}` };
  }
  const raw = parseEd25519Signature(fields.signature);
  if ('error' in raw) return { ok: false, error: raw.error };
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
  if (!verify(null, signedData(fields.namespace, fields.hash, message), key, raw)) {
    return { ok: false, error: 'bad signature: the message or the signature was altered, or another key signed it' };
  }
  return { ok: true, publicKeyLine: encodeEd25519PublicLine(publicKey, ''), fingerprint: fingerprintSha256(fields.publicKey) };
}

/**
 * Checks an armored SSHSIG signature of `message` as `ssh-keygen -Y verify -n <namespace>`
 * does: the armor, magic "SSHSIG", version 1, a ssh-ed25519 signing key, hash algorithm sha256
 * or sha512, namespace equal to `namespace`, and the ed25519 signature over the
 * PROTOCOL.sshsig §3 signed data.
 *
 * It proves only that the key embedded in the signature signed the message. The caller must
 * then compare the returned `publicKeyLine` (no comment part) or `fingerprint` with the key it
 * trusts — what allowed_signers does for ssh-keygen; without that, anyone's key verifies.
 * @returns `{ ok: true, … }` with the signing key, or `{ ok: false, error }` saying what is
 * wrong. Never throws, whatever the input.
 */
export function verifySshsig(message: Uint8Array, armored: string, namespace: string): SshsigVerification {
  try {
    return check(message, armored, namespace);
  } catch (err) {
    if (err instanceof SshWireError) return { ok: false, error: `signature blob is ${err.message}` };
    return { ok: false, error: `signature cannot be checked: ${err instanceof Error ? err.message : String(err)}` };
  }
}
