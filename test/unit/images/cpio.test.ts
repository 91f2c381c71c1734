import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, readFileSync, readlinkSync, writeFileSync, mkdirSync, symlinkSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import {
  addParentDirectories,
  CpioError,
  decodeCpio,
  encodeCpio,
  encodeCpioChunks,
  sortCpioEntries,
  type CpioEntry,
} from '../../../images/cpio.js';
import { requireTools, run, scratchDir } from './helpers.js';

const mtimeSeconds = 1_700_000_000;

function sample(): CpioEntry[] {
  return [
    { type: 'file', path: 'bin/busybox', mode: 0o755, data: Buffer.from('#!/bin/sh\necho hi\n') },
    { type: 'directory', path: 'bin', mode: 0o755 },
    { type: 'symlink', path: 'bin/sh', target: 'busybox' },
    { type: 'directory', path: 'dev', mode: 0o755 },
    { type: 'char-device', path: 'dev/console', mode: 0o600, major: 5, minor: 1 },
    { type: 'char-device', path: 'dev/null', mode: 0o666, major: 1, minor: 3 },
    { type: 'block-device', path: 'dev/sda', mode: 0o660, major: 8, minor: 0 },
    { type: 'file', path: 'etc/empty', mode: 0o644, data: Buffer.alloc(0) },
    { type: 'file', path: 'etc/secret', mode: 0o600, data: Buffer.from('abc') },
    { type: 'file', path: 'etc/odd-size', mode: 0o644, data: Buffer.from('12345') },
    { type: 'directory', path: 'etc', mode: 0o755 },
    { type: 'file', path: '/init', mode: 0o755, data: Buffer.from('#!/bin/sh\nexec sh\n') },
    { type: 'symlink', path: 'sbin', target: 'bin' },
    { type: 'file', path: 'lib/modules/x/a-b.ko', mode: 0o644, data: Buffer.alloc(4097, 7) },
  ];
}

test('encodeCpio: a one-file archive matches the known newc bytes', () => {
  const bytes = encodeCpio([{ type: 'file', path: 'a', mode: 0o644, data: Buffer.from('xy') }], { mtimeSeconds: 0x10 });
  const expectedHeader =
    '070701' + '00000001' + '000081a4' + '00000000' + '00000000' + '00000001' + '00000010' + '00000002' +
    '00000000' + '00000000' + '00000000' + '00000000' + '00000002' + '00000000';
  // 110-byte header + "a\0" = 112 (aligned), data "xy" + 2 padding bytes.
  assert.equal(bytes.subarray(0, 110).toString('ascii'), expectedHeader);
  assert.deepEqual([...bytes.subarray(110, 112)], [0x61, 0]);
  assert.equal(bytes.subarray(112, 114).toString('ascii'), 'xy');
  assert.deepEqual([...bytes.subarray(114, 116)], [0, 0]);
  assert.equal(bytes.subarray(116, 122).toString('ascii'), '070701');
  assert.match(bytes.subarray(116).toString('ascii'), /TRAILER!!!\0/);
  assert.equal(bytes.length % 4, 0);
});

test('encodeCpio is deterministic and independent of input order', () => {
  const a = encodeCpio(sample(), { mtimeSeconds });
  const b = encodeCpio(sample().reverse(), { mtimeSeconds });
  assert.ok(a.equals(b));
  assert.ok(Buffer.concat([...encodeCpioChunks(sample(), { mtimeSeconds })]).equals(a));
  assert.ok(!a.equals(encodeCpio(sample(), { mtimeSeconds: mtimeSeconds + 1 })));
});

test('decodeCpio reads back what encodeCpio wrote, in sorted order', () => {
  const decoded = decodeCpio(encodeCpio(sample(), { mtimeSeconds }));
  const expected = sortCpioEntries(sample());
  assert.deepEqual(decoded.map((e) => e.path), expected.map((e) => e.path));
  for (const [i, e] of decoded.entries()) {
    assert.equal(e.mtimeSeconds, mtimeSeconds);
    assert.equal(e.uid, 0);
    assert.equal(e.gid, 0);
    assert.equal(e.ino, i + 1);
    const { mtimeSeconds: _m, uid: _u, gid: _g, nlink: _n, ino: _i, ...entry } = e;
    const want = expected[i]!;
    if (want.type === 'file') assert.deepEqual({ ...entry }, { ...want, data: Buffer.from(want.data) });
    else assert.deepEqual(entry, want);
  }
});

test('decodeCpio reads concatenated archives with zero padding between them', () => {
  const one = encodeCpio([{ type: 'file', path: 'a', mode: 0o644, data: Buffer.from('1') }], { mtimeSeconds });
  const two = encodeCpio([{ type: 'file', path: 'etc/b', mode: 0o600, data: Buffer.from('2') }], { mtimeSeconds });
  const decoded = decodeCpio(Buffer.concat([one, Buffer.alloc(512), two]));
  assert.deepEqual(decoded.map((e) => e.path), ['a', 'etc/b']);
});

