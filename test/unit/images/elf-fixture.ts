/**
 * @module Synthetic ELF files for the parser's tests, laid out as the ELF gABI says: header,
 * program headers (PT_LOAD over the whole file, PT_INTERP, PT_DYNAMIC), then the interpreter
 * string, the dynamic string table and the dynamic array, in either class and byte order.
 */

/** What the synthetic file holds. */
export interface ElfSpec {
  bits?: 32 | 64;
  littleEndian?: boolean;
  machine: number;
  /** e_type; default 3 (ET_DYN). */
  type?: number;
  interpreter?: string;
  /** Omit for a static file (no PT_DYNAMIC). */
  dynamic?: { needed?: string[]; soname?: string; runpath?: string; rpath?: string };
  /** Override the DT_STRTAB address (to point it outside every PT_LOAD). */
  strtabAddress?: number;
}

const BASE = 0x400000;

/** Builds the bytes of an ELF file per `spec`. */
export function makeElf(spec: ElfSpec): Buffer {
  const is64 = (spec.bits ?? 64) === 64;
  const le = spec.littleEndian ?? true;
  const ehsize = is64 ? 64 : 52;
  const phentsize = is64 ? 56 : 32;
  const word = is64 ? 8 : 4;
  const dyn = spec.dynamic;
  const phnum = 1 + (spec.interpreter === undefined ? 0 : 1) + (dyn === undefined ? 0 : 1);
  const interpOff = ehsize + phnum * phentsize;
  const interp = spec.interpreter === undefined ? Buffer.alloc(0) : Buffer.from(`${spec.interpreter}\0`);
  const strings: string[] = [''];
  const strIndex = (s: string): number => {
    const at = Buffer.byteLength(strings.join('\0')) + 1;
    strings.push(s);
    return at;
  };
  const entries: [number, number][] = [];
  if (dyn !== undefined) {
    for (const n of dyn.needed ?? []) entries.push([1, strIndex(n)]);
    if (dyn.soname !== undefined) entries.push([14, strIndex(dyn.soname)]);
    if (dyn.rpath !== undefined) entries.push([15, strIndex(dyn.rpath)]);
    if (dyn.runpath !== undefined) entries.push([29, strIndex(dyn.runpath)]);
  }
  const strtab = Buffer.from(`${strings.join('\0')}\0`);
  const strOff = interpOff + interp.length;
  const dynOff = strOff + strtab.length;
  const allEntries: [number, number][] = dyn === undefined ? [] : [...entries, [5, spec.strtabAddress ?? BASE + strOff], [0, 0]];
  const total = dynOff + allEntries.length * 2 * word;
  const buf = Buffer.alloc(total);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const u16 = (o: number, x: number): void => { v.setUint16(o, x, le); };
  const u32 = (o: number, x: number): void => { v.setUint32(o, x, le); };
  const w = (o: number, x: number): void => { if (is64) v.setBigUint64(o, BigInt(x), le); else v.setUint32(o, x, le); };
  buf.set([0x7f, 0x45, 0x4c, 0x46, is64 ? 2 : 1, le ? 1 : 2, 1], 0);
  u16(16, spec.type ?? 3);
  u16(18, spec.machine);
  u32(20, 1);
  w(is64 ? 32 : 28, ehsize);
  u16(is64 ? 52 : 40, ehsize);
  u16(is64 ? 54 : 42, phentsize);
  u16(is64 ? 56 : 44, phnum);
  let ph = ehsize;
  const phdr = (type: number, offset: number, size: number): void => {
    u32(ph, type);
    if (is64) {
      w(ph + 8, offset); w(ph + 16, BASE + offset); w(ph + 24, BASE + offset); w(ph + 32, size); w(ph + 40, size);
    } else {
      w(ph + 4, offset); w(ph + 8, BASE + offset); w(ph + 12, BASE + offset); w(ph + 16, size); w(ph + 20, size);
    }
    ph += phentsize;
  };
  phdr(1, 0, total);
  if (spec.interpreter !== undefined) phdr(3, interpOff, interp.length);
  if (dyn !== undefined) phdr(2, dynOff, allEntries.length * 2 * word);
  interp.copy(buf, interpOff);
  strtab.copy(buf, strOff);
  allEntries.forEach(([tag, val], i) => { w(dynOff + i * 2 * word, tag); w(dynOff + i * 2 * word + word, val); });
  return buf;
}
