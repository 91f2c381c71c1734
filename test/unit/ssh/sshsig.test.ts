/**
 * @module Tests of SSHSIG signatures (agent/ssh/sshsig.ts): round trip; each malformed or
 * altered signature refused with its own error, and no input that throws; a byte-stable golden
 * signature equal to what `ssh-keygen -Y sign` writes for the same key and message; the
 * OpenSSH private key decoder's refusals; and OpenSSH itself as the peer — `ssh-keygen -Y
 * verify` accepts our signatures and refuses a tampered message, and we accept what
 * `ssh-keygen -Y sign` makes with a rackside key (sha512 and sha256).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519Key } from '../../../agent/ssh/host-key.js';
import { armor, decodeEd25519PrivateKey, dearmor, encodeEd25519PublicBlob, sshString } from '../../../agent/ssh/openssh-key.js';
import { ed25519SigningKeyFromOpenSsh, signSshsig, verifySshsig, type Ed25519SigningKey } from '../../../agent/ssh/sshsig.js';
import { prng } from '../../helpers/prng.js';
import { requireTools, scratchDir } from './helpers.js';

const NS = 'rackside-erase-record';
const SEED = Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1));
const PAIR = generateEd25519Key('rack-1', SEED);
const KEY = ed25519SigningKeyFromOpenSsh(PAIR.privateKey);
const MESSAGE = Buffer.from('{"record":"erase","disk":"/dev/sda","result":"ok"}\n');

// `ssh-keygen -Y sign -f KEY -n rackside-erase-record FILE` (OpenSSH 9.2p1) with KEY the
// rackside key of SEED and FILE holding MESSAGE; the golden test re-runs it when it can.
const GOLDEN = `-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgebVWLo/mVPlAeLES6KmLp5AfhT
rmlb7X4OORC60ElmQAAAAVcmFja3NpZGUtZXJhc2UtcmVjb3JkAAAAAAAAAAZzaGE1MTIA
AABTAAAAC3NzaC1lZDI1NTE5AAAAQID9nLk1a59jJqKWNEJrOjnlDu2qayU/GxqFbGP4WI
3KUPzjQfp5acL4PvH1nFAIuP/EFUNw0ECCeDgx2AHH2Qg=
-----END SSH SIGNATURE-----
`;

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

interface Forgery {
  magic?: string;
  version?: number;
  publicKey?: Buffer;
  namespace?: string;
  reserved?: string;
  hash?: string;
  signatureType?: string;
  trailing?: Buffer;
}

/** An SSHSIG built field by field (PROTOCOL.sshsig §2/§3), validly signed unless a field says otherwise. */
function forge(message: Uint8Array, f: Forgery = {}, key: Ed25519SigningKey = KEY): string {
  const hash = f.hash ?? 'sha512';
  const namespace = f.namespace ?? NS;
  const digest = createHash(hash).update(message).digest();
  const signed = Buffer.concat([Buffer.from('SSHSIG'), sshString(namespace), sshString(''), sshString(hash), sshString(digest)]);
  const raw = sign(null, signed, key.privateKey);
  const blob = Buffer.concat([
    Buffer.from(f.magic ?? 'SSHSIG'), uint32(f.version ?? 1), sshString(f.publicKey ?? key.publicKeyBlob),
    sshString(namespace), sshString(f.reserved ?? ''), sshString(hash),
    sshString(Buffer.concat([sshString(f.signatureType ?? 'ssh-ed25519'), sshString(raw)])), f.trailing ?? Buffer.alloc(0),
  ]);
  return armor('SSH SIGNATURE', blob);
}

/** Flips the lowest bit of the byte at `at`. */
function flip(bytes: Buffer, at: number): void {
  bytes.writeUInt8(bytes.readUInt8(at) ^ 1, at);
}

function blobOf(armored: string): Buffer {
  const blob = dearmor(armored, 'SSH SIGNATURE');
  assert.ok(!('error' in blob));
  return blob;
}

function refused(result: ReturnType<typeof verifySshsig>, pattern: RegExp): void {
  if (result.ok) assert.fail(`verified, expected a refusal matching ${String(pattern)}`);
  assert.match(result.error, pattern);
}

test('round trip: signed, verified, and the signing key reported', () => {
  const armored = signSshsig(MESSAGE, NS, KEY);
  assert.match(armored, /^-----BEGIN SSH SIGNATURE-----\n([A-Za-z0-9+/=]{1,70}\n)+-----END SSH SIGNATURE-----\n$/);
  const result = verifySshsig(MESSAGE, armored, NS);
  assert.deepEqual(result, { ok: true, publicKeyLine: PAIR.publicKey.replace(/ rack-1$/, ''), fingerprint: KEY.fingerprint });
  assert.equal(KEY.publicKeyLine, PAIR.publicKey);
  assert.ok(verifySshsig(Buffer.alloc(0), signSshsig(Buffer.alloc(0), 'x', KEY), 'x').ok, 'empty message');
});

