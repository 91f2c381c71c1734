import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { peChecksum, peHeaderOffsets, pinPeHeader } from '../../../images/pe-header.js';
import { buildUnifiedKernelImage, UKI_STUB_X64 } from '../../../images/uki.js';
import { skipOrFail } from '../../helpers/integration.js';

/** A minimal PE header: MZ, e_lfanew = 0x40, `PE\0\0`, and room for the optional header. */
function tinyPe(): Buffer {
  const buf = Buffer.alloc(0x40 + 24 + 96);
  buf.write('MZ', 0, 'latin1');
  buf.writeUInt32LE(0x40, 0x3c);
  buf.write('PE\0\0', 0x40, 'latin1');
  return buf;
}

test('PE header offsets: TimeDateStamp at PE+8, CheckSum at PE+24+64; not a PE → throws', () => {
  assert.deepEqual(peHeaderOffsets(tinyPe()), { timeDateStamp: 0x48, checkSum: 0x40 + 24 + 64 });
  assert.throws(() => peHeaderOffsets(Buffer.alloc(200)), /no MZ header/);
  const noPe = tinyPe();
  noPe.write('XX', 0x40, 'latin1');
  assert.throws(() => peHeaderOffsets(noPe), /no PE signature/);
});

test('PE checksum golden: word sum with carries folded, checksum field skipped, plus the length', () => {
  const buf = tinyPe();
  const at = peHeaderOffsets(buf);
  buf.writeUInt32LE(0xdeadbeef, at.checkSum); // ignored by the sum
  // words: 'MZ' = 0x5a4d, e_lfanew 0x0040, 'PE' = 0x4550
  assert.equal(peChecksum(buf, at.checkSum), 0x5a4d + 0x40 + 0x4550 + buf.length);
  const carry = Buffer.alloc(4, 0xff); // 0xffff + 0xffff = 0x1fffe → folded 0xffff
  assert.equal(peChecksum(carry, 100), 0xffff + 4);
  pinPeHeader(buf, 1_700_000_000);
  assert.equal(buf.readUInt32LE(at.timeDateStamp), 1_700_000_000);
  // 0x9fdd + 0xf100 = 0x190dd → 0x90de; + 0x6553 (1_700_000_000 = 0x6553f100) = 0xf631
  assert.equal(buf.readUInt32LE(at.checkSum), 0xf631 + buf.length);
});

test('unified kernel image: sections at systemd 252 addresses, same bytes twice, reused by content', async (t) => {
  if (!existsSync(UKI_STUB_X64)) {
    skipOrFail(t, `${UKI_STUB_X64} missing (Debian package systemd-boot-efi)`);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'rackside-uki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'vmlinuz'), Buffer.alloc(70_000, 7));
  await writeFile(join(dir, 'a.cpio'), 'based');
  await writeFile(join(dir, 'b.cpio'), 'overlay');
  const inputs = { kernel: join(dir, 'vmlinuz'), initrds: [join(dir, 'a.cpio'), join(dir, 'b.cpio')], cmdline: 'console=ttyS0 rackside.url=https://10.0.0.1:8443' };
  const first = await buildUnifiedKernelImage(inputs, join(dir, 'one'));
  const second = await buildUnifiedKernelImage(inputs, join(dir, 'two'));
  assert.equal(first.built, true);
  assert.equal(first.key, second.key);
  assert.deepEqual(await readFile(first.path), await readFile(second.path), 'the same inputs give the same bytes');
  const again = await buildUnifiedKernelImage(inputs, join(dir, 'one'));
  assert.equal(again.built, false);
  const other = await buildUnifiedKernelImage({ ...inputs, cmdline: 'console=ttyS1' }, join(dir, 'one'));
  assert.notEqual(other.key, first.key);

  const headers = execFileSync('objdump', ['-h', first.path], { encoding: 'utf8' });
  const vma = (name: string): { size: number; vma: number } | undefined => {
    const m = new RegExp(`\\s${name.replace('.', '\\.')}\\s+([0-9a-f]+)\\s+([0-9a-f]+)`).exec(headers);
    return m === null ? undefined : { size: Number.parseInt(m[1] ?? '', 16), vma: Number.parseInt(m[2] ?? '', 16) };
  };
  assert.deepEqual(vma('.osrel')?.vma, 0x20000);
  assert.deepEqual(vma('.cmdline'), { vma: 0x30000, size: inputs.cmdline.length + 1 });
  assert.deepEqual(vma('.linux'), { vma: 0x2000000, size: 70_000 });
  // Each initrd padded with zeros to 4 bytes: the next archive starts where the kernel looks for it.
  assert.deepEqual(vma('.initrd'), { vma: 0x3000000, size: 'based\0\0\0overlay\0'.length });
  execFileSync('objcopy', ['-O', 'binary', '--only-section=.initrd', first.path, join(dir, 'initrd.bin')]);
  assert.equal(await readFile(join(dir, 'initrd.bin'), 'latin1'), 'based\0\0\0overlay\0');
  execFileSync('objcopy', ['-O', 'binary', '--only-section=.cmdline', first.path, join(dir, 'cmdline.bin')]);
  assert.equal(await readFile(join(dir, 'cmdline.bin'), 'utf8'), `${inputs.cmdline}\0`);
  await assert.rejects(buildUnifiedKernelImage({ ...inputs, cmdline: 'a\nb' }, dir), /single line/);
});
