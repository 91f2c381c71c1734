// The OS image cache against a real HTTP server on loopback (node:http, with Range and a mode that
// cuts the first response short), qemu-img for qcow2, and a tiny tmpfs for "disk full".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiskFullError, ImageCache, type ImageProgress } from '../../../images/index.js';
import { ChecksumError, parseChecksumFile, planChecksum } from '../../../images/image-checksum.js';
import { ChecksumMismatchError, ImageTooLargeError } from '../../../images/image-cache.js';
import { DownloadError } from '../../../images/image-fetch.js';
import { pseudoRandom, requireTools, scratchDir } from './helpers.js';
import { startRamdiskServer, type RamdiskTestServer } from './ramdisk-server.js';

const MiB = 1024 * 1024;
const digest = (algo: string, b: Buffer): string => createHash(algo).update(b).digest('hex');

async function withServer(fn: (server: RamdiskTestServer, dir: string) => Promise<void>): Promise<void> {
  const { dir, cleanup } = scratchDir('image-cache');
  const server = await startRamdiskServer('unused-token-0123456789');
  try {
    await fn(server, dir);
  } finally {
    await server.close();
    cleanup();
  }
}

function serve(server: RamdiskTestServer, dir: string, name: string, data: Buffer, truncate?: number): string {
  writeFileSync(join(dir, name), data);
  server.files.set(name, { path: join(dir, name), ...(truncate === undefined ? {} : { truncateFirst: { count: 1, afterBytes: truncate } }) });
  return `${server.url}/files/${name}`;
}

const gets = (server: RamdiskTestServer, name: string): number => server.seen.filter((s) => s.path === `/files/${name}`).length;

const planCases: Record<string, [Parameters<typeof planChecksum>[0], ReturnType<typeof planChecksum> | RegExp]> = {
  'sha256 value': [{ url: 'http://h/a.raw', checksum: 'A'.repeat(64), checksumType: 'sha256' }, { kind: 'value', algorithm: 'sha256', value: 'a'.repeat(64) }],
  'auto detects md5': [{ url: 'http://h/a.raw', checksum: 'b'.repeat(32), checksumType: 'auto' }, { kind: 'value', algorithm: 'md5', value: 'b'.repeat(32) }],
  'empty type detects sha512': [{ url: 'http://h/a.raw', checksum: 'c'.repeat(128) }, { kind: 'value', algorithm: 'sha512', value: 'c'.repeat(128) }],
  'checksum file URL': [{ url: 'http://h/a.raw', checksum: 'http://h/SHA256SUMS' }, { kind: 'url', algorithm: 'auto', url: 'http://h/SHA256SUMS' }],
  'live-iso needs none': [{ url: 'http://h/live.iso', format: 'live-iso' }, { kind: 'none', reason: 'live-iso' }],
  'normal image without checksum': [{ url: 'http://h/a.raw' }, /checksum is required for normal images/],
  'oci with a checksum': [{ url: 'OCI://registry/img:1', checksum: 'a'.repeat(64) }, /not supported for OCI images/],
  'oci live-iso with a checksum': [{ url: 'oci://r/i', format: 'live-iso', checksum: 'a'.repeat(64) }, /not supported for OCI images/],
  'unsupported type': [{ url: 'http://h/a.raw', checksum: 'a'.repeat(64), checksumType: 'crc32' }, /not supported; use md5, sha256, sha512 or auto/],
  'value of the wrong length': [{ url: 'http://h/a.raw', checksum: 'a'.repeat(40), checksumType: 'sha256' }, /64 hex digits for sha256/],
};
for (const [name, [spec, want]] of Object.entries(planCases)) {
  test(`planChecksum: ${name}`, () => {
    if (want instanceof RegExp) assert.throws(() => planChecksum(spec), (e: unknown) => e instanceof ChecksumError && want.test(e.message));
    else assert.deepEqual(planChecksum(spec), want);
  });
}

test('parseChecksumFile picks the entry of the image file name (GNU, binary-mode, BSD, ./paths, single bare digest)', () => {
  const file = `${'1'.repeat(64)}  other.raw\n${'2'.repeat(64)} *./disk.qcow2\nSHA256 (boot.iso) = ${'3'.repeat(64)}\n`;
  assert.equal(parseChecksumFile(file, 'disk.qcow2'), '2'.repeat(64));
  assert.equal(parseChecksumFile(file, 'boot.iso'), '3'.repeat(64));
  assert.equal(parseChecksumFile(`${'A'.repeat(32)}\n`, 'anything'), 'a'.repeat(32));
  assert.throws(() => parseChecksumFile(file, 'missing.raw'), /no entry for missing\.raw/);
});