test('golden: ed25519 is deterministic, and the text is what ssh-keygen -Y sign writes', () => {
  assert.equal(signSshsig(MESSAGE, NS, KEY), GOLDEN);
  assert.equal(signSshsig(MESSAGE, NS, ed25519SigningKeyFromOpenSsh(generateEd25519Key('other comment', SEED).privateKey)), GOLDEN);
  assert.ok(verifySshsig(MESSAGE, GOLDEN, NS).ok);
});

test('golden: ssh-keygen -Y sign still writes the same bytes', (t) => {
  if (!requireTools(t, { 'ssh-keygen': 'openssh-client' })) return;
  const { dir, cleanup } = scratchDir('sshsig');
  t.after(cleanup);
  writeFileSync(join(dir, 'key'), PAIR.privateKey, { mode: 0o600 });
  writeFileSync(join(dir, 'record.json'), MESSAGE);
  const r = spawnSync('ssh-keygen', ['-Y', 'sign', '-f', join(dir, 'key'), '-n', NS, join(dir, 'record.json')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(join(dir, 'record.json.sig'), 'utf8'), GOLDEN);
});

test('a wrong namespace, an altered message or an altered signature byte is refused', () => {
  const armored = signSshsig(MESSAGE, NS, KEY);
  refused(verifySshsig(MESSAGE, armored, 'git'), /^namespace mismatch: the signature is for "rackside-erase-record", expected "git"$/);
  refused(verifySshsig(Buffer.from(MESSAGE.toString().replace('ok', 'no')), armored, NS), /^bad signature: /);
  const blob = blobOf(armored);
  flip(blob, blob.length - 10); // inside the 64-byte ed25519 signature, the blob's last field
  refused(verifySshsig(MESSAGE, armor('SSH SIGNATURE', blob), NS), /^bad signature: /);
  refused(verifySshsig(MESSAGE, armored, ''), /expected namespace is empty/);
});

test('a signature by another key verifies, and reports that key: callers must compare it', () => {
  const other = ed25519SigningKeyFromOpenSsh(generateEd25519Key('intruder').privateKey);
  const result = verifySshsig(MESSAGE, signSshsig(MESSAGE, NS, other), NS);
  assert.ok(result.ok);
  assert.equal(result.fingerprint, other.fingerprint);
  assert.notEqual(result.fingerprint, KEY.fingerprint);
  // The embedded key swapped for ours: the signature no longer verifies.
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { publicKey: KEY.publicKeyBlob }, other), NS), /^bad signature: /);
});

test('truncated or broken armor is refused with what is wrong', () => {
  const armored = signSshsig(MESSAGE, NS, KEY);
  refused(verifySshsig(MESSAGE, armored.slice(0, 150), NS), /^signature has no "-----END SSH SIGNATURE-----" line \(truncated\?\)$/);
  refused(verifySshsig(MESSAGE, '', NS), /^signature does not start with the line "-----BEGIN SSH SIGNATURE-----"$/);
  refused(verifySshsig(MESSAGE, ` ${armored}`, NS), /does not start with the line/);
  refused(verifySshsig(MESSAGE, armored.replace('U1NI', 'U1N!'), NS), /^signature is not valid base64/);
  refused(verifySshsig(MESSAGE, `${armored}extra\n`, NS), /^signature has text after the "-----END SSH SIGNATURE-----" line$/);
  // Truncated inside the blob, re-armored: the field it stops in is named.
  refused(verifySshsig(MESSAGE, armor('SSH SIGNATURE', blobOf(armored).subarray(0, 70)), NS), /^signature blob is truncated at namespace$/);
  refused(verifySshsig(MESSAGE, armor('SSH SIGNATURE', blobOf(armored).subarray(0, 8)), NS), /^signature blob is truncated at version$/);
  assert.ok(verifySshsig(MESSAGE, `${armored}\n\n`, NS).ok, 'blank lines after the footer are fine');
  assert.ok(verifySshsig(MESSAGE, armored.replace(/\n(?=[A-Za-z0-9])/g, '\n\n'), NS).ok, 'line breaks inside the base64 are free');
});

