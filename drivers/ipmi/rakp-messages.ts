/**
 * @module Session-setup payloads of RMCP+ (IPMI v2.0 §13.17–§13.23): Open Session Request and
 * Response, RAKP Messages 1–4, both directions (the BMC side serves test fakes and round-trip
 * tests), and the RMCP+ status codes (table 13-15) with names. Multi-byte fields little-endian.
 * @pure
 */
import { IpmiDecodeError, requireLength } from './decode-error.js';
import type { CipherSuite } from './rakp.js';

/** RMCP+ and RAKP message status codes (IPMI v2.0 table 13-15). */
export const RMCP_PLUS_STATUS_NAMES: Readonly<Record<number, string>> = {
  0x00: 'no errors',
  0x01: 'insufficient resources to create a session',
  0x02: 'invalid session ID',
  0x03: 'invalid payload type',
  0x04: 'invalid authentication algorithm',
  0x05: 'invalid integrity algorithm',
  0x06: 'no matching authentication payload',
  0x07: 'no matching integrity payload',
  0x08: 'inactive session ID',
  0x09: 'invalid role',
  0x0a: 'unauthorized role or privilege level requested',
  0x0b: 'insufficient resources to create a session at the requested role',
  0x0c: 'invalid name length',
  0x0d: 'unauthorized name',
  0x0e: 'unauthorized GUID',
  0x0f: 'invalid integrity check value',
  0x10: 'invalid confidentiality algorithm',
  0x11: 'no cipher suite match with proposed security algorithms',
  0x12: 'illegal or unrecognized parameter',
};

/** Names an RMCP+ status code: `0x0D (unauthorized name)`. */
export function describeRmcpPlusStatus(code: number): string {
  return `0x${code.toString(16).toUpperCase().padStart(2, '0')} (${RMCP_PLUS_STATUS_NAMES[code] ?? 'reserved status code'})`;
}

/** Statuses of an Open Session Response meaning "these algorithms are not offered here". */
export const ALGORITHM_REFUSED_STATUSES: ReadonlySet<number> = new Set([0x04, 0x05, 0x06, 0x07, 0x10, 0x11]);

/** Open Session Request (remote console → BMC). */
export interface OpenSessionRequest {
  readonly messageTag: number;
  /** Requested maximum privilege (0 = highest matching the proposed algorithms). */
  readonly maxPrivilege: number;
  readonly consoleSessionId: number;
  readonly authenticationAlgorithm: number;
  readonly integrityAlgorithm: number;
  readonly confidentialityAlgorithm: number;
}

/** Open Session Response (BMC → remote console); algorithms undefined in an error response. */
export interface OpenSessionResponse {
  readonly messageTag: number;
  readonly status: number;
  readonly maxPrivilege: number;
  readonly consoleSessionId: number;
  readonly bmcSessionId: number;
  readonly authenticationAlgorithm: number | undefined;
  readonly integrityAlgorithm: number | undefined;
  readonly confidentialityAlgorithm: number | undefined;
}

function le32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0, 0);
  return b;
}

/**
 * Reads a session ID that error answers may leave out: ipmi_sim (and some BMCs) answer a refused
 * request with just the message tag and the status code, so a short error answer reads as ID 0.
 */
function optionalId(payload: Buffer, offset: number): number {
  if (payload.length >= offset + 4) return payload.readUInt32LE(offset);
  if ((payload[1] ?? 0) === 0) throw new IpmiDecodeError('truncated', 'session setup answer without its session ID');
  return 0;
}

function algorithmPayload(type: number, algorithm: number): Buffer {
  return Buffer.from([type, 0, 0, 0x08, algorithm & 0x3f, 0, 0, 0]);
}

function readAlgorithm(payload: Buffer, offset: number, type: number): number {
  if (payload[offset] !== type || payload[offset + 3] !== 0x08) {
    throw new IpmiDecodeError('malformed', `algorithm payload of type ${type} is malformed`);
  }
  return (payload[offset + 4] ?? 0) & 0x3f;
}

