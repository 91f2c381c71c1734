import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BootMenuError, isoKernelCommandLine, renderGrubConfig, renderIsolinuxConfig } from '../../../images/boot-menus.js';
import { assertOverlayFits, HostIsoError, patchIsoChunk, validateHostOverlaySlot } from '../../../images/iso-host.js';

test('both ISO menus pass the console arguments and load the initrd then the host slot', () => {
  const grub = renderGrubConfig({ label: 'rackside "x" $y', extraKernelArgs: ['ipa-debug=1'] });
  assert.match(grub, /^serial --unit=0 --speed=115200$/m);
  assert.match(grub, /^menuentry "rackside x y" \{$/m);
  assert.match(grub, /^ {2}linux \/boot\/vmlinuz console=tty0 console=ttyS0,115200 ipa-debug=1$/m);
  assert.match(grub, /^ {2}initrd \/boot\/initrd \/boot\/host\.img$/m);
  const isolinux = renderIsolinuxConfig({ label: 'rackside' });
  assert.match(isolinux, /^SERIAL 0 115200$/m);
  assert.match(isolinux, /^ {2}APPEND initrd=\/boot\/initrd,\/boot\/host\.img console=tty0 console=ttyS0,115200$/m);
});

const badArgs: Record<string, string> = { space: 'a b', quote: 'a"b', dollar: 'x=$y', semicolon: 'a;reboot', empty: '', newline: 'a\nb', brace: '}' };
for (const [name, arg] of Object.entries(badArgs)) {
  test(`isoKernelCommandLine rejects an argument with a ${name}`, () => {
    assert.throws(() => isoKernelCommandLine([arg]), BootMenuError);
  });
}

test('patchIsoChunk replaces exactly the slot bytes, across chunk boundaries', () => {
  const slot = { offsetBytes: 4096, sizeBytes: 2048 };
  const overlay = Buffer.from('070701overlay');
  const base = Buffer.alloc(8192, 0xaa);
  const whole = Buffer.from(patchIsoChunk(base, 0, slot, overlay));
  assert.deepEqual(whole.subarray(0, 4096), base.subarray(0, 4096));
  assert.deepEqual(whole.subarray(4096, 4096 + overlay.length), overlay);
  assert.ok(whole.subarray(4096 + overlay.length, 6144).every((b) => b === 0));
  assert.deepEqual(whole.subarray(6144), base.subarray(6144));
  // The same result in 1000-byte chunks (a streaming server).
  const parts: Buffer[] = [];
  for (let off = 0; off < base.length; off += 1000) parts.push(Buffer.from(patchIsoChunk(base.subarray(off, off + 1000), off, slot, overlay)));
  assert.deepEqual(Buffer.concat(parts), whole);
  const untouched = base.subarray(0, 100);
  assert.equal(patchIsoChunk(untouched, 0, slot, overlay), untouched, 'chunks outside the slot are passed through');
});

test('slot validation: sector alignment, positive size, overlay fits', () => {
  assert.throws(() => validateHostOverlaySlot({ offsetBytes: 100, sizeBytes: 10 }), HostIsoError);
  assert.throws(() => validateHostOverlaySlot({ offsetBytes: 2048, sizeBytes: 0 }), HostIsoError);
  assert.throws(() => { assertOverlayFits({ offsetBytes: 2048, sizeBytes: 4 }, Buffer.alloc(5)); }, /slot holds 4/);
  assert.doesNotThrow(() => { assertOverlayFits({ offsetBytes: 2048, sizeBytes: 4 }, Buffer.alloc(4)); });
});