test('wrong magic, wrong version, unknown hash, trailing data and other key or signature types: each its own error', () => {
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { magic: 'SSHSIH' }), NS), /^not an SSHSIG signature: the blob does not start with "SSHSIG"$/);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { version: 2 }), NS), /^unsupported SSHSIG version 2 \(supported: 1\)$/);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { version: 0 }), NS), /^unsupported SSHSIG version 0/);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { hash: 'md5' }), NS), /^unsupported hash algorithm "md5" \(supported: sha256, sha512\)$/);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { trailing: Buffer.from([0]) }), NS), /^signature blob has 1 bytes of trailing data$/);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { signatureType: 'rsa-sha2-512' }), NS), /^signature algorithm is "rsa-sha2-512", expected "ssh-ed25519"$/);
  const rsaBlob = Buffer.concat([sshString('ssh-rsa'), sshString(Buffer.from([1, 0, 1])), sshString(Buffer.alloc(129, 7))]);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { publicKey: rsaBlob }), NS), /^signing key is a "ssh-rsa" key; only ssh-ed25519 is supported$/);
  const shortKey = Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.alloc(31))]);
  refused(verifySshsig(MESSAGE, forge(MESSAGE, { publicKey: shortKey }), NS), /ed25519 public key must be 32 bytes, got 31/);
});

test('sha256 signatures verify, and a non-empty reserved field is ignored (PROTOCOL.sshsig §2)', () => {
  assert.ok(verifySshsig(MESSAGE, forge(MESSAGE, { hash: 'sha256' }), NS).ok);
  assert.ok(verifySshsig(MESSAGE, forge(MESSAGE, { reserved: 'future' }), NS).ok);
  assert.equal(forge(MESSAGE), GOLDEN, 'the forger agrees with signSshsig');
});

test('no mangled signature makes verifySshsig throw or succeed', () => {
  const random = prng(0x55515);
  const blob = blobOf(GOLDEN);
  for (let i = 0; i < 500; i++) {
    const mangled = Buffer.from(blob);
    const edits = 1 + Math.floor(random() * 4);
    for (let e = 0; e < edits; e++) mangled[Math.floor(random() * mangled.length)] = Math.floor(random() * 256);
    const cut = random() < 0.3 ? mangled.subarray(0, Math.floor(random() * mangled.length)) : mangled;
    if (cut.equals(blob)) continue;
    const result = verifySshsig(MESSAGE, armor('SSH SIGNATURE', cut), NS);
    assert.equal(result.ok, false, `mangled blob ${cut.toString('hex')} verified`);
  }
});

test('signing needs a namespace', () => {
  assert.throws(() => signSshsig(MESSAGE, '', KEY), RangeError);
});

