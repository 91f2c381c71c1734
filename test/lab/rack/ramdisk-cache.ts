/**
 * @module The virtual rack's ramdisk, built once per set of inputs and reused across runs:
 * `buildRamdisk` (Debian kernel + busybox-static, ~15–30 s, needs apt's package lists; format
 * `iso` adds `rackside.iso` with Debian's boot loaders for virtual media) writes
 * into `<os.tmpdir()>/rackside-rack-ramdisk/<key>/`, where the key hashes what the manifest's
 * inputs are made of before the build can name them — the apt candidate versions of the kernel
 * meta package and busybox-static, the in-ramdisk agent scripts and helper sources, and the compiled builder code. A directory
 * with a `manifest.json` is a complete build (the builder writes it last), so a later run with
 * the same key only reads the manifest. Debian packages are unpacked into the shared cache the
 * images tests use (`<os.tmpdir()>/rackside-images-cache`).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import { buildRamdisk, decodeManifest, type DebianArch } from '../../../images/index.js';
import { ForeignApt } from '../../../images/foreign-apt.js';
import { DebianPackageError } from '../../../images/debian-package.js';
import { defaultAgentScriptDir } from '../../../images/builder.js';
import { defaultHelperSourceDir } from '../../../images/helpers.js';
import type { RamdiskManifest } from '../../../images/manifest.js';
import { skipOrFail } from '../../helpers/integration.js';

const run = promisify(execFile);

/** A ready ramdisk: kernel and initrd paths and the build manifest. */
export interface RackRamdisk {
  dir: string;
  vmlinuz: string;
  initrd: string;
  /** `rackside.iso` (format iso only; its overlay slot is in the manifest). */
  iso?: string;
  manifest: RamdiskManifest;
  /** True when this call built it (false: reused from an earlier run). */
  built: boolean;
}

/**
 * Kernel arguments of the rack's ISO: `no_timer_check`, because on a heavily loaded host a TCG
 * guest's kernel can fail its IO-APIC timer check and panic ("IO-APIC + timer doesn't work!",
 * seen at load 15 on 2 cores); real hardware needs no such help, so only the lab's build has it.
 * And `rackside.lldp_seconds=0`: the rack's bridge has no LLDP speaker, so the ramdisk does not
 * listen 30 s for one (as the rack's network-boot kernel parameters, rack-config.ts).
 */
export const RACK_ISO_KERNEL_ARGS: readonly string[] = ['no_timer_check', 'rackside.lldp_seconds=0'];

/** Where built ramdisks are kept by default. */
export const RAMDISK_CACHE_ROOT = join(tmpdir(), 'rackside-rack-ramdisk');
/** Where Debian packages are unpacked (shared with the images tests). */
export const DEBIAN_PACKAGE_CACHE = join(tmpdir(), 'rackside-images-cache');

async function aptCandidate(args: readonly string[]): Promise<string> {
  try {
    return (await run('apt-cache', [...args], { maxBuffer: 4 << 20 })).stdout;
  } catch {
    return 'unknown'; // no apt here: the build itself will say what is missing
  }
}

async function hashDirectory(hash: ReturnType<typeof createHash>, dir: string, filter: (name: string) => boolean): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter(filter).sort();
  for (const name of names) {
    hash.update(`${name}\0`);
    hash.update(await readFile(join(dir, name)).catch(() => Buffer.alloc(0)));
  }
}

/** The cache key of a ramdisk built now with `agentVersion` and `format` (see the module comment). */
export async function ramdiskCacheKey(agentVersion: string, format: 'initrd' | 'iso' = 'initrd', arch: DebianArch = 'amd64'): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`rackside.ramdisk/v1\0${agentVersion}\0${format === 'iso' ? `iso\0${RACK_ISO_KERNEL_ARGS.join(' ')}\0` : ''}`);
  if (arch !== 'amd64') {
    // A foreign build: its kernel and busybox versions come from the private apt (images/foreign-apt.ts).
    const apt = new ForeignApt(arch, DEBIAN_PACKAGE_CACHE);
    const loaders = format === 'iso' ? [apt.candidate('shim-signed'), apt.candidate(`grub-efi-${arch}-signed`)] : [];
    const versions = await Promise.all([apt.resolveMeta(`linux-image-${arch}`, 'linux-image-'), apt.candidate('busybox-static'), ...loaders]).catch(() => ['unknown']);
    hash.update(`${arch}\0${versions.join('\0')}\0`);
  }
  // The meta package's candidate version moves with every new kernel ABI, so it stands for the kernel.
  // curl: the ramdisk's TLS client, copied from the build host (images/host-tools.ts), so a build from before it was installed is not reused.
  hash.update(await aptCandidate(['policy', 'linux-image-amd64', 'busybox-static', 'curl', ...(format === 'iso' ? ['isolinux', 'syslinux-common', 'grub-efi-amd64-signed', 'shim-signed'] : [])]));
  await hashDirectory(hash, defaultAgentScriptDir(), () => true);
  await hashDirectory(hash, defaultHelperSourceDir(), (n) => n.endsWith('.c')); // helpers compiled into the ramdisk
  // The compiled builder (dist/images/*.js, or images/*.ts when run from source).
  const imagesDir = join(dirname(fileURLToPath(import.meta.url)), '../../../images');
  await hashDirectory(hash, imagesDir, (n) => n.endsWith('.js') || n.endsWith('.ts'));
  return hash.digest('hex').slice(0, 24);
}

