/**
 * @module `rackside images build`: resolve the kernel and busybox (Debian packages or
 * configured files), compose and compress the initramfs, and write `vmlinuz`, `initrd` and
 * `manifest.json` into the output directory. The manifest is removed first and written last,
 * so a directory with a manifest always holds a complete build. Reproducible: every mtime is
 * `sourceDateEpoch`, member order and compression are fixed, so the same inputs give the same
 * sha256 (checked by building twice in the tests). Format 'iso' adds `rackside.iso` (iso.ts).
 */
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathExists, sha256File, sha256Of, writeFileAtomic } from './files.js';
import { HEAD_NODE_ARCH, resolveArchInputs } from './arch-inputs.js';
import type { DebianArch } from './debian-arch.js';
import { owningPackage } from './dpkg-owner.js';
import { DEFAULT_HELPERS, defaultHelperSourceDir } from './helpers.js';
import { DEFAULT_HOST_TOOLS, type CopiedTool } from './host-tools.js';
import { buildInitramfsArchive, chooseCompression, compressInitramfs, DEFAULT_MODULES, type InitramfsCompression } from './initramfs.js';
import type { BusyboxSource, KernelSource } from './kernel.js';
import { encodeManifest, type ManifestIso, type ManifestOutput, type ManifestTool, type RamdiskManifest } from './manifest.js';
import { IsoPath } from './boot-menus.js';
import { resolveBootLoaders, type BootLoaderSource } from './bootloaders.js';
import { buildIso } from './iso.js';
import { progressOf, type BuildPhase, type BuildProgress } from './build-progress.js';

/** Options of {@link buildRamdisk}. */
export interface BuildRamdiskOptions {
  outputDir: string;
  /** Where fetched Debian packages are unpacked and reused (by package version). */
  cacheDir: string;
  /** The Debian architecture to build for (arch-inputs.ts); default the head node's. */
  arch?: DebianArch;
  /** Default: Debian `linux-image-<arch>`. */
  kernel?: KernelSource;
  /** Default: Debian `busybox-static`. */
  busybox?: BusyboxSource;
  /** 'initrd' (kernel + initrd for iPXE, the default) or 'iso' (the same plus `rackside.iso`, BIOS + UEFI, for virtual media). */
  format?: 'initrd' | 'iso';
  /** ISO only: boot loaders; default the Debian packages (isolinux, syslinux-common, grub-efi-amd64-signed, shim-signed). */
  bootLoaders?: BootLoaderSource;
  /** ISO only: kernel arguments after `console=tty0 console=ttyS0,115200`, the same for every host. */
  isoKernelArgs?: readonly string[];
  /** ISO only: size of the per-host overlay slot (see iso-host.ts). */
  hostOverlaySlotBytes?: number;
  /** Directory with `init` and the agent scripts; default: the package's images/ramdisk. */
  agentScriptDir?: string;
  agentVersion?: string;
  /** mtime of every archive member (`SOURCE_DATE_EPOCH`), seconds. */
  sourceDateEpoch: number;
  /** Default 'auto': zstd when the zstd binary exists, else gzip. */
  compression?: InitramfsCompression | 'auto';
  modules?: readonly string[];
  hostTools?: readonly string[];
  /** Helpers compiled from their C sources in images/helpers (default {@link DEFAULT_HELPERS}; [] for none). */
  helpers?: readonly string[];
  /** Tools whose absence fails the build instead of being reported. */
  requiredTools?: readonly string[];
  /** Override of the host tool search path (tests). */
  toolSearchPath?: readonly string[];
  /** Called as each build step starts (build-progress.ts); a throwing callback fails the build. */
  onProgress?: (progress: BuildProgress) => void;
}

/** What {@link buildRamdisk} wrote. */
export interface BuildRamdiskResult {
  manifest: RamdiskManifest;
  paths: { vmlinuz: string; initrd: string; manifest: string; /** Set for format 'iso'. */ iso?: string };
}

/** Thrown when the build cannot complete (bad option, required tool missing). */
export class RamdiskBuildError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RamdiskBuildError';
  }
}

/** Returns the images/ramdisk directory of this package, whether running from dist/ or the source tree. */
export function defaultAgentScriptDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // dist/images/builder.js → ../../images/ramdisk; images/builder.ts → ./ramdisk
  return here.split('/').includes('dist') ? join(here, '../../images/ramdisk') : join(here, 'ramdisk');
}

async function manifestTools(tools: readonly CopiedTool[]): Promise<ManifestTool[]> {
  const out: ManifestTool[] = [];
  for (const t of tools) {
    const pkg = t.package ?? await owningPackage(t.sourcePath);
    out.push({
      name: t.name,
      path: t.archivePath,
      sha256: t.sha256,
      ...(pkg === undefined ? {} : { package: pkg }),
      libraries: t.libraries.map((l) => ({ path: l.archivePath, sha256: l.sha256 })),
    });
  }
  return out;
}

/**
 * Builds the preprovisioning ramdisk into `outputDir` and resolves with the manifest. Missing
 * optional modules and tools are listed in `manifest.missing`; a missing required tool, kernel
 * or busybox rejects with the reason.
 */
