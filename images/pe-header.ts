/**
 * @module Pins the two fields of a PE image header that `objcopy` rewrites on every run (binutils
 * stamps the current time into the COFF header and recomputes the optional header's checksum),
 * so an image built twice from the same inputs has the same bytes (Microsoft PE/COFF
 * specification, §3.3 "COFF File Header" TimeDateStamp, §3.4.2 CheckSum).
 * @pure
 */

/** Offset of the PE signature's offset (`e_lfanew`) in the MS-DOS header. */
const E_LFANEW = 0x3c;

/** Offsets of TimeDateStamp and CheckSum in `image`; throws when it is not a PE image. */
export function peHeaderOffsets(image: Uint8Array): { timeDateStamp: number; checkSum: number } {
  const buf = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  if (buf.length < 0x40 || buf.toString('latin1', 0, 2) !== 'MZ') throw new TypeError('not a PE image: no MZ header');
  const pe = buf.readUInt32LE(E_LFANEW);
  if (pe + 24 + 68 > buf.length || buf.toString('latin1', pe, pe + 4) !== 'PE\0\0') throw new TypeError('not a PE image: no PE signature');
  // COFF header: Machine(2) NumberOfSections(2) TimeDateStamp(4) …; optional header at pe+24, CheckSum at +64 (PE32 and PE32+ alike).
  return { timeDateStamp: pe + 8, checkSum: pe + 24 + 64 };
}

/** The PE image checksum: 16-bit one's-complement-style sum of the file with the CheckSum field read as 0, plus the file length. */
export function peChecksum(image: Uint8Array, checkSumOffset: number): number {
  let sum = 0;
  for (let i = 0; i < image.length; i += 2) {
    if (i === checkSumOffset || i === checkSumOffset + 2) continue;
    const word = (image[i] ?? 0) | ((image[i + 1] ?? 0) << 8);
    sum += word;
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  sum = (sum & 0xffff) + (sum >>> 16);
  return (sum + image.length) >>> 0;
}

/** Sets `image`'s TimeDateStamp to `timeDateStamp` and its CheckSum to match, in place; returns `image`. */
export function pinPeHeader(image: Buffer, timeDateStamp: number): Buffer {
  const at = peHeaderOffsets(image);
  image.writeUInt32LE(timeDateStamp >>> 0, at.timeDateStamp);
  image.writeUInt32LE(peChecksum(image, at.checkSum), at.checkSum);
  return image;
}
