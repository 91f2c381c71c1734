/**
 * @module The per-architecture inputs of a ramdisk build. For the head node's architecture they
 * are as they always were: the kernel and busybox packages from the machine's apt (kernel.ts),
 * busybox's applet list from running it, the host tools copied with `ldd` (host-tools.ts) and
 * the helpers compiled by the head node's C compiler (helpers.ts). For another architecture:
 * `linux-image-<arch>` and `busybox-static` of that architecture through the private apt
 * (foreign-apt.ts; modules.dep made by `depmod -b`, which reads any architecture's modules),
 * the applet list of the head node's busybox-static (the foreign busybox cannot run here; the
 * same Debian source version builds the same applets), the host tools from that architecture's
 * packages (foreign-tools.ts); its helpers come from Debian's cross compiler (helpers.ts).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ARCH_FACTS, debianArchOfNode, type DebianArch } from './debian-arch.js';
import { ForeignApt } from './foreign-apt.js';
import { collectForeignTools } from './foreign-tools.js';
import { sha256File } from './files.js';
import type { HostToolsResult } from './host-tools.js';
import {
  KernelInputError, listBusyboxApplets, resolveBusybox, resolveKernel, runDepmod, type BusyboxSource, type KernelSource, type ResolvedBusybox, type ResolvedKernel,
} from './kernel.js';

/** The head node's Debian architecture (this process's): the one built without the private foreign apt. */
export const HEAD_NODE_ARCH: DebianArch = debianArchOfNode(process.arch);

/** What a build of one architecture is made of (see the module comment). */
export interface ArchInputs {
  arch: DebianArch;
  kernel: ResolvedKernel;
  busybox: ResolvedBusybox;
  applets: string[];
  /** The tool collector for a foreign architecture; undefined: the head node's (host-tools.ts). */
  collectTools?: (names: readonly string[]) => Promise<HostToolsResult>;
}

/** The sources {@link resolveArchInputs} takes (the builder's options). */
export interface ArchInputSources {
  arch: DebianArch;
  cacheDir: string;
  kernel?: KernelSource;
  busybox?: BusyboxSource;
  toolSearchPath?: readonly string[];
}

/** Resolves the kernel, busybox, applets and tool collector for `sources.arch` (fetching what is missing). */
export async function resolveArchInputs(sources: ArchInputSources, step: (phase: 'kernel' | 'busybox') => void = () => undefined): Promise<ArchInputs> {
  const { arch, cacheDir } = sources;
  if (arch === HEAD_NODE_ARCH) {
    step('kernel');
    const kernel = await resolveKernel(sources.kernel ?? { kind: 'debian', packageName: ARCH_FACTS[arch].kernelPackage }, cacheDir);
    step('busybox');
    const busybox = await resolveBusybox(sources.busybox ?? { kind: 'debian' }, cacheDir);
    return { arch, kernel, busybox, applets: await listBusyboxApplets(busybox.path) };
  }
  const apt = new ForeignApt(arch, cacheDir);
  step('kernel');
  const kernel = sources.kernel?.kind === 'tree' ? await resolveKernel(sources.kernel, cacheDir) : await foreignKernel(apt, sources.kernel?.packageName ?? ARCH_FACTS[arch].kernelPackage);
  step('busybox');
  const busybox = sources.busybox?.kind === 'file' ? await resolveBusybox(sources.busybox, cacheDir) : await foreignBusybox(apt, sources.busybox?.packageName ?? 'busybox-static');
  const native = await resolveBusybox({ kind: 'debian' }, cacheDir);
  return {
    arch, kernel, busybox, applets: await listBusyboxApplets(native.path),
    collectTools: (names) => collectForeignTools(names, { arch, apt, ...(sources.toolSearchPath === undefined ? {} : { searchPath: sources.toolSearchPath }) }),
  };
}

async function foreignKernel(apt: ForeignApt, meta: string): Promise<ResolvedKernel> {
  const name = await apt.resolveMeta(meta, 'linux-image-');
  const pkg = await apt.fetch(name, runDepmod);
  const vmlinuz = (await readdir(join(pkg.rootDir, 'boot')).catch(() => [] as string[])).filter((f) => f.startsWith('vmlinuz-')).sort()[0];
  if (vmlinuz === undefined) throw new KernelInputError(`${apt.arch} package ${name} ${pkg.version} has no boot/vmlinuz-*`);
  const release = vmlinuz.slice('vmlinuz-'.length);
  const vmlinuzPath = join(pkg.rootDir, 'boot', vmlinuz);
  return {
    release, vmlinuzPath, vmlinuzSha256: await sha256File(vmlinuzPath), modulesDir: join(pkg.rootDir, 'lib/modules', release),
    origin: { kind: 'debian', package: name, version: pkg.version, debSha256: pkg.debSha256 },
  };
}

async function foreignBusybox(apt: ForeignApt, name: string): Promise<ResolvedBusybox> {
  const pkg = await apt.fetch(name);
  const path = join(pkg.rootDir, 'bin/busybox');
  const sha256 = await sha256File(path).catch((err: unknown) => {
    throw new KernelInputError(`${apt.arch} package ${name} ${pkg.version} has no bin/busybox`, { cause: err });
  });
  return { path, sha256, origin: { kind: 'debian', package: name, version: pkg.version, debSha256: pkg.debSha256 } };
}
