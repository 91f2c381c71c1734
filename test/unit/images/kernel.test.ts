import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DebianPackageError, fetchDebianPackage, parseAptCacheDepends, parseAptCacheVersion } from '../../../images/debian-package.js';
import { KernelInputError, resolveBusybox, resolveKernel } from '../../../images/kernel.js';
import { writeFixtureModulesTree } from './fixtures.js';
import { scratchDir } from './helpers.js';

test('parseAptCacheDepends lists Depends (with alternatives) and skips virtual <…> names', () => {
  const out = 'linux-image-amd64\n  Depends: linux-image-6.1.0-57-amd64\n  Recommends: foo\n |Depends: a\n  Depends: <virtual>\n  Depends: b\n';
  assert.deepEqual(parseAptCacheDepends(out), ['linux-image-6.1.0-57-amd64', 'a', 'b']);
  assert.deepEqual(parseAptCacheDepends(''), []);
});

test('parseAptCacheVersion reads the first Version field', () => {
  assert.equal(parseAptCacheVersion('Package: busybox-static\nVersion: 1:1.35.0-4+deb12u1+b1\nArchitecture: amd64\n\nVersion: 0\n'), '1:1.35.0-4+deb12u1+b1');
  assert.equal(parseAptCacheVersion('Package: x\n'), undefined);
});

test('fetchDebianPackage refuses a package name that is not a Debian name', async () => {
  await assert.rejects(fetchDebianPackage('../etc', '/tmp/none'), DebianPackageError);
  await assert.rejects(fetchDebianPackage('foo;reboot', '/tmp/none', '1'), DebianPackageError);
});

test('resolveKernel accepts a configured tree and names its release', async () => {
  const { dir, cleanup } = scratchDir('kernel-tree');
  try {
    const modulesDir = writeFixtureModulesTree(dir, '6.1.0-99-test');
    writeFileSync(join(dir, 'vmlinuz'), 'kernel image');
    const k = await resolveKernel({ kind: 'tree', vmlinuzPath: join(dir, 'vmlinuz'), modulesDir }, join(dir, 'cache'));
    assert.equal(k.release, '6.1.0-99-test');
    assert.equal(k.vmlinuzSha256, createHash('sha256').update('kernel image').digest('hex'));
    assert.deepEqual(k.origin, { kind: 'file', path: join(dir, 'vmlinuz') });
  } finally {
    cleanup();
  }
});

test('resolveKernel and resolveBusybox explain missing configured files', async () => {
  const { dir, cleanup } = scratchDir('kernel-bad');
  try {
    const modulesDir = writeFixtureModulesTree(dir, '6.1.0-99-test');
    await assert.rejects(resolveKernel({ kind: 'tree', vmlinuzPath: join(dir, 'nope'), modulesDir }, dir), KernelInputError);
    writeFileSync(join(dir, 'vmlinuz'), 'k');
    await assert.rejects(resolveKernel({ kind: 'tree', vmlinuzPath: join(dir, 'vmlinuz'), modulesDir: join(dir, 'empty') }, dir), /modules\.dep is missing/);
    await assert.rejects(resolveBusybox({ kind: 'file', path: join(dir, 'nope') }, dir), KernelInputError);
  } finally {
    cleanup();
  }
});
