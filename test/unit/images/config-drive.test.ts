import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildConfigDrive, type ConfigDriveContent } from '../../../images/index.js';
import { ConfigDriveError, renderConfigDriveFiles, renderMetaData } from '../../../images/config-drive-files.js';
import { requireTools, run, scratchDir } from './helpers.js';

const content: ConfigDriveContent = {
  uuid: '4f0b7c4e-1111-2222-3333-444455556666',
  name: 'node-7',
  namespace: 'metal3',
  publicKeys: ['ssh-ed25519 AAAAC3Nz test@rack'],
  userData: '#cloud-config\nhostname: node-7\n',
  networkData: { links: [{ id: 'eth0', type: 'phy', ethernet_mac_address: '52:54:00:12:34:56' }], networks: [{ id: 'n0', link: 'eth0', type: 'ipv4_dhcp' }], services: [] },
  metaData: { 'availability_zone': 'rack-1', name: 'overridden' },
};

test('meta_data.json has metal3 defaults, hostname and public keys, with metaData merged over them', () => {
  assert.deepEqual(renderMetaData(content), {
    uuid: content.uuid, 'metal3-namespace': 'metal3', 'metal3-name': 'node-7', 'local-hostname': 'node-7', local_hostname: 'node-7',
    name: 'overridden', hostname: 'node-7', public_keys: { 'key-0': 'ssh-ed25519 AAAAC3Nz test@rack' }, availability_zone: 'rack-1',
  });
  assert.deepEqual(renderConfigDriveFiles(content).map((f) => f.path), ['openstack/latest/meta_data.json', 'openstack/latest/network_data.json', 'openstack/latest/user_data']);
  assert.deepEqual(renderConfigDriveFiles({ uuid: 'u', name: 'n' }).map((f) => f.path), ['openstack/latest/meta_data.json']);
  assert.throws(() => renderMetaData({ uuid: '', name: 'n' }), ConfigDriveError);
  assert.throws(() => renderConfigDriveFiles({ uuid: 'u', name: 'n', networkData: () => 1 }), /JSON-serializable/);
});

test('the ISO config drive is labelled config-2, reproducible, and holds the files cloud-init reads (loop-mounted)', async (t) => {
  if (!requireTools(t, { xorriso: 'xorriso', blkid: 'util-linux' })) return;
  const { dir, cleanup } = scratchDir('config-drive');
  try {
    const one = await buildConfigDrive(content, { outputPath: join(dir, 'one.iso'), sourceDateEpoch: 1_700_000_000 });
    const two = await buildConfigDrive(content, { outputPath: join(dir, 'two.iso'), sourceDateEpoch: 1_700_000_000 });
    assert.equal(one.sha256, two.sha256);
    assert.equal(run('blkid', ['-o', 'value', '-s', 'LABEL', join(dir, 'one.iso')]).trim(), 'config-2');
    assert.equal(run('blkid', ['-o', 'value', '-s', 'TYPE', join(dir, 'one.iso')]).trim(), 'iso9660');
    const mnt = join(dir, 'mnt');
    mkdirSync(mnt);
    let mounted = false;
    try {
      execFileSync('mount', ['-o', 'loop,ro', join(dir, 'one.iso'), mnt], { stdio: 'ignore' });
      mounted = true;
    } catch {
      // no loop devices here: read the files with xorriso instead
    }
    try {
      const read = (p: string): string => {
        if (mounted) return readFileSync(join(mnt, p), 'utf8');
        run('xorriso', ['-osirrox', 'on', '-indev', join(dir, 'one.iso'), '-extract', `/${p}`, join(dir, 'x')]);
        return readFileSync(join(dir, 'x'), 'utf8');
      };
      assert.equal(read('openstack/latest/user_data'), content.userData);
      assert.equal((JSON.parse(read('openstack/latest/meta_data.json')) as { uuid: string }).uuid, content.uuid);
      assert.deepEqual(JSON.parse(read('openstack/latest/network_data.json')), content.networkData);
    } finally {
      if (mounted) execFileSync('umount', [mnt]);
    }
  } finally {
    cleanup();
  }
});

test('the VFAT config drive is labelled CONFIG-2 and holds the same files', async (t) => {
  if (!requireTools(t, { 'mkfs.vfat': 'dosfstools', mtype: 'mtools', blkid: 'util-linux' })) return;
  const { dir, cleanup } = scratchDir('config-drive-vfat');
  try {
    await buildConfigDrive(content, { outputPath: join(dir, 'cd.img'), format: 'vfat' });
    assert.equal(run('blkid', ['-o', 'value', '-s', 'LABEL', join(dir, 'cd.img')]).trim(), 'CONFIG-2');
    const userData = execFileSync('mtype', ['-i', join(dir, 'cd.img'), '::/openstack/latest/user_data'], { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' }, encoding: 'utf8' });
    assert.equal(userData, content.userData);
  } finally {
    cleanup();
  }
});
