/**
 * @module Multi-request reads over an {@link IpmiSession}: the FRU image (Get FRU Inventory Area
 * Info, then Read FRU Data in 32-byte chunks, word-addressed devices included) and the sensor
 * walk (SDR repository info, reserve, Get SDR header-then-body in chunks — some BMCs refuse
 * "read whole record" — restarting once when the reservation is cancelled, then Get Sensor
 * Reading and conversion for every full or compact record the BMC owns), plus the IANA
 * manufacturer names Get Device ID reports.
 */
import { BmcError, BmcErrorCode } from '../errors.js';
import { IpmiDecodeError } from './decode-error.js';
import {
  decodeFru, decodeGetFruInventoryAreaInfo, decodeReadFruData, encodeGetFruInventoryAreaInfo, encodeReadFruData,
  FRU_READ_CHUNK_BYTES, type FruInventory,
} from './fru.js';
import { IpmiCompletionCodeError, type IpmiSession } from './ipmi-session.js';
import { BMC_SLAVE_ADDRESS } from './messages.js';
import {
  convertSensorReading, decodeGetSdr, decodeGetSdrRepositoryInfo, decodeGetSensorReading, decodeReserveSdrRepository,
  decodeSdrRecord, encodeGetSdr, encodeGetSdrRepositoryInfo, encodeGetSensorReading, encodeReserveSdrRepository,
  LAST_RECORD_ID, SDR_HEADER_LENGTH, sdrRecordLength, SENSOR_UNIT_NAMES, type SdrRecord,
} from './sdr.js';

/** IANA enterprise numbers of common BMC vendors (Get Device ID manufacturer ID). */
export const IPMI_MANUFACTURERS: Readonly<Record<number, string>> = {
  2: 'IBM', 11: 'Hewlett Packard Enterprise', 42: 'Sun Microsystems', 343: 'Intel', 674: 'Dell', 2011: 'Huawei',
  4753: 'MontaVista (OpenIPMI)', 7244: 'Quanta', 10368: 'Fujitsu', 10876: 'Supermicro', 11129: 'Google', 19046: 'Lenovo',
  20974: 'American Megatrends', 40981: 'Inspur', 49622: 'OpenBMC', 52538: 'Wiwynn',
};

/** Completion codes meaning "no such FRU / record / sensor here". */
const NOT_PRESENT = new Set([0xcb, 0xcc, 0xc1, 0xd5]);
const SDR_CHUNK_BYTES = 16;
const MAX_SDR_RECORDS = 1024;
const MAX_FRU_BYTES = 4096;

function isNotPresent(err: unknown): boolean {
  return err instanceof IpmiCompletionCodeError && NOT_PRESENT.has(err.completionCode);
}

function protocolError(session: IpmiSession, message: string, cause?: unknown): BmcError {
  return new BmcError(BmcErrorCode.protocol, `BMC ${session.address}: ${message}`, { address: session.address, cause });
}

/** Reads and decodes FRU device `deviceId` (default 0); undefined when the BMC has none. */
export async function readFru(session: IpmiSession, deviceId = 0): Promise<FruInventory | undefined> {
  let info;
  try {
    info = await session.call(encodeGetFruInventoryAreaInfo(deviceId), decodeGetFruInventoryAreaInfo);
  } catch (err) {
    if (isNotPresent(err)) return undefined;
    throw err;
  }
  const size = Math.min(info.sizeBytes, MAX_FRU_BYTES);
  const unit = info.accessByWords ? 2 : 1;
  const chunks: Buffer[] = [];
  let offset = 0;
  while (offset < size) {
    const count = Math.min(FRU_READ_CHUNK_BYTES, size - offset);
    const bytes = await session.call(encodeReadFruData(deviceId, offset / unit, Math.ceil(count / unit)), decodeReadFruData);
    if (bytes.length === 0) break;
    chunks.push(bytes);
    offset += bytes.length;
  }
  try {
    return decodeFru(Buffer.concat(chunks).subarray(0, size));
  } catch (err) {
    if (err instanceof IpmiDecodeError) throw protocolError(session, `FRU ${deviceId} is unreadable: ${err.message}`, err);
    throw err;
  }
}

