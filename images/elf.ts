/**
 * @module What the dynamic loader would need for an ELF file, read without running it (so a
 * binary of another architecture needs no qemu-user): the machine type, the program
 * interpreter and the dynamic section's DT_NEEDED, DT_SONAME and DT_RUNPATH/DT_RPATH entries.
 * Layout per the System V ABI (ELF gABI, "ELF Header", "Program Header", "Dynamic Section"):
 * 32- and 64-bit, either byte order. The dynamic string table (DT_STRTAB) is a virtual address,
 * mapped to a file offset through the PT_LOAD segment that covers it.
 * @pure
 */

/** ELF gABI `e_machine` values of the architectures rackside builds for. */
export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;

/** What {@link parseElfDynamic} found. */
export interface ElfDynamicInfo {
  /** 32 or 64 (EI_CLASS). */
  bits: 32 | 64;
  littleEndian: boolean;
  /** `e_type`: 2 ET_EXEC, 3 ET_DYN. */
  type: number;
  /** `e_machine`, e.g. {@link EM_AARCH64}. */
  machine: number;
  /** PT_INTERP: the path of the program interpreter (`/lib/ld-linux-aarch64.so.1`), absent for static binaries and libraries. */
  interpreter?: string;
  /** DT_NEEDED sonames in file order (empty: static or no dependencies). */
  needed: string[];
  soname?: string;
  /** DT_RUNPATH, else DT_RPATH, split on `:`. */
  runpath: string[];
}

/** Thrown for bytes that are not a well-formed ELF file, naming what is wrong. */
export class ElfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ElfError';
  }
}

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NULL = 0;
const DT_NEEDED = 1;
const DT_STRTAB = 5;
const DT_SONAME = 14;
const DT_RPATH = 15;
const DT_RUNPATH = 29;

interface Segment {
  type: number;
  offset: number;
  vaddr: number;
  filesz: number;
}

/** Reads fixed-width fields of one ELF file in its class and byte order, checking bounds. */
class Reader {
  readonly #view: DataView;
  constructor(readonly data: Uint8Array, readonly bits: 32 | 64, readonly le: boolean) {
    this.#view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }

  #check(offset: number, size: number, what: string): void {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + size > this.data.length) throw new ElfError(`${what} at offset ${offset} lies outside the file (${this.data.length} bytes)`);
  }

  u16(offset: number, what: string): number {
    this.#check(offset, 2, what);
    return this.#view.getUint16(offset, this.le);
  }

  u32(offset: number, what: string): number {
    this.#check(offset, 4, what);
    return this.#view.getUint32(offset, this.le);
  }

