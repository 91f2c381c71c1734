/**
 * Fault injection: disk full in the OS image cache. The cache lives on a small tmpfs mounted for
 * the test (unmounted in `t.after`, and lazily at process exit should the test die), with another
 * image already cached and a "filler" file standing for whatever else filled the disk. Each case
 * asserts the defined state — a `DiskFullError` naming the cache directory, the bytes needed and
 * the bytes free; no partial file left in `tmp/`; the other image still cached, listed and
 * byte-identical — and the recovery: once the filler is deleted, the same request succeeds.
 *
 * Cases: an image whose announced size (Content-Length) cannot fit (refused before a byte is
 * written), one sent without a size (ENOSPC mid-write), a qcow2 whose conversion to raw runs out
 * of space (qemu-img), a cache hit on a 100 % full disk (served; only its LRU stamp is skipped),
 * and the whole agent path: a host provisioning that image waits in `provisioning` with an
 * `ImageCacheFull` Warning (no provisioning error, no ramdisk boot) and deploys by itself once
 * space is freed.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../drivers/index.js';
import { FakeBmcPool } from '../../drivers/fake/fake-driver.js';
import { DiskFullError, ImageCache, type CachedImage } from '../../images/index.js';
import { Reconciler } from '../../agent/host/reconciler.js';
import { HostService } from '../../agent/host/service.js';
import { localImageDirs } from '../../agent/provisioner/local/image-prep.js';
import { LocalFactory } from '../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../agent/store/index.js';
import { hostManifests } from '../helpers/host-harness.js';
import { requireTools } from '../helpers/integration.js';
import { pseudoRandom } from '../unit/images/helpers.js';

const MiB = 1024 * 1024;
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const IMAGE_A = pseudoRandom(1 * MiB, 1);
const IMAGE_B = pseudoRandom(5 * MiB, 2);

/** A tmpfs of `sizeMiB` mounted on a fresh directory; unmounted (and removed) after the test. */
async function smallDisk(t: TestContext, sizeMiB: number): Promise<string | undefined> {
  if (!requireTools(t, ['mount', 'umount'], { root: true })) return undefined;
  const mnt = await mkdtemp(join(tmpdir(), 'rackside-fault-cache-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', mnt]);
  // Should the process die before t.after runs, do not leave the mount behind.
  const atExit = (): void => { spawnSync('umount', ['-l', mnt]); };
  process.once('exit', atExit);
  t.after(async () => {
    process.off('exit', atExit);
    // A file of the mount may still be open for a moment (a conversion's child, the hash
    // worker): try again, then detach lazily. Never throw here, or the hooks after this one
    // (the upstream server's close) would not run and the process would hang.
    for (let i = 0; i < 20 && spawnSync('umount', [mnt]).status !== 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    spawnSync('umount', ['-l', mnt]);
    await rm(mnt, { recursive: true, force: true });
  });
  return mnt;
}

/** Writes `bytes` (or, with `undefined`, as much as fits) of filler into `path`. */
async function fill(path: string, bytes?: number): Promise<void> {
  if (bytes !== undefined) {
    await writeFile(path, Buffer.alloc(bytes, 0xaa));
    return;
  }
  const r = spawnSync('dd', ['if=/dev/zero', `of=${path}`, 'bs=64k'], { stdio: 'ignore' }); // stops at ENOSPC
  assert.notEqual(r.status, 0, 'dd filled the disk to the last block');
}

interface Upstream {
  url: string;
  /** Requests seen, as paths. */
  seen: string[];
}

/** Serves `/<name>` with Content-Length and `/chunked/<name>` without (chunked transfer). */
async function upstream(t: TestContext, files: Record<string, Buffer>): Promise<Upstream> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    seen.push(path);
    const chunked = path.startsWith('/chunked/');
    const body = files[path.replace(/^\/chunked/, '').slice(1)];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    if (chunked) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < body.length; i += 256 * 1024) res.write(body.subarray(i, i + 256 * 1024));
      res.end();
    } else {
      res.writeHead(200, { 'content-length': body.length }).end(body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, seen };
}

/** Asserts the cache holds exactly the `expected` images (by sha256), intact, and nothing half-written. */
async function assertIntact(cache: ImageCache, dir: string, expected: Record<string, Buffer>): Promise<void> {
  assert.deepEqual(await readdir(join(dir, 'tmp')), [], 'no partial file left');
  const listed = await cache.list();
  assert.deepEqual(listed.map((m) => m.sha256).sort(), Object.values(expected).map(sha256).sort(), 'the cached images are all still listed, and nothing else');
  assert.deepEqual((await readdir(join(dir, 'blobs'))).sort(), Object.values(expected).map(sha256).sort(), 'no blob without its record');
  for (const meta of listed) {
    assert.equal(sha256(await readFile(meta.path)), meta.sha256, `${meta.source.url} is byte-identical`);
  }
}

