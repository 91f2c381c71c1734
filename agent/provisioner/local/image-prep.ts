/**
 * @module OS image preparation for the local provisioner's `provision`, per host and once per
 * image, in the background: the image from the OS image cache (fetched, verified against the
 * metal3 checksum, converted to raw once — images/image-cache.ts) and the host's config drive
 * (metal3 meta_data, user_data, network_data — docs/metal3-mapping.md, "Config drive", images/config-drive.ts), both
 * served by boot HTTP under {@link IMAGES_MOUNT} and {@link CONFIG_DRIVE_MOUNT}. Progress goes
 * to the host's timeline as events, at most one per `progressIntervalMs` and phase. A full disk
 * (the cache's `DiskFullError`, ENOSPC building the config drive) is no failure of the host: the
 * preparation waits and retries with backoff, with an `ImageCacheFull` Warning each attempt.
 *
 * Also the lazily opened cache the agent uses ({@link openLazyImageCache}) and its size limit:
 * 80% of the space the cache could use when it opens (free space plus what it already holds),
 * at least 1 GiB — the cache shares the disk with the store and the ramdisk, so it never takes
 * all of it; beyond the limit the least recently used images are evicted.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { buildConfigDrive, DiskFullError, ImageCache, type CachedImage, type ConfigDriveContent, type ImageProgress, type ImageSpec } from '../../../images/index.js';
import type { Image } from '../../host/types.js';
import type { Store } from '../../store/types.js';
import type { HostConfigData, HostData } from '../provisioner.js';
import { isJsonObject } from '../../json-value.js';

/** Where cached OS images come from (an {@link ImageCache}, or a stand-in in tests). */
export interface ImageSource {
  get(image: ImageSpec, options?: { onProgress?: (p: ImageProgress) => void }): Promise<CachedImage>;
}

/** Boot HTTP prefix of the cached images (`/images/<sha256>`). */
export const IMAGES_MOUNT = 'images';
/** Boot HTTP prefix of the config drives (`/configdrive/<uid>-<random>.img`). */
export const CONFIG_DRIVE_MOUNT = 'configdrive';

/** The directories under `images.cacheDir`: the OS image cache, its served blobs, the config drives. */
export function localImageDirs(cacheDir: string): { osCacheDir: string; blobsDir: string; configDriveDir: string } {
  const osCacheDir = join(cacheDir, 'os');
  return { osCacheDir, blobsDir: join(osCacheDir, 'blobs'), configDriveDir: join(cacheDir, 'configdrive') };
}

/** The boot HTTP mounts the local provisioner's URLs point into (prefix → directory). */
export function localBootMounts(cacheDir: string): Record<string, string> {
  const dirs = localImageDirs(cacheDir);
  return { [IMAGES_MOUNT]: dirs.blobsDir, [CONFIG_DRIVE_MOUNT]: dirs.configDriveDir };
}

const GIB = 1024 ** 3;

/** Returns the default cache limit for `dir`: 80% of (free space + bytes in `blobsDir`), at least 1 GiB. */
export async function defaultImageCacheMaxBytes(dir: string, blobsDir: string): Promise<number> {
  const fs = await statfs(dir);
  let cached = 0;
  for (const name of await readdir(blobsDir).catch(() => [])) cached += (await stat(join(blobsDir, name)).catch(() => undefined))?.size ?? 0;
  return Math.max(GIB, Math.floor(0.8 * (fs.bavail * fs.bsize + cached)));
}

/**
 * Returns an {@link ImageSource} over the cache in `osCacheDir`, opened on first use (and again
 * after a failed open); `maxBytes` defaults to {@link defaultImageCacheMaxBytes}.
 */
