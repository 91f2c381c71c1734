/**
 * @module Composing the preprovisioning initramfs: busybox with its applet symlinks, `/init`
 * and the ramdisk agent scripts, `/dev/console` and `/dev/null` (the kernel opens the console
 * before `/init` runs, and devtmpfs is not auto-mounted on an initramfs), the requested kernel
 * modules with their dependencies in load order and filtered `modules.dep`/`modules.alias`, and
 * host tools copied with their shared libraries. Then compression: gzip through node:zlib at a
 * fixed level (Node writes no name and a zero mtime in the gzip header, RFC 1952 §2.3, so the
 * output is reproducible) or zstd through the `zstd` binary, single-threaded at a fixed level.
 *
 * Per-host data never goes in here: see host-overlay.ts.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { addParentDirectories, encodeCpio, type CpioEntry } from './cpio.js';
import { findExecutable, runCommand, sha256Of } from './files.js';
import type { DebianArch } from './debian-arch.js';
import { buildHelpers } from './helpers.js';
import { collectHostTools, type CopiedTool, type HostToolsResult } from './host-tools.js';
import { parseModuleTree, renderModulesAlias, renderModulesDep, resolveModuleLoadOrder, type ModuleTree } from './modules.js';

/** NIC and storage drivers for common servers and for QEMU guests; missing ones are reported, not fatal. */
export const DEFAULT_MODULES = [
  // virtio (QEMU/KVM guests); virtio_pci and virtio_net pull virtio, virtio_ring, failover, net_failover
  'virtio_pci', 'virtio_net', 'virtio_blk', 'virtio_scsi',
  // Ethernet: Intel, Broadcom, Mellanox/NVIDIA
  'e1000', 'e1000e', 'igb', 'igc', 'ixgbe', 'i40e', 'ice', 'bnxt_en', 'tg3', 'bnx2x', 'mlx4_en', 'mlx5_core',
  // storage: SATA/AHCI, NVMe, LSI/Broadcom RAID and HBA, HPE Smart Array, SCSI disks and CD-ROMs
  'ahci', 'ata_piix', 'nvme', 'megaraid_sas', 'mpt3sas', 'hpsa', 'smartpqi', 'sd_mod', 'sr_mod', 'sg',
  // software RAID and the filesystems the agent reads (config drive, metadata)
  'raid0', 'raid1', 'raid10', 'raid456', 'isofs', 'vfat', 'nls_cp437', 'nls_iso8859_1', 'ext4',
  // crc-t10dif needs an implementation of the crct10dif crypto algorithm (softdep), SATA disks need it
  'crct10dif_generic', 'crct10dif_pclmul',
  // the host's IPMI system interface (KCS/SMIC/BT) as /dev/ipmi0, for in-band BMC enlistment (images/ramdisk/lib-ipmi.sh)
  'ipmi_si', 'ipmi_devintf',
] as const;

/** What goes into the ramdisk; paths are on the build host. */
export interface InitramfsSpec {
  kernelRelease: string;
  /** `…/lib/modules/<release>` with modules.dep (and optionally modules.alias/.softdep/.builtin). */
  modulesDir: string;
  /** Module names (or aliases) to include with their dependencies, loaded in the given order. */
  modules: readonly string[];
  busyboxPath: string;
  /** busybox applet paths (`bin/sh`, `usr/bin/wget`) from `busybox --list-full`. */
  busyboxApplets: readonly string[];
  /** Host tools to copy (missing ones are reported). */
  hostTools: readonly string[];
  /** Directory holding `init` and the agent scripts (images/ramdisk). */
  agentScriptDir: string;
  /** Printed by the agent at start (`rackside-ramdisk: started <version>`). */
  agentVersion: string;
  /** Override of the host tool search path (tests). */
  toolSearchPath?: readonly string[];
  /** Collects `hostTools` for another architecture (arch-inputs.ts); absent: the head node's, with ldd (host-tools.ts). */
  collectTools?: (names: readonly string[]) => Promise<HostToolsResult>;
  /** Helpers compiled from source into `usr/bin` (images/helpers.ts); absent: none. */
  helpers?: { names: readonly string[]; sourceDir: string; arch?: DebianArch };
}

/** One packed input file with its checksum, for the manifest. */
export interface PackedFile {
  path: string;
  sha256: string;
}

/** What {@link composeInitramfs} put in and what it could not find. */
export interface InitramfsReport {
  /** Modules in load order, paths relative to `/lib/modules/<release>`. */
  modules: (PackedFile & { name: string })[];
  missingModules: string[];
  builtinModules: string[];
  tools: CopiedTool[];
  missingTools: { name: string; reason: string }[];
  agentFiles: PackedFile[];
  applets: number;
}