/** One sensor as read. */
export interface IpmiSensorValue {
  readonly name: string;
  readonly sensorNumber: number;
  readonly sensorType: number;
  readonly eventReadingType: number;
  /** Unit name (`degrees C`, `Volts`, `RPM` …); undefined for discrete sensors. */
  readonly unit: string | undefined;
  /** Converted value of a threshold sensor with analog readings; undefined otherwise. */
  readonly value: number | undefined;
  readonly raw: number | undefined;
  /** Discrete state bits or threshold status bits. */
  readonly states: number | undefined;
  /** False when the sensor cannot be read now (scanning disabled, reading unavailable, absent). */
  readonly available: boolean;
}

/** Reads every SDR record of the repository (restarts once if the reservation is cancelled). */
export async function readSdrRecords(session: IpmiSession): Promise<SdrRecord[]> {
  for (let round = 0; ; round++) {
    try {
      return await walkSdr(session);
    } catch (err) {
      if (round === 0 && err instanceof IpmiCompletionCodeError && err.completionCode === 0xc5) continue;
      throw err;
    }
  }
}

async function walkSdr(session: IpmiSession): Promise<SdrRecord[]> {
  const info = await session.call(encodeGetSdrRepositoryInfo(), decodeGetSdrRepositoryInfo);
  if (info.recordCount === 0) return [];
  const reservation = info.supportsReserve ? await session.call(encodeReserveSdrRepository(), decodeReserveSdrRepository) : 0;
  const records: SdrRecord[] = [];
  let recordId = 0;
  while (recordId !== LAST_RECORD_ID && records.length < MAX_SDR_RECORDS) {
    const header = await session.call(encodeGetSdr(reservation, recordId, 0, SDR_HEADER_LENGTH), decodeGetSdr);
    let length: number;
    try {
      length = sdrRecordLength(header.bytes);
    } catch (err) {
      throw protocolError(session, `SDR record ${recordId}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    const parts = [header.bytes.subarray(0, SDR_HEADER_LENGTH)];
    for (let offset = SDR_HEADER_LENGTH; offset < length; offset += SDR_CHUNK_BYTES) {
      const part = await session.call(encodeGetSdr(reservation, recordId, offset, Math.min(SDR_CHUNK_BYTES, length - offset)), decodeGetSdr);
      parts.push(part.bytes);
    }
    try {
      records.push(decodeSdrRecord(Buffer.concat(parts)));
    } catch (err) {
      throw protocolError(session, `SDR record ${recordId}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    if (header.nextRecordId === recordId) break; // a BMC pointing at itself would loop forever
    recordId = header.nextRecordId;
  }
  return records;
}

/** Reads the SDR repository and every BMC-owned sensor's current reading. */
export async function readSensors(session: IpmiSession): Promise<IpmiSensorValue[]> {
  const records = await readSdrRecords(session);
  const values: IpmiSensorValue[] = [];
  for (const record of records) {
    if (record.kind === 'other' || record.ownerId !== BMC_SLAVE_ADDRESS || record.ownerLun !== 0) continue;
    const threshold = record.eventReadingType === 0x01;
    const base = {
      name: record.name, sensorNumber: record.sensorNumber, sensorType: record.sensorType, eventReadingType: record.eventReadingType,
      unit: threshold ? SENSOR_UNIT_NAMES[record.baseUnit] ?? `unit ${record.baseUnit}` : undefined,
    };
    let reading;
    try {
      reading = await session.call(encodeGetSensorReading(record.sensorNumber), decodeGetSensorReading);
    } catch (err) {
      if (!isNotPresent(err)) throw err;
      values.push({ ...base, value: undefined, raw: undefined, states: undefined, available: false });
      continue;
    }
    const available = reading.scanningEnabled && !reading.unavailable;
    const value = available && threshold && record.kind === 'full' ? convertSensorReading(record, reading.raw) : undefined;
    values.push({ ...base, value, raw: reading.raw, states: reading.states, available });
  }
  return values;
}
