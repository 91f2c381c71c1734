import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkBootAssets } from '../../../../bootsvc/ipxe/assets.js';
import { fixForGroup, formatBootAssetReport } from '../../../../bootsvc/ipxe/asset-catalog.js';

function put(root: string, path: string, content = 'binary'): string {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
  return full;
}

function scratch(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'rackside-assets-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

test('an empty machine: everything missing, iPXE required, with the exact fixes', async (t) => {
  const root = scratch(t);
  const report = await checkBootAssets({ systemRoot: root, assetsDir: join(root, 'assets') });
  assert.equal(report.ok, false);
  assert.equal(report.found.length, 0);
  assert.deepEqual(report.missing.map((m) => [m.group, m.required, m.names]), [
    ['ipxe', true, ['undionly.kpxe', 'ipxe.efi', 'snponly.efi']],
    ['secure-boot-x64', false, ['shimx64.efi', 'grubx64.efi']],
    ['arm64', false, ['shimaa64.efi', 'grubaa64.efi']],
  ]);
  assert.equal(report.missing[0]?.fix, 'apt-get install ipxe');
  const text = formatBootAssetReport(report);
  assert.match(text, /MISSING \(required\): undionly\.kpxe, ipxe\.efi, snponly\.efi from ipxe/);
  assert.match(text, /apt-get download shim-signed grub-efi-amd64-signed/);
  assert.match(text, /dpkg-deb -x "\$deb" .*assets/);
  assert.match(text, /APT::Architecture=arm64/);
  assert.match(text, /download shim-signed grub-efi-arm64-signed/);
});

test('Debian layout: installed ipxe (ipxe.efi in /boot), shim and GRUB unpacked into the assets dir', async (t) => {
  const root = scratch(t);
  const assetsDir = join(root, 'var/lib/rackside/boot-assets');
  put(root, 'usr/lib/ipxe/undionly.kpxe');
  put(root, 'usr/lib/ipxe/snponly.efi');
  const ipxeEfi = put(root, 'boot/ipxe.efi');
  const shim = put(assetsDir, 'usr/lib/shim/shimx64.efi.signed');
  const grub = put(assetsDir, 'usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed');
  const report = await checkBootAssets({ systemRoot: root, assetsDir, required: ['ipxe', 'secure-boot-x64'] });
  assert.equal(report.ok, true);
  assert.equal(report.assets.get('ipxe.efi'), ipxeEfi);
  assert.equal(report.assets.get('shimx64.efi'), shim, 'shimx64.efi.signed is served as shimx64.efi');
  assert.equal(report.assets.get('grubx64.efi'), grub, 'grubnetx64.efi.signed is served as grubx64.efi');
  assert.deepEqual(report.missing.map((m) => m.group), ['arm64']);
  assert.equal(report.missing[0]?.required, false);
});

test('search order: override, flat name in the assets dir, unpacked tree, system; empty files do not count', async (t) => {
  const root = scratch(t);
  const assetsDir = join(root, 'assets');
  put(root, 'usr/lib/ipxe/undionly.kpxe');
  const flat = put(assetsDir, 'undionly.kpxe');
  put(root, 'usr/lib/ipxe/snponly.efi', '');
  const override = put(root, 'custom/my-ipxe.efi');
  put(root, 'usr/lib/ipxe/ipxe.efi');
  const report = await checkBootAssets({ systemRoot: root, assetsDir, overrides: { 'ipxe.efi': override } });
  assert.equal(report.assets.get('undionly.kpxe'), flat);
  assert.equal(report.assets.get('ipxe.efi'), override);
  assert.equal(report.assets.has('snponly.efi'), false);
  assert.deepEqual(report.missing.find((m) => m.group === 'ipxe')?.names, ['snponly.efi']);
});

test('a missing override is reported missing, not silently replaced', async (t) => {
  const root = scratch(t);
  put(root, 'usr/lib/grub/arm64-efi-signed/grubnetaa64.efi.signed');
  const report = await checkBootAssets({ systemRoot: root, overrides: { 'grubaa64.efi': join(root, 'nope') } });
  assert.ok(report.missing.find((m) => m.group === 'arm64')?.names.includes('grubaa64.efi'));
});

test('fix recipes quote an assets dir with spaces', () => {
  assert.match(fixForGroup('secure-boot-x64', '/srv/boot assets'), /'\/srv\/boot assets'/);
});