/** Thrown when the spec cannot produce a ramdisk (no /init, unreadable modules tree). */
export class InitramfsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InitramfsError';
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** Reads the module index files of `modulesDir`; throws {@link InitramfsError} when modules.dep is missing. */
export async function readModuleTree(modulesDir: string): Promise<ModuleTree> {
  const modulesDep = await readOptional(join(modulesDir, 'modules.dep'));
  if (modulesDep === undefined) throw new InitramfsError(`${modulesDir}/modules.dep is missing; run depmod for that tree`);
  return parseModuleTree({
    modulesDep,
    modulesAlias: await readOptional(join(modulesDir, 'modules.alias')),
    modulesSoftdep: await readOptional(join(modulesDir, 'modules.softdep')),
    modulesBuiltin: await readOptional(join(modulesDir, 'modules.builtin')),
  });
}

const fixedDirectories: [string, number][] = [
  ['bin', 0o755], ['sbin', 0o755], ['usr/bin', 0o755], ['usr/sbin', 0o755], ['etc', 0o755], ['proc', 0o555],
  ['sys', 0o555], ['dev', 0o755], ['run', 0o755], ['tmp', 0o1777], ['mnt', 0o755], ['root', 0o700], ['var/log', 0o755],
];

function text(path: string, content: string, mode = 0o644): CpioEntry {
  return { type: 'file', path, mode, data: Buffer.from(content, 'utf8') };
}

async function moduleEntries(spec: InitramfsSpec, report: InitramfsReport): Promise<CpioEntry[]> {
  const tree = await readModuleTree(spec.modulesDir);
  const resolution = resolveModuleLoadOrder(tree, spec.modules);
  report.missingModules = resolution.missing;
  report.builtinModules = resolution.builtin;
  const base = `lib/modules/${spec.kernelRelease}`;
  const entries: CpioEntry[] = [];
  for (const m of resolution.order) {
    const data = await readFile(join(spec.modulesDir, m.path)).catch((err: unknown) => {
      throw new InitramfsError(`module ${m.name} listed in modules.dep but unreadable at ${join(spec.modulesDir, m.path)}`, { cause: err });
    });
    report.modules.push({ name: m.name, path: m.path, sha256: sha256Of(data) });
    entries.push({ type: 'file', path: `${base}/${m.path}`, mode: 0o644, data });
  }
  entries.push(text(`${base}/modules.dep`, renderModulesDep(tree, resolution.order)));
  entries.push(text(`${base}/modules.alias`, renderModulesAlias(tree, resolution.order)));
  const builtin = await readOptional(join(spec.modulesDir, 'modules.builtin'));
  if (builtin !== undefined) entries.push(text(`${base}/modules.builtin`, builtin));
  // The load list /init walks with insmod: dependencies first (resolved here, not at boot).
  entries.push(text('etc/rackside/modules.load', resolution.order.map((m) => `${m.path}\n`).join('')));
  return entries;
}

/** Where the agent script `name` (from the script directory) lies in the initramfs. */
export function agentArchivePath(name: string): string {
  return name === 'init' ? 'init' : `usr/lib/rackside/${name}`;
}

async function agentEntries(dir: string, report: InitramfsReport): Promise<CpioEntry[]> {
  const names = (await readdir(dir).catch((err: unknown) => {
    throw new InitramfsError(`agent script directory ${dir} is unreadable`, { cause: err });
  })).sort();
  if (!names.includes('init')) throw new InitramfsError(`agent script directory ${dir} has no "init"`);
  const entries: CpioEntry[] = [];
  for (const name of names) {
    const path = join(dir, name);
    if (!(await stat(path)).isFile()) continue;
    const data = await readFile(path);
    const archivePath = agentArchivePath(name);
    report.agentFiles.push({ path: archivePath, sha256: sha256Of(data) });
    entries.push({ type: 'file', path: archivePath, mode: 0o755, data });
  }
  return entries;
}

/**
 * Reads every input of `spec` and returns the archive entries (unsorted; the cpio writer
 * sorts) and a report of what went in and what was missing. Missing modules and tools are
 * reported; an unreadable modules tree, busybox or script directory throws.
 */
