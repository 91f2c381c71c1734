// collectForeignTools over fake unpacked package trees (no apt): synthetic arm64 ELF files,
// absolute symlinks inside the trees, libraries found only in a dependency's tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAptCacheDependencies, type DebianPackage } from '../../../images/debian-package.js';
import { EM_AARCH64, EM_X86_64 } from '../../../images/elf.js';
import { collectForeignTools, type ForeignPackageSource } from '../../../images/foreign-tools.js';
import { resolveInTree } from '../../../images/tree-paths.js';
import { makeElf } from './elf-fixture.js';
import { scratchDir } from './helpers.js';

type TreeFile = Buffer | { link: string };

/** A fake apt over trees written under `dir`: package name → files, and dependencies. */
function fakeApt(dir: string, packages: Record<string, { files: Record<string, TreeFile>; deps?: string[] }>, fetched: string[]): ForeignPackageSource {
  for (const [name, { files }] of Object.entries(packages)) {
    for (const [path, content] of Object.entries(files)) {
      const full = join(dir, name, path);
      mkdirSync(dirname(full), { recursive: true });
      if (Buffer.isBuffer(content)) writeFileSync(full, content, { mode: 0o755 });
      else symlinkSync(content.link, full);
    }
  }
  return {
    fetch: (name) => {
      fetched.push(name);
      const pkg = packages[name];
      if (pkg === undefined) return Promise.reject(new Error(`no ${name}`));
      return Promise.resolve({ name, version: '1.0-1', debPath: '', debSha256: '0'.repeat(64), rootDir: join(dir, name) } satisfies DebianPackage);
    },
    dependencies: (name) => Promise.resolve(packages[name]?.deps ?? []),
  };
}

const arm = (needed: string[], interpreter?: string): Buffer => makeElf({ machine: EM_AARCH64, ...(interpreter === undefined ? {} : { interpreter }), dynamic: { needed } });
const INTERP = '/lib/ld-linux-aarch64.so.1';

/** The head node: tools as empty files in `bin`, each owned by the package named in `owners`. */
function headNode(dir: string, owners: Record<string, string>): { searchPath: string[]; ownerOf: (path: string) => Promise<{ name: string } | undefined> } {
  const bin = join(dir, 'head-bin');
  mkdirSync(bin, { recursive: true });
  for (const tool of Object.keys(owners)) writeFileSync(join(bin, tool), '', { mode: 0o755 });
  return { searchPath: [bin], ownerOf: (path) => Promise.resolve(owners[path.slice(path.lastIndexOf('/') + 1)] === '' ? undefined : { name: owners[path.slice(path.lastIndexOf('/') + 1)] ?? '' }) };
}

test('collectForeignTools: a tool, its libraries from dependency trees (fetched only when needed) and its interpreter, at their paths', async () => {
  const { dir, cleanup } = scratchDir('foreign-tools');
  try {
    const fetched: string[] = [];
    const apt = fakeApt(dir, {
      fdisk: { files: { 'sbin/sfdisk': arm(['libfdisk.so.1', 'libc.so.6'], INTERP) }, deps: ['libfdisk1', 'libc6'] },
      libfdisk1: { files: { 'lib/aarch64-linux-gnu/libfdisk.so.1': { link: 'libfdisk.so.1.1.0' }, 'lib/aarch64-linux-gnu/libfdisk.so.1.1.0': arm(['libuuid.so.1', 'libc.so.6']) }, deps: ['libuuid1', 'libc6'] },
      libuuid1: { files: { 'usr/lib/aarch64-linux-gnu/libuuid.so.1': arm(['libc.so.6']) } },
      libc6: {
        files: {
          'lib/aarch64-linux-gnu/libc.so.6': arm([]),
          'lib/aarch64-linux-gnu/ld-linux-aarch64.so.1': arm([]),
          'lib/ld-linux-aarch64.so.1': { link: '/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1' },
        },
        deps: ['libgcc-s1'],
      },
      unrelated: { files: {} },
    }, fetched);
    const result = await collectForeignTools(['sfdisk'], { arch: 'arm64', apt, ...headNode(dir, { sfdisk: 'fdisk' }) });
    assert.deepEqual(result.missing, []);
    assert.equal(result.tools.length, 1);
    const [tool] = result.tools;
    assert.ok(tool);
    assert.equal(tool.archivePath, 'sbin/sfdisk');
    assert.deepEqual(tool.package, { name: 'fdisk', version: '1.0-1' });
    // libuuid lies in usr/lib/<triplet>: found through the merged-/usr twin of lib/<triplet>, the loader's first directory.
    assert.deepEqual(tool.libraries.map((l) => l.archivePath), [
      'lib/aarch64-linux-gnu/libc.so.6', 'lib/aarch64-linux-gnu/libfdisk.so.1', 'lib/aarch64-linux-gnu/libuuid.so.1', 'lib/ld-linux-aarch64.so.1',
    ]);
    assert.ok(tool.libraries.find((l) => l.archivePath === 'lib/aarch64-linux-gnu/libuuid.so.1')?.sourcePath.endsWith('libuuid1/usr/lib/aarch64-linux-gnu/libuuid.so.1'));
    assert.ok(tool.libraries.find((l) => l.archivePath === 'lib/ld-linux-aarch64.so.1')?.sourcePath.endsWith('libc6/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1'), 'the interpreter link resolves inside the tree');
    assert.deepEqual(result.entries.map((e) => e.path).sort(), ['lib/aarch64-linux-gnu/libc.so.6', 'lib/aarch64-linux-gnu/libfdisk.so.1', 'lib/aarch64-linux-gnu/libuuid.so.1', 'lib/ld-linux-aarch64.so.1', 'sbin/sfdisk']);
    assert.ok(!fetched.includes('unrelated'), 'only dependencies are fetched');
  } finally {
    cleanup();
  }
});

