/**
 * @module FRU inventory (IPMI v2.0 §34, Platform Management FRU Information Storage Definition
 * v1.0 §8–§11): Get FRU Inventory Area Info and Read FRU Data requests/responses, and a decoder
 * of the common header, chassis, board and product info areas with their type/length-encoded
 * fields (binary, BCD plus, 6-bit packed ASCII, 8-bit ASCII + Latin-1) and zero checksums.
 * @pure
 */
import { IpmiDecodeError, requireLength } from './decode-error.js';
import type { IpmiCommandRequest } from './commands.js';
import { NetFn } from './messages.js';

/** Largest Read FRU Data count that fits every BMC's message buffer (ipmitool reads ≤ 32 too). */
export const FRU_READ_CHUNK_BYTES = 32;

/** Get FRU Inventory Area Info (§34.1) for FRU device `deviceId` (0 = the BMC's built-in FRU). */
export function encodeGetFruInventoryAreaInfo(deviceId = 0): IpmiCommandRequest {
  return { netFn: NetFn.storage, command: 0x10, data: Buffer.from([deviceId & 0xff]) };
}

/** Decoded Get FRU Inventory Area Info response. */
export interface FruAreaInfo {
  readonly sizeBytes: number;
  /** Device is accessed by words (offsets and counts in 16-bit units). */
  readonly accessByWords: boolean;
}

/** Decodes a Get FRU Inventory Area Info response. */
export function decodeGetFruInventoryAreaInfo(data: Buffer): FruAreaInfo {
  requireLength(data, 3, 'Get FRU Inventory Area Info response');
  return { sizeBytes: data.readUInt16LE(0), accessByWords: ((data[2] ?? 0) & 0x01) !== 0 };
}

/** Read FRU Data (§34.2): `count` bytes (or words) at `offset`. */
export function encodeReadFruData(deviceId: number, offset: number, count: number): IpmiCommandRequest {
  const data = Buffer.alloc(4);
  data[0] = deviceId & 0xff;
  data.writeUInt16LE(offset & 0xffff, 1);
  data[3] = count & 0xff;
  return { netFn: NetFn.storage, command: 0x11, data };
}

/** Decodes a Read FRU Data response: the bytes returned (count byte checked against the data). */
export function decodeReadFruData(data: Buffer): Buffer {
  requireLength(data, 1, 'Read FRU Data response');
  const count = data[0] ?? 0;
  if (data.length - 1 < count) throw new IpmiDecodeError('truncated', `Read FRU Data says ${count} bytes, carries ${data.length - 1}`);
  return Buffer.from(data.subarray(1, 1 + count));
}

/** Board Info Area fields. */
export interface FruBoard {
  /** Manufacturing date, minutes since 1996-01-01 00:00 UTC; undefined when 0 (unspecified). */
  readonly manufacturedAt: Date | undefined;
  readonly manufacturer: string;
  readonly productName: string;
  readonly serialNumber: string;
  readonly partNumber: string;
  readonly fruFileId: string;
  readonly custom: readonly string[];
}

/** Product Info Area fields. */
export interface FruProduct {
  readonly manufacturer: string;
  readonly productName: string;
  readonly partNumber: string;
  readonly version: string;
  readonly serialNumber: string;
  readonly assetTag: string;
  readonly fruFileId: string;
  readonly custom: readonly string[];
}

/** Chassis Info Area fields. */
export interface FruChassis {
  /** SMBIOS chassis type (e.g. 0x17 rack mount chassis). */
  readonly type: number;
  readonly partNumber: string;
  readonly serialNumber: string;
  readonly custom: readonly string[];
}

/** A decoded FRU inventory; absent areas are undefined. */
export interface FruInventory {
  readonly chassis: FruChassis | undefined;
  readonly board: FruBoard | undefined;
  readonly product: FruProduct | undefined;
}

const FRU_EPOCH_MS = Date.UTC(1996, 0, 1);
const BCD_PLUS = '0123456789 -.???';

function zeroSum(bytes: Buffer): boolean {
  let sum = 0;
  for (const b of bytes) sum = (sum + b) & 0xff;
  return sum === 0;
}

