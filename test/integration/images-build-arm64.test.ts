// Builds the arm64 ramdisk on this (amd64) head node from Debian's arm64 packages — fetched
// through the private foreign-architecture apt (images/foreign-apt.ts), unpacked, never
// installed — twice, and checks its contents without running any of it: the ELF machine of
// busybox, the tools and their libraries, the C helpers (cross-compiled static), the modules of
// the arm64 kernel. Needs apt access and Debian's arm64 cross compiler;
// under RACKSIDE_REQUIRE_INTEGRATION=1 a missing tool or package is a failure, otherwise a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildRamdisk } from '../../images/index.js';
import type { BuildRamdiskResult } from '../../images/builder.js';
import { decodeCpio } from '../../images/cpio.js';
import { DebianPackageError } from '../../images/debian-package.js';
import { EM_AARCH64, parseElfDynamic } from '../../images/elf.js';
import { DEFAULT_HELPERS } from '../../images/helpers.js';
import { integrationRequired, requireTools, scratchDir } from '../unit/images/helpers.js';

const cacheDir = join(tmpdir(), 'rackside-images-cache');
const epoch = 1_700_000_000;

async function buildOrSkip(t: { skip: (reason: string) => void }, outputDir: string): Promise<BuildRamdiskResult | undefined> {
  try {
    return await buildRamdisk({ arch: 'arm64', outputDir, cacheDir, sourceDateEpoch: epoch, compression: 'gzip', agentVersion: '0.1.0-it' });
  } catch (err) {
    if (err instanceof DebianPackageError && !integrationRequired) {
      t.skip(`Debian arm64 packages unavailable: ${err.message}`);
      return undefined;
    }
    throw err;
  }
}

test('the arm64 ramdisk built on this head node holds arm64 busybox, tools, libraries and modules of the arm64 kernel; builds are reproducible', { timeout: 900_000 }, async (t) => {
  if (process.arch === 'arm64') {
    t.skip('the head node is arm64: this test builds a foreign ramdisk on amd64');
    return;
  }
  if (!requireTools(t, { 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod', 'dpkg-query': 'dpkg', 'aarch64-linux-gnu-gcc': 'gcc-aarch64-linux-gnu' })) return;
  const { dir, cleanup } = scratchDir('images-build-arm64');
  try {
    const started = Date.now();
    const one = await buildOrSkip(t, join(dir, 'one'));
    if (one === undefined) return;
    t.diagnostic(`arm64 build: ${((Date.now() - started) / 1000).toFixed(1)} s, initrd ${one.manifest.outputs.find((o) => o.name === 'initrd')?.sizeBytes ?? 0} bytes`);
    const { manifest } = one;
    assert.equal(manifest.architecture, 'arm64');
    const release = manifest.inputs.kernel.release;
    assert.match(release, /^\d+\.\d+\.\d+-\d+-arm64$/);
    assert.deepEqual(manifest.inputs.kernel.origin.kind === 'debian' ? manifest.inputs.kernel.origin.package : '', `linux-image-${release}`);

    const files = new Map<string, Buffer>();
    const links = new Set<string>();
    for (const e of decodeCpio(gunzipSync(readFileSync(one.paths.initrd)))) {
      if (e.type === 'file') files.set(e.path, Buffer.from(e.data));
      if (e.type === 'symlink') links.add(e.path);
    }
    const machineOf = (path: string): number => {
      const data = files.get(path);
      assert.ok(data !== undefined, `${path} in the initrd`);
      return parseElfDynamic(data).machine;
    };
    assert.equal(machineOf('bin/busybox'), EM_AARCH64, 'busybox is arm64');
    assert.ok(links.has('bin/sh') && links.has('sbin/udhcpc'), 'busybox applet links');
    assert.ok(files.has('init') && files.has('usr/lib/rackside/rackside-agent.sh'));

    // Every tool the head node has came from its arm64 package, with its libraries and the interpreter, all arm64.
    const toolNames = manifest.inputs.tools.map((tool) => tool.name);
    for (const name of ['sfdisk', 'lsblk', 'wipefs', 'qemu-img']) assert.ok(toolNames.includes(name), `${name} packed (missing: ${JSON.stringify(manifest.missing.tools)})`);
    // The C helpers are compiled from images/helpers/ by the arm64 cross compiler: static, no package, no interpreter.
    const helpers = manifest.inputs.tools.filter((tool) => (DEFAULT_HELPERS as readonly string[]).includes(tool.name));
    assert.deepEqual(helpers.map((h) => h.name).sort(), [...DEFAULT_HELPERS].sort(), `helpers packed (missing: ${JSON.stringify(manifest.missing.tools)})`);
    for (const helper of helpers) {
      const elf = parseElfDynamic(files.get(helper.path) ?? Buffer.alloc(0));
      assert.deepEqual([elf.machine, elf.interpreter, elf.needed, helper.package, helper.libraries], [EM_AARCH64, undefined, [], undefined, []], `${helper.name}: a static arm64 binary`);
    }
    for (const tool of manifest.inputs.tools.filter((x) => !helpers.includes(x))) {
      assert.equal(machineOf(tool.path), EM_AARCH64, `${tool.name} is arm64`);
      assert.ok(tool.package !== undefined, `${tool.name} names its arm64 package`);
      assert.ok(tool.libraries.some((l) => l.path === 'lib/ld-linux-aarch64.so.1'), `${tool.name} has the arm64 interpreter`);
      for (const lib of tool.libraries) assert.equal(machineOf(lib.path), EM_AARCH64, `${lib.path} is arm64`);
      const needed = parseElfDynamic(files.get(tool.path) ?? Buffer.alloc(0)).needed;
      for (const soname of needed) assert.ok(tool.libraries.some((l) => l.path.endsWith(`/${soname}`)), `${tool.name} needs ${soname}: packed`);
    }

    // Modules come from the arm64 kernel's tree: arm64 ELF objects under its release.
    const virtio = manifest.inputs.modules.find((m) => m.name === 'virtio_net');
    assert.ok(virtio !== undefined, 'virtio_net included');
    assert.equal(machineOf(`lib/modules/${release}/${virtio.path}`), EM_AARCH64);
    assert.ok(files.has(`lib/modules/${release}/modules.dep`));

    const two = await buildOrSkip(t, join(dir, 'two'));
    if (two === undefined) return;
    assert.deepEqual(two.manifest.outputs, one.manifest.outputs, 'same inputs, same sha256');
    assert.equal(readFileSync(two.paths.manifest, 'utf8'), readFileSync(one.paths.manifest, 'utf8'));
  } finally {
    cleanup();
  }
});
