/**
 * @module FRU image builder for ipmi_sim's `mc_add_fru_data` and for decoder round-trip tests
 * (Platform Management FRU Information Storage Definition v1.0): common header, chassis, board
 * and product info areas, 8-bit ASCII fields, 8-byte multiples, zero checksums.
 */

/** Fields of the areas to write; an absent area is left out of the common header. */
export interface FruImageInput {
  readonly chassis?: { readonly type: number; readonly partNumber: string; readonly serialNumber: string };
  readonly board?: {
    /** Minutes since 1996-01-01 00:00 UTC. */
    readonly manufacturedMinutes?: number;
    readonly manufacturer: string; readonly productName: string; readonly serialNumber: string; readonly partNumber: string;
  };
  readonly product?: {
    readonly manufacturer: string; readonly productName: string; readonly partNumber: string; readonly version: string;
    readonly serialNumber: string; readonly assetTag: string;
  };
}

function field(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  if (bytes.length > 63) throw new RangeError(`FRU field "${text}" is longer than 63 bytes`);
  return Buffer.concat([Buffer.from([0xc0 | bytes.length]), bytes]);
}

function checksum(bytes: Buffer): number {
  let sum = 0;
  for (const b of bytes) sum = (sum + b) & 0xff;
  return (0x100 - sum) & 0xff;
}

function area(head: number[], fields: readonly string[]): Buffer {
  const body = Buffer.concat([Buffer.from(head), ...fields.map(field), Buffer.from([0xc1])]);
  const length = Math.ceil((body.length + 1) / 8) * 8;
  const out = Buffer.alloc(length);
  body.copy(out);
  out[1] = length / 8;
  out[length - 1] = checksum(out.subarray(0, length - 1));
  return out;
}

/** Builds a FRU image; the FRU file ID field is written empty. */
export function encodeFruImage(input: FruImageInput): Buffer {
  const areas: Buffer[] = [];
  const offsets = [0, 0, 0]; // chassis, board, product (in 8-byte units)
  let at = 1;
  const place = (index: number, bytes: Buffer): void => {
    offsets[index] = at;
    at += bytes.length / 8;
    areas.push(bytes);
  };
  if (input.chassis !== undefined) {
    place(0, area([0x01, 0, input.chassis.type], [input.chassis.partNumber, input.chassis.serialNumber]));
  }
  if (input.board !== undefined) {
    const m = input.board.manufacturedMinutes ?? 0;
    place(1, area([0x01, 0, 0x00, m & 0xff, (m >> 8) & 0xff, (m >> 16) & 0xff],
      [input.board.manufacturer, input.board.productName, input.board.serialNumber, input.board.partNumber, '']));
  }
  if (input.product !== undefined) {
    const p = input.product;
    place(2, area([0x01, 0, 0x00], [p.manufacturer, p.productName, p.partNumber, p.version, p.serialNumber, p.assetTag, '']));
  }
  const header = Buffer.from([0x01, 0, offsets[0] ?? 0, offsets[1] ?? 0, offsets[2] ?? 0, 0, 0, 0]);
  header[7] = checksum(header.subarray(0, 7));
  return Buffer.concat([header, ...areas]);
}
