import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBootCertificate, subjectAltName } from '../../../agent/boot/boot-ca.js';

test('subjectAltName: addresses as IP and DNS entries, names as DNS, no duplicates', () => {
  assert.equal(subjectAltName(['10.0.0.1', 'fd00::1', 'rack-a', '10.0.0.1']), 'IP:10.0.0.1,DNS:10.0.0.1,IP:fd00::1,DNS:fd00::1,DNS:rack-a');
});

test('boot CA: made once (key 0600), reused across calls; the server certificate is issued again only when the names change', async (t) => {
  const state = await mkdtemp(join(tmpdir(), 'rackside-boot-ca-'));
  t.after(() => rm(state, { recursive: true, force: true }));
  const first = await ensureBootCertificate(state, ['10.0.0.1', 'rack-a']);
  assert.equal(first.caCreated, true);
  assert.equal(first.issued, true);
  assert.equal((await stat(first.caKeyPath)).mode & 0o777, 0o600);
  assert.equal((await stat(first.keyPath)).mode & 0o777, 0o600);
  const ca = new X509Certificate(first.caPem);
  assert.equal(ca.ca, true);
  assert.equal(ca.publicKey.asymmetricKeyType, 'rsa', 'RSA: EDK2 TLS has no elliptic curves');
  const leaf = new X509Certificate(first.chainPem);
  assert.ok(leaf.verify(ca.publicKey), 'the server certificate is signed by the CA');
  assert.equal(leaf.ca, false);
  assert.equal(leaf.checkIP('10.0.0.1'), '10.0.0.1');
  assert.equal(leaf.checkHost('rack-a'), 'rack-a');
  assert.equal(leaf.checkIP('10.0.0.2'), undefined);

  const again = await ensureBootCertificate(state, ['10.0.0.1', 'rack-a']);
  assert.equal(again.caCreated, false);
  assert.equal(again.issued, false);
  assert.equal(again.caPem, first.caPem);
  assert.equal(again.chainPem, first.chainPem);

  const moved = await ensureBootCertificate(state, ['10.0.0.9', 'rack-a']);
  assert.equal(moved.caPem, first.caPem, 'the CA stays (it is enrolled in firmware)');
  assert.equal(moved.issued, true);
  assert.equal(new X509Certificate(moved.chainPem).checkIP('10.0.0.9'), '10.0.0.9');

  const late = await ensureBootCertificate(state, ['10.0.0.9', 'rack-a'], { nowMs: Date.now() + 380 * 86_400_000 });
  assert.equal(late.issued, true, 'issued again within 30 days of its end');
  await assert.rejects(ensureBootCertificate(state, []), /at least one name/);
});
