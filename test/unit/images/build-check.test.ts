/**
 * Whether a build on disk is current (images/build-check.ts over images/build-inputs.ts): a
 * real build of fixture inputs, then what a build now would use compared with its manifest —
 * the same inputs are current; another agent version, a changed kernel file, other agent
 * scripts, an ISO need or other ISO kernel arguments are each a reason to rebuild; an input apt
 * cannot name is not. And the steps the builder reports (images/build-progress.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRamdisk, defaultAgentScriptDir, type BuildRamdiskOptions } from '../../../images/builder.js';
import { staleReasons, type ExpectedBuildInputs } from '../../../images/build-check.js';
import { expectedBuildInputs } from '../../../images/build-inputs.js';
import { formatProgressLine, parseProgressLine, progressOf, type BuildProgress } from '../../../images/build-progress.js';
import type { RamdiskManifest } from '../../../images/manifest.js';
import { writeFixtureModulesTree } from './fixtures.js';
import { scratchDir } from './helpers.js';

function fixtureOptions(dir: string): BuildRamdiskOptions {
  const modulesDir = writeFixtureModulesTree(join(dir, 'kernel'), '6.1.0-99-test');
  writeFileSync(join(dir, 'vmlinuz'), 'fake kernel image\n');
  writeFileSync(join(dir, 'busybox'), '#!/bin/sh\n[ "$1" = --list-full ] && printf "bin/sh\\nsbin/insmod\\n"\n');
  chmodSync(join(dir, 'busybox'), 0o755);
  const scripts = join(dir, 'scripts');
  cpSync(defaultAgentScriptDir(), scripts, { recursive: true });
  return {
    outputDir: join(dir, 'out'), cacheDir: join(dir, 'cache'),
    kernel: { kind: 'tree', vmlinuzPath: join(dir, 'vmlinuz'), modulesDir },
    busybox: { kind: 'file', path: join(dir, 'busybox') },
    agentScriptDir: scripts, agentVersion: '0.1.0', sourceDateEpoch: 1_700_000_000, compression: 'gzip', modules: ['virtio_net'], hostTools: [],
  };
}

test('a build is current for the inputs it was made of; each changed input is named', async () => {
  const { dir, cleanup } = scratchDir('build-check');
  try {
    const options = fixtureOptions(dir);
    const steps: BuildProgress[] = [];
    const { manifest } = await buildRamdisk({ ...options, onProgress: (p) => steps.push(p) });
    assert.deepEqual(steps.map((p) => `${p.step}/${p.total} ${p.phase} ${p.percent}`), ['1/5 kernel 0', '2/5 busybox 20', '3/5 initramfs 40', '4/5 compress 60', '5/5 write 80']);

    const now = (over: Partial<Parameters<typeof expectedBuildInputs>[0]> = {}): Promise<ExpectedBuildInputs> => expectedBuildInputs({
      format: 'initrd', agentVersion: '0.1.0', kernel: options.kernel, busybox: options.busybox, agentScriptDir: options.agentScriptDir, ...over,
    });
    assert.deepEqual(staleReasons(manifest, await now()), [], 'the same inputs: current');
    assert.deepEqual(staleReasons(manifest, await now({ agentVersion: '0.2.0' })), ['agent version: built for 0.1.0, this agent is 0.2.0']);
    assert.deepEqual(staleReasons(manifest, await now({ format: 'iso' })), ['a virtual-media host needs the ISO, and the build has none']);

    writeFileSync(join(dir, 'vmlinuz'), 'a newer fake kernel image\n');
    assert.deepEqual(staleReasons(manifest, await now()), [`kernel: ${join(dir, 'vmlinuz')} changed`]);
    assert.deepEqual(staleReasons(manifest, await now({ kernel: { kind: 'tree', vmlinuzPath: '/nonexistent/vmlinuz', modulesDir: '/nonexistent' } })).length, 1, 'a configured kernel that is missing is a reason (the rebuild then fails saying so)');
    writeFileSync(join(dir, 'vmlinuz'), 'fake kernel image\n');

    writeFileSync(join(options.agentScriptDir ?? '', 'extra.sh'), '#!/bin/sh\n');
    assert.deepEqual(staleReasons(manifest, await now()), ['the in-ramdisk agent scripts changed']);
  } finally {
    cleanup();
  }
});

test('an input apt cannot name now is no reason to rebuild; an iso build serves an initrd need', () => {
  const manifest = {
    schema: 'rackside.ramdisk/v1', format: 'iso', agentVersion: '0.1.0', sourceDateEpoch: 0, compression: 'gzip',
    inputs: {
      kernel: { release: '6.1.0-57-amd64', vmlinuzSha256: 'a'.repeat(64), origin: { kind: 'debian', package: 'linux-image-6.1.0-57-amd64', version: '6.1.192-3', debSha256: 'b'.repeat(64) } },
      busybox: { sha256: 'c'.repeat(64), applets: 1, origin: { kind: 'debian', package: 'busybox-static', version: '1:1.35.0-4', debSha256: 'd'.repeat(64) } },
      agentFiles: [{ path: 'init', sha256: 'e'.repeat(64) }], modules: [], tools: [],
    },
    builtinModules: [], missing: { modules: [], tools: [] }, outputs: [{ name: 'vmlinuz', sha256: 'a'.repeat(64), sizeBytes: 1 }],
    iso: { bootLoaders: [], hostOverlaySlot: { path: '/boot/host.img', offsetBytes: 0, sizeBytes: 1 }, kernelCommandLine: 'console=tty0 console=ttyS0,115200', volumeId: 'RACKSIDE' },
  } satisfies RamdiskManifest;
  const expected: ExpectedBuildInputs = {
    format: 'initrd', agentVersion: '0.1.0', kernel: { kind: 'unknown', why: 'no apt lists' }, busybox: { kind: 'debian', package: 'busybox-static', version: '1:1.35.0-4' },
    agentFiles: [{ path: 'init', sha256: 'e'.repeat(64) }],
  };
  assert.deepEqual(staleReasons(manifest, expected), []);
  assert.deepEqual(staleReasons(manifest, { ...expected, kernel: { kind: 'debian', package: 'linux-image-6.1.0-58-amd64', version: '6.1.200-1' } }), [
    'kernel: built from linux-image-6.1.0-57-amd64 6.1.192-3, now linux-image-6.1.0-58-amd64 6.1.200-1',
  ]);
  assert.deepEqual(staleReasons(manifest, { ...expected, format: 'iso', isoKernelCommandLine: 'console=tty0 console=ttyS0,115200 no_timer_check' }), [
    'ISO kernel command line: built with "console=tty0 console=ttyS0,115200", now "console=tty0 console=ttyS0,115200 no_timer_check"',
  ]);
});

test('progress lines: the step, the total and the percent done when it started; other lines are not progress', () => {
  assert.deepEqual(progressOf('iso', 'iso'), { phase: 'iso', step: 6, total: 6, percent: 83 });
  assert.throws(() => progressOf('iso', 'initrd'), RangeError);
  const line = formatProgressLine(progressOf('initramfs', 'initrd'), 'initrd');
  assert.deepEqual(parseProgressLine(line), { phase: 'initramfs', step: 3, total: 5, percent: 40 });
  for (const other of ['', 'vmlinuz  /x/vmlinuz', '{"phase":"bogus","format":"initrd"}', '{"phase":"iso","format":"initrd"}', 'null']) assert.equal(parseProgressLine(other), undefined, other);
});
