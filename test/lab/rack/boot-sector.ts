/**
 * @module The virtual rack's tiny OS image, as bytes: an MBR (a 512-byte master boot record)
 * whose boot code prints a marker line on the first serial port and halts, and its partition
 * table; and the reader of MBR partition tables the e2e tests use on written guest disks.
 *
 * Layout of an MBR (the IBM PC convention every BIOS follows; UEFI spec 2.10 §5.2.1 "Legacy
 * Master Boot Record"): boot code at 0–439, disk signature at 440–443, four 16-byte partition
 * entries at 446–509 (status 0x80 = bootable, CHS start, type, CHS end, LBA start and sector
 * count as little-endian 32-bit), and the signature 0x55 0xAA at 510–511. The BIOS loads sector
 * 0 to 0000:7C00 and jumps there in real mode. The boot code writes straight to the 16550 UART
 * at I/O port 0x3F8 (COM1; QEMU's `-serial` device), so it needs no BIOS console service.
 * @pure
 */

/** One MBR partition entry (sizes in 512-byte sectors). */
export interface MbrPartition {
  /** Partition type byte (0x0E FAT16 LBA, 0x83 Linux, 0xEE GPT protective …). */
  type: number;
  startSector: number;
  sectors: number;
  bootable?: boolean;
}

const SECTOR = 512;
const TABLE_OFFSET = 446;
const CODE_MAX = 440;

/**
 * Real-mode boot code (org 0x7C00), hand-assembled:
 *   cli; xor ax,ax; mov ds,ax; cld; mov si,msg; mov dx,0x3f8
 *   next: lodsb; test al,al; jz done; out dx,al; jmp next
 *   done: hlt; jmp done        (interrupts off: the CPU stays halted)
 *   msg: db …, 0
 */
function bootCode(message: string): Uint8Array {
  const text = new TextEncoder().encode(message);
  const msgAddress = 0x7c00 + 23;
  const code = [
    0xfa, // cli
    0x31, 0xc0, // xor ax,ax
    0x8e, 0xd8, // mov ds,ax
    0xfc, // cld
    0xbe, msgAddress & 0xff, msgAddress >> 8, // mov si,msg
    0xba, 0xf8, 0x03, // mov dx,0x3f8
    0xac, // next: lodsb
    0x84, 0xc0, // test al,al
    0x74, 0x03, // jz done
    0xee, // out dx,al
    0xeb, 0xf8, // jmp next
    0xf4, // done: hlt
    0xeb, 0xfd, // jmp done
  ];
  if (code.length !== 23) throw new Error('boot code layout changed: fix msgAddress');
  const out = new Uint8Array(code.length + text.length + 1);
  out.set(code, 0);
  out.set(text, code.length);
  return out;
}

/**
 * Returns a 512-byte MBR whose boot code prints `message` (printable ASCII, CR/LF allowed) on
 * COM1 and halts, with `partitions` (at most four) in its table; throws a RangeError for a
 * message that does not fit or a partition that does not fit 32-bit LBA.
 */
export function encodeBootSector(message: string, partitions: readonly MbrPartition[]): Uint8Array {
  if (!/^[\x20-\x7e\r\n]*$/.test(message)) throw new RangeError('boot message must be printable ASCII');
  const code = bootCode(message);
  if (code.length > CODE_MAX) throw new RangeError(`boot message too long: code is ${code.length} bytes, ${CODE_MAX} fit`);
  if (partitions.length > 4) throw new RangeError('an MBR holds at most four primary partitions');
  const sector = new Uint8Array(SECTOR);
  sector.set(code, 0);
  const view = new DataView(sector.buffer);
  partitions.forEach((p, i) => {
    for (const [name, value] of [['startSector', p.startSector], ['sectors', p.sectors]] as const) {
      if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`partition ${i + 1}: ${name} must fit 32 bits`);
    }
    if (!Number.isInteger(p.type) || p.type < 1 || p.type > 0xff) throw new RangeError(`partition ${i + 1}: type must be 1-255`);
    const at = TABLE_OFFSET + 16 * i;
    sector[at] = p.bootable === true ? 0x80 : 0x00;
    // CHS fields: 0xFE 0xFF 0xFF means "use the LBA fields" (beyond 8 GiB of CHS, and what fdisk writes).
    sector.set([0xfe, 0xff, 0xff], at + 1);
    sector[at + 4] = p.type;
    sector.set([0xfe, 0xff, 0xff], at + 5);
    view.setUint32(at + 8, p.startSector, true);
    view.setUint32(at + 12, p.sectors, true);
  });
  sector[510] = 0x55;
  sector[511] = 0xaa;
  return sector;
}

/**
 * Returns the partitions of the MBR in `sector0` (the disk's first 512 bytes; empty entries
 * skipped), or `undefined` when it carries no 0x55AA signature — a wiped disk.
 */
export function decodeMbrPartitions(sector0: Uint8Array): MbrPartition[] | undefined {
  if (sector0.length < SECTOR) throw new RangeError(`an MBR is ${SECTOR} bytes, got ${sector0.length}`);
  if (sector0[510] !== 0x55 || sector0[511] !== 0xaa) return undefined;
  const view = new DataView(sector0.buffer, sector0.byteOffset, SECTOR);
  const out: MbrPartition[] = [];
  for (let i = 0; i < 4; i++) {
    const at = TABLE_OFFSET + 16 * i;
    const type = sector0[at + 4] ?? 0;
    const sectors = view.getUint32(at + 12, true);
    if (type === 0 || sectors === 0) continue;
    out.push({ type, startSector: view.getUint32(at + 8, true), sectors, bootable: sector0[at] === 0x80 });
  }
  return out;
}