export async function composeInitramfs(spec: InitramfsSpec): Promise<{ entries: CpioEntry[]; report: InitramfsReport }> {
  const report: InitramfsReport = { modules: [], missingModules: [], builtinModules: [], tools: [], missingTools: [], agentFiles: [], applets: 0 };
  const entries: CpioEntry[] = fixedDirectories.map(([path, mode]): CpioEntry => ({ type: 'directory', path, mode }));
  entries.push(
    { type: 'char-device', path: 'dev/console', mode: 0o600, major: 5, minor: 1 },
    { type: 'char-device', path: 'dev/null', mode: 0o666, major: 1, minor: 3 },
  );
  const busybox = await readFile(spec.busyboxPath).catch((err: unknown) => {
    throw new InitramfsError(`busybox ${spec.busyboxPath} is unreadable`, { cause: err });
  });
  entries.push({ type: 'file', path: 'bin/busybox', mode: 0o755, data: busybox });

  const tools = spec.collectTools !== undefined ? await spec.collectTools(spec.hostTools) : await collectHostTools(spec.hostTools, spec.toolSearchPath);
  const helpers = await buildHelpers(spec.helpers?.names ?? [], spec.helpers?.sourceDir ?? '', undefined, spec.helpers?.arch);
  report.tools = [...tools.tools, ...helpers.tools];
  report.missingTools = [...tools.missing, ...helpers.missing];
  entries.push(...tools.entries, ...helpers.entries);
  const toolNames = new Set(tools.tools.map((t) => t.name));
  const taken = new Set(entries.map((e) => e.path));
  // A copied host tool wins over the busybox applet of the same name (util-linux sfdisk, lsblk…).
  for (const applet of spec.busyboxApplets) {
    const name = applet.slice(applet.lastIndexOf('/') + 1);
    if (toolNames.has(name) || taken.has(applet)) continue;
    taken.add(applet);
    entries.push({ type: 'symlink', path: applet, target: '/bin/busybox' });
    report.applets += 1;
  }
  if (!taken.has('bin/sh')) entries.push({ type: 'symlink', path: 'bin/sh', target: '/bin/busybox' });

  entries.push(...(await moduleEntries(spec, report)));
  entries.push(...(await agentEntries(spec.agentScriptDir, report)));
  const libraryDirs = [...new Set(tools.tools.flatMap((t) => t.libraries.map((l) => `/${l.archivePath.slice(0, l.archivePath.lastIndexOf('/'))}`)))].sort();
  entries.push(
    text('etc/rackside/version', `${spec.agentVersion}\n`),
    text('etc/rackside/kernel-release', `${spec.kernelRelease}\n`),
    // No ld.so.cache in the ramdisk: /init exports these directories as LD_LIBRARY_PATH.
    text('etc/rackside/ld-library-path', `${libraryDirs.join(':')}\n`),
    text('etc/passwd', 'root:x:0:0:root:/root:/bin/sh\n'),
    text('etc/group', 'root:x:0:\n'),
  );
  return { entries: addParentDirectories(entries), report };
}

/** Compression of the initramfs; the kernel's decompressors for both are built into Debian kernels. */
export type InitramfsCompression = 'gzip' | 'zstd' | 'none';

/** Resolves 'auto' to zstd when the `zstd` binary is on the build host, else gzip. */
export async function chooseCompression(wanted: InitramfsCompression | 'auto'): Promise<InitramfsCompression> {
  if (wanted !== 'auto') return wanted;
  return (await findExecutable('zstd')) === undefined ? 'gzip' : 'zstd';
}

/**
 * Compresses an archive deterministically: gzip level 9 (zlib, off the event loop) or zstd
 * level 19 single-threaded (`zstd -19 -T1`; its default 8 MiB window at that level stays within
 * what the kernel's zstd decompressor accepts), or returns it unchanged for 'none'.
 */
export async function compressInitramfs(archive: Uint8Array, compression: InitramfsCompression): Promise<Buffer> {
  switch (compression) {
    case 'none':
      return Buffer.from(archive);
    case 'gzip':
      return promisify(gzip)(archive, { level: 9 });
    case 'zstd':
      return runCommand('zstd', ['-q', '-19', '-T1', '-c', '--no-progress'], { input: archive });
  }
}

/** Composes and encodes the archive with every mtime set to `mtimeSeconds`; returns the uncompressed cpio and the report. */
export async function buildInitramfsArchive(spec: InitramfsSpec, mtimeSeconds: number): Promise<{ archive: Buffer; report: InitramfsReport }> {
  const { entries, report } = await composeInitramfs(spec);
  return { archive: encodeCpio(entries, { mtimeSeconds }), report };
}
