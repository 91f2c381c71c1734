import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildRamdisk, defaultAgentScriptDir, RamdiskBuildError, type BuildRamdiskOptions } from '../../../images/builder.js';
import { decodeCpio } from '../../../images/cpio.js';
import { decodeManifest, ManifestError } from '../../../images/manifest.js';
import { writeFixtureModulesTree } from './fixtures.js';
import { scratchDir } from './helpers.js';

const epoch = 1_700_000_000;

function fixtureOptions(dir: string, outputDir: string): BuildRamdiskOptions {
  const modulesDir = writeFixtureModulesTree(join(dir, 'kernel'), '6.1.0-99-test');
  writeFileSync(join(dir, 'vmlinuz'), 'fake kernel image\n');
  // A stand-in busybox that answers --list-full like the real one.
  writeFileSync(join(dir, 'busybox'), '#!/bin/sh\n[ "$1" = --list-full ] && printf "bin/sh\\nsbin/insmod\\nusr/bin/wget\\n"\n');
  chmodSync(join(dir, 'busybox'), 0o755);
  const tools = join(dir, 'tools');
  mkdirSync(tools, { recursive: true });
  if (!existsSync(join(tools, 'mytool'))) symlinkSync('/bin/ls', join(tools, 'mytool'));
  return {
    outputDir,
    cacheDir: join(dir, 'cache'),
    kernel: { kind: 'tree', vmlinuzPath: join(dir, 'vmlinuz'), modulesDir },
    busybox: { kind: 'file', path: join(dir, 'busybox') },
    agentScriptDir: defaultAgentScriptDir(),
    agentVersion: '0.1.0-test',
    sourceDateEpoch: epoch,
    compression: 'gzip',
    modules: ['virtio_net', 'sd_mod', 'missing_driver'],
    hostTools: ['mytool', 'absent-tool'],
    helpers: [], // hermetic: no C compiler needed (the helper build: test/integration/discovery-lldp.test.ts)
    toolSearchPath: [tools],
  };
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

test('defaultAgentScriptDir points at images/ramdisk with init and the agent', () => {
  const dir = defaultAgentScriptDir();
  assert.ok(existsSync(join(dir, 'init')), dir);
  assert.ok(existsSync(join(dir, 'rackside-agent.sh')), dir);
});

test('buildRamdisk is reproducible: two builds give the same sha256 and manifest', async () => {
  const { dir, cleanup } = scratchDir('builder');
  try {
    const one = await buildRamdisk(fixtureOptions(dir, join(dir, 'out1')));
    const two = await buildRamdisk(fixtureOptions(dir, join(dir, 'out2')));
    assert.equal(sha256(one.paths.initrd), sha256(two.paths.initrd));
    assert.equal(sha256(one.paths.vmlinuz), sha256(two.paths.vmlinuz));
    assert.equal(readFileSync(one.paths.manifest, 'utf8'), readFileSync(two.paths.manifest, 'utf8'));

    const later = await buildRamdisk({ ...fixtureOptions(dir, join(dir, 'out3')), sourceDateEpoch: epoch + 1 });
    assert.notEqual(sha256(later.paths.initrd), sha256(one.paths.initrd), 'the epoch is part of the archive');
  } finally {
    cleanup();
  }
});

test('manifest.json records inputs, outputs with sha256 and what was missing', async () => {
  const { dir, cleanup } = scratchDir('builder-manifest');
  try {
    const { paths } = await buildRamdisk(fixtureOptions(dir, join(dir, 'out')));
    const manifest = decodeManifest(readFileSync(paths.manifest, 'utf8'));
    assert.equal(manifest.sourceDateEpoch, epoch);
    assert.equal(manifest.compression, 'gzip');
    assert.deepEqual(manifest.outputs.map((o) => o.name), ['vmlinuz', 'initrd']);
    const initrdOut = manifest.outputs.find((o) => o.name === 'initrd')!;
    assert.equal(initrdOut.sha256, sha256(paths.initrd));
    assert.equal(initrdOut.sizeBytes, readFileSync(paths.initrd).length);
    assert.equal(manifest.inputs.kernel.release, '6.1.0-99-test');
    assert.equal(manifest.inputs.kernel.vmlinuzSha256, sha256(join(dir, 'vmlinuz')));
    assert.equal(manifest.inputs.busybox.sha256, sha256(join(dir, 'busybox')));
    assert.equal(manifest.inputs.busybox.applets, 3);
    assert.deepEqual(manifest.missing.modules, ['missing_driver']);
    assert.deepEqual(manifest.missing.tools.map((t) => t.name), ['absent-tool']);
    assert.deepEqual(manifest.inputs.tools.map((t) => t.name), ['mytool']);
    assert.ok(manifest.inputs.tools[0]!.libraries.length > 0);
    assert.equal(manifest.inputs.modules.at(-1)?.name, 'sd_mod');
    assert.deepEqual(manifest.inputs.agentFiles.map((f) => f.path).sort(), ['init', 'usr/lib/rackside/lib-clean.sh', 'usr/lib/rackside/lib-deploy.sh', 'usr/lib/rackside/lib-discovery.sh', 'usr/lib/rackside/lib-disks.sh', 'usr/lib/rackside/lib-ipmi.sh', 'usr/lib/rackside/lib-lldp.sh', 'usr/lib/rackside/lib-net6.sh', 'usr/lib/rackside/lib-nics.sh', 'usr/lib/rackside/rackside-agent.sh', 'usr/lib/rackside/udhcpc.script']);

    const entries = decodeCpio(gunzipSync(readFileSync(paths.initrd)));
    const names = new Set(entries.map((e) => e.path));
    for (const p of ['init', 'bin/busybox', 'bin/sh', 'dev/console', 'etc/rackside/modules.load', 'lib/modules/6.1.0-99-test/modules.dep']) {
      assert.ok(names.has(p), p);
    }
    assert.ok(entries.every((e) => e.mtimeSeconds === epoch && e.uid === 0 && e.gid === 0));
  } finally {
    cleanup();
  }
});

test('buildRamdisk rejects an unknown format, a bad epoch and a missing required tool', async () => {
  const { dir, cleanup } = scratchDir('builder-bad');
  try {
    const options = fixtureOptions(dir, join(dir, 'out'));
    await assert.rejects(buildRamdisk({ ...options, format: 'qcow2' as 'iso' }), RamdiskBuildError);
    await assert.rejects(buildRamdisk({ ...options, sourceDateEpoch: -1 }), RamdiskBuildError);
    await assert.rejects(buildRamdisk({ ...options, requiredTools: ['absent-tool'] }), /required tools missing.*absent-tool/);
    assert.ok(!existsSync(join(dir, 'out', 'manifest.json')), 'no manifest for a failed build');
  } finally {
    cleanup();
  }
});

const badManifests: Record<string, string> = {
  'not JSON': '{',
  'wrong schema': '{"schema":"x"}',
  'no outputs': '{"schema":"rackside.ramdisk/v1","inputs":{},"missing":{},"outputs":[]}',
  'bad sha256': '{"schema":"rackside.ramdisk/v1","inputs":{},"missing":{},"outputs":[{"name":"initrd","sha256":"XYZ","sizeBytes":1}]}',
  'negative size': `{"schema":"rackside.ramdisk/v1","inputs":{},"missing":{},"outputs":[{"name":"initrd","sha256":"${'a'.repeat(64)}","sizeBytes":-1}]}`,
};
for (const [name, text] of Object.entries(badManifests)) {
  test(`decodeManifest rejects ${name}`, () => {
    assert.throws(() => decodeManifest(text), ManifestError);
  });
}
