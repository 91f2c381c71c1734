/**
 * @module Sensor Data Records and sensor readings (IPMI v2.0 §33 SDR repository commands, §43
 * record formats, §35.14 Get Sensor Reading, §36.3 reading conversion): SDR repository info,
 * reserve, Get SDR, decoders of full (type 01h) and compact (type 02h) sensor records, and
 * y = L[(M·x + B·10^Bexp)·10^Rexp] for linear and the standard non-linear sensors.
 * @pure
 */
import { IpmiDecodeError, requireLength } from './decode-error.js';
import type { IpmiCommandRequest } from './commands.js';
import { decodeFruField } from './fru.js';
import { NetFn } from './messages.js';

/** Length of the SDR record header (record ID, version, type, length). */
export const SDR_HEADER_LENGTH = 5;
/** Record ID that ends the repository walk (Get SDR "next record ID" of the last record). */
export const LAST_RECORD_ID = 0xffff;

/** Get SDR Repository Info (§33.9). */
export function encodeGetSdrRepositoryInfo(): IpmiCommandRequest {
  return { netFn: NetFn.storage, command: 0x20, data: Buffer.alloc(0) };
}

/** Decoded Get SDR Repository Info response. */
export interface SdrRepositoryInfo {
  /** SDR version, e.g. `1.5` (0x51). */
  readonly version: string;
  readonly recordCount: number;
  readonly freeSpaceBytes: number;
  readonly supportsReserve: boolean;
}

/** Decodes a Get SDR Repository Info response. */
export function decodeGetSdrRepositoryInfo(data: Buffer): SdrRepositoryInfo {
  requireLength(data, 14, 'Get SDR Repository Info response');
  const v = data[0] ?? 0;
  return { version: `${v & 0x0f}.${v >> 4}`, recordCount: data.readUInt16LE(1), freeSpaceBytes: data.readUInt16LE(3), supportsReserve: ((data[13] ?? 0) & 0x02) !== 0 };
}

/** Reserve SDR Repository (§33.11). */
export function encodeReserveSdrRepository(): IpmiCommandRequest {
  return { netFn: NetFn.storage, command: 0x22, data: Buffer.alloc(0) };
}

/** Decodes Reserve SDR Repository: the reservation ID. */
export function decodeReserveSdrRepository(data: Buffer): number {
  requireLength(data, 2, 'Reserve SDR Repository response');
  return data.readUInt16LE(0);
}

/** Get SDR (§33.12): `count` bytes of record `recordId` from `offset` (0xFF = whole record). */
export function encodeGetSdr(reservationId: number, recordId: number, offset: number, count: number): IpmiCommandRequest {
  const data = Buffer.alloc(6);
  data.writeUInt16LE(reservationId & 0xffff, 0);
  data.writeUInt16LE(recordId & 0xffff, 2);
  data[4] = offset & 0xff;
  data[5] = count & 0xff;
  return { netFn: NetFn.storage, command: 0x23, data };
}

/** Decodes a Get SDR response: the next record ID and the bytes read. */
export function decodeGetSdr(data: Buffer): { readonly nextRecordId: number; readonly bytes: Buffer } {
  requireLength(data, 2, 'Get SDR response');
  return { nextRecordId: data.readUInt16LE(0), bytes: Buffer.from(data.subarray(2)) };
}

/** Fields shared by full and compact sensor records. */
interface SensorRecordBase {
  readonly recordId: number;
  readonly ownerId: number;
  readonly ownerLun: number;
  readonly sensorNumber: number;
  readonly entityId: number;
  readonly entityInstance: number;
  readonly sensorType: number;
  /** Event/Reading Type Code: 0x01 threshold, 0x02–0x0C generic discrete, 0x6F sensor-specific. */
  readonly eventReadingType: number;
  /** Units 2: base unit code (1 °C, 4 V, 5 A, 6 W, 18 RPM …). */
  readonly baseUnit: number;
  readonly name: string;
}

/** Full sensor record (type 01h): analog conversion factors included. */
export interface FullSensorRecord extends SensorRecordBase {
  readonly kind: 'full';
  /** Units 1 bits 7:6: unsigned, 1's complement, 2's complement, or no analog reading. */
  readonly analogFormat: 'unsigned' | 'ones-complement' | 'twos-complement' | 'none';
  /** Linearization: 0 linear, 1–11 standard functions, 0x70–0x7F OEM non-linear. */
  readonly linearization: number;
  readonly m: number;
  readonly b: number;
  readonly bExponent: number;
  readonly rExponent: number;
}

/** Compact sensor record (type 02h): discrete or no analog conversion. */
export interface CompactSensorRecord extends SensorRecordBase {
  readonly kind: 'compact';
}

/** Any other record type (FRU locators, MC locators, OEM …), kept by type only. */
export interface OtherSdrRecord {
  readonly kind: 'other';
  readonly recordId: number;
  readonly recordType: number;
}

/** A decoded SDR. */
export type SdrRecord = FullSensorRecord | CompactSensorRecord | OtherSdrRecord;

const ANALOG_FORMATS = ['unsigned', 'ones-complement', 'twos-complement', 'none'] as const;

function signed(value: number, bits: number): number {
  const limit = 1 << (bits - 1);
  return value >= limit ? value - 2 * limit : value;
}

function idString(record: Buffer, at: number): string {
  const typeLength = record[at];
  if (typeLength === undefined) return '';
  const length = typeLength & 0x1f;
  return decodeFruField(typeLength, record.subarray(at + 1, at + 1 + length)).replace(/\0+$/, '');
}

