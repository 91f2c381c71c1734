/**
 * @module The OS image cache on the head node: images are fetched from upstream once (undici,
 * Range resume, progress), verified against the metal3 checksum (md5/sha256/sha512/auto, a value
 * or a checksum-file URL; live-iso needs none, oci is refused), converted to raw once when they
 * are qcow2/vmdk/vdi (qemu-img in a child process) so the ramdisk streams raw bytes, and stored
 * content-addressed by the sha256 of the served file. Concurrent requests for one image share
 * one download. A size limit evicts the least recently used images (an open file being served
 * survives eviction: Linux keeps unlinked open files readable).
 *
 * Layout under `dir`: `blobs/<sha256>` (served file), `meta/<sha256>.json` ({@link CachedImage}),
 * `refs/<key>.json` (request key → sha256; key = sha256 of URL and verified checksum), `tmp/`
 * (partial downloads and records being written, emptied by {@link ImageCache.open}).
 *
 * A full disk (ENOSPC, or an announced size that cannot fit) fails the fetch with a
 * {@link DiskFullError} naming the directory, the bytes needed and free; it leaves no partial
 * file, and never loses another image: records are written atomically, a blob placed before its
 * record failed is removed again, and a cache hit whose LRU stamp cannot be written is served anyway.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request, type Dispatcher } from 'undici';
import { hashFile } from './hash-file.js';
import { ChecksumError, detectChecksumAlgorithm, imageFileName, parseChecksumFile, planChecksum, type ChecksumAlgorithm, type ImageSpec } from './image-checksum.js';
import { convertToRaw, detectImageFormat, type DiskImageFormat } from './image-convert.js';
import { DiskFullError, diskFullError, DownloadError, downloadWithResume, type ImageProgress } from './image-fetch.js';

/** An image in the cache. */
export interface CachedImage {
  /** sha256 of the served file: its content address. */
  sha256: string;
  path: string;
  sizeBytes: number;
  /** What the ramdisk or BMC receives: raw disk bytes, or an ISO for live-iso. */
  format: 'raw' | 'iso';
  source: { url: string; format: DiskImageFormat; bytes: number; checksum: { algorithm: ChecksumAlgorithm; value: string } | null };
  lastUsedMs: number;
}

/** Options of {@link ImageCache.open}. */
export interface ImageCacheOptions {
  dir: string;
  /** Total size of the cached files; least recently used images are evicted beyond it. */
  maxBytes: number;
  dispatcher?: Dispatcher;
  maxAttempts?: number;
  retryDelayMs?: number;
  qemuImg?: string;
  /** Clock for LRU order (tests). */
  now?: () => number;
}

/** Thrown when a downloaded image does not match its checksum; nothing is cached. */
export class ChecksumMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChecksumMismatchError';
  }
}

/** Thrown for an image larger than the whole cache. */
export class ImageTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageTooLargeError';
  }
}

function isEnospc(err: unknown): boolean {
  return (typeof err === 'object' && err !== null && 'code' in err && err.code === 'ENOSPC') || (err instanceof Error && /No space left on device/.test(err.message));
}

/** The content-addressed image cache; create with {@link ImageCache.open}. */
export class ImageCache {
  private readonly inflight = new Map<string, Promise<CachedImage>>();
  private readonly now: () => number;

  private constructor(private readonly options: ImageCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Creates the directories, removes partial downloads left by a previous process and returns the cache. */
  static async open(options: ImageCacheOptions): Promise<ImageCache> {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) throw new RangeError('maxBytes must be a positive integer');
    await rm(join(options.dir, 'tmp'), { recursive: true, force: true });
    for (const d of ['blobs', 'meta', 'refs', 'tmp']) await mkdir(join(options.dir, d), { recursive: true });
    return new ImageCache(options);
  }

