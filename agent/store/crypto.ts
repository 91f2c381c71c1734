/**
 * @module The secret box: how a Secret is stored at rest. `data` is sealed with AES-256-GCM
 * (NIST SP 800-38D) under the agent's 32-byte key with a fresh 96-bit IV per write (the IV
 * length SP 800-38D §8.2 recommends); the record keeps `metadata` and `type` in clear so
 * preconditions can be checked without the key. The associated data binds the ciphertext to
 * `namespace/name`, so a record copied under another key fails authentication.
 * Randomness (the IV) comes in as an argument.
 * @pure
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { ObjectMeta, Secret } from '../host/types.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import { isJsonObject } from '../json-value.js';

/** Length of the at-rest key in bytes (AES-256). */
export const SECRET_KEY_BYTES = 32;
/** Length of the GCM IV in bytes. */
export const SECRET_IV_BYTES = 12;
/** Length of the GCM authentication tag in bytes. */
const TAG_BYTES = 16;
const CIPHER = 'aes-256-gcm';

/** A Secret as stored in the `secrets` sublevel: `enc` is base64(iv ‖ tag ‖ ciphertext of JSON(data)). */
export interface SecretRecord {
  metadata: ObjectMeta;
  type?: string;
  enc: string;
}

/** The associated data for the secret `namespace/name` (versioned so the format can change). */
function associatedData(namespace: string, name: string): Buffer {
  return Buffer.from(`rackside-secret-v1:${namespace}/${name}`, 'utf8');
}

function checkKey(key: Uint8Array): void {
  if (key.length !== SECRET_KEY_BYTES) {
    throw new RangeError(`secret key must be ${SECRET_KEY_BYTES} bytes, got ${key.length}`);
  }
}

/**
 * Seals `secret` into a {@link SecretRecord} under `key` with the given 12-byte `iv`, which
 * must never repeat for the same key (callers pass `randomBytes(12)`).
 */
export function encodeSecretRecord(secret: Secret, key: Uint8Array, iv: Uint8Array): SecretRecord {
  checkKey(key);
  if (iv.length !== SECRET_IV_BYTES) throw new RangeError(`IV must be ${SECRET_IV_BYTES} bytes, got ${iv.length}`);
  const { namespace, name } = secret.metadata;
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(namespace, name));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secret.data), 'utf8'), cipher.final()]);
  const enc = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  const record: SecretRecord = { metadata: secret.metadata, enc };
  if (secret.type !== undefined) record.type = secret.type;
  return record;
}

function corrupt(namespace: string, name: string, why: string, cause?: unknown): StoreError {
  return new StoreError(
    StoreErrorCode.corrupt,
    `stored secret "${namespace}/${name}" cannot be decrypted: ${why} ` +
      '(the record was altered, or secret.key is not the key it was written with)',
    cause === undefined ? undefined : { cause },
  );
}

/** True when `value` has the shape of a {@link SecretRecord} (metadata name/namespace strings, `enc` string). */
export function isSecretRecord(value: unknown): value is SecretRecord {
  if (!isJsonObject(value) || typeof value.enc !== 'string' || !isJsonObject(value.metadata)) return false;
  return typeof value.metadata.name === 'string' && typeof value.metadata.namespace === 'string';
}

/**
 * Opens `record` (stored under `namespace/name`) with `key` into a Secret with `data` in clear;
 * throws {@link StoreError} `corrupt` naming the secret when authentication or parsing fails.
 */
export function decodeSecretRecord(record: SecretRecord, key: Uint8Array, namespace: string, name: string): Secret {
  checkKey(key);
  const raw = Buffer.from(record.enc, 'base64');
  if (raw.length < SECRET_IV_BYTES + TAG_BYTES) throw corrupt(namespace, name, 'ciphertext too short');
  const iv = raw.subarray(0, SECRET_IV_BYTES);
  const tag = raw.subarray(SECRET_IV_BYTES, SECRET_IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(associatedData(namespace, name));
  decipher.setAuthTag(tag);
  let plaintext: string;
  try {
    plaintext = Buffer.concat([decipher.update(raw.subarray(SECRET_IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch (err) {
    throw corrupt(namespace, name, 'authentication failed', err);
  }
  let data: unknown;
  try {
    data = JSON.parse(plaintext);
  } catch (err) {
    throw corrupt(namespace, name, 'plaintext is not JSON', err);
  }
  if (!isJsonObject(data) || !Object.values(data).every((v) => typeof v === 'string')) {
    throw corrupt(namespace, name, 'data is not a map of strings');
  }
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: record.metadata,
    data: data as Record<string, string>,
  };
  if (record.type !== undefined) secret.type = record.type;
  return secret;
}