  /** A word: 4 bytes in ELF32, 8 in ELF64 (Elf64_Addr/Off/Xword), as a number. */
  word(offset: number, what: string): number {
    if (this.bits === 32) return this.u32(offset, what);
    this.#check(offset, 8, what);
    return Number(this.#view.getBigUint64(offset, this.le));
  }

  /** A NUL-terminated string starting at `offset`. */
  cstring(offset: number, what: string): string {
    this.#check(offset, 1, what);
    const end = this.data.indexOf(0, offset);
    if (end < 0) throw new ElfError(`${what} at offset ${offset} has no terminating NUL`);
    return Buffer.from(this.data.subarray(offset, end)).toString('utf8');
  }
}

function header(data: Uint8Array): Reader {
  if (data.length < 52 || data[0] !== 0x7f || data[1] !== 0x45 || data[2] !== 0x4c || data[3] !== 0x46) throw new ElfError('not an ELF file (no \\x7fELF magic)');
  const cls = data[4];
  const enc = data[5];
  if (cls !== 1 && cls !== 2) throw new ElfError(`unknown EI_CLASS ${cls}`);
  if (enc !== 1 && enc !== 2) throw new ElfError(`unknown EI_DATA ${enc}`);
  return new Reader(data, cls === 1 ? 32 : 64, enc === 1);
}

function segments(r: Reader): Segment[] {
  const is64 = r.bits === 64;
  const phoff = r.word(is64 ? 32 : 28, 'e_phoff');
  const phentsize = r.u16(is64 ? 54 : 42, 'e_phentsize');
  const phnum = r.u16(is64 ? 56 : 44, 'e_phnum');
  if (phnum > 0 && phentsize < (is64 ? 56 : 32)) throw new ElfError(`e_phentsize ${phentsize} is too small`);
  const out: Segment[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    out.push(is64
      ? { type: r.u32(at, 'p_type'), offset: r.word(at + 8, 'p_offset'), vaddr: r.word(at + 16, 'p_vaddr'), filesz: r.word(at + 32, 'p_filesz') }
      : { type: r.u32(at, 'p_type'), offset: r.word(at + 4, 'p_offset'), vaddr: r.word(at + 8, 'p_vaddr'), filesz: r.word(at + 16, 'p_filesz') });
  }
  return out;
}

/** The file offset of virtual address `vaddr`, through the PT_LOAD segment holding it. */
function fileOffsetOf(loads: readonly Segment[], vaddr: number): number {
  const seg = loads.find((s) => vaddr >= s.vaddr && vaddr < s.vaddr + s.filesz);
  if (seg === undefined) throw new ElfError(`DT_STRTAB address 0x${vaddr.toString(16)} is in no PT_LOAD segment`);
  return seg.offset + (vaddr - seg.vaddr);
}

/** The dynamic entries (tag, value) up to DT_NULL. */
function dynamicEntries(r: Reader, dyn: Segment): [number, number][] {
  const size = r.bits === 64 ? 16 : 8;
  const out: [number, number][] = [];
  for (let at = dyn.offset; at + size <= dyn.offset + dyn.filesz; at += size) {
    const tag = r.word(at, 'd_tag');
    if (tag === DT_NULL) break;
    out.push([tag, r.word(at + size / 2, 'd_val')]);
  }
  return out;
}

/**
 * Parses `data` as an ELF file and returns its machine, interpreter and dynamic dependencies
 * (see {@link ElfDynamicInfo}); throws {@link ElfError} for anything else or a malformed file.
 */
export function parseElfDynamic(data: Uint8Array): ElfDynamicInfo {
  const r = header(data);
  const info: ElfDynamicInfo = { bits: r.bits, littleEndian: r.le, type: r.u16(16, 'e_type'), machine: r.u16(18, 'e_machine'), needed: [], runpath: [] };
  const segs = segments(r);
  const interp = segs.find((s) => s.type === PT_INTERP);
  if (interp !== undefined) info.interpreter = r.cstring(interp.offset, 'PT_INTERP');
  const dyn = segs.find((s) => s.type === PT_DYNAMIC);
  if (dyn === undefined) return info;
  const entries = dynamicEntries(r, dyn);
  const strtab = entries.find(([tag]) => tag === DT_STRTAB)?.[1];
  if (strtab === undefined) throw new ElfError('PT_DYNAMIC has no DT_STRTAB');
  const strOffset = fileOffsetOf(segs.filter((s) => s.type === PT_LOAD), strtab);
  const str = (value: number, what: string): string => r.cstring(strOffset + value, what);
  let rpath: string | undefined;
  let runpath: string | undefined;
  for (const [tag, value] of entries) {
    if (tag === DT_NEEDED) info.needed.push(str(value, 'DT_NEEDED'));
    else if (tag === DT_SONAME) info.soname = str(value, 'DT_SONAME');
    else if (tag === DT_RUNPATH) runpath = str(value, 'DT_RUNPATH');
    else if (tag === DT_RPATH) rpath = str(value, 'DT_RPATH');
  }
  // DT_RUNPATH wins over DT_RPATH when both are present (gABI, "Shared Object Dependencies").
  const path = runpath ?? rpath;
  if (path !== undefined) info.runpath = path.split(':').filter((p) => p !== '');
  return info;
}
