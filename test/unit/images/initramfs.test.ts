import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeCpio, encodeCpio, type DecodedCpioEntry } from '../../../images/cpio.js';
import { defaultAgentScriptDir } from '../../../images/builder.js';
import { DEFAULT_HELPERS } from '../../../images/helpers.js';
import { DEFAULT_HOST_TOOLS, parseLddOutput } from '../../../images/host-tools.js';
import { buildInitramfsArchive, compressInitramfs, composeInitramfs, type InitramfsSpec } from '../../../images/initramfs.js';
import { writeFixtureModulesTree } from './fixtures.js';
import { requireTools, run, scratchDir } from './helpers.js';

const release = '6.1.0-99-test';

function fixtureSpec(dir: string): InitramfsSpec {
  const modulesDir = writeFixtureModulesTree(join(dir, 'kernel'), release);
  writeFileSync(join(dir, 'busybox'), 'fake busybox binary\n');
  const scripts = join(dir, 'ramdisk');
  mkdirSync(scripts);
  writeFileSync(join(scripts, 'init'), '#!/bin/sh\necho init\n');
  writeFileSync(join(scripts, 'rackside-agent.sh'), '#!/bin/sh\necho agent\n');
  const tools = join(dir, 'tools');
  mkdirSync(tools);
  symlinkSync('/bin/ls', join(tools, 'mytool')); // a dynamically linked binary
  symlinkSync('/bin/true', join(tools, 'wget')); // shadows the busybox applet usr/bin/wget
  return {
    kernelRelease: release,
    modulesDir,
    modules: ['virtio_pci', 'virtio_net', 'sd_mod', 'no_such_driver', 'ext4'],
    busyboxPath: join(dir, 'busybox'),
    busyboxApplets: ['bin/sh', 'bin/mount', 'sbin/insmod', 'sbin/modprobe', 'usr/bin/wget', 'sbin/udhcpc'],
    hostTools: ['mytool', 'wget', 'absent-tool'],
    agentScriptDir: scripts,
    agentVersion: '1.2.3',
    toolSearchPath: [tools],
  };
}

function byPath(entries: DecodedCpioEntry[]): Map<string, DecodedCpioEntry> {
  return new Map(entries.map((e) => [e.path, e]));
}

function fileText(e: DecodedCpioEntry | undefined): string {
  assert.ok(e?.type === 'file', 'expected a file entry');
  return Buffer.from(e.data).toString('utf8');
}

test('composeInitramfs lays out busybox, applets, init, devices, modules in load order and tools', async () => {
  const { dir, cleanup } = scratchDir('initramfs');
  try {
    const spec = fixtureSpec(dir);
    const { archive, report } = await buildInitramfsArchive(spec, 1_700_000_000);
    const files = byPath(decodeCpio(archive));

    assert.equal(files.get('bin/busybox')?.type, 'file');
    for (const applet of ['bin/sh', 'bin/mount', 'sbin/insmod', 'sbin/modprobe', 'sbin/udhcpc']) {
      const e = files.get(applet);
      assert.ok(e?.type === 'symlink' && e.target === '/bin/busybox', applet);
    }
    assert.equal(files.get('usr/bin/wget'), undefined, 'the copied host tool wins over the applet');
    assert.equal(report.applets, 5);
    const init = files.get('init');
    assert.ok(init?.type === 'file' && init.mode === 0o755);
    assert.equal(fileText(files.get('usr/lib/rackside/rackside-agent.sh')), '#!/bin/sh\necho agent\n');
    const console = files.get('dev/console');
    assert.ok(console?.type === 'char-device' && console.major === 5 && console.minor === 1 && console.mode === 0o600);
    const devnull = files.get('dev/null');
    assert.ok(devnull?.type === 'char-device' && devnull.major === 1 && devnull.minor === 3);
    const tmp = files.get('tmp');
    assert.ok(tmp?.type === 'directory' && tmp.mode === 0o1777);

    const load = fileText(files.get('etc/rackside/modules.load')).trim().split('\n');
    assert.equal(load.length, report.modules.length);
    assert.deepEqual(load, report.modules.map((m) => m.path));
    assert.ok(load.indexOf('kernel/drivers/virtio/virtio_ring.ko') < load.indexOf('kernel/drivers/virtio/virtio_pci.ko'));
    assert.ok(load.indexOf('kernel/net/core/failover.ko') < load.indexOf('kernel/drivers/net/virtio_net.ko'));
    assert.ok(load.indexOf('kernel/crypto/crct10dif_generic.ko') < load.indexOf('kernel/lib/crc-t10dif.ko'));
    for (const path of load) assert.equal(fileText(files.get(`lib/modules/${release}/${path}`)), `fake module ${path}\n`);
    assert.equal(files.get(`lib/modules/${release}/kernel/drivers/unrelated/big.ko`), undefined);
    const dep = fileText(files.get(`lib/modules/${release}/modules.dep`));
    assert.equal(dep.trim().split('\n').length, load.length);
    assert.match(fileText(files.get(`lib/modules/${release}/modules.alias`)), /^alias crct10dif crct10dif_generic$/m);
    assert.deepEqual(report.missingModules, ['no_such_driver']);
    assert.deepEqual(report.builtinModules, ['ext4']);

    assert.deepEqual(report.tools.map((t) => t.name), ['mytool', 'wget']);
    assert.deepEqual(report.missingTools.map((t) => t.name), ['absent-tool']);
    const mytool = report.tools[0]!;
    assert.equal(mytool.archivePath, `${realpathSync(join(dir, 'tools')).slice(1)}/mytool`);
    assert.ok(files.get(mytool.archivePath)?.type === 'file');
    assert.ok(mytool.libraries.some((l) => /libc\.so/.test(l.archivePath)), 'libc copied');
    assert.ok(mytool.libraries.some((l) => /ld-linux/.test(l.archivePath)), 'dynamic loader copied');
    for (const lib of mytool.libraries) assert.equal(files.get(lib.archivePath)?.type, 'file', lib.archivePath);
    assert.match(fileText(files.get('etc/rackside/ld-library-path')), /x86_64-linux-gnu|lib/);
    assert.equal(fileText(files.get('etc/rackside/version')), '1.2.3\n');
    assert.equal(fileText(files.get('etc/rackside/kernel-release')), `${release}\n`);

    // every parent directory is an explicit entry
    for (const path of files.keys()) {
      if (!path.includes('/')) continue;
      const parent = path.slice(0, path.lastIndexOf('/'));
      assert.equal(files.get(parent)?.type, 'directory', `parent of ${path}`);
    }
  } finally {
    cleanup();
  }
});

