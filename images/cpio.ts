/**
 * @module The cpio "newc" (magic `070701`) archive format the Linux kernel unpacks as an
 * initramfs (kernel `Documentation/driver-api/early-userspace/buffer-format.rst`): a writer
 * that is byte-for-byte reproducible and a reader used by tests and manifest checks.
 *
 * Layout of one member: a 110-byte ASCII header (`070701` + 13 eight-digit hex fields:
 * ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor,
 * namesize, check), the NUL-terminated name padded so that the data starts on a 4-byte
 * boundary, then the data padded to 4 bytes. The archive ends with a member named
 * `TRAILER!!!`. Symlink targets are stored as the member's data.
 *
 * Reproducibility: members are sorted by path (byte order, which puts every directory before
 * its contents), inode numbers are assigned 1, 2, 3… in that order, uid/gid are 0 and every
 * mtime is the one passed in (`SOURCE_DATE_EPOCH`).
 * @pure
 */

/** File-type bits of `st_mode` (POSIX `<sys/stat.h>`). */
export const FileType = {
  directory: 0o040000,
  file: 0o100000,
  symlink: 0o120000,
  charDevice: 0o020000,
  blockDevice: 0o060000,
} as const;

const typeMask = 0o170000;
const headerBytes = 110;
const magic = '070701';
const trailerName = 'TRAILER!!!';

/** One archive member; `path` is relative (`bin/busybox`), `mode` holds permission bits only (0o7777). */
export type CpioEntry =
  | { type: 'directory'; path: string; mode: number }
  | { type: 'file'; path: string; mode: number; data: Uint8Array }
  | { type: 'symlink'; path: string; target: string }
  | { type: 'char-device' | 'block-device'; path: string; mode: number; major: number; minor: number };

/** Options of {@link encodeCpio}. */
export interface CpioEncodeOptions {
  /** The mtime (seconds since the epoch) stamped on every member, e.g. `SOURCE_DATE_EPOCH`. */
  mtimeSeconds: number;
}

/** Thrown for an entry list or archive that cannot be encoded or decoded. */
export class CpioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CpioError';
  }
}

/** Returns `path` with leading `/` and `./` removed, or throws {@link CpioError} for empty, `..` or NUL paths. */
export function normalizeCpioPath(path: string): string {
  const trimmed = path.replace(/^(\.?\/)+/, '').replace(/\/+$/, '');
  if (trimmed === '' || trimmed.includes('\0')) throw new CpioError(`invalid archive path ${JSON.stringify(path)}`);
  const parts = trimmed.split('/');
  if (parts.some((p) => p === '..' || p === '.' || p === '')) {
    throw new CpioError(`archive path ${JSON.stringify(path)} must not contain "..", "." or empty components`);
  }
  return trimmed;
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Returns the entries normalized and sorted in archive order; throws {@link CpioError} on a
 * duplicate path, a bad mode or device number.
 */
export function sortCpioEntries(entries: readonly CpioEntry[]): CpioEntry[] {
  const normalized = entries.map((e) => ({ ...e, path: normalizeCpioPath(e.path) }));
  normalized.sort((a, b) => compareBytes(a.path, b.path));
  for (let i = 0; i < normalized.length; i++) {
    const e = normalized[i];
    if (e === undefined) continue;
    if (i > 0 && normalized[i - 1]?.path === e.path) throw new CpioError(`duplicate archive path ${e.path}`);
    if (e.type !== 'symlink' && !(Number.isInteger(e.mode) && e.mode >= 0 && e.mode <= 0o7777)) {
      throw new CpioError(`${e.path}: mode must be permission bits 0..0o7777, got ${e.mode}`);
    }
    if (e.type === 'char-device' || e.type === 'block-device') {
      for (const n of [e.major, e.minor]) {
        if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new CpioError(`${e.path}: bad device number ${n}`);
      }
    }
    if (e.type === 'symlink' && e.target === '') throw new CpioError(`${e.path}: empty symlink target`);
  }
  return normalized;
}

/**
 * Returns the entries plus a directory entry (with `mode`) for every missing parent directory,
 * so an archive never relies on the unpacker creating parents implicitly.
 */
export function addParentDirectories(entries: readonly CpioEntry[], mode = 0o755): CpioEntry[] {
  const present = new Set(entries.map((e) => normalizeCpioPath(e.path)));
  const added: CpioEntry[] = [];
  for (const e of entries) {
    const parts = normalizeCpioPath(e.path).split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!present.has(dir)) {
        present.add(dir);
        added.push({ type: 'directory', path: dir, mode });
      }
    }
  }
  return [...entries, ...added];
}

function hex8(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new CpioError(`header field out of range: ${n}`);
  return n.toString(16).padStart(8, '0');
}

function pad4(n: number): number {
  return (4 - (n % 4)) % 4;
}

interface RawMember {
  name: string;
  ino: number;
  mode: number;
  nlink: number;
  mtime: number;
  rdevMajor: number;
  rdevMinor: number;
  data: Uint8Array;
}

function encodeMember(m: RawMember): Uint8Array[] {
  const name = Buffer.from(`${m.name}\0`, 'utf8');
  const fields = [m.ino, m.mode, 0, 0, m.nlink, m.mtime, m.data.length, 0, 0, m.rdevMajor, m.rdevMinor, name.length, 0];
  const header = Buffer.from(magic + fields.map(hex8).join(''), 'ascii');
  const out: Uint8Array[] = [header, name, new Uint8Array(pad4(headerBytes + name.length))];
  if (m.data.length > 0) out.push(m.data, new Uint8Array(pad4(m.data.length)));
  return out;
}