/** Decodes one type/length-encoded field value (FRU spec §13). */
export function decodeFruField(typeLength: number, bytes: Buffer): string {
  switch (typeLength >> 6) {
    case 0: return bytes.toString('hex'); // binary or unspecified
    case 1: return [...bytes].map((b) => `${BCD_PLUS[b >> 4] ?? '?'}${BCD_PLUS[b & 0x0f] ?? '?'}`).join('').trimEnd();
    case 2: { // 6-bit packed ASCII: 4 characters in every 3 bytes, least significant bits first
      let bits = 0;
      let count = 0;
      let out = '';
      for (const b of bytes) {
        bits |= b << count;
        count += 8;
        while (count >= 6) {
          out += String.fromCharCode((bits & 0x3f) + 0x20);
          bits >>= 6;
          count -= 6;
        }
      }
      return out.trimEnd();
    }
    default: return bytes.toString('latin1');
  }
}

/** Reads type/length fields from `offset` until 0xC1; returns them and where the list ended. */
function readFields(area: Buffer, offset: number, what: string): string[] {
  const fields: string[] = [];
  let at = offset;
  for (;;) {
    const typeLength = area[at];
    if (typeLength === undefined) throw new IpmiDecodeError('truncated', `${what}: no end-of-fields marker`);
    if (typeLength === 0xc1) return fields;
    const length = typeLength & 0x3f;
    if (at + 1 + length > area.length) throw new IpmiDecodeError('truncated', `${what}: field runs past the area`);
    fields.push(decodeFruField(typeLength, area.subarray(at + 1, at + 1 + length)).replace(/\0+$/, ''));
    at += 1 + length;
  }
}

function readArea(image: Buffer, offsetUnits: number, what: string): Buffer {
  const start = offsetUnits * 8;
  requireLength(image, start + 2, what);
  const length = (image[start + 1] ?? 0) * 8;
  if (length < 8) throw new IpmiDecodeError('malformed', `${what}: length 0`);
  requireLength(image, start + length, what);
  const area = image.subarray(start, start + length);
  if (((area[0] ?? 0) & 0x0f) !== 0x01) throw new IpmiDecodeError('malformed', `${what}: format version ${area[0] ?? 0} is not 1`);
  if (!zeroSum(area)) throw new IpmiDecodeError('checksum', `${what}: checksum is wrong`);
  return area;
}

/** Decodes a FRU image (common header and the chassis, board and product areas). */
export function decodeFru(image: Buffer): FruInventory {
  requireLength(image, 8, 'FRU common header');
  const header = image.subarray(0, 8);
  if (((header[0] ?? 0) & 0x0f) !== 0x01) throw new IpmiDecodeError('malformed', 'FRU common header format version is not 1');
  if (!zeroSum(header)) throw new IpmiDecodeError('checksum', 'FRU common header checksum is wrong');
  const chassisAt = header[2] ?? 0;
  const boardAt = header[3] ?? 0;
  const productAt = header[4] ?? 0;
  let chassis: FruChassis | undefined;
  if (chassisAt !== 0) {
    const area = readArea(image, chassisAt, 'FRU chassis area');
    const [partNumber = '', serialNumber = '', ...custom] = readFields(area, 3, 'FRU chassis area');
    chassis = { type: area[2] ?? 0, partNumber, serialNumber, custom };
  }
  let board: FruBoard | undefined;
  if (boardAt !== 0) {
    const area = readArea(image, boardAt, 'FRU board area');
    const minutes = (area[3] ?? 0) | ((area[4] ?? 0) << 8) | ((area[5] ?? 0) << 16);
    const [manufacturer = '', productName = '', serialNumber = '', partNumber = '', fruFileId = '', ...custom] = readFields(area, 6, 'FRU board area');
    board = {
      manufacturedAt: minutes === 0 ? undefined : new Date(FRU_EPOCH_MS + minutes * 60_000),
      manufacturer, productName, serialNumber, partNumber, fruFileId, custom,
    };
  }
  let product: FruProduct | undefined;
  if (productAt !== 0) {
    const area = readArea(image, productAt, 'FRU product area');
    const [manufacturer = '', productName = '', partNumber = '', version = '', serialNumber = '', assetTag = '', fruFileId = '', ...custom] =
      readFields(area, 3, 'FRU product area');
    product = { manufacturer, productName, partNumber, version, serialNumber, assetTag, fruFileId, custom };
  }
  return { chassis, board, product };
}