/** Decodes one complete SDR (header + body). */
export function decodeSdrRecord(record: Buffer): SdrRecord {
  requireLength(record, SDR_HEADER_LENGTH, 'SDR header');
  const recordId = record.readUInt16LE(0);
  const recordType = record[3] ?? 0;
  requireLength(record, SDR_HEADER_LENGTH + (record[4] ?? 0), 'SDR body');
  if (recordType !== 0x01 && recordType !== 0x02) return { kind: 'other', recordId, recordType };
  requireLength(record, recordType === 0x01 ? 48 : 32, recordType === 0x01 ? 'full sensor record' : 'compact sensor record');
  const base: SensorRecordBase = {
    recordId, ownerId: record[5] ?? 0, ownerLun: (record[6] ?? 0) & 0x03, sensorNumber: record[7] ?? 0,
    entityId: record[8] ?? 0, entityInstance: (record[9] ?? 0) & 0x7f, sensorType: record[12] ?? 0,
    eventReadingType: record[13] ?? 0, baseUnit: record[21] ?? 0, name: idString(record, recordType === 0x01 ? 47 : 31),
  };
  if (recordType === 0x02) return { ...base, kind: 'compact' };
  const mtol = record[25] ?? 0;
  const bacc = record[27] ?? 0;
  const exps = record[29] ?? 0;
  return {
    ...base, kind: 'full',
    analogFormat: ANALOG_FORMATS[((record[20] ?? 0) >> 6) & 0x03] ?? 'none',
    linearization: (record[23] ?? 0) & 0x7f,
    m: signed((record[24] ?? 0) | ((mtol & 0xc0) << 2), 10),
    b: signed((record[26] ?? 0) | ((bacc & 0xc0) << 2), 10),
    rExponent: signed(exps >> 4, 4),
    bExponent: signed(exps & 0x0f, 4),
  };
}

/** Get Sensor Reading (§35.14) for a sensor owned by the BMC on LUN 0. */
export function encodeGetSensorReading(sensorNumber: number): IpmiCommandRequest {
  return { netFn: NetFn.sensorEvent, command: 0x2d, data: Buffer.from([sensorNumber & 0xff]) };
}

/** Decoded Get Sensor Reading response. */
export interface SensorReading {
  readonly raw: number;
  readonly eventMessagesEnabled: boolean;
  readonly scanningEnabled: boolean;
  /** "Reading/state unavailable" (bit 5): the raw byte means nothing. */
  readonly unavailable: boolean;
  /** Threshold comparison bits or discrete state bits 0–14. */
  readonly states: number;
}

/** Decodes a Get Sensor Reading response. */
export function decodeGetSensorReading(data: Buffer): SensorReading {
  requireLength(data, 2, 'Get Sensor Reading response');
  const flags = data[1] ?? 0;
  return {
    raw: data[0] ?? 0,
    eventMessagesEnabled: (flags & 0x80) !== 0,
    scanningEnabled: (flags & 0x40) !== 0,
    unavailable: (flags & 0x20) !== 0,
    states: (data[2] ?? 0) | (((data[3] ?? 0) & 0x7f) << 8),
  };
}

const LINEARIZATIONS: readonly ((x: number) => number)[] = [
  (x) => x, Math.log, Math.log10, Math.log2, Math.exp, (x) => 10 ** x, (x) => 2 ** x,
  (x) => 1 / x, (x) => x * x, (x) => x * x * x, Math.sqrt, Math.cbrt,
];

/**
 * Converts a raw reading of a full record to its unit value; undefined for records without an
 * analog reading, OEM non-linear sensors, or a non-finite result.
 */
export function convertSensorReading(record: FullSensorRecord, raw: number): number | undefined {
  if (record.analogFormat === 'none') return undefined;
  const fn = LINEARIZATIONS[record.linearization];
  if (fn === undefined) return undefined;
  const byte = raw & 0xff;
  const x = record.analogFormat === 'unsigned' ? byte
    : record.analogFormat === 'twos-complement' ? signed(byte, 8)
      : byte >= 0x80 ? -(~byte & 0x7f) : byte;
  const y = fn((record.m * x + record.b * 10 ** record.bExponent) * 10 ** record.rExponent);
  return Number.isFinite(y) ? Number(y.toPrecision(12)) : undefined;
}

/** Names of common base unit codes (IPMI v2.0 table 43-15). */
export const SENSOR_UNIT_NAMES: Readonly<Record<number, string>> = {
  0: 'unspecified', 1: 'degrees C', 2: 'degrees F', 3: 'degrees K', 4: 'Volts', 5: 'Amps', 6: 'Watts', 7: 'Joules',
  8: 'Coulombs', 9: 'VA', 14: 'kPa', 15: 'PSI', 17: 'CFM', 18: 'RPM', 19: 'Hz', 20: 'microsecond', 21: 'millisecond',
  22: 'second', 23: 'minute', 24: 'hour', 25: 'day', 26: 'week', 70: 'bytes', 71: 'kilobytes', 72: 'megabytes',
  73: 'gigabytes', 88: 'errors',
};

/** Rejects a record that claims to be longer than the SDR spec allows (header length byte). */
export function sdrRecordLength(header: Buffer): number {
  requireLength(header, SDR_HEADER_LENGTH, 'SDR header');
  const length = SDR_HEADER_LENGTH + (header[4] ?? 0);
  if ((header[2] ?? 0) !== 0x51 && (header[2] ?? 0) !== 0x01) {
    throw new IpmiDecodeError('malformed', `SDR version 0x${(header[2] ?? 0).toString(16)} is not 0x51`);
  }
  return length;
}
