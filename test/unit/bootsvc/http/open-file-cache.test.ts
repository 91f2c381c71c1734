import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJail } from '../../../../bootsvc/http/file-jail.js';
import { OpenFileCache, type CachedFile, type CachedLookup } from '../../../../bootsvc/http/open-file-cache.js';

let dir: string;
let jail: FileJail;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-openfilecache-'));
  jail = await FileJail.create(dir);
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fileOf(lookup: CachedLookup): CachedFile {
  assert.equal(lookup.kind, 'file');
  return lookup.file;
}

/** The content of the file behind a descriptor, read through /proc (the descriptor is the cache's). */
function contentOf(file: CachedFile): string {
  return readFileSync(`/proc/self/fd/${String(file.fd)}`, 'utf8');
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
}

test('concurrent misses share one open; later uses are hits that touch no file', async () => {
  writeFileSync(join(dir, 'a.img'), 'AAAA');
  const cache = new OpenFileCache();
  try {
    let resolves = 0;
    const resolve = () => {
      resolves += 1;
      return jail.resolve('a.img');
    };
    const files = (await Promise.all([1, 2, 3].map(() => cache.acquire('a', resolve)))).map(fileOf);
    assert.equal(resolves, 1);
    assert.equal(cache.stats().opens, 1);
    assert.ok(files.every((f) => f === files[0]), 'one entry for all');
    assert.equal(files[0]?.size, 4);
    const hit = cache.take('a');
    assert.ok(hit);
    assert.equal(contentOf(hit), 'AAAA');
    for (const f of [...files, hit]) cache.release(f);
    assert.equal(cache.stats().openFiles, 1, 'kept open after release');
    assert.equal(cache.stats().hits, 1);
  } finally {
    cache.close();
  }
});

test('a file replaced on disk (a new inode renamed over it) is opened afresh, the old descriptor closes after its last user', async () => {
  writeFileSync(join(dir, 'b.img'), 'old');
  const cache = new OpenFileCache({ revalidateMs: 60_000 });
  try {
    const old = fileOf(await cache.acquire('b', () => jail.resolve('b.img')));
    writeFileSync(join(dir, 'b.new'), 'new!');
    renameSync(join(dir, 'b.new'), join(dir, 'b.img'));
    // The watch retires the entry; the old response keeps reading the old inode meanwhile.
    await until('the entry is retired by its watch', () => cache.stats().entries === 0);
    assert.equal(contentOf(old), 'old');
    const fresh = fileOf(await cache.acquire('b', () => jail.resolve('b.img')));
    assert.notEqual(fresh, old);
    assert.equal(contentOf(fresh), 'new!');
    assert.equal(fresh.size, 4);
    assert.equal(cache.stats().openFiles, 2, 'the old one is still in use');
    cache.release(old);
    assert.equal(cache.stats().openFiles, 1);
    cache.release(fresh);
  } finally {
    cache.close();
  }
});

test('a symlink retargeted (invisible to the watch) is noticed by the check after revalidateMs', async () => {
  writeFileSync(join(dir, 'v1.img'), 'one');
  writeFileSync(join(dir, 'v2.img'), 'two');
  symlinkSync('v1.img', join(dir, 'current.img'));
  const cache = new OpenFileCache({ revalidateMs: 0 });
  try {
    const first = fileOf(await cache.acquire('c', () => jail.resolve('current.img')));
    assert.equal(contentOf(first), 'one');
    cache.release(first);
    assert.equal(cache.take('c'), undefined, 'revalidateMs 0: every use is checked');
    const same = fileOf(await cache.acquire('c', () => jail.resolve('current.img')));
    assert.equal(same, first, 'unchanged: the same entry, no new open');
    assert.equal(cache.stats().opens, 1);
    cache.release(same);
    unlinkSync(join(dir, 'current.img'));
    symlinkSync('v2.img', join(dir, 'current.img'));
    const second = fileOf(await cache.acquire('c', () => jail.resolve('current.img')));
    assert.equal(contentOf(second), 'two');
    assert.equal(cache.stats().opens, 2);
    cache.release(second);
    assert.equal(cache.stats().openFiles, 1, 'the v1 descriptor was closed');
  } finally {
    cache.close();
  }
});

test('missing files, directories and escapes are reported, not cached', async () => {
  const cache = new OpenFileCache();
  try {
    assert.deepEqual(await cache.acquire('m', () => jail.resolve('missing.img')), { kind: 'not-found' });
    assert.deepEqual(await cache.acquire('d', () => Promise.resolve({ kind: 'path', real: dir })), { kind: 'not-a-file' });
    assert.deepEqual(await cache.acquire('e', () => Promise.resolve({ kind: 'escape', target: '/etc/passwd' })), { kind: 'escape', target: '/etc/passwd' });
    assert.equal(cache.stats().entries, 0);
    assert.equal(cache.stats().openFiles, 0, 'the directory descriptor was closed');
  } finally {
    cache.close();
  }
});

test('at most maxEntries are kept; when all are in use a new file is served uncached and closed after use', async () => {
  for (const name of ['x', 'y', 'z']) writeFileSync(join(dir, `${name}.img`), name);
  const cache = new OpenFileCache({ maxEntries: 2 });
  try {
    const x = fileOf(await cache.acquire('x', () => jail.resolve('x.img')));
    const y = fileOf(await cache.acquire('y', () => jail.resolve('y.img')));
    const z = fileOf(await cache.acquire('z', () => jail.resolve('z.img')));
    assert.equal(contentOf(z), 'z');
    assert.equal(cache.stats().entries, 2);
    assert.equal(cache.stats().openFiles, 3);
    cache.release(z);
    assert.equal(cache.stats().openFiles, 2, 'the uncached one closed');
    cache.release(x);
    cache.release(y);
    const z2 = fileOf(await cache.acquire('z', () => jail.resolve('z.img')));
    cache.release(z2);
    assert.equal(cache.stats().entries, 2, 'the least recently used unused entry was evicted');
    assert.equal(cache.stats().openFiles, 2);
    assert.equal(cache.take('x'), undefined, 'x was the least recently used');
  } finally {
    cache.close();
  }
});

test('idle entries are closed; close() closes the unused at once and the rest on release', async () => {
  writeFileSync(join(dir, 'i.img'), 'idle');
  writeFileSync(join(dir, 'j.img'), 'busy');
  const cache = new OpenFileCache({ idleMs: 50 });
  const i = fileOf(await cache.acquire('i', () => jail.resolve('i.img')));
  const fd = i.fd;
  cache.release(i);
  await until('the idle entry is closed', () => cache.stats().openFiles === 0);
  await until('its descriptor is closed', () => {
    try {
      return readlinkSync(`/proc/self/fd/${String(fd)}`) !== join(jail.root, 'i.img');
    } catch {
      return true;
    }
  });
  const j = fileOf(await cache.acquire('j', () => jail.resolve('j.img')));
  const k = fileOf(await cache.acquire('i', () => jail.resolve('i.img')));
  cache.release(k);
  cache.close();
  assert.equal(cache.stats().openFiles, 1, 'only the busy file is still open');
  assert.equal(contentOf(j), 'busy');
  cache.release(j);
  assert.equal(cache.stats().openFiles, 0);
  const after = fileOf(await cache.acquire('j', () => jail.resolve('j.img')));
  assert.equal(cache.stats().entries, 0, 'a closed cache caches nothing');
  cache.release(after);
  assert.equal(cache.stats().openFiles, 0);
});