  /**
   * Resolves with the cached image for `image`, fetching, verifying and converting it first when
   * needed. Rejects with ChecksumError (rules), DownloadError (URL and status), ChecksumMismatchError,
   * DiskFullError, ImageTooLargeError or ImageConvertError; a failed fetch leaves nothing behind.
   */
  async get(image: ImageSpec, options: { onProgress?: (p: ImageProgress) => void } = {}): Promise<CachedImage> {
    const plan = planChecksum(image);
    let expected: { algorithm: ChecksumAlgorithm; value: string } | null = null;
    if (plan.kind === 'value') expected = { algorithm: plan.algorithm, value: plan.value };
    else if (plan.kind === 'url') {
      const value = parseChecksumFile(await this.fetchText(plan.url), imageFileName(image.url));
      expected = { algorithm: plan.algorithm === 'auto' ? detectChecksumAlgorithm(value) : plan.algorithm, value };
      if (value.length !== { md5: 32, sha256: 64, sha512: 128 }[expected.algorithm]) throw new ChecksumError(`the checksum file's entry is not a ${expected.algorithm} digest`);
    }
    const key = createHash('sha256').update(`${image.url}\n${expected === null ? 'live-iso' : `${expected.algorithm}:${expected.value}`}`).digest('hex');
    const running = this.inflight.get(key);
    if (running !== undefined) return running;
    const job = this.lookupOrFetch(key, image, expected, options.onProgress).finally(() => this.inflight.delete(key));
    this.inflight.set(key, job);
    return job;
  }

  /** Resolves with every cached image, least recently used first. */
  async list(): Promise<CachedImage[]> {
    const out: CachedImage[] = [];
    for (const f of await readdir(join(this.options.dir, 'meta'))) {
      if (!f.endsWith('.json')) continue;
      const meta = await this.readJson<CachedImage>(join(this.options.dir, 'meta', f));
      if (meta !== undefined) out.push(meta);
    }
    return out.sort((a, b) => a.lastUsedMs - b.lastUsedMs || a.sha256.localeCompare(b.sha256));
  }

