import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EM_AARCH64, EM_X86_64, ElfError, parseElfDynamic, type ElfDynamicInfo } from '../../../images/elf.js';
import { makeElf, type ElfSpec } from './elf-fixture.js';

const cases: { name: string; spec: ElfSpec; want: Partial<ElfDynamicInfo> }[] = [
  {
    name: 'ELF64 LSB executable with interpreter and DT_NEEDED in file order',
    spec: { machine: EM_AARCH64, type: 3, interpreter: '/lib/ld-linux-aarch64.so.1', dynamic: { needed: ['libfdisk.so.1', 'libc.so.6'] } },
    want: { bits: 64, littleEndian: true, machine: EM_AARCH64, type: 3, interpreter: '/lib/ld-linux-aarch64.so.1', needed: ['libfdisk.so.1', 'libc.so.6'], runpath: [] },
  },
  {
    name: 'ELF32 MSB shared library with DT_SONAME and no interpreter',
    spec: { bits: 32, littleEndian: false, machine: 8, dynamic: { needed: ['libc.so.6'], soname: 'libx.so.1' } },
    want: { bits: 32, littleEndian: false, machine: 8, needed: ['libc.so.6'], soname: 'libx.so.1', interpreter: undefined },
  },
  {
    name: 'DT_RUNPATH wins over DT_RPATH and is split on colons',
    spec: { machine: EM_X86_64, dynamic: { needed: [], rpath: '/old', runpath: '/opt/a/lib:/opt/b/lib' } },
    want: { runpath: ['/opt/a/lib', '/opt/b/lib'] },
  },
  {
    name: 'DT_RPATH alone is used',
    spec: { machine: EM_X86_64, dynamic: { rpath: '/usr/lib/x' } },
    want: { runpath: ['/usr/lib/x'] },
  },
  {
    name: 'a static executable (no PT_DYNAMIC, no PT_INTERP) needs nothing',
    spec: { machine: EM_AARCH64, type: 2 },
    want: { type: 2, needed: [], interpreter: undefined, soname: undefined },
  },
];

for (const c of cases) {
  test(`parseElfDynamic: ${c.name}`, () => {
    const info = parseElfDynamic(makeElf(c.spec));
    for (const [key, value] of Object.entries(c.want)) assert.deepEqual(info[key as keyof ElfDynamicInfo], value, key);
  });
}

const bad: { name: string; data: Buffer; error: RegExp }[] = [
  { name: 'no magic', data: Buffer.concat([Buffer.from('#!/bin/sh\n'), Buffer.alloc(64)]), error: /not an ELF file/ },
  { name: 'too short', data: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]), error: /not an ELF file/ },
  { name: 'unknown class', data: (() => { const b = makeElf({ machine: 62 }); b[4] = 3; return b; })(), error: /EI_CLASS 3/ },
  { name: 'unknown byte order', data: (() => { const b = makeElf({ machine: 62 }); b[5] = 0; return b; })(), error: /EI_DATA 0/ },
  { name: 'program headers cut off', data: makeElf({ machine: 62, interpreter: '/lib/ld.so', dynamic: { needed: ['a'] } }).subarray(0, 100), error: /outside the file/ },
  { name: 'DT_STRTAB outside every PT_LOAD', data: makeElf({ machine: 62, dynamic: { needed: ['a'] }, strtabAddress: 0x10 }), error: /in no PT_LOAD segment/ },
];

for (const c of bad) {
  test(`parseElfDynamic rejects ${c.name}`, () => {
    assert.throws(() => parseElfDynamic(c.data), (err: unknown) => err instanceof ElfError && c.error.test(err.message));
  });
}

test('parseElfDynamic reads this Node.js binary: the head node\'s machine, an interpreter, and libc among DT_NEEDED', () => {
  const info = parseElfDynamic(readFileSync(process.execPath));
  assert.equal(info.machine, process.arch === 'arm64' ? EM_AARCH64 : EM_X86_64);
  assert.match(info.interpreter ?? '', /^\/lib.*\/ld-linux-/);
  assert.ok(info.needed.includes('libc.so.6'), info.needed.join(' '));
});