test('a raw image is fetched once, verified, stored by sha256; a cut download resumes with Range; progress is reported', async () => {
  await withServer(async (server, dir) => {
    const image = pseudoRandom(5 * MiB + 77, 1);
    const url = serve(server, dir, 'disk.raw', image, 2 * MiB + 5);
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 100 * MiB, retryDelayMs: 10 });
    const progress: ImageProgress[] = [];
    const got = await cache.get({ url, checksum: digest('sha256', image), checksumType: 'sha256' }, { onProgress: (p) => progress.push(p) });
    assert.equal(got.sha256, digest('sha256', image));
    assert.equal(got.path, join(dir, 'cache', 'blobs', got.sha256));
    assert.deepEqual(readFileSync(got.path), image);
    assert.deepEqual([got.format, got.sizeBytes, got.source.format, got.source.bytes], ['raw', image.length, 'raw', image.length]);
    const ranges = server.seen.filter((s) => s.path === '/files/disk.raw').map((s) => s.range);
    assert.equal(ranges.length, 2);
    assert.match(ranges[1] ?? '', /^bytes=\d+-$/);
    assert.deepEqual(progress.at(-1), { phase: 'download', bytes: image.length, totalBytes: image.length });
    await cache.get({ url, checksum: digest('sha256', image) });
    assert.equal(gets(server, 'disk.raw'), 2, 'the second get is served from the cache');
    assert.deepEqual(readdirSync(join(dir, 'cache', 'tmp')), []);
  });
});

test('md5 and sha512 values, and a checksum file URL with several entries', async () => {
  await withServer(async (server, dir) => {
    const a = pseudoRandom(MiB, 2);
    const b = pseudoRandom(MiB, 3);
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 100 * MiB });
    assert.equal((await cache.get({ url: serve(server, dir, 'a.img', a), checksum: digest('md5', a), checksumType: 'md5' })).sha256, digest('sha256', a));
    assert.equal((await cache.get({ url: serve(server, dir, 'b.img', b), checksum: digest('sha512', b), checksumType: 'sha512' })).sha256, digest('sha256', b));
    const sums = serve(server, dir, 'SHA512SUMS', Buffer.from(`${digest('sha512', a)}  a.img\n${digest('sha512', b)}  c.img\n`));
    const c = pseudoRandom(MiB, 3); // same bytes as b: served under another name
    const got = await cache.get({ url: serve(server, dir, 'c.img', c), checksum: sums, checksumType: 'auto' });
    assert.deepEqual(got.source.checksum, { algorithm: 'sha512', value: digest('sha512', b) });
    await assert.rejects(cache.get({ url: serve(server, dir, 'd.img', a), checksum: sums }), /no entry for d\.img/);
  });
});

test('a wrong checksum is a clear error and caches nothing; unreachable and missing URLs name the URL and status', async () => {
  await withServer(async (server, dir) => {
    const image = pseudoRandom(MiB, 4);
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 100 * MiB, maxAttempts: 2, retryDelayMs: 10 });
    const url = serve(server, dir, 'x.raw', image);
    await assert.rejects(cache.get({ url, checksum: 'f'.repeat(64) }), (e: unknown) =>
      e instanceof ChecksumMismatchError && e.message.includes(`checksum mismatch for ${url}: expected sha256 ${'f'.repeat(64)}, got ${digest('sha256', image)}`));
    for (const sub of ['blobs', 'meta', 'refs', 'tmp']) assert.deepEqual(readdirSync(join(dir, 'cache', sub)), [], sub);
    await assert.rejects(cache.get({ url: `${server.url}/files/nope.raw`, checksum: 'f'.repeat(64) }), (e: unknown) =>
      e instanceof DownloadError && e.status === 404 && e.message === `GET ${server.url}/files/nope.raw answered HTTP 404`);
    await assert.rejects(cache.get({ url: 'http://127.0.0.1:9/gone.raw', checksum: 'f'.repeat(64) }), (e: unknown) =>
      e instanceof DownloadError && e.message.startsWith('GET http://127.0.0.1:9/gone.raw failed: '));
    await assert.rejects(cache.get({ url: 'oci://registry/image:tag' }), ChecksumError);
  });
});

