/**
 * File chunks shared between TFTP transfers (bootsvc/tftp/shared-chunks.ts): the cache rules
 * (join a read in flight, least recently used dropped over the budget, a failed read not kept),
 * then the server over loopback: 40 clients fetching one file at once open it once (the open-file
 * cache) and read each chunk from disk once and get exact bytes, the hook's `{ file }` answer
 * streams a named file, a file replaced by rename or rewritten in place is read anew, and `maxTransfers` drops the requests beyond it (counted).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileKeyOf, SharedChunks } from '../../../../bootsvc/tftp/shared-chunks.js';
import { startTftpServer, type TftpServer, type TftpServerOptions } from '../../../../bootsvc/tftp/tftp-server.js';
import { fetchFile } from './test-client.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

test('a read in flight is joined, not repeated; a loaded chunk is served from memory', async () => {
  const cache = new SharedChunks(1024);
  let reads = 0;
  const read = (): Promise<Buffer> => { reads += 1; return new Promise((resolve) => setImmediate(() => { resolve(Buffer.from('abc')); })); };
  const [a, b] = await Promise.all([cache.load('f', 0, read), cache.load('f', 0, read)]);
  assert.equal(reads, 1);
  assert.equal(a, b);
  assert.equal(cache.get('f', 0), a);
  assert.equal(cache.get('f', 1), undefined);
  assert.equal(cache.get('g', 0), undefined, 'another file');
  assert.deepEqual(cache.stats(), { bytes: 3, chunks: 1, hits: 2, reads: 1 });
});

test('over the budget the least recently used chunks go; a chunk larger than the budget is never kept', async () => {
  const cache = new SharedChunks(10);
  const chunk = (n: number) => () => Promise.resolve(Buffer.alloc(n));
  await cache.load('f', 0, chunk(4));
  await cache.load('f', 1, chunk(4));
  cache.get('f', 0); // 0 is now more recent than 1
  await cache.load('f', 2, chunk(4));
  assert.notEqual(cache.get('f', 0), undefined);
  assert.equal(cache.get('f', 1), undefined, 'the least recently used chunk was dropped');
  assert.notEqual(cache.get('f', 2), undefined);
  const big = await cache.load('f', 3, chunk(11));
  assert.equal(big.length, 11, 'served all the same');
  assert.equal(cache.get('f', 3), undefined);
  assert.ok(cache.stats().bytes <= 10);
});

test('a failed read rejects its joiners and is not kept: the next load reads again', async () => {
  const cache = new SharedChunks(100);
  const failing = (): Promise<Buffer> => Promise.reject(new Error('EIO'));
  await Promise.all([assert.rejects(cache.load('f', 0, failing), /EIO/), assert.rejects(cache.load('f', 0, failing), /EIO/)]);
  assert.equal((await cache.load('f', 0, () => Promise.resolve(Buffer.from('ok')))).toString(), 'ok');
});

test('a file key changes with the inode, the size and the modification time', () => {
  const base = { dev: 1, ino: 2, size: 3, mtimeMs: 4 };
  const keys = new Set([base, { ...base, ino: 9 }, { ...base, size: 9 }, { ...base, mtimeMs: 9 }, { ...base, dev: 9 }].map(fileKeyOf));
  assert.equal(keys.size, 5);
});

async function serve(t: TestContext, options: Partial<TftpServerOptions>): Promise<TftpServer> {
  const server = await startTftpServer({ listen: { host: '127.0.0.1', port: 0 }, roots: [], timeoutMs: 400, minTimeoutMs: 50, ...options });
  t.after(() => server.stop());
  return server;
}

test('40 clients fetching one file at once read each chunk from disk once and all get its bytes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-shared-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bytes = randomBytes(1024 * 1024 + 999); // 5 chunks of 256 KiB
  await writeFile(join(dir, 'first-stage.efi'), bytes);
  const server = await serve(t, { roots: [dir] });
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => fetchFile('127.0.0.1', server.address.port, 'first-stage.efi', {
    options: i % 2 === 0 ? [{ name: 'blksize', value: '1468' }, { name: 'windowsize', value: '8' }] : [{ name: 'blksize', value: '1468' }],
  })));
  for (const r of results) {
    assert.equal(r.error, undefined);
    assert.equal(sha256(r.data), sha256(bytes));
  }
  const stats = server.stats();
  assert.equal(stats.sharedChunks.reads, 5, 'one disk read per chunk for all 40 transfers');
  assert.ok(stats.sharedChunks.hits >= 39 * 5);
  assert.equal(stats.openFiles.opens, 1, 'one open (and realpath, fstat) for all 40 transfers: the open-file cache');
  assert.equal(stats.openFiles.openFiles, 1);
  // The server ends a transfer when the final ACK arrives, just after the client returned.
  for (let i = 0; i < 100 && server.stats().completedTransfers < 40; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(server.stats().completedTransfers, 40);
});

test('the hook may name a file: it is streamed (shared) like the roots; a file replaced by rename is read anew', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-hookfile-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'ipxe.efi');
  const first = randomBytes(300_000);
  await writeFile(path, first);
  const server = await serve(t, { resolve: (name) => Promise.resolve(name === 'ipxe.efi' ? { file: path } : undefined) });
  const a = await fetchFile('127.0.0.1', server.address.port, 'ipxe.efi');
  assert.equal(sha256(a.data), sha256(first));
  const second = randomBytes(300_000);
  await writeFile(join(dir, 'next'), second);
  await rename(join(dir, 'next'), path);
  const b = await fetchFile('127.0.0.1', server.address.port, 'ipxe.efi');
  assert.equal(sha256(b.data), sha256(second));
  // Rewritten in place (same inode, same size): the cached descriptor is retired, the bytes new.
  const third = randomBytes(300_000);
  await writeFile(path, third);
  const c = await fetchFile('127.0.0.1', server.address.port, 'ipxe.efi');
  assert.equal(sha256(c.data), sha256(third));
  assert.equal(server.stats().openFiles.opens, 3, 'opened again after each change, not per request');
  const missing = await fetchFile('127.0.0.1', server.address.port, 'other.efi');
  assert.equal(missing.error?.code, 1, 'not found: nothing else to serve');
});

test('a file the hook names through a symlink (Debian\'s /usr/lib/ipxe links) is served; a dangling one is not found', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-tftp-hooklink-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bytes = randomBytes(100_000);
  await writeFile(join(dir, 'ipxe-real.efi'), bytes);
  await symlink(join(dir, 'ipxe-real.efi'), join(dir, 'ipxe.efi'));
  await symlink(join(dir, 'gone.efi'), join(dir, 'dangling.efi'));
  const server = await serve(t, { resolve: (name) => Promise.resolve({ file: join(dir, name) }) });
  const served = await fetchFile('127.0.0.1', server.address.port, 'ipxe.efi');
  assert.equal(served.error, undefined);
  assert.equal(sha256(served.data), sha256(bytes));
  assert.equal((await fetchFile('127.0.0.1', server.address.port, 'dangling.efi')).error?.code, 1);
});
