import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeBootPath, routeMac, type BootRoute } from '../../../../bootsvc/ipxe/boot-paths.js';

const assetNames = new Set(['ipxe.efi', 'undionly.kpxe', 'shimx64.efi', 'grubx64.efi']);

const http: Record<string, [string, BootRoute]> = {
  'per-MAC script, hyphens': ['/boot/52-54-00-AA-bb-01.ipxe', { kind: 'ipxe-script', mac: '52:54:00:aa:bb:01' }],
  'per-MAC script, colons': ['/boot/52:54:00:aa:bb:01.ipxe', { kind: 'ipxe-script', mac: '52:54:00:aa:bb:01' }],
  'per-MAC script, encoded colons': ['/boot/52%3A54%3A00%3Aaa%3Abb%3A01.ipxe', { kind: 'ipxe-script', mac: '52:54:00:aa:bb:01' }],
  'entry script': ['/boot/boot.ipxe', { kind: 'ipxe-entry' }],
  'GRUB entry': ['/grub/grub.cfg', { kind: 'grub-entry' }],
  'GRUB per MAC': ['/grub/52:54:00:aa:bb:01.cfg', { kind: 'grub-config', mac: '52:54:00:aa:bb:01' }],
  'asset at the top': ['/ipxe.efi', { kind: 'asset', name: 'ipxe.efi' }],
  'asset under /boot': ['/boot/ipxe.efi', { kind: 'asset', name: 'ipxe.efi' }],
  'shim\'s //grubx64.efi': ['//grubx64.efi', { kind: 'asset', name: 'grubx64.efi' }],
  'shim\'s /boot//grubx64.efi': ['/boot//grubx64.efi', { kind: 'asset', name: 'grubx64.efi' }],
  'a file': ['/images/os.qcow2', { kind: 'file', path: 'images/os.qcow2' }],
  'dot segments dropped': ['/images/./os.qcow2', { kind: 'file', path: 'images/os.qcow2' }],
  'absolute-looking path stays inside': ['/etc/passwd', { kind: 'file', path: 'etc/passwd' }],
  'shim revocations probe': ['/revocations_sku.efi', { kind: 'probe', name: 'revocations_sku.efi' }],
  'shim sbat probe under boot': ['/boot/revocations_sbat.efi', { kind: 'probe', name: 'boot/revocations_sbat.efi' }],
  'shim certificate probe': ['//shim_certificate_0.efi', { kind: 'probe', name: 'shim_certificate_0.efi' }],
  'GRUB .lst probe': ['/grub/x86_64-efi/command.lst', { kind: 'probe', name: 'grub/x86_64-efi/command.lst' }],
  'GRUB platform grub.cfg probe': ['/grub/arm64-efi/grub.cfg', { kind: 'probe', name: 'grub/arm64-efi/grub.cfg' }],
  '..': ['/images/../../etc/passwd', { kind: 'refused', status: 403, reason: 'path traversal (..)' }],
  '%2e%2e': ['/images/%2e%2e/%2E%2E/etc/passwd', { kind: 'refused', status: 403, reason: 'path traversal (..)' }],
  'encoded slash': ['/images%2f..%2fetc', { kind: 'refused', status: 400, reason: 'encoded slash, backslash or NUL' }],
  'backslash': ['/images\\..\\etc', { kind: 'refused', status: 400, reason: 'backslash in path' }],
  'encoded backslash': ['/images%5c..', { kind: 'refused', status: 400, reason: 'encoded slash, backslash or NUL' }],
  'NUL': ['/ipxe.efi%00.txt', { kind: 'refused', status: 400, reason: 'encoded slash, backslash or NUL' }],
  'bad encoding': ['/a%zz', { kind: 'refused', status: 400, reason: 'malformed percent-encoding' }],
  'control character': ['/a%0ab', { kind: 'refused', status: 400, reason: 'control character in path' }],
  'hidden file': ['/.git/config', { kind: 'refused', status: 404, reason: 'hidden file' }],
  'the root (no listing)': ['/', { kind: 'refused', status: 404, reason: 'no directory listings' }],
};
for (const [name, [path, expected]] of Object.entries(http)) {
  test(`HTTP path: ${name}`, () => {
    assert.deepEqual(routeBootPath(path, { assetNames, percentEncoded: true }), expected);
  });
}

test('TFTP names are taken literally: %2e%2e is a file name, not a traversal', () => {
  assert.deepEqual(routeBootPath('%2e%2e/x', { assetNames, percentEncoded: false }), { kind: 'file', path: '%2e%2e/x' });
  assert.deepEqual(routeBootPath('/undionly.kpxe', { assetNames, percentEncoded: false }), { kind: 'asset', name: 'undionly.kpxe' });
  assert.deepEqual(routeBootPath('../x', { assetNames, percentEncoded: false }), { kind: 'refused', status: 403, reason: 'path traversal (..)' });
  assert.deepEqual(routeBootPath('grub/grub.cfg', { assetNames, percentEncoded: false }), { kind: 'grub-entry' });
});

test('routeMac names the MAC of per-MAC routes only', () => {
  assert.equal(routeMac({ kind: 'grub-config', mac: '52:54:00:aa:bb:01' }), '52:54:00:aa:bb:01');
  assert.equal(routeMac({ kind: 'asset', name: 'ipxe.efi' }), undefined);
});
