/**
 * The virtual rack's MBR (test/lab/rack/boot-sector.ts): the boot code's bytes, the partition
 * table layout, the signature, decoding back, and the limits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeMbrPartitions, encodeBootSector, type MbrPartition } from '../../lab/rack/boot-sector.js';

test('the boot code prints the message on COM1 and halts; the message follows the code, NUL-terminated', () => {
  const sector = encodeBootSector('HI', []);
  // cli; xor ax,ax; mov ds,ax; cld; mov si,0x7c17; mov dx,0x3f8; lodsb; test al,al; jz +3; out dx,al; jmp -8; hlt; jmp -3
  assert.deepEqual([...sector.subarray(0, 23)], [0xfa, 0x31, 0xc0, 0x8e, 0xd8, 0xfc, 0xbe, 0x17, 0x7c, 0xba, 0xf8, 0x03, 0xac, 0x84, 0xc0, 0x74, 0x03, 0xee, 0xeb, 0xf8, 0xf4, 0xeb, 0xfd]);
  assert.equal(Buffer.from(sector.subarray(23, 26)).toString('latin1'), 'HI\0');
  assert.deepEqual([sector[510], sector[511]], [0x55, 0xaa]);
  assert.equal(sector.length, 512);
});

test('partition entries: status, LBA start and count little-endian, CHS marked "use LBA"', () => {
  const parts: MbrPartition[] = [
    { type: 0x01, startSector: 2048, sectors: 4096, bootable: true },
    { type: 0x83, startSector: 0x01020304, sectors: 0xa0b0c0d0 },
  ];
  const sector = encodeBootSector('x', parts);
  assert.deepEqual([...sector.subarray(446, 462)], [0x80, 0xfe, 0xff, 0xff, 0x01, 0xfe, 0xff, 0xff, 0x00, 0x08, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00]);
  assert.deepEqual([...sector.subarray(462, 478)], [0x00, 0xfe, 0xff, 0xff, 0x83, 0xfe, 0xff, 0xff, 0x04, 0x03, 0x02, 0x01, 0xd0, 0xc0, 0xb0, 0xa0]);
  assert.deepEqual(decodeMbrPartitions(sector), [{ ...parts[0] }, { ...parts[1], bootable: false }]);
});

test('a sector without the 0x55AA signature has no partition table (a wiped disk)', () => {
  assert.equal(decodeMbrPartitions(new Uint8Array(512)), undefined);
  const sector = encodeBootSector('x', [{ type: 0x83, startSector: 1, sectors: 1 }]);
  sector[511] = 0;
  assert.equal(decodeMbrPartitions(sector), undefined);
});

const refused: Record<string, () => unknown> = {
  'a message longer than the code area': () => encodeBootSector('x'.repeat(420), []),
  'a non-ASCII message': () => encodeBootSector('héllo', []),
  'five partitions': () => encodeBootSector('x', Array.from({ length: 5 }, () => ({ type: 0x83, startSector: 1, sectors: 1 }))),
  'a start beyond 32 bits': () => encodeBootSector('x', [{ type: 0x83, startSector: 2 ** 32, sectors: 1 }]),
  'partition type 0': () => encodeBootSector('x', [{ type: 0, startSector: 1, sectors: 1 }]),
  'a short sector to decode': () => decodeMbrPartitions(new Uint8Array(100)),
};
for (const [name, call] of Object.entries(refused)) {
  test(`refused: ${name}`, () => {
    assert.throws(call, RangeError);
  });
}
