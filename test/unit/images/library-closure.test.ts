import { test } from 'node:test';
import assert from 'node:assert/strict';
import { libraryClosure, libraryDirs, type FoundLibrary } from '../../../images/library-closure.js';

/** A fake tree: soname → what it needs; absent: not found. */
function lookupOf(graph: Record<string, string[]>, asked: string[] = []): (soname: string) => Promise<FoundLibrary | undefined> {
  return (soname) => {
    asked.push(soname);
    const needed = graph[soname];
    return Promise.resolve(needed === undefined ? undefined : { soname, path: `lib/t/${soname}`, needed, machine: 183 });
  };
}

const cases: { name: string; needed: string[]; graph: Record<string, string[]>; libraries: string[]; missing: string[] }[] = [
  { name: 'nothing needed', needed: [], graph: {}, libraries: [], missing: [] },
  { name: 'direct only', needed: ['libc.so.6'], graph: { 'libc.so.6': [] }, libraries: ['libc.so.6'], missing: [] },
  {
    name: 'transitive needs of libraries, each once, sorted by path',
    needed: ['libfdisk.so.1', 'libc.so.6'],
    graph: { 'libfdisk.so.1': ['libblkid.so.1', 'libuuid.so.1', 'libc.so.6'], 'libblkid.so.1': ['libc.so.6'], 'libuuid.so.1': ['libc.so.6'], 'libc.so.6': ['ld-linux-aarch64.so.1'], 'ld-linux-aarch64.so.1': [] },
    libraries: ['ld-linux-aarch64.so.1', 'libblkid.so.1', 'libc.so.6', 'libfdisk.so.1', 'libuuid.so.1'],
    missing: [],
  },
  { name: 'a cycle ends', needed: ['liba.so'], graph: { 'liba.so': ['libb.so'], 'libb.so': ['liba.so'] }, libraries: ['liba.so', 'libb.so'], missing: [] },
  {
    name: 'missing sonames are listed, direct and transitive',
    needed: ['libgone.so.1', 'liba.so'],
    graph: { 'liba.so': ['libalso-gone.so.2'] },
    libraries: ['liba.so'],
    missing: ['libalso-gone.so.2', 'libgone.so.1'],
  },
];

for (const c of cases) {
  test(`libraryClosure: ${c.name}`, async () => {
    const asked: string[] = [];
    const result = await libraryClosure(c.needed, lookupOf(c.graph, asked));
    assert.deepEqual(result.libraries.map((l) => l.soname), c.libraries);
    assert.deepEqual(result.missing, c.missing);
    assert.equal(new Set(asked).size, asked.length, 'each soname looked up once');
  });
}

test('libraryDirs: DT_RUNPATH directories first (absolute ones; $ORIGIN left out), then the multiarch and plain lib dirs', () => {
  assert.deepEqual(libraryDirs('aarch64-linux-gnu'), ['lib/aarch64-linux-gnu', 'usr/lib/aarch64-linux-gnu', 'lib', 'usr/lib']);
  assert.deepEqual(libraryDirs('x86_64-linux-gnu', ['/opt/x/lib/', '$ORIGIN/../lib', 'relative', '/usr/lib']), ['opt/x/lib', 'usr/lib', 'lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu', 'lib']);
});
