/**
 * @module Copying build-host executables into the ramdisk with their shared libraries, the
 * way initramfs-tools' `copy_exec` does (`hook-functions`): find the binary, ask `ldd` for the
 * libraries the dynamic loader would map, and copy each to the same path in the archive
 * (following symlinks to the real file). A tool that is missing, or whose libraries `ldd`
 * cannot find, is reported, never fatal.
 */
import { readFile, realpath } from 'node:fs/promises';
import { dirname, posix } from 'node:path';
import type { CpioEntry } from './cpio.js';
import { findExecutable, runCommand, sha256Of, toolSearchPath } from './files.js';

/**
 * Tools the ramdisk agent uses when present: partitioning, wiping, inventory, RAID, NVMe secure
 * erase (nvme-cli), image conversion, in-band BMC enlistment (ipmitool, images/ramdisk/lib-ipmi.sh),
 * and curl, its verifying TLS client for an `https://` rackside.url (busybox wget has no TLS;
 * docs/https-boot.md).
 */
export const DEFAULT_HOST_TOOLS = ['sfdisk', 'sgdisk', 'lsblk', 'wipefs', 'blkdiscard', 'dmidecode', 'mdadm', 'nvme', 'qemu-img', 'ipmitool', 'curl'] as const;

/** One shared library as `ldd` lists it: the path the loader uses (or null when "not found"). */
export interface LddLibrary {
  soname: string;
  path: string | null;
}

/**
 * Parses `ldd` output into libraries (`libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)`,
 * `/lib64/ld-linux-x86-64.so.2 (0x…)`, `libx.so => not found`); the vDSO, which has no file,
 * is skipped, and a static binary ("not a dynamic executable") yields none.
 */
export function parseLddOutput(output: string): LddLibrary[] {
  const libs: LddLibrary[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.includes('not a dynamic executable') || line.includes('statically linked')) continue;
    const arrow = /^(\S+)\s+=>\s+(.*)$/.exec(line);
    if (arrow?.[1] !== undefined && arrow[2] !== undefined) {
      const target = arrow[2].replace(/\s*\(0x[0-9a-f]+\)$/, '').trim();
      if (target === 'not found') libs.push({ soname: arrow[1], path: null });
      else if (target.startsWith('/')) libs.push({ soname: arrow[1], path: target });
      continue; // "linux-vdso.so.1 =>  (0x…)" on old glibc
    }
    const direct = /^(\/\S+)\s+\(0x[0-9a-f]+\)$/.exec(line);
    if (direct?.[1] !== undefined) libs.push({ soname: posix.basename(direct[1]), path: direct[1] });
  }
  return libs;
}

/** One file copied into the archive from the build host. */
export interface CopiedFile {
  /** Path inside the ramdisk, relative (`usr/sbin/sfdisk`). */
  archivePath: string;
  /** The real file on the build host after following symlinks. */
  sourcePath: string;
  sha256: string;
}

/** A tool copied with its libraries. */
export interface CopiedTool extends CopiedFile {
  name: string;
  libraries: CopiedFile[];
  /** The Debian package it was unpacked from (tools of a foreign architecture: foreign-tools.ts); absent: ask dpkg for `sourcePath`. */
  package?: { name: string; version: string };
}

/** The outcome of {@link collectHostTools}. */
export interface HostToolsResult {
  tools: CopiedTool[];
  missing: { name: string; reason: string }[];
  /** Archive entries for every tool and library, deduplicated. */
  entries: CpioEntry[];
}

async function copyFile(archivePath: string, hostPath: string): Promise<{ file: CopiedFile; data: Buffer }> {
  const sourcePath = await realpath(hostPath);
  const data = await readFile(sourcePath);
  return { file: { archivePath, sourcePath, sha256: sha256Of(data) }, data };
}

/**
 * Finds each tool in `searchPath` and returns archive entries for it and its libraries (mode
 * 0755, libraries at the paths ldd printed, which is where the loader looks), plus a list of
 * missing tools with the reason. Order of `names` does not matter; output is sorted by name.
 */
export async function collectHostTools(names: readonly string[], searchPath: readonly string[] = toolSearchPath): Promise<HostToolsResult> {
  const tools: CopiedTool[] = [];
  const missing: { name: string; reason: string }[] = [];
  const entries = new Map<string, CpioEntry>();
  for (const name of [...new Set(names)].sort()) {
    const found = await findExecutable(name, searchPath);
    if (found === undefined) {
      missing.push({ name, reason: `not found in ${searchPath.join(':')}` });
      continue;
    }
    const lddOut = await runCommand('ldd', [found]).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    const libs = typeof lddOut === 'string' ? (/not a dynamic executable/.test(lddOut) ? [] : null) : parseLddOutput(lddOut.toString('utf8'));
    if (libs === null) {
      missing.push({ name, reason: `ldd ${found} failed: ${String(lddOut)}` });
      continue;
    }
    const unresolved = libs.filter((l) => l.path === null).map((l) => l.soname);
    if (unresolved.length > 0) {
      missing.push({ name, reason: `shared libraries not found: ${unresolved.join(', ')}` });
      continue;
    }
    const archivePath = `${(await realpath(dirname(found))).replace(/^\/+/, '')}/${name}`;
    const tool = await copyFile(archivePath, found);
    const libraries: CopiedFile[] = [];
    for (const lib of libs) {
      if (lib.path === null) continue;
      const copied = await copyFile(lib.path.replace(/^\/+/, ''), lib.path);
      libraries.push(copied.file);
      entries.set(copied.file.archivePath, { type: 'file', path: copied.file.archivePath, mode: 0o755, data: copied.data });
    }
    entries.set(archivePath, { type: 'file', path: archivePath, mode: 0o755, data: tool.data });
    tools.push({ name, ...tool.file, libraries: libraries.sort((a, b) => a.archivePath.localeCompare(b.archivePath)) });
  }
  return { tools, missing, entries: [...entries.values()] };
}
