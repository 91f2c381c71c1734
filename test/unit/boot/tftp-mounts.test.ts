/** The TFTP view of the boot HTTP mounts: jailed, mount-limited, cached while unchanged, fresh after a replace. */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createTftpMountReader } from '../../../agent/boot/tftp-mounts.js';

test('serves files under a mount, refuses escapes and other prefixes, and re-reads a replaced file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-mounts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ramdisk = join(dir, 'ramdisk');
  await mkdir(ramdisk);
  await writeFile(join(ramdisk, 'vmlinuz'), 'kernel-1');
  await writeFile(join(dir, 'secret'), 'do not serve');
  await symlink(join(dir, 'secret'), join(ramdisk, 'link-out'));
  const read = createTftpMountReader({ mounts: { ramdisk } });

  const first = await read('ramdisk/vmlinuz');
  assert.equal(first?.toString(), 'kernel-1');
  assert.equal(await read('/ramdisk/vmlinuz'), first, 'a second fetch is the cached buffer');
  for (const refused of ['ramdisk/link-out', 'ramdisk/../secret', 'secret', 'other/vmlinuz', 'ramdisk/missing', 'ramdisk/']) {
    assert.equal(await read(refused), undefined, refused);
  }
  // A rebuild writes a new file and renames it over the old one (new inode): served fresh.
  await writeFile(join(ramdisk, 'vmlinuz.new'), 'kernel-2, longer');
  await rename(join(ramdisk, 'vmlinuz.new'), join(ramdisk, 'vmlinuz'));
  assert.equal((await read('ramdisk/vmlinuz'))?.toString(), 'kernel-2, longer');
});

test('a mount directory that appears after start is picked up', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-mounts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ramdisk = join(dir, 'ramdisk');
  const read = createTftpMountReader({ mounts: { ramdisk } });
  assert.equal(await read('ramdisk/initrd'), undefined);
  await mkdir(ramdisk);
  await writeFile(join(ramdisk, 'initrd'), 'initrd');
  assert.equal((await read('ramdisk/initrd'))?.toString(), 'initrd');
});
