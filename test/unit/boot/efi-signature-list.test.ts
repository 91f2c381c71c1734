import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEfiGuid, encodeEfiSignatureLists, EFI_CERT_X509_GUID, pemCertificates } from '../../../agent/boot/efi-signature-list.js';

const X509_GUID_BYTES = 'a159c0a5e494a74a87b5ab155c2bf072';
const OWNER_BYTES = '6c2a8e5d1f3b574e9a0c72b4e1f6d839';

test('EFI_GUID bytes: Data1-3 little-endian, Data4 as written (EFI_CERT_X509_GUID)', () => {
  assert.equal(encodeEfiGuid(EFI_CERT_X509_GUID).toString('hex'), X509_GUID_BYTES);
  assert.throws(() => encodeEfiGuid('a5c059a1-94e4-4aa7-87b5'), /not a GUID/);
});

test('golden: one 3-byte certificate → one EFI_SIGNATURE_LIST of 47 bytes', () => {
  const blob = encodeEfiSignatureLists([Buffer.from([0x30, 0x01, 0x00])]);
  const expected = [
    X509_GUID_BYTES, // SignatureType
    '2f000000', // SignatureListSize = 28 + 16 + 3
    '00000000', // SignatureHeaderSize
    '13000000', // SignatureSize = 16 + 3
    OWNER_BYTES, // SignatureOwner
    '300100', // the certificate
  ].join('');
  assert.equal(blob.toString('hex'), expected);
});

test('two certificates → two lists back to back, each sized for its own certificate', () => {
  const a = Buffer.alloc(100, 1);
  const b = Buffer.alloc(7, 2);
  const blob = encodeEfiSignatureLists([a, b]);
  assert.equal(blob.length, (44 + 100) + (44 + 7));
  assert.equal(blob.readUInt32LE(16), 144);
  assert.equal(blob.readUInt32LE(24), 116);
  assert.equal(blob.subarray(144, 160).toString('hex'), X509_GUID_BYTES);
  assert.equal(blob.readUInt32LE(144 + 16), 51);
  assert.deepEqual(blob.subarray(144 + 44), b);
  assert.throws(() => encodeEfiSignatureLists([]), /at least one certificate/);
});

test('pemCertificates: every CERTIFICATE block, in order, other blocks skipped', () => {
  const pem = [
    '-----BEGIN CERTIFICATE-----', Buffer.from('first').toString('base64'), '-----END CERTIFICATE-----',
    '-----BEGIN PRIVATE KEY-----', 'AAAA', '-----END PRIVATE KEY-----',
    '-----BEGIN CERTIFICATE-----', Buffer.from('second one').toString('base64').replace(/(.{4})/g, '$1\n'), '-----END CERTIFICATE-----', '',
  ].join('\n');
  assert.deepEqual(pemCertificates(pem).map((d) => d.toString()), ['first', 'second one']);
});
