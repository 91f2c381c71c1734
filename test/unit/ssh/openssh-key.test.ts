/**
 * @module Tests of the in-house OpenSSH ed25519 key encoder: a fixed vector (RFC 8032 §7.1
 * test 1 key), round trips through ssh2 (parse, sign, verify) over many random keys — the
 * leading-zero public keys that ssh2's own generator breaks included — and `ssh-keygen -y`
 * reading the private key back when OpenSSH is installed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { generateEd25519Key } from '../../../agent/ssh/host-key.js';
import { encodeEd25519PrivateKey, encodeEd25519PublicBlob, encodeEd25519PublicLine } from '../../../agent/ssh/openssh-key.js';
import { requireTools, scratchDir } from './helpers.js';

// RFC 8032 §7.1, TEST 1.
const SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const PUB = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');

test('RFC 8032 test key: blob layout, and ssh2 signs with it what RFC 8032 says', () => {
  const blob = encodeEd25519PublicBlob(PUB);
  assert.equal(blob.toString('hex'), `0000000b${Buffer.from('ssh-ed25519').toString('hex')}00000020${PUB.toString('hex')}`);
  const text = encodeEd25519PrivateKey(SEED, PUB, 'rfc8032', 0x01020304);
  assert.match(text, /^-----BEGIN OPENSSH PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,70}\n)+-----END OPENSSH PRIVATE KEY-----\n$/);
  const key = ssh2.utils.parseKey(text);
  assert.ok(!(key instanceof Error), key instanceof Error ? key.message : '');
  assert.equal(key.type, 'ssh-ed25519');
  assert.equal(key.comment, 'rfc8032');
  assert.deepEqual(key.getPublicSSH(), blob);
  // RFC 8032 §7.1 TEST 1: the signature of the empty message.
  assert.equal(key.sign(Buffer.alloc(0)).toString('hex'),
    'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b');
  assert.equal(encodeEd25519PublicLine(PUB, ''), `ssh-ed25519 ${blob.toString('base64')}`);
});

test('private section is padded to 8 bytes for every comment length', () => {
  for (let n = 0; n < 16; n++) {
    const key = ssh2.utils.parseKey(encodeEd25519PrivateKey(SEED, PUB, 'c'.repeat(n), 7));
    assert.ok(!(key instanceof Error), `comment length ${n}: ${key instanceof Error ? key.message : ''}`);
  }
});

test('wrong lengths are refused', () => {
  assert.throws(() => encodeEd25519PublicBlob(PUB.subarray(1)), /32 bytes, got 31/);
  assert.throws(() => encodeEd25519PrivateKey(SEED.subarray(1), PUB, '', 0), /seed must be 32 bytes/);
});

test('a public key starting with a zero byte (what ssh2 1.17 truncates) stays 32 bytes', () => {
  // Seed found by search: its public key begins with 0x00.
  const seed = Buffer.from('c52f4d7263087229bda4dd616759d92a86a8f3209eab5b8e126674d5e4d4aa93', 'hex');
  const pub = Buffer.from('0066f0b63327335208120971c3465f0f41efd8d2d2b32d5a3dab05a83ea423d4', 'hex');
  const key = ssh2.utils.parseKey(encodeEd25519PrivateKey(seed, pub, 'zero', 1)) as ssh2.ParsedKey;
  assert.deepEqual(key.getPublicSSH(), encodeEd25519PublicBlob(pub));
  const parsedPublic = ssh2.utils.parseKey(encodeEd25519PublicLine(pub, 'zero')) as ssh2.ParsedKey;
  assert.equal(parsedPublic.verify(Buffer.from('data'), key.sign(Buffer.from('data'))), true);
});

test('generateEd25519Key derives RFC 8032\'s public key from its seed, and refuses a seed of another length', () => {
  const pair = generateEd25519Key('rfc8032', SEED);
  assert.equal(pair.publicKey, encodeEd25519PublicLine(PUB, 'rfc8032'));
  const key = ssh2.utils.parseKey(pair.privateKey) as ssh2.ParsedKey;
  assert.deepEqual(key.getPublicSSH(), encodeEd25519PublicBlob(PUB));
  assert.throws(() => generateEd25519Key('short', SEED.subarray(1)), /32 bytes, got 31/);
});

test('random keys round-trip through ssh2', () => {
  for (let i = 0; i < 300; i++) {
    const pair = generateEd25519Key('k');
    assert.equal(Buffer.from(pair.publicKey.split(' ')[1]!, 'base64').length, 51, pair.publicKey);
    if (i % 20 !== 0) continue;
    const priv = ssh2.utils.parseKey(pair.privateKey) as ssh2.ParsedKey;
    const pub = ssh2.utils.parseKey(pair.publicKey) as ssh2.ParsedKey;
    assert.equal(pub.verify(Buffer.from('data'), priv.sign(Buffer.from('data'))), true);
  }
});

test('ssh-keygen reads the private key and derives the same public key', (t) => {
  if (!requireTools(t, { 'ssh-keygen': 'openssh-client' })) return;
  const { dir, cleanup } = scratchDir('keyenc');
  try {
    const pair = generateEd25519Key('rack1');
    const path = join(dir, 'key');
    writeFileSync(path, pair.privateKey, { mode: 0o600 });
    const r = spawnSync('ssh-keygen', ['-y', '-f', path], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), pair.publicKey);
  } finally {
    cleanup();
  }
});