function rawMemberOf(e: CpioEntry, ino: number, mtime: number): RawMember {
  const base = { name: e.path, ino, mtime, rdevMajor: 0, rdevMinor: 0, nlink: 1, data: new Uint8Array(0) };
  switch (e.type) {
    case 'directory':
      return { ...base, mode: FileType.directory | e.mode, nlink: 2 };
    case 'file':
      // nlink must stay 1: the kernel treats regular files with nlink >= 2 as hard-link candidates.
      return { ...base, mode: FileType.file | e.mode, data: e.data };
    case 'symlink':
      return { ...base, mode: FileType.symlink | 0o777, data: Buffer.from(e.target, 'utf8') };
    case 'char-device':
    case 'block-device':
      return {
        ...base,
        mode: (e.type === 'char-device' ? FileType.charDevice : FileType.blockDevice) | e.mode,
        rdevMajor: e.major,
        rdevMinor: e.minor,
      };
  }
}

/**
 * Yields the archive as chunks (headers, names, data, padding) without copying file data;
 * the concatenation equals {@link encodeCpio}'s result.
 */
export function* encodeCpioChunks(entries: readonly CpioEntry[], options: CpioEncodeOptions): Generator<Uint8Array> {
  const mtime = options.mtimeSeconds;
  if (!Number.isInteger(mtime) || mtime < 0 || mtime > 0xffffffff) throw new CpioError(`bad mtime ${mtime}`);
  let ino = 0;
  for (const e of sortCpioEntries(entries)) {
    ino += 1;
    yield* encodeMember(rawMemberOf(e, ino, mtime));
  }
  yield* encodeMember({ name: trailerName, ino: 0, mode: 0, nlink: 1, mtime: 0, rdevMajor: 0, rdevMinor: 0, data: new Uint8Array(0) });
}

/** Returns a complete newc archive of `entries` (sorted, with a trailer); same input → same bytes. */
export function encodeCpio(entries: readonly CpioEntry[], options: CpioEncodeOptions): Buffer {
  return Buffer.concat([...encodeCpioChunks(entries, options)]);
}

/** A member read back by {@link decodeCpio}, with the header fields tests care about. */
export type DecodedCpioEntry = CpioEntry & { mtimeSeconds: number; uid: number; gid: number; nlink: number; ino: number };

function parseHexField(header: string, index: number, offset: number): number {
  const text = header.slice(6 + index * 8, 14 + index * 8);
  if (!/^[0-9a-fA-F]{8}$/.test(text)) throw new CpioError(`bad header field ${index} at offset ${offset}`);
  return parseInt(text, 16);
}

function entryOf(name: string, mode: number, data: Buffer, rdev: [number, number]): CpioEntry {
  const perm = mode & 0o7777;
  switch (mode & typeMask) {
    case FileType.directory:
      return { type: 'directory', path: name, mode: perm };
    case FileType.file:
      return { type: 'file', path: name, mode: perm, data };
    case FileType.symlink:
      return { type: 'symlink', path: name, target: data.toString('utf8') };
    case FileType.charDevice:
      return { type: 'char-device', path: name, mode: perm, major: rdev[0], minor: rdev[1] };
    case FileType.blockDevice:
      return { type: 'block-device', path: name, mode: perm, major: rdev[0], minor: rdev[1] };
    default:
      throw new CpioError(`${name}: unsupported file type in mode 0o${mode.toString(8)}`);
  }
}

/**
 * Parses every newc member of `archive` up to the trailer, then any further archives appended
 * after it (zero padding between them is skipped, as the kernel does). Throws {@link CpioError}
 * on a bad magic, a truncated member or a missing trailer. Compressed archives must be
 * decompressed first.
 */
export function decodeCpio(archive: Uint8Array): DecodedCpioEntry[] {
  const buf = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  const out: DecodedCpioEntry[] = [];
  let offset = 0;
  let sawTrailer = false;
  while (offset < buf.length) {
    if (sawTrailer && buf[offset] === 0) {
      offset += 1;
      continue;
    }
    if (offset + headerBytes > buf.length) throw new CpioError(`truncated header at offset ${offset}`);
    const header = buf.toString('ascii', offset, offset + headerBytes);
    if (!header.startsWith(magic)) throw new CpioError(`bad magic ${JSON.stringify(header.slice(0, 6))} at offset ${offset}`);
    const f = (i: number): number => parseHexField(header, i, offset);
    const [ino, mode, uid, gid, nlink, mtime, size] = [f(0), f(1), f(2), f(3), f(4), f(5), f(6)];
    const nameSize = f(11);
    const nameStart = offset + headerBytes;
    const dataStart = nameStart + nameSize + pad4(headerBytes + nameSize);
    if (nameSize < 1 || dataStart + size > buf.length) throw new CpioError(`truncated member at offset ${offset}`);
    const name = buf.toString('utf8', nameStart, nameStart + nameSize - 1);
    const data = Buffer.from(buf.subarray(dataStart, dataStart + size));
    offset = dataStart + size + pad4(size);
    sawTrailer = name === trailerName;
    if (sawTrailer) continue;
    const entry = entryOf(name, mode, data, [f(9), f(10)]);
    out.push({ ...entry, mtimeSeconds: mtime, uid, gid, nlink, ino });
  }
  if (!sawTrailer) throw new CpioError('archive has no TRAILER!!! member');
  return out;
}
