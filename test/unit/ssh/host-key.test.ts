/**
 * @module Tests of the host key: generated once (ed25519, 0600, `.pub` beside it), reused after,
 * refused when readable by others or not a private key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostKeyError, loadOrCreateHostKey } from '../../../agent/ssh/host-key.js';
import { generateKey, scratchDir } from './helpers.js';

test('generated on first start with mode 0600, then reused', async () => {
  const { dir, cleanup } = scratchDir('hostkey');
  try {
    const path = join(dir, 'state', 'sub', 'ssh_host_ed25519_key');
    const first = await loadOrCreateHostKey(path);
    assert.equal(first.created, true);
    assert.match(first.publicKey, /^ssh-ed25519 AAAA\S+ rackside$/);
    assert.match(first.fingerprint, /^SHA256:/);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'state')).mode & 0o777, 0o700);
    assert.equal(readFileSync(`${path}.pub`, 'utf8'), `${first.publicKey}\n`);
    assert.match(readFileSync(path, 'utf8'), /^-----BEGIN OPENSSH PRIVATE KEY-----/);
    const second = await loadOrCreateHostKey(path);
    assert.equal(second.created, false);
    assert.equal(second.fingerprint, first.fingerprint);
    assert.equal(second.privateKey, first.privateKey);
  } finally {
    cleanup();
  }
});

test('concurrent first starts agree on one key', async () => {
  const { dir, cleanup } = scratchDir('hostkey');
  try {
    const path = join(dir, 'key');
    const keys = await Promise.all([loadOrCreateHostKey(path), loadOrCreateHostKey(path), loadOrCreateHostKey(path)]);
    assert.equal(new Set(keys.map((k) => k.fingerprint)).size, 1);
    assert.equal(keys.filter((k) => k.created).length, 1);
  } finally {
    cleanup();
  }
});

test('a key readable by others is refused with the fix in the message', async () => {
  const { dir, cleanup } = scratchDir('hostkey');
  try {
    const path = join(dir, 'key');
    await loadOrCreateHostKey(path);
    chmodSync(path, 0o644);
    await assert.rejects(loadOrCreateHostKey(path), (err: unknown) =>
      err instanceof HostKeyError && /mode 644/.test(err.message) && err.message.includes(`chmod 600 ${path}`));
  } finally {
    cleanup();
  }
});

test('a public key or garbage in the key file is refused', async () => {
  const { dir, cleanup } = scratchDir('hostkey');
  try {
    const pub = join(dir, 'pub');
    writeFileSync(pub, generateKey().publicKey, { mode: 0o600 });
    await assert.rejects(loadOrCreateHostKey(pub), /holds a public key/);
    const junk = join(dir, 'junk');
    writeFileSync(junk, 'not a key', { mode: 0o600 });
    await assert.rejects(loadOrCreateHostKey(junk), HostKeyError);
  } finally {
    cleanup();
  }
});

test('an existing operator-supplied RSA key is used as is', async () => {
  const { dir, cleanup } = scratchDir('hostkey');
  try {
    const path = join(dir, 'rsa');
    writeFileSync(path, generateKey('rsa').privateKey, { mode: 0o600 });
    const key = await loadOrCreateHostKey(path);
    assert.equal(key.created, false);
    assert.match(key.publicKey, /^ssh-rsa /);
  } finally {
    cleanup();
  }
});