/** Encodes an Open Session Request proposing one suite's algorithms. */
export function encodeOpenSessionRequest(request: OpenSessionRequest): Buffer {
  return Buffer.concat([
    Buffer.from([request.messageTag & 0xff, request.maxPrivilege & 0x0f, 0, 0]), le32(request.consoleSessionId),
    algorithmPayload(0x00, request.authenticationAlgorithm), algorithmPayload(0x01, request.integrityAlgorithm),
    algorithmPayload(0x02, request.confidentialityAlgorithm),
  ]);
}

/** Decodes an Open Session Request (BMC side). */
export function decodeOpenSessionRequest(payload: Buffer): OpenSessionRequest {
  requireLength(payload, 32, 'Open Session Request');
  return {
    messageTag: payload[0] ?? 0, maxPrivilege: (payload[1] ?? 0) & 0x0f, consoleSessionId: payload.readUInt32LE(4),
    authenticationAlgorithm: readAlgorithm(payload, 8, 0x00), integrityAlgorithm: readAlgorithm(payload, 16, 0x01),
    confidentialityAlgorithm: readAlgorithm(payload, 24, 0x02),
  };
}

/** Encodes an Open Session Response (BMC side); an error status omits the algorithms. */
export function encodeOpenSessionResponse(response: OpenSessionResponse): Buffer {
  const head = Buffer.concat([Buffer.from([response.messageTag, response.status, response.maxPrivilege, 0]), le32(response.consoleSessionId)]);
  if (response.status !== 0) return head;
  return Buffer.concat([
    head, le32(response.bmcSessionId), algorithmPayload(0x00, response.authenticationAlgorithm ?? 0),
    algorithmPayload(0x01, response.integrityAlgorithm ?? 0), algorithmPayload(0x02, response.confidentialityAlgorithm ?? 0),
  ]);
}

/** Decodes an Open Session Response; an error status needs only the first 8 bytes. */
export function decodeOpenSessionResponse(payload: Buffer): OpenSessionResponse {
  requireLength(payload, 2, 'Open Session Response');
  const status = payload[1] ?? 0;
  const base = { messageTag: payload[0] ?? 0, status, maxPrivilege: (payload[2] ?? 0) & 0x0f, consoleSessionId: optionalId(payload, 4) };
  if (status !== 0) {
    return { ...base, bmcSessionId: 0, authenticationAlgorithm: undefined, integrityAlgorithm: undefined, confidentialityAlgorithm: undefined };
  }
  requireLength(payload, 36, 'Open Session Response');
  return {
    ...base, bmcSessionId: payload.readUInt32LE(8), authenticationAlgorithm: readAlgorithm(payload, 12, 0x00),
    integrityAlgorithm: readAlgorithm(payload, 20, 0x01), confidentialityAlgorithm: readAlgorithm(payload, 28, 0x02),
  };
}

/** RAKP Message 1 (remote console → BMC). */
export interface Rakp1 {
  readonly messageTag: number;
  readonly bmcSessionId: number;
  readonly consoleRandom: Buffer;
  /** Privilege level (bits 3:0) with the name-only-lookup bit 0x10. */
  readonly role: number;
  readonly username: string;
}

/** Encodes RAKP Message 1. */
export function encodeRakp1(message: Rakp1): Buffer {
  const name = Buffer.from(message.username, 'utf8');
  if (message.consoleRandom.length !== 16) throw new RangeError('Rm must be 16 bytes');
  if (name.length > 16) throw new RangeError('user name longer than 16 bytes');
  return Buffer.concat([
    Buffer.from([message.messageTag & 0xff, 0, 0, 0]), le32(message.bmcSessionId), message.consoleRandom,
    Buffer.from([message.role & 0xff, 0, 0, name.length]), name,
  ]);
}

/** Decodes RAKP Message 1 (BMC side). */
export function decodeRakp1(payload: Buffer): Rakp1 {
  requireLength(payload, 28, 'RAKP Message 1');
  const length = payload[27] ?? 0;
  if (length > 16) throw new IpmiDecodeError('malformed', `RAKP 1 user name length ${length} > 16`);
  requireLength(payload, 28 + length, 'RAKP Message 1 user name');
  return {
    messageTag: payload[0] ?? 0, bmcSessionId: payload.readUInt32LE(4), consoleRandom: Buffer.from(payload.subarray(8, 24)),
    role: payload[24] ?? 0, username: payload.subarray(28, 28 + length).toString('utf8'),
  };
}