  private async readJson<T>(path: string): Promise<T | undefined> {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes a record atomically (a temporary file in `tmp/`, then rename): a full disk must never
   * leave a truncated record behind, which would drop an image from the cache.
   */
  private async writeJson(path: string, value: unknown): Promise<void> {
    const tmp = join(this.options.dir, 'tmp', `${randomUUID()}.json`);
    try {
      await writeFile(tmp, JSON.stringify(value));
      await rename(tmp, path);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  private async fetchText(url: string): Promise<string> {
    const res = await request(url, { ...(this.options.dispatcher === undefined ? {} : { dispatcher: this.options.dispatcher }) }).catch((err: unknown) => {
      throw new DownloadError(url, null, `GET ${url} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new DownloadError(url, res.statusCode, `GET ${url} answered HTTP ${res.statusCode}`);
    }
    const text = await res.body.text();
    if (text.length > 1024 * 1024) throw new ChecksumError(`checksum file ${url} is larger than 1 MiB`);
    return text;
  }

  private async lookupOrFetch(key: string, image: ImageSpec, expected: CachedImage['source']['checksum'], onProgress?: (p: ImageProgress) => void): Promise<CachedImage> {
    const ref = await this.readJson<{ sha256: string }>(join(this.options.dir, 'refs', `${key}.json`));
    if (ref !== undefined) {
      const meta = await this.readJson<CachedImage>(join(this.options.dir, 'meta', `${ref.sha256}.json`));
      if (meta !== undefined && (await stat(meta.path).catch(() => undefined)) !== undefined) {
        const touched = { ...meta, lastUsedMs: this.now() };
        // Only the LRU order: on a full disk the image is still served, its record untouched.
        await this.writeJson(join(this.options.dir, 'meta', `${meta.sha256}.json`), touched).catch((err: unknown) => {
          if (!isEnospc(err)) throw err;
        });
        return touched;
      }
    }
    return this.fetch(key, image, expected, onProgress);
  }

  private async fetch(key: string, image: ImageSpec, expected: CachedImage['source']['checksum'], onProgress?: (p: ImageProgress) => void): Promise<CachedImage> {
    const tmp = join(this.options.dir, 'tmp', randomUUID());
    const download = `${tmp}.download`;
    const converted = `${tmp}.raw`;
    try {
      const algorithms = [...new Set(['sha256', ...(expected === null ? [] : [expected.algorithm])])];
      const got = await downloadWithResume(image.url, download, {
        algorithms,
        ...(this.options.dispatcher === undefined ? {} : { dispatcher: this.options.dispatcher }),
        ...(this.options.maxAttempts === undefined ? {} : { maxAttempts: this.options.maxAttempts }),
        ...(this.options.retryDelayMs === undefined ? {} : { retryDelayMs: this.options.retryDelayMs }),
        ...(onProgress === undefined ? {} : { onProgress }),
        spaceDir: this.options.dir,
      });
      if (expected !== null && got.digests[expected.algorithm] !== expected.value) {
        throw new ChecksumMismatchError(`checksum mismatch for ${image.url}: expected ${expected.algorithm} ${expected.value}, got ${got.digests[expected.algorithm] ?? 'nothing'}; nothing was cached`);
      }
      const sourceFormat = await detectImageFormat(download);
      let served = download;
      let sha256 = got.digests.sha256 ?? '';
      if (sourceFormat === 'qcow2' || sourceFormat === 'vmdk' || sourceFormat === 'vdi') {
        onProgress?.({ phase: 'convert', bytes: 0, totalBytes: got.bytes });
        await convertToRaw(download, sourceFormat, converted, this.options.qemuImg);
        await rm(download, { force: true });
        served = converted;
        const size = (await stat(converted)).size;
        onProgress?.({ phase: 'hash', bytes: 0, totalBytes: size });
        sha256 = (await hashFile(converted, ['sha256'])).sha256 ?? '';
      }
      const sizeBytes = (await stat(served)).size;
      if (sizeBytes > this.options.maxBytes) throw new ImageTooLargeError(`${image.url} is ${sizeBytes} bytes as ${served === converted ? 'raw' : sourceFormat}, more than the cache limit of ${this.options.maxBytes}`);
      const path = join(this.options.dir, 'blobs', sha256);
      const metaPath = join(this.options.dir, 'meta', `${sha256}.json`);
      const refPath = join(this.options.dir, 'refs', `${key}.json`);
      const meta: CachedImage = {
        sha256,
        path,
        sizeBytes,
        format: sourceFormat === 'iso' ? 'iso' : 'raw',
        source: { url: image.url, format: sourceFormat, bytes: got.bytes, checksum: expected },
        lastUsedMs: this.now(),
      };
      // Another URL may have brought the same bytes already: that image must survive a failure here.
      const known = (await this.readJson<CachedImage>(metaPath)) !== undefined;
      await rename(served, path);
      try {
        await this.writeJson(metaPath, meta);
        await this.writeJson(refPath, { sha256 });
      } catch (err) {
        if (!known) {
          await rm(metaPath, { force: true });
          await rm(path, { force: true });
        }
        throw err;
      }
      await this.evict(sha256);
      return meta;
    } catch (err) {
      if (isEnospc(err) && !(err instanceof DiskFullError)) throw await diskFullError(image.url, this.options.dir, null, 0, err);
      throw err;
    } finally {
      await rm(download, { force: true });
      await rm(converted, { force: true });
    }
  }

  /** Removes least recently used images until the total fits `maxBytes`, never `keep`. */
  private async evict(keep: string): Promise<void> {
    const all = await this.list();
    let total = all.reduce((s, m) => s + m.sizeBytes, 0);
    for (const m of all) {
      if (total <= this.options.maxBytes) break;
      if (m.sha256 === keep) continue;
      await rm(join(this.options.dir, 'meta', `${m.sha256}.json`), { force: true });
      await rm(m.path, { force: true });
      total -= m.sizeBytes;
    }
  }
}