export async function buildRamdisk(options: BuildRamdiskOptions): Promise<BuildRamdiskResult> {
  const format = options.format ?? 'initrd';
  if (!(['initrd', 'iso'] as readonly string[]).includes(format)) throw new RamdiskBuildError(`format must be "initrd" or "iso", got ${JSON.stringify(format)}`);
  if (!Number.isSafeInteger(options.sourceDateEpoch) || options.sourceDateEpoch < 0) {
    throw new RamdiskBuildError('sourceDateEpoch must be a non-negative integer (seconds)');
  }
  const agentScriptDir = options.agentScriptDir ?? defaultAgentScriptDir();
  if (!(await pathExists(join(agentScriptDir, 'init')))) throw new RamdiskBuildError(`no init script in ${agentScriptDir}`);
  const agentVersion = options.agentVersion ?? 'dev';
  const step = (phase: BuildPhase): void => options.onProgress?.(progressOf(phase, format));

  const arch = options.arch ?? HEAD_NODE_ARCH;
  const inputs = await resolveArchInputs({
    arch, cacheDir: options.cacheDir,
    ...(options.kernel === undefined ? {} : { kernel: options.kernel }),
    ...(options.busybox === undefined ? {} : { busybox: options.busybox }),
    ...(options.toolSearchPath === undefined ? {} : { toolSearchPath: options.toolSearchPath }),
  }, step);
  const { kernel, busybox, applets } = inputs;
  const helperNames = options.helpers ?? DEFAULT_HELPERS;
  step('initramfs');
  const { archive, report } = await buildInitramfsArchive(
    {
      kernelRelease: kernel.release,
      modulesDir: kernel.modulesDir,
      modules: options.modules ?? DEFAULT_MODULES,
      busyboxPath: busybox.path,
      busyboxApplets: applets,
      hostTools: options.hostTools ?? DEFAULT_HOST_TOOLS,
      helpers: { names: helperNames, sourceDir: defaultHelperSourceDir(), arch },
      ...(inputs.collectTools === undefined ? {} : { collectTools: inputs.collectTools }),
      agentScriptDir,
      agentVersion,
      ...(options.toolSearchPath === undefined ? {} : { toolSearchPath: options.toolSearchPath }),
    },
    options.sourceDateEpoch,
  );
  const requiredMissing = report.missingTools.filter((m) => options.requiredTools?.includes(m.name));
  if (requiredMissing.length > 0) {
    throw new RamdiskBuildError(`required tools missing on the build host: ${requiredMissing.map((m) => `${m.name} (${m.reason})`).join(', ')}`);
  }
  step('compress');
  const compression = await chooseCompression(options.compression ?? 'auto');
  const initrd = await compressInitramfs(archive, compression);

  step('write');
  await mkdir(options.outputDir, { recursive: true });
  const paths = { vmlinuz: join(options.outputDir, 'vmlinuz'), initrd: join(options.outputDir, 'initrd'), manifest: join(options.outputDir, 'manifest.json') };
  await rm(paths.manifest, { force: true });
  const vmlinuzTmp = `${paths.vmlinuz}.${process.pid}.tmp`;
  await copyFile(kernel.vmlinuzPath, vmlinuzTmp);
  await rename(vmlinuzTmp, paths.vmlinuz);
  await writeFileAtomic(paths.initrd, initrd);

  if (format === 'iso') step('iso');
  const iso = format === 'iso' ? await writeIso(options, paths, agentVersion, arch) : undefined;
  const manifest: RamdiskManifest = {
    schema: 'rackside.ramdisk/v1',
    format,
    architecture: arch,
    agentVersion,
    sourceDateEpoch: options.sourceDateEpoch,
    compression,
    inputs: {
      kernel: { release: kernel.release, vmlinuzSha256: kernel.vmlinuzSha256, origin: kernel.origin },
      busybox: { sha256: busybox.sha256, applets: report.applets, origin: busybox.origin },
      agentFiles: report.agentFiles,
      modules: report.modules,
      tools: await manifestTools(report.tools),
    },
    builtinModules: report.builtinModules,
    missing: { modules: report.missingModules, tools: report.missingTools },
    outputs: [
      { name: 'vmlinuz', sha256: await sha256File(paths.vmlinuz), sizeBytes: (await stat(paths.vmlinuz)).size },
      { name: 'initrd', sha256: sha256Of(initrd), sizeBytes: initrd.length },
      ...(iso === undefined ? [] : [iso.output]),
    ],
    ...(iso === undefined ? {} : { iso: iso.manifest }),
  };
  await writeFileAtomic(paths.manifest, encodeManifest(manifest));
  return { manifest, paths: iso === undefined ? paths : { ...paths, iso: iso.path } };
}

/** Builds `rackside.iso` from the kernel and initrd just written; returns its manifest parts. */
async function writeIso(
  options: BuildRamdiskOptions,
  paths: { vmlinuz: string; initrd: string },
  agentVersion: string,
  arch: DebianArch,
): Promise<{ path: string; output: ManifestOutput; manifest: ManifestIso }> {
  const bootLoaders = await resolveBootLoaders(options.bootLoaders ?? { kind: 'debian' }, options.cacheDir, arch);
  const path = join(options.outputDir, 'rackside.iso');
  const volumeId = 'RACKSIDE';
  const built = await buildIso({
    outputPath: path,
    vmlinuzPath: paths.vmlinuz,
    initrdPath: paths.initrd,
    bootLoaders,
    sourceDateEpoch: options.sourceDateEpoch,
    label: `rackside ramdisk ${agentVersion}`,
    volumeId,
    arch,
    ...(options.isoKernelArgs === undefined ? {} : { extraKernelArgs: options.isoKernelArgs }),
    ...(options.hostOverlaySlotBytes === undefined ? {} : { hostOverlaySlotBytes: options.hostOverlaySlotBytes }),
  });
  return {
    path,
    output: { name: 'rackside.iso', sha256: built.sha256, sizeBytes: built.sizeBytes },
    manifest: {
      bootLoaders: bootLoaders.map((b) => ({ role: b.role, sha256: b.sha256, origin: b.origin })),
      hostOverlaySlot: { path: IsoPath.hostOverlay, ...built.hostOverlaySlot },
      kernelCommandLine: built.kernelCommandLine,
      volumeId,
    },
  };
}
