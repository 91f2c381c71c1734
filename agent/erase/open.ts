/**
 * @module Opens the erase record book with its signing key: `<stateDir>/erase_signing_ed25519_key`
 * (0600, generated on first start like the SSH host key, with `.pub` beside it for operators to
 * take the fingerprint from), separate from the SSH server's host key.
 */
import { join } from 'node:path';
import { ed25519SigningKeyFromOpenSsh, loadOrCreateHostKey, signSshsig } from '../ssh/index.js';
import type { KeyValue } from '../store/types.js';
import { EraseRecordBook } from './book.js';
import { ERASE_RECORD_NAMESPACE } from './record.js';

/** File name of the signing key in the state directory. */
export const ERASE_SIGNING_KEY_FILE = 'erase_signing_ed25519_key';

/**
 * The book over `kv`, signing with the key in `stateDir` (created on first call).
 * @throws HostKeyError when the key file exists but is unusable (permissions, format).
 */
export async function openEraseRecordBook(kv: KeyValue<unknown>, stateDir: string, agentId: string): Promise<EraseRecordBook> {
  const file = await loadOrCreateHostKey(join(stateDir, ERASE_SIGNING_KEY_FILE), `rackside-erase-records@${agentId}`);
  const key = ed25519SigningKeyFromOpenSsh(file.privateKey);
  return new EraseRecordBook(kv, {
    sign: (document) => signSshsig(document, ERASE_RECORD_NAMESPACE, key),
    publicKey: key.publicKeyLine,
    fingerprint: key.fingerprint,
  });
}
