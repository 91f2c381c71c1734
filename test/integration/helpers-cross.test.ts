/**
 * The ramdisk's C helpers (images/helpers.ts) for another architecture than the head node's: with
 * Debian's cross compiler (`gcc-aarch64-linux-gnu` + `libc6-dev-arm64-cross`) each is a static
 * arm64 ELF without interpreter or DT_NEEDED, the same bytes twice; without it each is listed as
 * missing with the packages to install. (test/integration/images-boot-arm64.test.ts runs them in
 * the arm64 ramdisk's selftest.) Under RACKSIDE_REQUIRE_INTEGRATION=1 a missing cross compiler fails.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildHelpers, CROSS_COMPILERS, DEFAULT_HELPERS, defaultHelperSourceDir } from '../../images/helpers.js';
import { EM_AARCH64, EM_X86_64, parseElfDynamic } from '../../images/elf.js';
import { HEAD_NODE_ARCH } from '../../images/arch-inputs.js';
import { requireTools } from '../unit/images/helpers.js';

const OTHER = HEAD_NODE_ARCH === 'amd64' ? 'arm64' : 'amd64';

test(`the helpers cross-compiled for ${OTHER}: static ${OTHER} ELF binaries, reproducible`, { timeout: 120_000 }, async (t) => {
  const cross = CROSS_COMPILERS[OTHER];
  if (!requireTools(t, { [cross.command]: cross.packages.split(' ')[0] ?? '' })) return;
  const first = await buildHelpers(DEFAULT_HELPERS, defaultHelperSourceDir(), undefined, OTHER);
  assert.deepEqual(first.missing, []);
  assert.deepEqual(first.tools.map((x) => x.name).sort(), [...DEFAULT_HELPERS].sort());
  for (const entry of first.entries) {
    if (entry.type !== 'file') continue;
    const elf = parseElfDynamic(Buffer.from(entry.data));
    assert.equal(elf.machine, OTHER === 'arm64' ? EM_AARCH64 : EM_X86_64, `${entry.path} is an ${OTHER} binary`);
    assert.equal(elf.interpreter, undefined, `${entry.path} is static`);
    assert.deepEqual(elf.needed, [], `${entry.path} needs no shared library`);
  }
  const second = await buildHelpers(DEFAULT_HELPERS, defaultHelperSourceDir(), undefined, OTHER);
  assert.deepEqual(second.tools.map((x) => x.sha256), first.tools.map((x) => x.sha256), 'the same bytes twice');
});

test('without the cross compiler each helper is missing, naming the Debian packages that bring it', async () => {
  const result = await buildHelpers(DEFAULT_HELPERS, defaultHelperSourceDir(), ['/nonexistent'], OTHER);
  assert.deepEqual(result.tools, []);
  for (const m of result.missing) assert.match(m.reason, new RegExp(`^no ${OTHER} cross compiler \\(${CROSS_COMPILERS[OTHER].command}: apt-get install ${CROSS_COMPILERS[OTHER].packages}\\)`));
  assert.equal(result.missing.length, DEFAULT_HELPERS.length);
});