const pending = new Map<string, Promise<RackRamdisk>>();

/** Options of {@link ensureRackRamdisk}. */
export interface RackRamdiskOptions {
  root?: string;
  agentVersion?: string;
  /**
   * `iso` (the default) also builds `rackside.iso` for virtual media (boot loaders from Debian
   * packages); every e2e test then shares one build. `initrd` skips the ISO.
   */
  format?: 'initrd' | 'iso';
  /** The architecture (default amd64); another one is built from its packages (its ISO UEFI only). */
  arch?: DebianArch;
  log?: (line: string) => void;
}

/**
 * Resolves with a built ramdisk, building it when no complete build with the current key is
 * cached; concurrent calls in one process share one build. A failed build rejects with the
 * builder's error (a `DebianPackageError` when apt cannot provide the packages).
 */
export function ensureRackRamdisk(options: RackRamdiskOptions = {}): Promise<RackRamdisk> {
  const format = options.format ?? 'iso';
  const slot = `${options.arch ?? 'amd64'}:${format}`;
  let build = pending.get(slot);
  if (build === undefined) {
    build = buildOrReuse(options, format).catch((err: unknown) => {
      pending.delete(slot);
      throw err;
    });
    pending.set(slot, build);
  }
  return build;
}

async function buildOrReuse(options: RackRamdiskOptions, format: 'initrd' | 'iso'): Promise<RackRamdisk> {
  const root = options.root ?? RAMDISK_CACHE_ROOT;
  const agentVersion = options.agentVersion ?? '0.1.0-rack';
  const arch = options.arch ?? 'amd64';
  const key = await ramdiskCacheKey(agentVersion, format, arch);
  const dir = join(root, arch === 'amd64' ? key : `${arch}-${key}`);
  const paths = { vmlinuz: join(dir, 'vmlinuz'), initrd: join(dir, 'initrd'), manifest: join(dir, 'manifest.json'), ...(format === 'iso' ? { iso: join(dir, 'rackside.iso') } : {}) };
  const cached = await readFile(paths.manifest, 'utf8').then((text) => decodeManifest(text), () => undefined);
  if (cached !== undefined) return { dir, ...paths, manifest: cached, built: false };
  options.log?.(`building the ${format} ramdisk (Debian kernel + busybox-static${format === 'iso' ? ' + boot loaders' : ''}) into ${dir} …`);
  // Build beside the final directory and rename it into place: readers never see half a build.
  const scratch = `${dir}.${process.pid}.tmp`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  try {
    const result = await buildRamdisk({
      outputDir: scratch, cacheDir: DEBIAN_PACKAGE_CACHE, sourceDateEpoch: 1_700_000_000, compression: 'auto', agentVersion, format, arch,
      ...(format === 'iso' ? { isoKernelArgs: RACK_ISO_KERNEL_ARGS } : {}),
    });
    await rename(scratch, dir).catch(async (err: unknown) => {
      // Another process finished the same build first: use theirs.
      if (await readFile(paths.manifest, 'utf8').then(() => true, () => false)) return;
      throw err;
    });
    return { dir, ...paths, manifest: result.manifest, built: true };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * {@link ensureRackRamdisk} for a test: when the Debian packages it is built from cannot be had
 * (no apt lists, no mirror), skips `t` with the reason — or fails it under
 * RACKSIDE_REQUIRE_INTEGRATION=1 — and returns undefined. Other errors propagate.
 */
export async function rackRamdiskOrSkip(t: TestContext, options: RackRamdiskOptions = {}): Promise<RackRamdisk | undefined> {
  try {
    return await ensureRackRamdisk(options);
  } catch (err) {
    if (!(err instanceof DebianPackageError)) throw err;
    skipOrFail(t, `the ramdisk${options.format === 'iso' ? ' ISO' : ''} cannot be built: ${err.message}`);
    return undefined;
  }
}