test('private key decoding: what rackside writes round-trips; other files are refused with the reason', () => {
  const decoded = decodeEd25519PrivateKey(PAIR.privateKey);
  assert.ok(!('error' in decoded));
  assert.deepEqual(decoded.seed, SEED);
  assert.equal(decoded.comment, 'rack-1');
  assert.deepEqual(encodeEd25519PublicBlob(decoded.publicKey), KEY.publicKeyBlob);

  const magic = Buffer.from('openssh-key-v1\0', 'latin1');
  const encrypted = armor('OPENSSH PRIVATE KEY', Buffer.concat([
    magic, sshString('aes256-ctr'), sshString('bcrypt'), sshString(Buffer.concat([sshString(Buffer.alloc(16)), uint32(16)])),
    uint32(1), sshString(KEY.publicKeyBlob), sshString(Buffer.alloc(48)),
  ]));
  assert.deepEqual(decodeEd25519PrivateKey(encrypted), {
    error: 'the key is encrypted with a passphrase (cipher "aes256-ctr", kdf "bcrypt"); rackside needs an unencrypted key',
  });
  assert.throws(() => ed25519SigningKeyFromOpenSsh(encrypted), /^Error: cannot sign with this key: the key is encrypted/);
  const rsa = armor('OPENSSH PRIVATE KEY', Buffer.concat([
    magic, sshString('none'), sshString('none'), sshString(''), uint32(1),
    sshString(Buffer.concat([sshString('ssh-rsa'), sshString(Buffer.from([1, 0, 1])), sshString(Buffer.alloc(129, 7))])), sshString(Buffer.alloc(8)),
  ]));
  assert.deepEqual(decodeEd25519PrivateKey(rsa), { error: 'the key is a "ssh-rsa" key; only ssh-ed25519 is supported' });
  refusedKey('-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n', /^not an OpenSSH private key: found "-----BEGIN RSA PRIVATE KEY-----"/);
  refusedKey('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /^not an OpenSSH private key: found "-----BEGIN PRIVATE KEY-----"/);
  refusedKey(PAIR.publicKey, /^not an OpenSSH private key \(no "-----BEGIN OPENSSH PRIVATE KEY-----" line\)$/);
  refusedKey(PAIR.privateKey.slice(0, 200), /^OpenSSH private key has no "-----END OPENSSH PRIVATE KEY-----" line/);

  const body = dearmor(PAIR.privateKey, 'OPENSSH PRIVATE KEY');
  assert.ok(!('error' in body));
  refusedKey(armor('OPENSSH PRIVATE KEY', body.subarray(0, body.length - 40)), /^OpenSSH private key is truncated at private section$/);
  // The private key field is seed ‖ public key: its copy of the public key is the last one in the file.
  const publicAt = body.lastIndexOf(decoded.publicKey);
  const badCopy = Buffer.from(body);
  flip(badCopy, publicAt + 5);
  refusedKey(armor('OPENSSH PRIVATE KEY', badCopy), /^the private section's public key differs from the file's public key \(corrupt key\)$/);
  const badSeed = Buffer.from(body);
  flip(badSeed, publicAt - 5);
  assert.ok(!('error' in decodeEd25519PrivateKey(armor('OPENSSH PRIVATE KEY', badSeed))), 'the decoder checks structure only');
  assert.throws(() => ed25519SigningKeyFromOpenSsh(armor('OPENSSH PRIVATE KEY', badSeed)), /its public key is not the one its private key derives/);
});

function refusedKey(text: string, pattern: RegExp): void {
  const result = decodeEd25519PrivateKey(text);
  assert.ok('error' in result, 'expected a refusal');
  assert.match(result.error, pattern);
}

test('OpenSSH verifies our signatures and refuses a tampered message (ssh-keygen -Y verify)', (t) => {
  if (!requireTools(t, { 'ssh-keygen': 'openssh-client' })) return;
  const { dir, cleanup } = scratchDir('sshsig');
  t.after(cleanup);
  const pair = generateEd25519Key('rack-1');
  const key = ed25519SigningKeyFromOpenSsh(pair.privateKey);
  const record = join(dir, 'record.json');
  const allowed = join(dir, 'allowed_signers');
  writeFileSync(record, MESSAGE);
  writeFileSync(`${record}.sig`, signSshsig(MESSAGE, NS, key));
  writeFileSync(allowed, `rack-1 ${pair.publicKey}\n`);
  const verifyArgs = ['-Y', 'verify', '-f', allowed, '-I', 'rack-1', '-n', NS, '-s', `${record}.sig`];
  const good = spawnSync('ssh-keygen', verifyArgs, { input: MESSAGE, encoding: 'utf8' });
  assert.equal(good.status, 0, good.stderr);
  assert.match(good.stdout, /Good "rackside-erase-record" signature for rack-1 with ED25519 key SHA256:/);
  assert.ok(good.stdout.includes(key.fingerprint), good.stdout);
  const tampered = spawnSync('ssh-keygen', verifyArgs, { input: Buffer.from(MESSAGE.toString().replace('ok', 'no')), encoding: 'utf8' });
  assert.notEqual(tampered.status, 0, tampered.stdout);
  assert.doesNotMatch(tampered.stdout, /Good/);
  const otherNs = spawnSync('ssh-keygen', verifyArgs.map((arg) => (arg === NS ? 'file' : arg)), { input: MESSAGE, encoding: 'utf8' });
  assert.notEqual(otherNs.status, 0, otherNs.stdout);
});

test('we verify what ssh-keygen -Y sign makes with a rackside key (sha512 and sha256), and load ssh-keygen\'s keys', (t) => {
  if (!requireTools(t, { 'ssh-keygen': 'openssh-client' })) return;
  const { dir, cleanup } = scratchDir('sshsig');
  t.after(cleanup);
  const pair = generateEd25519Key('rack-1');
  const keyPath = join(dir, 'key');
  writeFileSync(keyPath, pair.privateKey, { mode: 0o600 });
  const expected = ed25519SigningKeyFromOpenSsh(pair.privateKey);
  for (const hash of ['sha512', 'sha256']) {
    const file = join(dir, `record-${hash}.json`);
    writeFileSync(file, MESSAGE);
    const r = spawnSync('ssh-keygen', ['-Y', 'sign', '-f', keyPath, '-n', NS, '-O', `hashalg=${hash}`, file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const armored = readFileSync(`${file}.sig`, 'utf8');
    assert.ok(blobOf(armored).includes(Buffer.from(hash)), `ssh-keygen used ${hash}`);
    assert.deepEqual(verifySshsig(MESSAGE, armored, NS), {
      ok: true, publicKeyLine: pair.publicKey.replace(/ rack-1$/, ''), fingerprint: expected.fingerprint,
    });
    refused(verifySshsig(Buffer.concat([MESSAGE, Buffer.from('x')]), armored, NS), /^bad signature: /);
  }
  // Keys ssh-keygen generates load too; a passphrase-protected one is refused as such.
  const plain = join(dir, 'plain');
  const locked = join(dir, 'locked');
  for (const [path, passphrase] of [[plain, ''], [locked, 'secret']] as const) {
    const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'kg', '-f', path], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
  const text = (path: string): string => readFileSync(path, 'utf8');
  assert.equal(ed25519SigningKeyFromOpenSsh(text(plain)).publicKeyLine, text(`${plain}.pub`).trim());
  refusedKey(text(locked), /^the key is encrypted with a passphrase \(cipher "aes256-ctr", kdf "bcrypt"\)/);
});
