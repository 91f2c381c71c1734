/**
 * @module Boot HTTP mounts served over TFTP too. rackside's GRUB configs (Secure Boot and arm64
 * hosts, which chain shim → GRUB over TFTP) load `/ramdisk/vmlinuz` and `/ramdisk/initrd` from
 * the same TFTP server, so the TFTP resolve hook serves the `ramdisk` mount — only the mounts
 * named here, never OS images or config drives — through the same realpath jail as boot HTTP.
 * Files are read once and kept while their size, mtime and inode are unchanged (a kernel or
 * initrd is fetched by every host that boots), within a byte budget.
 */
import { readFile, stat } from 'node:fs/promises';
import { FileJail } from '../../bootsvc/index.js';

interface Cached {
  key: string;
  data: Buffer;
}

/** Options of {@link createTftpMountReader}. */
export interface TftpMountOptions {
  /** URL prefix (one segment, e.g. `ramdisk`) → directory. */
  mounts: Readonly<Record<string, string>>;
  /** Bytes of file contents kept in memory; default 256 MiB. Larger files are read per request. */
  cacheBytes?: number;
}

/**
 * Returns a resolver for TFTP paths (`ramdisk/initrd`, with or without a leading `/`): the
 * file's contents, or undefined when the path is under no mount, missing, not a regular file,
 * or a symlink out of the mount.
 */
export function createTftpMountReader(options: TftpMountOptions): (path: string) => Promise<Buffer | undefined> {
  const budget = options.cacheBytes ?? 256 * 1024 * 1024;
  const jails = new Map<string, Promise<FileJail | undefined>>();
  const cache = new Map<string, Cached>();
  let cachedBytes = 0;
  const jailFor = (prefix: string): Promise<FileJail | undefined> | undefined => {
    const dir = options.mounts[prefix];
    if (dir === undefined) return undefined;
    let jail = jails.get(prefix);
    if (jail === undefined) {
      jail = FileJail.create(dir).catch(() => {
        jails.delete(prefix); // the directory may appear later (the first ramdisk build)
        return undefined;
      });
      jails.set(prefix, jail);
    }
    return jail;
  };
  return async (path) => {
    const clean = path.replace(/^\/+/, '');
    const slash = clean.indexOf('/');
    if (slash <= 0) return undefined;
    const jail = await jailFor(clean.slice(0, slash));
    if (jail === undefined) return undefined;
    const resolved = await jail.resolve(clean.slice(slash + 1));
    if (resolved.kind !== 'path') return undefined;
    let info;
    try {
      info = await stat(resolved.real);
    } catch {
      return undefined;
    }
    if (!info.isFile()) return undefined;
    const key = `${info.ino}:${info.size}:${info.mtimeMs}`;
    const hit = cache.get(resolved.real);
    if (hit?.key === key) {
      cache.delete(resolved.real); // refresh its place in the eviction order
      cache.set(resolved.real, hit);
      return hit.data;
    }
    const data = await readFile(resolved.real);
    if (hit !== undefined) {
      cache.delete(resolved.real);
      cachedBytes -= hit.data.length;
    }
    if (data.length <= budget) {
      for (const [oldest, entry] of cache) {
        if (cachedBytes + data.length <= budget) break;
        cache.delete(oldest);
        cachedBytes -= entry.data.length;
      }
      cache.set(resolved.real, { key, data });
      cachedBytes += data.length;
    }
    return data;
  };
}
