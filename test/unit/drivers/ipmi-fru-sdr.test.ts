// FRU and SDR decoding with fixture bytes (the same bytes ipmi_sim serves in the lab, which
// `ipmitool fru print` and `ipmitool sdr elist` decode to the values asserted here), field
// encodings, and sensor reading conversion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IpmiDecodeError } from '../../../drivers/ipmi/decode-error.js';
import {
  decodeFru, decodeFruField, decodeGetFruInventoryAreaInfo, decodeReadFruData, encodeReadFruData,
} from '../../../drivers/ipmi/fru.js';
import {
  convertSensorReading, decodeGetSdr, decodeGetSdrRepositoryInfo, decodeGetSensorReading, decodeSdrRecord, encodeGetSdr,
  sdrRecordLength, type FullSensorRecord,
} from '../../../drivers/ipmi/sdr.js';
import { encodeFruImage } from '../../lab/ipmi/fru-image.js';
import { encodeFullSensorRecord } from '../../lab/ipmi/sdr-records.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const FRU_FIXTURE = hex(`
  01000001070000f7
  010600102030c85261636b73696465c953696d20426f617264c84252442d30303031c5504e2d3432c0c10000000000ac
  010700c85261636b73696465ca53696d20536572766572c54d444c2d37c3312e30c8534e2d3132333435c741535345542d39c0c100000065`);

test('FRU fixture decodes as ipmitool prints it', () => {
  const fru = decodeFru(FRU_FIXTURE);
  assert.equal(fru.chassis, undefined);
  assert.deepEqual(fru.board, {
    manufacturedAt: new Date('2001-12-30T05:36:00Z'), manufacturer: 'Rackside', productName: 'Sim Board', serialNumber: 'BRD-0001',
    partNumber: 'PN-42', fruFileId: '', custom: [],
  });
  assert.deepEqual(fru.product, {
    manufacturer: 'Rackside', productName: 'Sim Server', partNumber: 'MDL-7', version: '1.0', serialNumber: 'SN-12345',
    assetTag: 'ASSET-9', fruFileId: '', custom: [],
  });
});

test('FRU: chassis area, round-trip through the lab encoder, and refusals', () => {
  const image = encodeFruImage({
    chassis: { type: 0x17, partNumber: 'CH-1', serialNumber: 'CSN-9' },
    product: { manufacturer: 'Acme', productName: 'R1', partNumber: 'P', version: '2', serialNumber: 'S', assetTag: '' },
  });
  const fru = decodeFru(image);
  assert.deepEqual(fru.chassis, { type: 0x17, partNumber: 'CH-1', serialNumber: 'CSN-9', custom: [] });
  assert.equal(fru.board, undefined);
  assert.equal(fru.product?.manufacturer, 'Acme');
  const badHeader = Buffer.from(FRU_FIXTURE);
  badHeader[7] = (badHeader[7] ?? 0) + 1;
  assert.throws(() => decodeFru(badHeader), { reason: 'checksum' });
  const badArea = Buffer.from(FRU_FIXTURE);
  badArea[20] = (badArea[20] ?? 0) ^ 0x01;
  assert.throws(() => decodeFru(badArea), { reason: 'checksum' });
  assert.throws(() => decodeFru(FRU_FIXTURE.subarray(0, 40)), { reason: 'truncated' });
  assert.throws(() => decodeFru(hex('02000001070000f6')), { reason: 'malformed' });
  const noEnd = Buffer.from(FRU_FIXTURE);
  noEnd[49] = 0x00; // replace the board's 0xC1 end marker, then fix the area checksum
  noEnd[55] = ((noEnd[55] ?? 0) + 0xc1) & 0xff;
  assert.throws(() => decodeFru(noEnd), IpmiDecodeError);
});

test('FRU field encodings: binary, BCD plus, 6-bit packed ASCII, 8-bit Latin-1', () => {
  const cases = {
    binary: [0x03, 'deadbe', 'deadbe'],
    'BCD plus': [0x43, '12b3c4', '12-3.4'],
    '6-bit ASCII': [0x83, '29dca6', 'IPMI'],
    latin1: [0xc4, '41e94243', 'AéBC'],
  } as const;
  for (const [name, [typeLength, bytes, text]] of Object.entries(cases)) {
    assert.equal(decodeFruField(typeLength, hex(bytes)), text, name);
  }
});

test('FRU commands: area info and read data', () => {
  assert.deepEqual(decodeGetFruInventoryAreaInfo(hex('7000 00')), { sizeBytes: 112, accessByWords: false });
  assert.deepEqual(decodeGetFruInventoryAreaInfo(hex('0001 01')), { sizeBytes: 256, accessByWords: true });
  assert.deepEqual(encodeReadFruData(0, 0x20, 32).data, hex('00 2000 20'));
  assert.deepEqual(decodeReadFruData(hex('03 aabbcc')), hex('aabbcc'));
  assert.throws(() => decodeReadFruData(hex('04 aabbcc')), { reason: 'truncated' });
});

const SDR_12V = hex('020051012e20000207017f680201000000000000000400000600000000e000000000ff000000000000000000000000c3313256');
const SDR_PRESENCE = hex('04005102282000040a016740086f0100000001000000000000000000000000cd505355312050726573656e6365');

test('SDR fixtures: full and compact sensor records', () => {
  const full = decodeSdrRecord(SDR_12V);
  assert.ok(full.kind === 'full', full.kind);
  assert.deepEqual(
    [full.recordId, full.sensorNumber, full.sensorType, full.eventReadingType, full.baseUnit, full.name, full.m, full.b, full.rExponent, full.bExponent, full.analogFormat],
    [2, 2, 0x02, 0x01, 4, '12V', 6, 0, -2, 0, 'unsigned'],
  );
  assert.equal(convertSensorReading(full, 200), 12);
  const compact = decodeSdrRecord(SDR_PRESENCE);
  assert.deepEqual(compact.kind === 'compact' ? [compact.sensorNumber, compact.sensorType, compact.eventReadingType, compact.name, compact.entityId] : [],
    [4, 0x08, 0x6f, 'PSU1 Presence', 0x0a]);
  assert.deepEqual(decodeSdrRecord(hex('0500 51 12 03 200000')), { kind: 'other', recordId: 5, recordType: 0x12 });
  assert.throws(() => decodeSdrRecord(SDR_12V.subarray(0, 30)), { reason: 'truncated' });
  assert.equal(sdrRecordLength(SDR_12V), SDR_12V.length);
  assert.throws(() => sdrRecordLength(hex('0200 99 01 2e')), { reason: 'malformed' });
});

test('sensor conversion: M, B, exponents, signed formats and non-linear functions', () => {
  const record = (over: Parameters<typeof encodeFullSensorRecord>[0]): FullSensorRecord => {
    const r = decodeSdrRecord(encodeFullSensorRecord(over));
    if (r.kind !== 'full') throw new Error('not full');
    return r;
  };
  const base = { recordId: 1, sensorNumber: 1, sensorType: 1, baseUnit: 1, name: 'T' };
  const cases: Record<string, [Parameters<typeof encodeFullSensorRecord>[0], number, number | undefined]> = {
    'M = 1': [{ ...base, m: 1 }, 45, 45],
    'M = 50 (fan)': [{ ...base, m: 50 }, 96, 4800],
    'negative M': [{ ...base, m: -2 }, 5, -10],
    'B offset −40': [{ ...base, m: 1, b: -40 }, 100, 60],
    'B × 10^Bexp': [{ ...base, m: 1, b: 3, bExponent: 1 }, 0, 30],
    'R exponent −3': [{ ...base, m: 125, rExponent: -3 }, 8, 1],
    "two's complement": [{ ...base, m: 1, analogFormat: 2 }, 0xf6, -10],
    "one's complement": [{ ...base, m: 1, analogFormat: 1 }, 0xf5, -10],
    'no analog reading': [{ ...base, m: 1, analogFormat: 3 }, 10, undefined],
    'L = sqr': [{ ...base, m: 1, linearization: 8 }, 3, 9],
    'L = sqrt': [{ ...base, m: 1, linearization: 10 }, 16, 4],
    'L = 1/x of 0 → not finite': [{ ...base, m: 1, linearization: 7 }, 0, undefined],
    'OEM non-linear': [{ ...base, m: 1, linearization: 0x70 }, 3, undefined],
  };
  for (const [name, [input, raw, expected]] of Object.entries(cases)) {
    const r = record(input);
    assert.equal(convertSensorReading(r, raw), expected, name);
  }
});

test('SDR repository and sensor reading commands', () => {
  const info = decodeGetSdrRepositoryInfo(hex('51 0400 0010 00000000 00000000 02'));
  assert.deepEqual(info, { version: '1.5', recordCount: 4, freeSpaceBytes: 0x1000, supportsReserve: true });
  assert.deepEqual(encodeGetSdr(0x1234, 2, 5, 16).data, hex('3412 0200 05 10'));
  assert.deepEqual(decodeGetSdr(hex('0300 aabb')), { nextRecordId: 3, bytes: hex('aabb') });
  assert.deepEqual(decodeGetSensorReading(hex('2d c0 00')), { raw: 45, eventMessagesEnabled: true, scanningEnabled: true, unavailable: false, states: 0 });
  assert.deepEqual(decodeGetSensorReading(hex('00 20 01 80')), { raw: 0, eventMessagesEnabled: false, scanningEnabled: false, unavailable: true, states: 1 });
  assert.throws(() => decodeGetSensorReading(hex('00')), { reason: 'truncated' });
});
