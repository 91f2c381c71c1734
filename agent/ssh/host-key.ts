/**
 * @module The SSH server's host key: an ed25519 key generated on first start (OpenSSH's
 * "openssh-key-v1" private key format, as `ssh-keygen -t ed25519` writes it) and kept in the
 * state directory with mode 0600, then reused so clients' known_hosts entries stay valid. The
 * public half is written beside it as `<path>.pub` for operators to read the fingerprint.
 * Like sshd, an existing private key readable by group or others is refused.
 */
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import ssh2 from 'ssh2';
import { fingerprintSha256 } from './key-blob.js';
import { ED25519_PKCS8_PREFIX, ED25519_SPKI_PREFIX, encodeEd25519PrivateKey, encodeEd25519PublicLine } from './openssh-key.js';

/** A loaded host key. */
export interface HostKey {
  /** The private key text (OpenSSH format), for ssh2's `hostKeys`. */
  privateKey: string;
  /** The public key line (`ssh-ed25519 AAAA… comment`), what clients put in known_hosts. */
  publicKey: string;
  /** `SHA256:…`, what `ssh` shows on first connection. */
  fingerprint: string;
  /** True when this call generated the key. */
  created: boolean;
}

/** Stable code of {@link HostKeyError}. */
export const HOST_KEY_ERROR_CODE = 'RACKSIDE_ERR_SSH_HOST_KEY';

/** The host key file exists but cannot be used (permissions, format). */
export class HostKeyError extends Error {
  readonly code = HOST_KEY_ERROR_CODE;
  constructor(message: string) {
    super(message);
    this.name = 'HostKeyError';
  }
}

/**
 * Generates an ed25519 key pair and returns it in OpenSSH formats: the private key file text and
 * the public key line. (Not ssh2's generator: see openssh-key.ts.) The private key is 32 random
 * bytes (RFC 8032 §5.1.5); node:crypto derives the public key from it. Not `generateKeyPairSync`
 * and a JWK export: on Node 20 the export holds the key's mutex while it allocates, and a
 * garbage collection in that allocation that frees the generating job locks the same mutex —
 * the process hung for good (seen once in 300 generations in CI; main thread in
 * `ExportJWKEdKey` → GC → `~KeyGenJob` → `pthread_mutex_lock`). `seed`: tests pass a known one.
 */
export function generateEd25519Key(comment: string, seed: Buffer = randomBytes(32)): { privateKey: string; publicKey: string } {
  if (seed.length !== 32) throw new RangeError(`an ed25519 seed is 32 bytes, got ${String(seed.length)}`);
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  if (spki.length !== ED25519_SPKI_PREFIX.length + 32 || !spki.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) {
    throw new Error('node:crypto exported an ed25519 public key in an unexpected form');
  }
  const pub = spki.subarray(ED25519_SPKI_PREFIX.length);
  return {
    privateKey: encodeEd25519PrivateKey(seed, pub, comment, randomBytes(4).readUInt32BE(0)),
    publicKey: encodeEd25519PublicLine(pub, comment),
  };
}

function describe(path: string, privateKey: string, created: boolean): HostKey {
  const parsed = ssh2.utils.parseKey(privateKey);
  if (parsed instanceof Error) throw new HostKeyError(`host key ${path}: ${parsed.message}`);
  if (!parsed.isPrivateKey()) throw new HostKeyError(`host key ${path} holds a public key; it must be the private key`);
  const blob = parsed.getPublicSSH();
  const publicKey = `${parsed.type} ${blob.toString('base64')}${parsed.comment === '' ? '' : ` ${parsed.comment}`}`;
  return { privateKey, publicKey, fingerprint: fingerprintSha256(blob), created };
}

function isMissing(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'ENOENT';
}

function isExisting(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'EEXIST';
}

async function readExisting(path: string): Promise<HostKey> {
  const info = await stat(path);
  if ((info.mode & 0o077) !== 0) {
    throw new HostKeyError(
      `host key ${path} is accessible by others (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 ${path}`,
    );
  }
  return describe(path, await readFile(path, 'utf8'), false);
}

/**
 * Loads the host key at `path`, generating an ed25519 key there on first start (parent
 * directories created 0700, key 0600, `<path>.pub` 0644). Concurrent first starts agree on one key.
 * @throws HostKeyError when an existing file is unusable; fs errors as they come.
 */
export async function loadOrCreateHostKey(path: string, comment = 'rackside'): Promise<HostKey> {
  try {
    return await readExisting(path);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const pair = generateEd25519Key(comment);
  // Written aside, then linked into place: link(2) fails if the name exists, so a concurrent
  // start never reads a half-written key and exactly one key wins.
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, pair.privateKey, { mode: 0o600, flag: 'wx' });
  try {
    await chmod(temporary, 0o600); // the umask may have narrowed it further; make it exact
    await link(temporary, path);
  } catch (err) {
    if (isExisting(err)) return await readExisting(path);
    throw err;
  } finally {
    await rm(temporary, { force: true });
  }
  const key = describe(path, pair.privateKey, true);
  await writeFile(`${path}.pub`, `${key.publicKey}\n`, { mode: 0o644 });
  return key;
}
