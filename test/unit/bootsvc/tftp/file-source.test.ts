import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bufferSource, openFileSource, realRoots, resolveInRoots, type BlockSource } from '../../../../bootsvc/tftp/file-source.js';

async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-src-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Reads `length` bytes at `offset` the way the server does: copy, and load on a miss. */
async function readBlock(source: BlockSource, offset: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  if (!source.copy(offset, length, out, 0)) {
    await source.load(offset, length);
    assert.ok(source.copy(offset, length, out, 0), 'bytes in memory after load()');
  }
  return out;
}

test('a file streams in chunks: blocks straddling chunk boundaries are exact, memory stays bounded', async (t) => {
  const dir = await scratch(t);
  const bytes = randomBytes(1_000_003);
  await writeFile(join(dir, 'f'), bytes);
  const chunkBytes = 10_000; // not a multiple of the block size: blocks straddle chunks
  const source = await openFileSource(join(dir, 'f'), { chunkBytes, readAheadChunks: 2 });
  t.after(() => source.close());
  assert.equal(source.sizeBytes, bytes.length);
  const blockSize = 1468;
  let maxBuffered = 0;
  for (let offset = 0; offset < bytes.length; offset += blockSize) {
    const length = Math.min(blockSize, bytes.length - offset);
    assert.deepEqual(await readBlock(source, offset, length), bytes.subarray(offset, offset + length), `block at ${offset}`);
    source.release(offset);
    maxBuffered = Math.max(maxBuffered, source.bufferedBytes());
  }
  assert.ok(maxBuffered <= 5 * chunkBytes, `held ${maxBuffered} bytes of a ${bytes.length}-byte file`);
});

test('view() returns blocks inside one chunk without copying, and undefined across chunks or before loading', async (t) => {
  const dir = await scratch(t);
  const bytes = randomBytes(50_000);
  await writeFile(join(dir, 'f'), bytes);
  const source = await openFileSource(join(dir, 'f'), { chunkBytes: 16_384, readAheadChunks: 1 });
  t.after(() => source.close());
  assert.equal(source.view(0, 8192), undefined, 'nothing loaded yet');
  await source.load(0, 8192);
  assert.deepEqual(source.view(0, 8192), bytes.subarray(0, 8192));
  assert.deepEqual(source.view(8192, 8192), bytes.subarray(8192, 16_384));
  assert.equal(source.view(16_000, 8192), undefined, 'straddles two chunks');
  await source.load(16_000, 8192);
  assert.deepEqual(await readBlock(source, 16_000, 8192), bytes.subarray(16_000, 24_192));
  assert.deepEqual(source.view(16_384, 8192), bytes.subarray(16_384, 24_576));
  assert.deepEqual(bufferSource(bytes).view(10, 5), bytes.subarray(10, 15));
});

test('an empty block at the end of a file that is an exact multiple is available', async (t) => {
  const dir = await scratch(t);
  await writeFile(join(dir, 'f'), randomBytes(4096));
  const source = await openFileSource(join(dir, 'f'), { chunkBytes: 1024 });
  t.after(() => source.close());
  assert.deepEqual(await readBlock(source, 4096, 0), Buffer.alloc(0));
});

test('a file that shrinks while being served fails the load with a clear error', async (t) => {
  const dir = await scratch(t);
  await writeFile(join(dir, 'f'), randomBytes(100_000));
  const source = await openFileSource(join(dir, 'f'), { chunkBytes: 8192, readAheadChunks: 0 });
  t.after(() => source.close());
  await truncate(join(dir, 'f'), 10_000);
  await assert.rejects(source.load(50_000, 512), /file shrank while being served/);
});

test('a directory or a symlink as the final component is not opened', async (t) => {
  const dir = await scratch(t);
  await mkdir(join(dir, 'd'));
  await writeFile(join(dir, 'real'), 'x');
  await symlink(join(dir, 'real'), join(dir, 'link'));
  await assert.rejects(openFileSource(join(dir, 'd')), /not a regular file/);
  await assert.rejects(openFileSource(join(dir, 'link')), { code: 'ELOOP' });
});

test('buffer sources copy from memory', async () => {
  const source = bufferSource(Buffer.from('generated grub.cfg'));
  assert.equal(source.sizeBytes, 18);
  assert.equal((await readBlock(source, 10, 4)).toString(), 'grub');
  assert.equal(source.bufferedBytes(), 18);
});

test('the realpath jail: first root wins, symlinks may not leave their root, missing roots are skipped', async (t) => {
  const dir = await scratch(t);
  for (const d of ['a', 'b', 'out', 'a/sub']) await mkdir(join(dir, d), { recursive: true });
  await writeFile(join(dir, 'a', 'both'), 'a');
  await writeFile(join(dir, 'b', 'both'), 'b');
  await writeFile(join(dir, 'b', 'only-b'), 'b');
  await writeFile(join(dir, 'out', 'secret'), 's');
  await symlink(join(dir, 'out', 'secret'), join(dir, 'a', 'escape'));
  await symlink(join(dir, 'b', 'only-b'), join(dir, 'a', 'to-other-root')); // another served root is still outside this one
  await symlink('../both', join(dir, 'a', 'sub', 'up')); // relative, stays inside
  const roots = await realRoots([join(dir, 'a'), join(dir, 'missing'), join(dir, 'b')]);
  assert.equal(roots.length, 2);
  const lookups = Object.fromEntries(
    await Promise.all(['both', 'only-b', 'escape', 'to-other-root', 'sub/up', 'nope', 'both/x'].map(async (p) => [p, await resolveInRoots(roots, p)] as const)),
  );
  assert.deepEqual(lookups.both, { kind: 'found', path: join(roots[0] ?? '', 'both'), root: roots[0] });
  assert.deepEqual(lookups['only-b'], { kind: 'found', path: join(roots[1] ?? '', 'only-b'), root: roots[1] });
  assert.equal(lookups.escape?.kind, 'refused');
  assert.equal(lookups['to-other-root']?.kind, 'refused');
  assert.deepEqual(lookups['sub/up'], { kind: 'found', path: join(roots[0] ?? '', 'both'), root: roots[0] });
  assert.deepEqual(lookups.nope, { kind: 'not-found' });
  assert.deepEqual(lookups['both/x'], { kind: 'not-found' });
});
