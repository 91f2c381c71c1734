/**
 * @module Downloading an upstream image with undici into a file, hashing it while it streams
 * (chunk by chunk as undici delivers them, ≤ 64 KiB each, so the event loop is never held for
 * long) and resuming a cut transfer with `Range: bytes=N-` (RFC 9110 §14.2) guarded by `If-Range`
 * with the first response's strong ETag or Last-Modified (§13.1.5), so a changed upstream file
 * restarts from zero instead of being spliced. A 200 answer to a Range request also restarts.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, statfs, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';

/** Progress of one phase of getting an image. */
export interface ImageProgress {
  phase: 'download' | 'convert' | 'hash';
  bytes: number;
  totalBytes: number | null;
}

/** Options of {@link downloadWithResume}. */
export interface DownloadOptions {
  /** Hash algorithms computed over the whole body. */
  algorithms: readonly string[];
  dispatcher?: Dispatcher;
  /** Attempts in a row without progress before giving up (default 5). */
  maxAttempts?: number;
  /** Pause between attempts, multiplied by the attempt number (default 250 ms). */
  retryDelayMs?: number;
  /** Idle time after which a silent connection counts as cut (default 30 s). */
  bodyTimeoutMs?: number;
  onProgress?: (p: ImageProgress) => void;
  /** Bytes between progress callbacks (default 4 MiB). */
  progressEveryBytes?: number;
  /** Directory named in {@link DiskFullError}s (default the destination's; the cache names its own). */
  spaceDir?: string;
}

/** What {@link downloadWithResume} fetched. */
export interface DownloadResult {
  bytes: number;
  digests: Record<string, string>;
  attempts: number;
  /** Resumed requests that the server answered with 206. */
  resumes: number;
}

/** Thrown when a download cannot complete; the message names the URL and the HTTP status or cause. */
export class DownloadError extends Error {
  readonly url: string;
  readonly status: number | null;
  constructor(url: string, status: number | null, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DownloadError';
    this.url = url;
    this.status = status;
  }
}

/** Where a cache ran out of space, and how much it needed and had. */
export interface DiskFullDetails {
  /** Directory whose filesystem is full. */
  readonly dir: string;
  /** Bytes the image needs (its announced size), or null when unknown (no Content-Length, conversion). */
  readonly neededBytes: number | null;
  /** Bytes free to unprivileged writers there when the failure was seen, or null when statfs failed. */
  readonly freeBytes: number | null;
}

/**
 * Thrown when the disk is too full for an image (refused before writing when the announced size
 * does not fit, or ENOSPC while writing or converting); nothing is left behind. The message names
 * the URL, the directory, the bytes needed and the bytes free.
 */
export class DiskFullError extends Error implements DiskFullDetails {
  readonly dir: string;
  readonly neededBytes: number | null;
  readonly freeBytes: number | null;
  constructor(message: string, details: DiskFullDetails, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DiskFullError';
    this.dir = details.dir;
    this.neededBytes = details.neededBytes;
    this.freeBytes = details.freeBytes;
  }
}

/** Bytes free to unprivileged writers on the filesystem of `dir`, or null when statfs fails. */
export async function freeBytesIn(dir: string): Promise<number | null> {
  try {
    const fs = await statfs(dir);
    return fs.bavail * fs.bsize;
  } catch {
    return null;
  }
}

function describeBytes(bytes: number): string {
  return `${bytes} bytes (${(bytes / 1024 / 1024).toFixed(1)} MiB)`;
}

/**
 * Returns the {@link DiskFullError} for `url` in `dir`: `neededBytes` the image's size when known,
 * else `writtenBytes` (how far it got) is named as a lower bound.
 */
export async function diskFullError(url: string, dir: string, neededBytes: number | null, writtenBytes: number, cause?: unknown): Promise<DiskFullError> {
  const freeBytes = await freeBytesIn(dir);
  const needs = neededBytes === null ? (writtenBytes > 0 ? `more than ${describeBytes(writtenBytes)}` : 'more than is free') : describeBytes(neededBytes);
  const free = freeBytes === null ? 'an unknown amount' : describeBytes(freeBytes);
  return new DiskFullError(
    `disk full while caching ${url}: the image needs ${needs}, ${dir} has ${free} free; nothing was kept and the cache is intact — free space there and it is fetched again`,
    { dir, neededBytes, freeBytes },
    cause === undefined ? undefined : { cause },
  );
}

function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Returns the start and total of a `Content-Range: bytes a-b/total` value, or undefined. */
export function parseContentRange(value: string | undefined): { start: number; total: number | null } | undefined {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(value ?? '');
  if (m?.[1] === undefined || m[2] === undefined) return undefined;
  return { start: Number(m[1]), total: m[2] === '*' ? null : Number(m[2]) };
}