test('concurrent requests for one image download it once', async () => {
  await withServer(async (server, dir) => {
    const image = pseudoRandom(3 * MiB, 5);
    const url = serve(server, dir, 'same.raw', image);
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 100 * MiB });
    const spec = { url, checksum: digest('sha256', image) };
    const results = await Promise.all([cache.get(spec), cache.get(spec), cache.get(spec), cache.get(spec)]);
    assert.equal(new Set(results.map((r) => r.path)).size, 1);
    assert.equal(gets(server, 'same.raw'), 1);
  });
});

test('the size limit evicts the least recently used image; an image larger than the cache is refused', async () => {
  await withServer(async (server, dir) => {
    let clock = 1000;
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 5 * MiB, now: () => (clock += 1) });
    const imgs = [1, 2, 3].map((i) => pseudoRandom(2 * MiB, 10 + i));
    const specs = imgs.map((img, i) => ({ url: serve(server, dir, `i${i}.raw`, img), checksum: digest('sha256', img) }));
    await cache.get(specs[0]!);
    await cache.get(specs[1]!);
    await cache.get(specs[0]!); // i0 is now more recent than i1
    await cache.get(specs[2]!); // 6 MiB > 5 MiB: i1 goes
    assert.deepEqual((await cache.list()).map((m) => m.source.url).sort(), [specs[0]!.url, specs[2]!.url].sort());
    const big = pseudoRandom(6 * MiB, 20);
    await assert.rejects(cache.get({ url: serve(server, dir, 'big.raw', big), checksum: digest('sha256', big) }), ImageTooLargeError);
    assert.deepEqual(readdirSync(join(dir, 'cache', 'tmp')), []);
  });
});

test('qcow2 is converted to raw once; the cached file is the raw image', async (t) => {
  if (!requireTools(t, { 'qemu-img': 'qemu-utils' })) return;
  await withServer(async (server, dir) => {
    const raw = Buffer.concat([pseudoRandom(3 * MiB, 30), Buffer.alloc(MiB), pseudoRandom(MiB, 31)]);
    writeFileSync(join(dir, 'src.raw'), raw);
    execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', join(dir, 'src.raw'), join(dir, 'disk.qcow2')]);
    const qcow2 = readFileSync(join(dir, 'disk.qcow2'));
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 100 * MiB });
    const phases: string[] = [];
    const got = await cache.get({ url: serve(server, dir, 'disk.qcow2', qcow2), checksum: digest('sha256', qcow2), format: 'qcow2' }, { onProgress: (p) => phases.push(p.phase) });
    assert.equal(got.source.format, 'qcow2');
    assert.equal(got.sha256, digest('sha256', raw));
    assert.deepEqual(readFileSync(got.path), raw);
    assert.ok(phases.includes('convert') && phases.includes('hash'), phases.join());
  });
});

test('live-iso is cached without a checksum and served as an ISO', async () => {
  await withServer(async (server, dir) => {
    const iso = Buffer.alloc(64 * 1024);
    iso.write('CD001', 0x8001, 'latin1');
    const cache = await ImageCache.open({ dir: join(dir, 'cache'), maxBytes: 100 * MiB });
    const got = await cache.get({ url: serve(server, dir, 'live.iso', iso), format: 'live-iso' });
    assert.deepEqual([got.format, got.source.checksum], ['iso', null]);
  });
});

test('disk full while caching is a clear error and leaves nothing behind', async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root to mount a small tmpfs');
    return;
  }
  await withServer(async (server, dir) => {
    const mnt = join(dir, 'small');
    mkdirSync(mnt);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]);
    } catch (err) {
      t.skip(`cannot mount a tmpfs here: ${String(err)}`);
      return;
    }
    try {
      const image = pseudoRandom(3 * MiB, 40);
      const cache = await ImageCache.open({ dir: join(mnt, 'cache'), maxBytes: 100 * MiB });
      await assert.rejects(cache.get({ url: serve(server, dir, 'full.raw', image), checksum: digest('sha256', image) }), (e: unknown) =>
        e instanceof DiskFullError && e.message.includes('disk full while caching'));
      assert.deepEqual(readdirSync(join(mnt, 'cache', 'tmp')), []);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});
