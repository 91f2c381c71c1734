/**
 * @module The at-rest key file `<stateDir>/secret.key`: 32 random bytes, mode 0600. Created
 * atomically (written to a private temp file, fsynced, then hard-linked into place, which fails
 * rather than overwrites if another writer won), and checked on every start.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SECRET_KEY_BYTES } from './crypto.js';
import { StoreError, StoreErrorCode } from './store-error.js';

/** File name of the key inside the state directory. */
export const SECRET_KEY_FILE = 'secret.key';

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

function keyError(path: string, problem: string, cause?: unknown): StoreError {
  return new StoreError(
    StoreErrorCode.keyFile,
    `secret key file ${path} ${problem}; the agent refuses to start (restore the original key file; ` +
      'a new key cannot decrypt existing secrets)',
    cause === undefined ? undefined : { cause },
  );
}

/** Reads and checks an existing key file; undefined when it does not exist. */
async function readKey(path: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw keyError(path, `cannot be opened (${errorCode(err) ?? String(err)})`, err);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw keyError(path, 'is not a regular file');
    const perm = stat.mode & 0o777;
    if ((perm & 0o077) !== 0) {
      throw keyError(
        path,
        `has mode 0${perm.toString(8)} and is accessible by group or others (it must be 0600: chmod 600 ${path})`,
      );
    }
    if (stat.size !== SECRET_KEY_BYTES) throw keyError(path, `is ${stat.size} bytes, expected ${SECRET_KEY_BYTES}`);
    const key = Buffer.alloc(SECRET_KEY_BYTES);
    const { bytesRead } = await handle.read(key, 0, SECRET_KEY_BYTES, 0);
    if (bytesRead !== SECRET_KEY_BYTES) throw keyError(path, `could only be read to ${bytesRead} bytes`);
    return key;
  } finally {
    await handle.close();
  }
}

/** Writes a fresh key to a temp file and links it to `path`; leaves `path` alone if it appeared meanwhile. */
async function createKey(stateDir: string, path: string): Promise<void> {
  const tmp = join(stateDir, `.${SECRET_KEY_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(randomBytes(SECRET_KEY_BYTES));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(tmp, path);
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
    return;
  } finally {
    await unlink(tmp);
  }
  // Make the new directory entry durable before any secret is encrypted under this key.
  const dir = await open(stateDir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * Returns the 32-byte at-rest key from `<stateDir>/secret.key`, creating it (mode 0600) when
 * missing; throws {@link StoreError} `keyFile` when the file has the wrong size or type or is
 * accessible by group or others.
 */
export async function loadOrCreateSecretKey(stateDir: string): Promise<Buffer> {
  const path = join(stateDir, SECRET_KEY_FILE);
  const existing = await readKey(path);
  if (existing !== undefined) return existing;
  await createKey(stateDir, path);
  const key = await readKey(path);
  if (key === undefined) throw keyError(path, 'vanished while being created');
  return key;
}
