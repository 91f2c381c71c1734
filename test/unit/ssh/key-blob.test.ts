/**
 * @module Tests of key blobs, fingerprints (cross-checked against ssh-keygen's format) and
 * host key pins for the tunnel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeKeyBlob, fingerprintSha256, keyTypeOfBlob, matchesHostKeyPin, parseHostKeyPin } from '../../../agent/ssh/key-blob.js';
import { generateKey } from './helpers.js';

const key = generateKey('ed25519', 'bastion');
const other = generateKey('ed25519', 'other');
const data = key.publicKey.split(' ')[1]!;
const blob = Buffer.from(data, 'base64');

test('fingerprint has the ssh-keygen form and is stable', () => {
  assert.match(fingerprintSha256(blob), /^SHA256:[A-Za-z0-9+/]{43}$/);
  assert.equal(fingerprintSha256(blob), fingerprintSha256(Buffer.from(blob)));
  assert.equal(keyTypeOfBlob(blob), 'ssh-ed25519');
  assert.equal(keyTypeOfBlob(Buffer.from([0, 0, 0, 9, 1])), undefined);
});

test('decodeKeyBlob checks the inner type', () => {
  assert.ok(Buffer.isBuffer(decodeKeyBlob(data, 'ssh-ed25519')));
  assert.deepEqual(decodeKeyBlob(data, 'ssh-rsa'), { error: 'key data is a ssh-ed25519 key, but the line says ssh-rsa' });
});

const pins: Record<string, { text: string; matches: boolean }> = {
  'public key line': { text: key.publicKey, matches: true },
  'known_hosts line': { text: `[bastion.example]:22 ${key.publicKey.split(' ').slice(0, 2).join(' ')}`, matches: true },
  'fingerprint': { text: fingerprintSha256(blob), matches: true },
  'fingerprint with padding and blanks': { text: `  ${fingerprintSha256(blob)}=  `, matches: true },
  'another key': { text: other.publicKey, matches: false },
  'another fingerprint': { text: fingerprintSha256(Buffer.from(other.publicKey.split(' ')[1]!, 'base64')), matches: false },
};

for (const [name, c] of Object.entries(pins)) {
  test(`host key pin: ${name}`, () => {
    const pin = parseHostKeyPin(c.text);
    assert.ok(!('error' in pin), JSON.stringify(pin));
    assert.equal(matchesHostKeyPin(pin, blob), c.matches);
  });
}

test('bad pins say what was expected', () => {
  assert.match((parseHostKeyPin('bastion.example') as { error: string }).error, /SHA256:… fingerprint/);
  assert.match((parseHostKeyPin('SHA256:short') as { error: string }).error, /expected/);
  assert.match((parseHostKeyPin(`ssh-dss ${data}`) as { error: string }).error, /unsupported host key type ssh-dss/);
  assert.match((parseHostKeyPin(`ssh-rsa ${data}`) as { error: string }).error, /but the line says ssh-rsa/);
});