export function openLazyImageCache(osCacheDir: string, maxBytes?: number): ImageSource {
  let opening: Promise<ImageCache> | undefined;
  const open = async (): Promise<ImageCache> => {
    await mkdir(join(osCacheDir, 'blobs'), { recursive: true });
    return ImageCache.open({ dir: osCacheDir, maxBytes: maxBytes ?? (await defaultImageCacheMaxBytes(osCacheDir, join(osCacheDir, 'blobs'))) });
  };
  return {
    async get(image, options) {
      opening ??= open().catch((error: unknown) => {
        opening = undefined;
        throw error;
      });
      return (await opening).get(image, options);
    },
  };
}

/** Options of {@link ImagePreparer}. */
export interface ImagePreparerOptions {
  source: ImageSource;
  /** Boot HTTP base URL as hosts reach it (`http://<provisioning address>:<port>`). */
  httpBaseUrl: string;
  configDriveDir: string;
  /** Default `iso` (what Ironic builds). */
  configDriveFormat?: 'iso' | 'vfat';
  store: Pick<Store, 'appendEvents'>;
  nowMs: () => number;
  /**
   * The network_data.json of a host without a networkData secret, by its boot MAC (the IPv6
   * provisioning network's, images/config-drive-network.ts); `undefined`: none.
   */
  defaultNetworkData?: (bootMac: string) => unknown;
  /** Least time between two progress events of one host in one phase; default 30 s. */
  progressIntervalMs?: number;
  /** First wait before retrying a preparation that found the disk full; doubles up to 10 min. Default 30 s. */
  retryDelayMs?: number;
}

/** A prepared image: what `deploy` (or a live-ISO boot) needs. */
export interface PreparedImage {
  image: CachedImage;
  /** The served file's boot HTTP URL. */
  imageUrl: string;
  /** Absent for live ISOs (metal3 gives them no config drive). */
  configDrive?: { url: string; sha256: string; path: string };
}

/**
 * Where a host's preparation is. `running` with `waiting`: the last attempt found the disk full
 * (a head-node condition, not the host's: no failure), and the next call from `retryAtMs` on tries again.
 */
export type Preparation =
  | { state: 'running'; progress?: ImageProgress; waiting?: { message: string; retryAtMs: number } }
  | { state: 'ready'; prepared: PreparedImage }
  | { state: 'failed'; message: string };

interface Job {
  key: string;
  url: string;
  status: Preparation;
  configDrivePath?: string;
  /** An attempt is in flight. */
  active: boolean;
  /** Attempts in a row that found the disk full. */
  fullAttempts: number;
}

/** Longest wait between two attempts on a full disk. */
const MAX_FULL_RETRY_MS = 10 * 60_000;

/** True for a full disk: the cache's {@link DiskFullError}, or ENOSPC from anything else (the config drive). */
function isDiskFull(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; depth++, e = e.cause) {
    if (e instanceof DiskFullError || (e as { code?: unknown }).code === 'ENOSPC' || /No space left on device/.test(e.message)) return true;
  }
  return false;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Parses a networkData/metaData secret value (YAML or JSON, like metal3); throws naming the secret. */
function parseSecretData(text: string, what: string): unknown {
  try {
    return parseYaml(text) as unknown;
  } catch (error) {
    throw new Error(`the ${what} secret is neither YAML nor JSON: ${messageOf(error)}`, { cause: error });
  }
}

/**
 * Returns the config drive content of `host` from its userData/networkData/metaData secrets
 * (docs/metal3-mapping.md, "Config drive"); without a networkData secret, `defaultNetworkData`
 * of its boot MAC, when that gives one (docs/ipv6.md).
 */
