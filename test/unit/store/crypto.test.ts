/** @module The secret box (agent/store/crypto.ts) with fixed keys and IVs. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeSecretRecord, encodeSecretRecord } from '../../../agent/store/crypto.js';
import { StoreError } from '../../../agent/store/index.js';
import { makeSecret } from './fixtures.js';

const key = Buffer.alloc(32, 1);
const iv = Buffer.alloc(12, 2);
const secret = makeSecret('bmc', { password: 'hunter2' });

test('encode then decode returns the secret; the record carries metadata and type but no data', () => {
  const record = encodeSecretRecord(secret, key, iv);
  assert.deepEqual(Object.keys(record).sort(), ['enc', 'metadata', 'type']);
  assert.equal(Buffer.from(record.enc, 'base64').subarray(0, 12).toString('hex'), iv.toString('hex'), 'IV first');
  assert.equal(Buffer.from(record.enc, 'base64').length, 12 + 16 + JSON.stringify(secret.data).length);
  assert.deepEqual(decodeSecretRecord(record, key, 'default', 'bmc'), secret);
});

test('a fresh IV gives a different ciphertext for the same data', () => {
  assert.notEqual(encodeSecretRecord(secret, key, iv).enc, encodeSecretRecord(secret, key, Buffer.alloc(12, 3)).enc);
});

const failures: Record<string, { key: Buffer; namespace: string; name: string; enc?: string }> = {
  'the wrong key': { key: Buffer.alloc(32, 9), namespace: 'default', name: 'bmc' },
  'another name (associated data)': { key, namespace: 'default', name: 'other' },
  'another namespace (associated data)': { key, namespace: 'rack-2', name: 'bmc' },
  'a truncated ciphertext': { key, namespace: 'default', name: 'bmc', enc: Buffer.alloc(20).toString('base64') },
};
for (const [name, c] of Object.entries(failures)) {
  test(`decoding with ${name} throws a StoreError naming the secret`, () => {
    const record = encodeSecretRecord(secret, key, iv);
    if (c.enc !== undefined) record.enc = c.enc;
    assert.throws(
      () => decodeSecretRecord(record, c.key, c.namespace, c.name),
      (err: unknown) => err instanceof StoreError && err.message.includes(`"${c.namespace}/${c.name}"`),
    );
  });
}

test('a key or IV of the wrong length is refused', () => {
  assert.throws(() => encodeSecretRecord(secret, Buffer.alloc(16), iv), /32 bytes/);
  assert.throws(() => encodeSecretRecord(secret, key, Buffer.alloc(16)), /IV must be 12 bytes/);
});