test('collectForeignTools reports, never throws: not on the head node, no owning package, package not fetchable, wrong ELF machine, libraries nowhere', async () => {
  const { dir, cleanup } = scratchDir('foreign-tools-missing');
  try {
    const apt = fakeApt(dir, {
      amdtool: { files: { 'usr/bin/amdtool': makeElf({ machine: EM_X86_64, dynamic: { needed: [] } }) } },
      lonely: { files: { 'usr/sbin/lonely': arm(['libnowhere.so.3']) }, deps: ['libc6'] },
      libc6: { files: { 'lib/aarch64-linux-gnu/libc.so.6': arm([]) } },
      script: { files: { 'usr/bin/script': Buffer.from('#!/bin/sh\n') } },
    }, []);
    const head = headNode(dir, { amdtool: 'amdtool', lonely: 'lonely', nopkg: '', gone: 'gone', script: 'script' });
    const result = await collectForeignTools(['amdtool', 'lonely', 'nopkg', 'gone', 'script', 'absent'], { arch: 'arm64', apt, ...head });
    assert.deepEqual(result.tools, []);
    assert.deepEqual(result.entries, []);
    const reasons = Object.fromEntries(result.missing.map((m) => [m.name, m.reason]));
    assert.match(reasons.absent ?? '', /not found on the head node/);
    assert.match(reasons.nopkg ?? '', /belongs to no Debian package on the head node/);
    assert.match(reasons.gone ?? '', /the arm64 package gone cannot be fetched/);
    assert.match(reasons.amdtool ?? '', /ELF machine 62, not arm64's 183/);
    assert.match(reasons.script ?? '', /not an ELF binary/);
    assert.match(reasons.lonely ?? '', /shared libraries not found in the arm64 packages: libnowhere\.so\.3/);
  } finally {
    cleanup();
  }
});

test('resolveInTree follows relative and absolute links inside the tree, and a merged-/usr directory link', async () => {
  const { dir, cleanup } = scratchDir('tree-paths');
  try {
    mkdirSync(join(dir, 'usr/lib/t'), { recursive: true });
    writeFileSync(join(dir, 'usr/lib/t/libx.so.1.2'), 'x');
    symlinkSync('libx.so.1.2', join(dir, 'usr/lib/t/libx.so.1'));
    symlinkSync('usr/lib', join(dir, 'lib'));
    symlinkSync('/lib/t/libx.so.1', join(dir, 'abs'));
    symlinkSync('../../../../etc/passwd', join(dir, 'usr/lib/t/escape'));
    symlinkSync('loop', join(dir, 'loop'));
    const table: [string, string | undefined][] = [
      ['usr/lib/t/libx.so.1', 'usr/lib/t/libx.so.1.2'],
      ['lib/t/libx.so.1', 'usr/lib/t/libx.so.1.2'],
      ['abs', 'usr/lib/t/libx.so.1.2'],
      ['usr/lib/t/escape', undefined],
      ['loop', undefined],
      ['usr/lib/t', undefined],
      ['nothing/here', undefined],
    ];
    for (const [path, want] of table) assert.equal(await resolveInTree(dir, path), want, path);
  } finally {
    cleanup();
  }
});

test('parseAptCacheDependencies: Depends and PreDepends, alternatives, virtual packages left out, each once', () => {
  const out = 'util-linux\n  PreDepends: libblkid1\n  PreDepends: libc6\n  Depends: util-linux-extra\n |Depends: libc6\n  Depends: <awk>\n  Recommends: sensible-utils\n';
  assert.deepEqual(parseAptCacheDependencies(out), ['libblkid1', 'libc6', 'util-linux-extra']);
});