test('composeInitramfs rejects a script directory without init and a tree without modules.dep', async () => {
  const { dir, cleanup } = scratchDir('initramfs-bad');
  try {
    const spec = fixtureSpec(dir);
    const emptyScripts = join(dir, 'empty');
    mkdirSync(emptyScripts);
    await assert.rejects(composeInitramfs({ ...spec, agentScriptDir: emptyScripts }), /has no "init"/);
    await assert.rejects(composeInitramfs({ ...spec, modulesDir: join(dir, 'nowhere') }), /modules\.dep is missing/);
    await assert.rejects(composeInitramfs({ ...spec, busyboxPath: join(dir, 'nowhere') }), /busybox .* is unreadable/);
  } finally {
    cleanup();
  }
});

test('gzip compression is deterministic and round-trips', async () => {
  const archive = encodeCpio([{ type: 'file', path: 'a', mode: 0o644, data: Buffer.alloc(100_000, 1) }], { mtimeSeconds: 1 });
  const a = await compressInitramfs(archive, 'gzip');
  const b = await compressInitramfs(archive, 'gzip');
  assert.ok(a.equals(b));
  assert.deepEqual([...a.subarray(0, 4)], [0x1f, 0x8b, 8, 0], 'gzip, deflate, no FNAME flag');
  assert.deepEqual([...a.subarray(4, 8)], [0, 0, 0, 0], 'zero MTIME');
  assert.ok(gunzipSync(a).equals(archive));
});

test('zstd compression is deterministic and round-trips', async (t) => {
  if (!requireTools(t, { zstd: 'zstd' })) return;
  const archive = encodeCpio([{ type: 'file', path: 'a', mode: 0o644, data: Buffer.alloc(100_000, 2) }], { mtimeSeconds: 1 });
  const a = await compressInitramfs(archive, 'zstd');
  assert.ok(a.equals(await compressInitramfs(archive, 'zstd')));
  assert.deepEqual([...a.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd], 'zstd frame magic');
  const { dir, cleanup } = scratchDir('zstd');
  try {
    writeFileSync(join(dir, 'a.zst'), a);
    run('zstd', ['-q', '-d', join(dir, 'a.zst'), '-o', join(dir, 'a')]);
    assert.ok(readFileSync(join(dir, 'a')).equals(archive));
  } finally {
    cleanup();
  }
});

const lddCases: Record<string, [string, { soname: string; path: string | null }[]]> = {
  'typical dynamic binary': [
    '\tlinux-vdso.so.1 (0x00007ffd)\n\tlibfdisk.so.1 => /lib/x86_64-linux-gnu/libfdisk.so.1 (0x00007f1)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)\n',
    [
      { soname: 'libfdisk.so.1', path: '/lib/x86_64-linux-gnu/libfdisk.so.1' },
      { soname: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6' },
      { soname: 'ld-linux-x86-64.so.2', path: '/lib64/ld-linux-x86-64.so.2' },
    ],
  ],
  'library not found': ['\tlibgone.so.3 => not found\n', [{ soname: 'libgone.so.3', path: null }]],
  'static binary': ['\tnot a dynamic executable\n', []],
  'old glibc vdso arrow': ['\tlinux-vdso.so.1 =>  (0x00007ffd)\n', []],
};
for (const [name, [input, want]] of Object.entries(lddCases)) {
  test(`parseLddOutput: ${name}`, () => {
    assert.deepEqual(parseLddOutput(input), want);
  });
}

test('the ramdisk selftest runs every tool the build packs: the host tools and the helpers (images/ramdisk/init)', () => {
  const init = readFileSync(join(defaultAgentScriptDir(), 'init'), 'utf8');
  const listed = /selftest[\s\S]*?for name in ([^;]+); do/.exec(init)?.[1]?.trim().split(/\s+/);
  assert.deepEqual(listed, [...DEFAULT_HOST_TOOLS, ...DEFAULT_HELPERS]);
});