/**
 * Downloads `url` into `destPath` (created or truncated), resuming after cuts; resolves with the
 * byte count and digests. Throws {@link DownloadError} for an HTTP error status (4xx at once, 5xx
 * and network errors after `maxAttempts` without progress) and {@link DiskFullError} on ENOSPC or
 * when the announced size (Content-Length, Content-Range total) exceeds the free space.
 */
export async function downloadWithResume(url: string, destPath: string, options: DownloadOptions): Promise<DownloadResult> {
  const maxAttempts = options.maxAttempts ?? 5;
  const every = options.progressEveryBytes ?? 4 * 1024 * 1024;
  let file: FileHandle = await open(destPath, 'w');
  let hashes: Hash[] = options.algorithms.map((a) => createHash(a));
  let got = 0;
  let total: number | null = null;
  let validator: string | undefined;
  let attempts = 0;
  let stalled = 0;
  let resumes = 0;
  let lastError: DownloadError | undefined;
  const spaceDir = options.spaceDir ?? dirname(destPath);
  /** An announced size that cannot fit is refused before a byte is written (the rest would only fill the disk). */
  const refuseWhenTooBig = async (body: { dump(): Promise<void> }, size: number | null): Promise<void> => {
    if (size === null || !Number.isSafeInteger(size)) return;
    const free = await freeBytesIn(spaceDir);
    if (free === null || free >= size - got) return;
    await body.dump().catch(() => undefined);
    throw await diskFullError(url, spaceDir, size, 0);
  };
  const restart = async (): Promise<void> => {
    await file.truncate(0);
    await file.close();
    file = await open(destPath, 'w');
    hashes = options.algorithms.map((a) => createHash(a));
    got = 0;
  };
  try {
    while (stalled < maxAttempts) {
      attempts += 1;
      const before = got;
      try {
        const headers: Record<string, string> = { 'user-agent': 'rackside-image-cache' };
        if (got > 0) {
          headers.range = `bytes=${got}-`;
          if (validator !== undefined) headers['if-range'] = validator;
        }
        const res = await request(url, { method: 'GET', headers, bodyTimeout: options.bodyTimeoutMs ?? 30_000, headersTimeout: options.bodyTimeoutMs ?? 30_000, ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }) });
        if (res.statusCode === 206 && got > 0) {
          const range = parseContentRange(header(res.headers, 'content-range'));
          if (range?.start !== got) {
            await res.body.dump();
            await restart();
            continue;
          }
          resumes += 1;
          total = range.total ?? total;
          await refuseWhenTooBig(res.body, total);
        } else if (res.statusCode === 200) {
          if (got > 0) await restart();
          const length = header(res.headers, 'content-length');
          total = length === undefined ? null : Number(length);
          const etag = header(res.headers, 'etag');
          validator = etag !== undefined && !etag.startsWith('W/') ? etag : header(res.headers, 'last-modified');
          await refuseWhenTooBig(res.body, total);
        } else {
          await res.body.dump();
          const err = new DownloadError(url, res.statusCode, `GET ${url} answered HTTP ${res.statusCode}`);
          if (res.statusCode < 500 && res.statusCode !== 408 && res.statusCode !== 429) throw err;
          lastError = err;
          stalled += 1;
          await sleep((options.retryDelayMs ?? 250) * attempts);
          continue;
        }
        let sinceProgress = 0;
        for await (const chunk of res.body) {
          const buf = chunk as Buffer;
          await file.write(buf, 0, buf.length, got);
          for (const h of hashes) h.update(buf);
          got += buf.length;
          sinceProgress += buf.length;
          if (sinceProgress >= every) {
            sinceProgress = 0;
            options.onProgress?.({ phase: 'download', bytes: got, totalBytes: total });
          }
        }
        if (total === null || got >= total) {
          options.onProgress?.({ phase: 'download', bytes: got, totalBytes: total ?? got });
          return { bytes: got, digests: Object.fromEntries(options.algorithms.map((a, i) => [a, hashes[i]?.digest('hex') ?? ''])), attempts, resumes };
        }
        lastError = new DownloadError(url, res.statusCode, `GET ${url} ended after ${got} of ${total} bytes`);
      } catch (err) {
        if (err instanceof DownloadError && err.status !== null && err.status < 500) throw err;
        if (err instanceof DiskFullError) throw err;
        if (typeof err === 'object' && err !== null && 'code' in err && err.code === 'ENOSPC') {
          throw await diskFullError(url, spaceDir, total, got, err);
        }
        lastError = err instanceof DownloadError ? err : new DownloadError(url, null, `GET ${url} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      stalled = got > before ? 0 : stalled + 1;
      if (stalled < maxAttempts) await sleep((options.retryDelayMs ?? 250) * Math.max(1, stalled));
    }
    throw lastError ?? new DownloadError(url, null, `GET ${url} failed`);
  } finally {
    await file.close();
  }
}