function assertDiskFull(err: unknown, dir: string, url: string, neededBytes: number | null): true {
  assert.ok(err instanceof DiskFullError, `a DiskFullError, got ${String(err)}`);
  assert.equal(err.dir, dir);
  assert.equal(err.neededBytes, neededBytes);
  assert.ok(err.freeBytes !== null && err.freeBytes < IMAGE_B.length, `free bytes measured: ${String(err.freeBytes)}`);
  assert.ok(err.message.includes(`disk full while caching ${url}`), err.message);
  assert.ok(err.message.includes(`${dir} has ${String(err.freeBytes)} bytes`), err.message);
  assert.match(err.message, neededBytes === null ? /needs more than/ : new RegExp(`needs ${neededBytes} bytes`));
  return true;
}

interface CacheRig {
  mnt: string;
  dir: string;
  cache: ImageCache;
  server: Upstream;
  /** The image already in the cache before the disk fills. */
  a: CachedImage;
}

async function cacheWithImageA(t: TestContext, sizeMiB: number, files: Record<string, Buffer> = {}): Promise<CacheRig | undefined> {
  const mnt = await smallDisk(t, sizeMiB);
  if (mnt === undefined) return undefined;
  const server = await upstream(t, { 'a.raw': IMAGE_A, 'b.raw': IMAGE_B, ...files });
  const dir = join(mnt, 'os');
  const cache = await ImageCache.open({ dir, maxBytes: 64 * MiB, retryDelayMs: 1, maxAttempts: 2 });
  const a = await cache.get({ url: `${server.url}/a.raw`, checksum: sha256(IMAGE_A), checksumType: 'sha256' });
  return { mnt, dir, cache, server, a };
}

test('an image whose announced size does not fit is refused before a byte is written, naming the bytes; fetched once space is freed', async (t) => {
  const r = await cacheWithImageA(t, 8);
  if (r === undefined) return;
  await fill(join(r.mnt, 'filler'), 3 * MiB);
  const url = `${r.server.url}/b.raw`;
  const spec = { url, checksum: sha256(IMAGE_B), checksumType: 'sha256' };
  await assert.rejects(r.cache.get(spec), (e) => assertDiskFull(e, r.dir, url, IMAGE_B.length));
  await assertIntact(r.cache, r.dir, { a: IMAGE_A });
  await rm(join(r.mnt, 'filler'));
  const b = await r.cache.get(spec);
  assert.equal(b.sha256, sha256(IMAGE_B));
  await assertIntact(r.cache, r.dir, { a: IMAGE_A, b: IMAGE_B });
});

test('an image sent without a size hits ENOSPC mid-write: nothing partial is kept, the other image survives; a cache hit on a 100 % full disk is still served', async (t) => {
  const r = await cacheWithImageA(t, 8);
  if (r === undefined) return;
  await fill(join(r.mnt, 'filler'), 3 * MiB);
  const url = `${r.server.url}/chunked/b.raw`;
  const spec = { url, checksum: sha256(IMAGE_B), checksumType: 'sha256' };
  await assert.rejects(r.cache.get(spec), (e) => assertDiskFull(e, r.dir, url, null));
  await assertIntact(r.cache, r.dir, { a: IMAGE_A });

  await fill(join(r.mnt, 'filler-rest'));
  const hit = await r.cache.get({ url: `${r.server.url}/a.raw`, checksum: sha256(IMAGE_A), checksumType: 'sha256' });
  assert.equal(hit.sha256, r.a.sha256, 'served from the cache on a full disk');
  await rm(join(r.mnt, 'filler-rest'));
  await assertIntact(r.cache, r.dir, { a: IMAGE_A });

  await rm(join(r.mnt, 'filler'));
  assert.equal((await r.cache.get(spec)).sha256, sha256(IMAGE_B));
  await assertIntact(r.cache, r.dir, { a: IMAGE_A, b: IMAGE_B });
});

