// Builds the real ramdisk from Debian's linux-image-amd64 and busybox-static (fetched with apt,
// unpacked, never installed) and checks it with GNU cpio. Needs apt access; under
// RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildRamdisk } from '../../images/index.js';
import { DebianPackageError } from '../../images/debian-package.js';
import type { BuildRamdiskResult } from '../../images/builder.js';
import { integrationRequired, requireTools, run, scratchDir } from '../unit/images/helpers.js';

/** Shared across runs: fetched packages are cached by version. */
const cacheDir = join(tmpdir(), 'rackside-images-cache');
const epoch = 1_700_000_000;

async function buildOrSkip(t: { skip: (reason: string) => void }, outputDir: string): Promise<BuildRamdiskResult | undefined> {
  try {
    return await buildRamdisk({ outputDir, cacheDir, sourceDateEpoch: epoch, compression: 'gzip', agentVersion: '0.1.0-it' });
  } catch (err) {
    if (err instanceof DebianPackageError && !integrationRequired) {
      t.skip(`Debian packages unavailable: ${err.message}`);
      return undefined;
    }
    throw err;
  }
}

test('the ramdisk built from Debian packages holds busybox, init, the virtio modules and modules.dep; builds are reproducible', { timeout: 600_000 }, async (t) => {
  if (!requireTools(t, { 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod', cpio: 'cpio' })) return;
  const { dir, cleanup } = scratchDir('images-build');
  try {
    const one = await buildOrSkip(t, join(dir, 'one'));
    if (one === undefined) return;
    const release = one.manifest.inputs.kernel.release;
    assert.match(release, /^\d+\.\d+\.\d+-\d+-amd64$/);
    assert.equal(one.manifest.inputs.kernel.origin.kind, 'debian');
    assert.equal(one.manifest.inputs.busybox.origin.kind, 'debian');

    const archive = gunzipSync(readFileSync(one.paths.initrd));
    const listing = new Set(run('cpio', ['-t', '--quiet'], { input: archive }).trim().split('\n'));
    for (const path of ['init', 'bin/busybox', 'bin/sh', 'sbin/udhcpc', 'usr/bin/wget', 'dev/console', 'dev/null', 'usr/lib/rackside/rackside-agent.sh', `lib/modules/${release}/modules.dep`]) {
      assert.ok(listing.has(path), `${path} in the initrd`);
    }
    const virtio = ['virtio', 'virtio_ring', 'virtio_pci', 'virtio_pci_modern_dev', 'virtio_pci_legacy_dev', 'virtio_net', 'failover', 'net_failover', 'virtio_blk', 'virtio_scsi'];
    const modules = one.manifest.inputs.modules.map((m) => m.name);
    for (const name of virtio) {
      const m = one.manifest.inputs.modules.find((x) => x.name === name);
      assert.ok(m !== undefined, `${name} included`);
      assert.ok(listing.has(`lib/modules/${release}/${m.path}`), `${m.path} in the initrd`);
    }
    assert.ok(modules.indexOf('virtio_ring') < modules.indexOf('virtio_pci'));
    assert.ok(modules.indexOf('net_failover') < modules.indexOf('virtio_net'));
    assert.ok(modules.indexOf('libata') < modules.indexOf('ahci'));
    assert.ok(modules.indexOf('scsi_mod') < modules.indexOf('sd_mod'));
    assert.deepEqual(one.manifest.missing.modules, [], 'every default module exists in the Debian kernel');

    const two = await buildOrSkip(t, join(dir, 'two'));
    if (two === undefined) return;
    assert.deepEqual(two.manifest.outputs, one.manifest.outputs, 'same inputs, same sha256');
    assert.equal(readFileSync(two.paths.manifest, 'utf8'), readFileSync(one.paths.manifest, 'utf8'));
  } finally {
    cleanup();
  }
});