/** RAKP Message 2 (BMC → remote console); random, GUID and AuthCode empty in an error message. */
export interface Rakp2 {
  readonly messageTag: number;
  readonly status: number;
  readonly consoleSessionId: number;
  readonly bmcRandom: Buffer;
  readonly bmcGuid: Buffer;
  readonly authCode: Buffer;
}

/** Encodes RAKP Message 2 (BMC side). */
export function encodeRakp2(message: Rakp2): Buffer {
  const head = Buffer.concat([Buffer.from([message.messageTag, message.status, 0, 0]), le32(message.consoleSessionId)]);
  return message.status !== 0 ? head : Buffer.concat([head, message.bmcRandom, message.bmcGuid, message.authCode]);
}

/** Decodes RAKP Message 2; a success must carry exactly the suite's AuthCode length. */
export function decodeRakp2(payload: Buffer, suite: CipherSuite): Rakp2 {
  requireLength(payload, 2, 'RAKP Message 2');
  const head = { messageTag: payload[0] ?? 0, status: payload[1] ?? 0, consoleSessionId: optionalId(payload, 4) };
  if (head.status !== 0) return { ...head, bmcRandom: Buffer.alloc(0), bmcGuid: Buffer.alloc(0), authCode: Buffer.alloc(0) };
  if (payload.length !== 40 + suite.authCodeLength) {
    throw new IpmiDecodeError(payload.length < 40 + suite.authCodeLength ? 'truncated' : 'malformed',
      `RAKP Message 2 is ${payload.length} bytes, expected ${40 + suite.authCodeLength} for cipher suite ${suite.id}`);
  }
  return {
    ...head, bmcRandom: Buffer.from(payload.subarray(8, 24)), bmcGuid: Buffer.from(payload.subarray(24, 40)),
    authCode: Buffer.from(payload.subarray(40)),
  };
}

/** RAKP Message 3 (remote console → BMC); a non-zero status tells the BMC RAKP 2 failed. */
export interface Rakp3 {
  readonly messageTag: number;
  readonly status: number;
  readonly bmcSessionId: number;
  readonly authCode: Buffer;
}

/** Encodes RAKP Message 3. */
export function encodeRakp3(message: Rakp3): Buffer {
  return Buffer.concat([Buffer.from([message.messageTag & 0xff, message.status & 0xff, 0, 0]), le32(message.bmcSessionId), message.authCode]);
}

/** Decodes RAKP Message 3 (BMC side). */
export function decodeRakp3(payload: Buffer): Rakp3 {
  requireLength(payload, 8, 'RAKP Message 3');
  return { messageTag: payload[0] ?? 0, status: payload[1] ?? 0, bmcSessionId: payload.readUInt32LE(4), authCode: Buffer.from(payload.subarray(8)) };
}

/** RAKP Message 4 (BMC → remote console). */
export interface Rakp4 {
  readonly messageTag: number;
  readonly status: number;
  readonly consoleSessionId: number;
  /** Integrity check value (12 or 16 bytes); empty in an error message. */
  readonly integrityCheckValue: Buffer;
}

/** Encodes RAKP Message 4 (BMC side). */
export function encodeRakp4(message: Rakp4): Buffer {
  return Buffer.concat([Buffer.from([message.messageTag, message.status, 0, 0]), le32(message.consoleSessionId), message.integrityCheckValue]);
}

/** Decodes RAKP Message 4; a success must carry at least the suite's ICV length (extra bytes ignored). */
export function decodeRakp4(payload: Buffer, suite: CipherSuite): Rakp4 {
  requireLength(payload, 2, 'RAKP Message 4');
  const head = { messageTag: payload[0] ?? 0, status: payload[1] ?? 0, consoleSessionId: optionalId(payload, 4) };
  if (head.status !== 0) return { ...head, integrityCheckValue: Buffer.alloc(0) };
  requireLength(payload, 8 + suite.icvLength, 'RAKP Message 4 integrity check value');
  return { ...head, integrityCheckValue: Buffer.from(payload.subarray(8, 8 + suite.icvLength)) };
}