const badInputs: Record<string, () => unknown> = {
  'duplicate path': () => encodeCpio([{ type: 'directory', path: 'a', mode: 0o755 }, { type: 'directory', path: '/a/', mode: 0o755 }], { mtimeSeconds }),
  'dot-dot path': () => encodeCpio([{ type: 'directory', path: 'a/../b', mode: 0o755 }], { mtimeSeconds }),
  'empty path': () => encodeCpio([{ type: 'directory', path: '/', mode: 0o755 }], { mtimeSeconds }),
  'mode with type bits': () => encodeCpio([{ type: 'file', path: 'a', mode: 0o100644, data: Buffer.alloc(0) }], { mtimeSeconds }),
  'negative mtime': () => encodeCpio([], { mtimeSeconds: -1 }),
  'bad device number': () => encodeCpio([{ type: 'char-device', path: 'c', mode: 0o600, major: -1, minor: 0 }], { mtimeSeconds }),
  'bad magic': () => decodeCpio(Buffer.from('070707'.padEnd(120, '0'))),
  'truncated member': () => decodeCpio(encodeCpio(sample(), { mtimeSeconds }).subarray(0, 300)),
  'missing trailer': () => decodeCpio(Buffer.alloc(0)),
};
for (const [name, fn] of Object.entries(badInputs)) {
  test(`cpio rejects ${name} with a CpioError`, () => {
    assert.throws(fn, CpioError);
  });
}

test('addParentDirectories adds every missing parent once', () => {
  const out = addParentDirectories([{ type: 'file', path: 'a/b/c', mode: 0o644, data: Buffer.alloc(0) }, { type: 'directory', path: 'a', mode: 0o700 }]);
  assert.deepEqual(out.map((e) => e.path).sort(), ['a', 'a/b', 'a/b/c']);
  const a = out.find((e) => e.path === 'a');
  assert.ok(a?.type === 'directory' && a.mode === 0o700);
});

test('GNU cpio lists and extracts the archive identically (golden)', (t) => {
  if (!requireTools(t, { cpio: 'cpio' })) return;
  const { dir, cleanup } = scratchDir('cpio');
  try {
    const entries = sample();
    const archive = encodeCpio(entries, { mtimeSeconds });
    writeFileSync(join(dir, 'a.cpio'), archive);
    const listed = run('cpio', ['-t', '--quiet', '-F', join(dir, 'a.cpio')]).trim().split('\n');
    assert.deepEqual(listed, sortCpioEntries(entries).map((e) => e.path));

    const out = join(dir, 'out');
    mkdirSync(out);
    run('cpio', ['-idm', '--quiet', '--no-absolute-filenames', '-F', join(dir, 'a.cpio')], { cwd: out });
    for (const e of sortCpioEntries(entries)) {
      const p = join(out, e.path);
      const st = lstatSync(p);
      // GNU cpio -m restores mtimes of files and nodes; directories and symlinks get "now".
      if (e.type !== 'directory' && e.type !== 'symlink') assert.equal(Math.floor(st.mtimeMs / 1000), mtimeSeconds, `${e.path} mtime`);
      switch (e.type) {
        case 'directory':
          assert.ok(st.isDirectory(), e.path);
          assert.equal(st.mode & 0o7777, e.mode, `${e.path} mode`);
          break;
        case 'file':
          assert.ok(st.isFile(), e.path);
          assert.equal(st.mode & 0o7777, e.mode, `${e.path} mode`);
          assert.ok(readFileSync(p).equals(Buffer.from(e.data)), `${e.path} content`);
          break;
        case 'symlink':
          assert.ok(st.isSymbolicLink(), e.path);
          assert.equal(readlinkSync(p), e.target);
          break;
        case 'char-device':
        case 'block-device':
          assert.ok(e.type === 'char-device' ? st.isCharacterDevice() : st.isBlockDevice(), e.path);
          assert.equal(st.mode & 0o7777, e.mode, `${e.path} mode`);
          assert.equal(Math.floor(st.rdev / 256) & 0xfff, e.major, `${e.path} major`);
          assert.equal(st.rdev & 0xff, e.minor, `${e.path} minor`);
          break;
      }
    }
  } finally {
    cleanup();
  }
});

test('decodeCpio reads an archive written by GNU cpio -H newc', (t) => {
  if (!requireTools(t, { cpio: 'cpio' })) return;
  const { dir, cleanup } = scratchDir('cpio-gnu');
  try {
    mkdirSync(join(dir, 'd'));
    writeFileSync(join(dir, 'd/f'), 'hello');
    chmodSync(join(dir, 'd/f'), 0o640);
    symlinkSync('f', join(dir, 'd/l'));
    run('sh', ['-c', 'printf "d\\nd/f\\nd/l\\n" | cpio -o -H newc --quiet > a.cpio'], { cwd: dir });
    const decoded = decodeCpio(readFileSync(join(dir, 'a.cpio')));
    assert.deepEqual(decoded.map((e) => [e.path, e.type]), [['d', 'directory'], ['d/f', 'file'], ['d/l', 'symlink']]);
    const f = decoded[1]!;
    assert.ok(f.type === 'file' && Buffer.from(f.data).toString() === 'hello' && f.mode === 0o640);
    const l = decoded[2]!;
    assert.ok(l.type === 'symlink' && l.target === 'f');
  } finally {
    cleanup();
  }
});