export async function configDriveContent(host: HostData, hostConfig: HostConfigData, defaultNetworkData?: (bootMac: string) => unknown): Promise<ConfigDriveContent> {
  const [userData, networkData, metaData] = await Promise.all([hostConfig.userData(), hostConfig.networkData(), hostConfig.metaData()]);
  const content: ConfigDriveContent = { uuid: host.objectMeta.uid, name: host.objectMeta.name, namespace: host.objectMeta.namespace };
  if (userData !== '') content.userData = userData;
  if (networkData.trim() !== '') content.networkData = parseSecretData(networkData, 'networkData');
  else {
    const fallback = defaultNetworkData?.(host.bootMACAddress);
    if (fallback !== undefined) content.networkData = fallback;
  }
  if (metaData.trim() !== '') {
    const parsed = parseSecretData(metaData, 'metaData');
    if (!isJsonObject(parsed)) throw new Error('the metaData secret must hold a mapping');
    content.metaData = parsed;
  }
  return content;
}

/** The identity of a metal3 image: a changed URL, checksum or format is another image. */
export function imageKey(image: Image): string {
  return JSON.stringify([image.url, image.checksum ?? '', image.checksumType ?? '', image.format ?? '']);
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Background image and config drive preparation, one job per host (see the module comment). */
export class ImagePreparer {
  readonly #jobs = new Map<string, Job>();
  constructor(private readonly options: ImagePreparerOptions) {}

  /**
   * Returns the preparation of `image` for `host`, starting it when the host has none or one for
   * another image. Never waits for the work; a failed preparation is reported once and forgotten,
   * so the next call starts over. A full disk is no failure: the preparation stays `running`
   * with `waiting` (an `ImageCacheFull` Warning naming the directory and the bytes needed and
   * free), and the first call after its retry time tries again — by itself once space is freed.
   */
  prepare(host: HostData, image: Image, hostConfig: HostConfigData): { started: boolean; status: Preparation } {
    const uid = host.objectMeta.uid;
    const key = imageKey(image);
    const job = this.#jobs.get(uid);
    if (job?.key === key) {
      if (job.status.state === 'failed') this.#jobs.delete(uid);
      const waiting = job.status.state === 'running' ? job.status.waiting : undefined;
      if (waiting !== undefined && !job.active && this.options.nowMs() >= waiting.retryAtMs) {
        job.active = true;
        void this.run(job, host, image, hostConfig);
      }
      return { started: false, status: job.status };
    }
    const fresh: Job = { key, url: image.url, status: { state: 'running' }, active: true, fullAttempts: 0 };
    this.#jobs.set(uid, fresh);
    void this.run(fresh, host, image, hostConfig);
    return { started: true, status: fresh.status };
  }

  /** Every preparation known now (status page: image downloads with progress). */
  downloads(): { url: string; status: Preparation }[] {
    return [...this.#jobs.values()].map((job) => ({ url: job.url, status: job.status }));
  }

  /** Drops host `uid`'s preparation and its config drive file (the host has it, or no longer needs it). */
  async forget(uid: string): Promise<void> {
    const job = this.#jobs.get(uid);
    this.#jobs.delete(uid);
    if (job?.configDrivePath !== undefined) await rm(job.configDrivePath, { force: true });
  }

  private event(host: HostData, type: 'Normal' | 'Warning', reason: string, message: string, data?: Record<string, unknown>): void {
    void this.options.store
      .appendEvents([{ time: new Date().toISOString(), type, reason, message, host: host.objectMeta.name, source: 'images', ...(data === undefined ? {} : { data }) }])
      .catch(() => undefined);
  }

  private async run(job: Job, host: HostData, image: Image, hostConfig: HostConfigData): Promise<void> {
    const current = (): boolean => this.#jobs.get(host.objectMeta.uid) === job;
    let lastPhase = '';
    let lastEventMs = -Infinity;
    const onProgress = (p: ImageProgress): void => {
      if (!current()) return;
      job.status = { state: 'running', progress: p };
      const now = this.options.nowMs();
      if (p.phase === lastPhase && now - lastEventMs < (this.options.progressIntervalMs ?? 30_000)) return;
      lastPhase = p.phase;
      lastEventMs = now;
      const of = p.totalBytes === null || p.totalBytes === 0 ? '' : ` of ${mebibytes(p.totalBytes)} (${Math.floor((100 * p.bytes) / p.totalBytes)}%)`;
      this.event(host, 'Normal', 'ImageProgress', `${p.phase} ${image.url}: ${mebibytes(p.bytes)}${of}`, { phase: p.phase, bytes: p.bytes, totalBytes: p.totalBytes });
    };
    try {
      const spec: ImageSpec = { url: image.url };
      if (image.checksum !== undefined) spec.checksum = image.checksum;
      if (image.checksumType !== undefined) spec.checksumType = image.checksumType;
      if (image.format !== undefined) spec.format = image.format;
      const cached = await this.options.source.get(spec, { onProgress });
      if (image.format === 'live-iso' && cached.format !== 'iso') throw new Error(`${image.url} is not an ISO image (found ${cached.source.format}) but its format is live-iso`);
      const base = this.options.httpBaseUrl.replace(/\/+$/, '');
      const prepared: PreparedImage = { image: cached, imageUrl: `${base}/${IMAGES_MOUNT}/${cached.sha256}` };
      if (image.format !== 'live-iso' && current()) {
        const drive = await this.buildDrive(job, host, hostConfig);
        prepared.configDrive = { url: `${base}/${CONFIG_DRIVE_MOUNT}/${drive.name}`, sha256: drive.sha256, path: drive.path };
      }
      if (!current()) return;
      job.status = { state: 'ready', prepared };
      const after = job.fullAttempts === 0 ? '' : ` (after ${job.fullAttempts} attempt${job.fullAttempts === 1 ? '' : 's'} that found the disk full)`;
      this.event(host, 'Normal', 'ImageReady', `${image.url} is ready: ${cached.format}, ${cached.sizeBytes} bytes, sha256 ${cached.sha256}${after}`, {
        sha256: cached.sha256,
        sizeBytes: cached.sizeBytes,
        format: cached.format,
      });
    } catch (error) {
      if (!current()) return;
      const message = messageOf(error);
      if (isDiskFull(error)) {
        job.fullAttempts += 1;
        const waitMs = Math.min((this.options.retryDelayMs ?? 30_000) * 2 ** Math.min(job.fullAttempts - 1, 20), MAX_FULL_RETRY_MS);
        job.status = { state: 'running', waiting: { message, retryAtMs: this.options.nowMs() + waitMs } };
        const full = error instanceof DiskFullError ? { dir: error.dir, neededBytes: error.neededBytes, freeBytes: error.freeBytes } : { dir: this.options.configDriveDir };
        this.event(host, 'Warning', 'ImageCacheFull', `preparing ${image.url}: ${message}; trying again in ${Math.ceil(waitMs / 1000)} s (attempt ${job.fullAttempts})`, {
          ...full, attempt: job.fullAttempts, retryInMs: waitMs,
        });
        return;
      }
      job.status = { state: 'failed', message };
      this.event(host, 'Warning', 'ImageFailed', `preparing ${image.url} failed: ${message}`);
    } finally {
      job.active = false;
    }
  }

  /** Builds the config drive under an unguessable name (it carries the user data), replacing the host's older ones. */
  private async buildDrive(job: Job, host: HostData, hostConfig: HostConfigData): Promise<{ name: string; path: string; sha256: string }> {
    const uid = host.objectMeta.uid;
    const dir = this.options.configDriveDir;
    await mkdir(dir, { recursive: true });
    for (const old of await readdir(dir)) if (old.startsWith(`${uid}-`)) await rm(join(dir, old), { force: true });
    const content = await configDriveContent(host, hostConfig, this.options.defaultNetworkData);
    const name = `${uid}-${randomBytes(12).toString('hex')}.img`;
    const path = join(dir, name);
    job.configDrivePath = path;
    const built = await buildConfigDrive(content, { outputPath: path, format: this.options.configDriveFormat ?? 'iso' });
    return { name, path, sha256: built.sha256 };
  }
}
