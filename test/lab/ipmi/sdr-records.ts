/**
 * @module Sensor Data Record builders (IPMI v2.0 §43.1 full and §43.2 compact sensor records)
 * for ipmi_sim's `main_sdr_add` and for decoder tests. Byte offsets below are 0-based (the
 * spec numbers bytes from 1).
 */

/** A threshold sensor with linear conversion y = (M·x + B·10^Bexp)·10^Rexp. */
export interface FullSensorInput {
  readonly recordId: number;
  readonly sensorNumber: number;
  readonly sensorType: number;
  readonly baseUnit: number;
  readonly name: string;
  readonly m: number;
  readonly b?: number;
  readonly rExponent?: number;
  readonly bExponent?: number;
  /** Units 1 bits 7:6: 0 unsigned, 1 one's complement, 2 two's complement, 3 no analog reading. */
  readonly analogFormat?: 0 | 1 | 2 | 3;
  readonly linearization?: number;
  readonly entityId?: number;
}

/** A discrete sensor without conversion factors. */
export interface CompactSensorInput {
  readonly recordId: number;
  readonly sensorNumber: number;
  readonly sensorType: number;
  readonly eventReadingType: number;
  readonly name: string;
  readonly entityId?: number;
}

function idString(name: string): Buffer {
  const bytes = Buffer.from(name, 'latin1');
  if (bytes.length > 16) throw new RangeError(`sensor name "${name}" is longer than 16 bytes`);
  return Buffer.concat([Buffer.from([0xc0 | bytes.length]), bytes]);
}

/** Encodes a full sensor record (type 01h), owner BMC 0x20, LUN 0. */
export function encodeFullSensorRecord(s: FullSensorInput): Buffer {
  const id = idString(s.name);
  const r = Buffer.alloc(47 + id.length);
  r.writeUInt16LE(s.recordId, 0);
  r[2] = 0x51;
  r[3] = 0x01;
  r[4] = r.length - 5;
  r[5] = 0x20;
  r[7] = s.sensorNumber;
  r[8] = s.entityId ?? 0x07;
  r[9] = 0x01;
  r[10] = 0x7f; // sensor initialization: scanning, events, thresholds, hysteresis, type
  r[11] = 0x68; // capabilities: per-threshold events, readable thresholds
  r[12] = s.sensorType;
  r[13] = 0x01; // threshold
  r[20] = (s.analogFormat ?? 0) << 6;
  r[21] = s.baseUnit;
  r[23] = s.linearization ?? 0;
  const m = s.m & 0x3ff;
  const b = (s.b ?? 0) & 0x3ff;
  r[24] = m & 0xff;
  r[25] = (m >> 2) & 0xc0;
  r[26] = b & 0xff;
  r[27] = (b >> 2) & 0xc0;
  r[29] = (((s.rExponent ?? 0) & 0x0f) << 4) | ((s.bExponent ?? 0) & 0x0f);
  r[34] = 0xff; // sensor maximum reading
  id.copy(r, 47);
  return r;
}

/** Encodes a compact sensor record (type 02h), owner BMC 0x20, LUN 0. */
export function encodeCompactSensorRecord(s: CompactSensorInput): Buffer {
  const id = idString(s.name);
  const r = Buffer.alloc(31 + id.length);
  r.writeUInt16LE(s.recordId, 0);
  r[2] = 0x51;
  r[3] = 0x02;
  r[4] = r.length - 5;
  r[5] = 0x20;
  r[7] = s.sensorNumber;
  r[8] = s.entityId ?? 0x0a;
  r[9] = 0x01;
  r[10] = 0x67;
  r[11] = 0x40;
  r[12] = s.sensorType;
  r[13] = s.eventReadingType;
  r[14] = 0x01; // assertion mask: offset 0
  r[18] = 0x01; // reading mask: offset 0
  id.copy(r, 31);
  return r;
}