test('a qcow2 whose conversion to raw runs out of space: a DiskFullError, no partial raw or download kept; converted once space is freed', async (t) => {
  if (!requireTools(t, ['qemu-img'])) return;
  const work = await mkdtemp(join(tmpdir(), 'rackside-fault-qcow2-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const raw = pseudoRandom(3 * MiB, 3);
  await writeFile(join(work, 'c.raw'), raw);
  execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', join(work, 'c.raw'), join(work, 'c.qcow2')]);
  const qcow2 = await readFile(join(work, 'c.qcow2'));
  const r = await cacheWithImageA(t, 8, { 'c.qcow2': qcow2 });
  if (r === undefined) return;
  await fill(join(r.mnt, 'filler'), 2 * MiB); // ~5 MiB free: the download fits, download + raw does not
  const url = `${r.server.url}/c.qcow2`;
  const spec = { url, checksum: sha256(qcow2), checksumType: 'sha256', format: 'qcow2' };
  await assert.rejects(r.cache.get(spec), (e) => assertDiskFull(e, r.dir, url, null));
  await assertIntact(r.cache, r.dir, { a: IMAGE_A });
  await rm(join(r.mnt, 'filler'));
  const c = await r.cache.get(spec);
  assert.equal(c.sha256, sha256(raw), 'the served file is the raw conversion');
  await assertIntact(r.cache, r.dir, { a: IMAGE_A, c: raw });
});

test('agent path: a host provisioning an image that does not fit waits in provisioning with an ImageCacheFull Warning, then deploys by itself once space is freed', async (t) => {
  const mnt = await smallDisk(t, 8);
  if (mnt === undefined) return;
  const server = await upstream(t, { 'b.raw': IMAGE_B });
  const dirs = localImageDirs(mnt);
  await mkdir(dirs.configDriveDir, { recursive: true });
  await fill(join(mnt, 'filler'), 4 * MiB);
  const cache = await ImageCache.open({ dir: dirs.osCacheDir, maxBytes: 64 * MiB, retryDelayMs: 1, maxAttempts: 2 });
  const store = createMemoryStore();
  const pool = new FakeBmcPool();
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers, { fakePool: pool });
  let ids = 0;
  const factory = new LocalFactory({
    store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now(), newId: () => `id-${++ids}-0000000000`, pollMs: 0,
    images: { source: cache, httpBaseUrl: 'http://192.0.2.1:6180', configDriveDir: dirs.configDriveDir, retryDelayMs: 50 },
  });
  t.after(() => factory.close());
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const url = `${server.url}/b.raw`;
  const [secret, bmh] = hostManifests('p0', { image: { url, checksum: sha256(IMAGE_B), checksumType: 'sha256', format: 'raw' }, automatedCleaningMode: 'disabled' }, { 'inspect.metal3.io': 'disabled' }) as [unknown, { spec: { bmc: { address: string } } }];
  bmh.spec.bmc.address = 'fake://p0-bmc';
  await service.apply([secret, bmh]);
  const events = async (): Promise<{ reason: string; type: string; message: string; data?: Record<string, unknown> }[]> => store.listEvents({ host: 'p0' });
  const pxeBoots = (): number => pool.get('p0-bmc').boots.filter((b) => b.device === 'pxe').length;
  /** Reconciles (with a pause for the background download) until `done`; nobody touches the host meanwhile. */
  const until = async (what: string, done: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 1500; i++) {
      if (await done()) return;
      await reconciler.reconcileOnce('p0');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const h = await service.getHost('p0');
    assert.fail(`${what}: stuck in ${h.status.provisioning.state}: ${h.status.errorType} ${h.status.errorMessage}`);
  };

  await until('two attempts finding the disk full', async () => (await events()).filter((e) => e.reason === 'ImageCacheFull').length >= 2);
  const during = await service.getHost('p0');
  assert.equal(during.status.provisioning.state, 'provisioning', 'the host waits where it is');
  assert.equal(during.status.errorType, '', 'a full head-node disk is not the host\'s provisioning error');
  assert.equal(during.status.errorCount, 0);
  assert.equal(pxeBoots(), 0, 'no ramdisk boot while the image cannot be cached');
  const full = (await events()).find((e) => e.reason === 'ImageCacheFull');
  assert.ok(full !== undefined);
  t.diagnostic(full.message);
  assert.equal(full.type, 'Warning');
  assert.ok(full.message.includes(`disk full while caching ${url}: the image needs ${IMAGE_B.length} bytes`), full.message);
  assert.ok(full.message.includes(`${dirs.osCacheDir} has `), full.message);
  assert.match(full.message, /trying again in \d+ s \(attempt 1\)/);
  assert.equal(full.data?.dir, dirs.osCacheDir);
  assert.equal(full.data.neededBytes, IMAGE_B.length);
  assert.equal(typeof full.data.freeBytes, 'number');
  const downloads = factory.imageDownloads();
  assert.equal(downloads.length, 1);
  assert.match(downloads[0]?.error ?? '', /disk full while caching/, 'the status page says why the download waits');
  assert.deepEqual(await readdir(join(dirs.osCacheDir, 'tmp')), []);
  assert.ok(!(await events()).some((e) => e.reason === 'ImageFailed' || e.reason === 'ProvisioningError'));

  await rm(join(mnt, 'filler'));
  await until('the deploy starting', () => Promise.resolve(pxeBoots() === 1));
  const after = await service.getHost('p0');
  assert.equal(after.status.provisioning.state, 'provisioning');
  assert.equal(after.status.errorType, '');
  const ready = (await events()).find((e) => e.reason === 'ImageReady');
  assert.match(ready?.message ?? '', /after \d+ attempts? that found the disk full/);
  assert.ok((await events()).some((e) => e.reason === 'DeployStarted'));
  assert.deepEqual((await readdir(join(dirs.osCacheDir, 'blobs'))), [sha256(IMAGE_B)]);
});
