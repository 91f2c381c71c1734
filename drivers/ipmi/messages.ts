/**
 * @module IPMI LAN message framing (IPMI v2.0 §13.8, "IPMI LAN Message Format"): responder
 * address, NetFn/LUN, checksum 1, requester address, rqSeq/LUN, command, data, checksum 2 — and
 * the generic completion codes (§5.2, table 5-2) with names for error messages.
 * Requests go from the remote console software ID 0x81 to the BMC at slave address 0x20.
 * @pure
 */
import { IpmiDecodeError, requireLength } from './decode-error.js';

/** Network function codes of requests (responses use NetFn + 1; IPMI v2.0 table 5-1). */
export const NetFn = {
  chassis: 0x00,
  sensorEvent: 0x04,
  app: 0x06,
  storage: 0x0a,
  transport: 0x0c,
} as const;

/** The BMC's IPMB slave address (responder address of every request here). */
export const BMC_SLAVE_ADDRESS = 0x20;
/** Software ID of a remote console (requester address; IPMI v2.0 §5.5, ipmitool uses it too). */
export const REMOTE_CONSOLE_SOFTWARE_ID = 0x81;
/** rqSeq is 6 bits wide. */
export const RQ_SEQ_MODULO = 64;

/** Generic completion codes (IPMI v2.0 table 5-2), for names in errors. */
export const COMPLETION_CODE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'command completed normally',
  0xc0: 'node busy',
  0xc1: 'invalid command',
  0xc2: 'command invalid for given LUN',
  0xc3: 'timeout while processing command',
  0xc4: 'out of space',
  0xc5: 'reservation canceled or invalid reservation ID',
  0xc6: 'request data truncated',
  0xc7: 'request data length invalid',
  0xc8: 'request data field length limit exceeded',
  0xc9: 'parameter out of range',
  0xca: 'cannot return number of requested data bytes',
  0xcb: 'requested sensor, data, or record not present',
  0xcc: 'invalid data field in request',
  0xcd: 'command illegal for specified sensor or record type',
  0xce: 'command response could not be provided',
  0xcf: 'cannot execute duplicated request',
  0xd0: 'SDR repository in update mode',
  0xd1: 'device in firmware update mode',
  0xd2: 'BMC initialization or initialization agent in progress',
  0xd3: 'destination unavailable',
  0xd4: 'insufficient privilege level',
  0xd5: 'command not supported in present state',
  0xd6: 'command sub-function disabled or unavailable',
  0xff: 'unspecified error',
};

/**
 * Completion codes that mean "try again later" (→ BmcError BUSY): node busy, timeout while
 * processing, command response could not be provided, SDR repository in update mode,
 * firmware update mode, BMC initialization in progress.
 */
export const BUSY_COMPLETION_CODES: ReadonlySet<number> = new Set([0xc0, 0xc3, 0xce, 0xd0, 0xd1, 0xd2]);

/** Names a completion code: `0xC1 (invalid command)`; device-specific codes say so. */
export function describeCompletionCode(code: number): string {
  const hex = `0x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  const name = COMPLETION_CODE_NAMES[code] ?? (code >= 0x01 && code <= 0x7e ? 'device-specific (OEM) code' : 'command-specific code');
  return `${hex} (${name})`;
}

/** Two's-complement checksum: the byte that makes the 8-bit sum of `bytes` + it zero. */
export function ipmiChecksum(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum = (sum + (bytes[i] ?? 0)) & 0xff;
  return (0x100 - sum) & 0xff;
}

/** An IPMI request as the remote console sends it. */
export interface IpmiRequest {
  readonly netFn: number;
  readonly command: number;
  readonly data: Uint8Array;
  /** Requester sequence number, 0–63, echoed by the response. */
  readonly rqSeq: number;
  readonly rsAddr?: number;
  readonly rsLun?: number;
  readonly rqAddr?: number;
  readonly rqLun?: number;
}

/** An IPMI response as decoded from the wire. */
export interface IpmiResponse {
  readonly rqAddr: number;
  /** Response NetFn (odd: request NetFn + 1). */
  readonly netFn: number;
  readonly rqLun: number;
  readonly rsAddr: number;
  readonly rqSeq: number;
  readonly rsLun: number;
  readonly command: number;
  readonly completionCode: number;
  /** Response data after the completion code. */
  readonly data: Buffer;
}

/** Encodes a request message (the payload of an IPMI session packet). */
export function encodeIpmiRequest(request: IpmiRequest): Buffer {
  const message = Buffer.alloc(7 + request.data.length);
  message[0] = request.rsAddr ?? BMC_SLAVE_ADDRESS;
  message[1] = ((request.netFn & 0x3f) << 2) | ((request.rsLun ?? 0) & 0x03);
  message[2] = ipmiChecksum(message, 0, 2);
  message[3] = request.rqAddr ?? REMOTE_CONSOLE_SOFTWARE_ID;
  message[4] = ((request.rqSeq & 0x3f) << 2) | ((request.rqLun ?? 0) & 0x03);
  message[5] = request.command & 0xff;
  message.set(request.data, 6);
  message[message.length - 1] = ipmiChecksum(message, 3, message.length - 1);
  return message;
}

/** Decodes a request message (BMC side; used by test fakes). */
export function decodeIpmiRequest(message: Buffer): Required<IpmiRequest> & { readonly data: Buffer } {
  requireLength(message, 7, 'IPMI request');
  verifyChecksums(message);
  return {
    rsAddr: message[0] ?? 0, netFn: (message[1] ?? 0) >> 2, rsLun: (message[1] ?? 0) & 0x03,
    rqAddr: message[3] ?? 0, rqSeq: (message[4] ?? 0) >> 2, rqLun: (message[4] ?? 0) & 0x03,
    command: message[5] ?? 0, data: message.subarray(6, message.length - 1),
  };
}

/** Encodes a response message (BMC side; used by test fakes and round-trip tests). */
export function encodeIpmiResponse(response: Omit<IpmiResponse, 'data'> & { readonly data: Uint8Array }): Buffer {
  const message = Buffer.alloc(8 + response.data.length);
  message[0] = response.rqAddr;
  message[1] = ((response.netFn & 0x3f) << 2) | (response.rqLun & 0x03);
  message[2] = ipmiChecksum(message, 0, 2);
  message[3] = response.rsAddr;
  message[4] = ((response.rqSeq & 0x3f) << 2) | (response.rsLun & 0x03);
  message[5] = response.command;
  message[6] = response.completionCode;
  message.set(response.data, 7);
  message[message.length - 1] = ipmiChecksum(message, 3, message.length - 1);
  return message;
}

/** Decodes a response message; checks both checksums and that the NetFn is a response (odd). */
export function decodeIpmiResponse(message: Buffer): IpmiResponse {
  requireLength(message, 8, 'IPMI response');
  verifyChecksums(message);
  const netFn = (message[1] ?? 0) >> 2;
  if ((netFn & 1) === 0) throw new IpmiDecodeError('malformed', `NetFn 0x${netFn.toString(16)} is a request, not a response`);
  return {
    rqAddr: message[0] ?? 0, netFn, rqLun: (message[1] ?? 0) & 0x03,
    rsAddr: message[3] ?? 0, rqSeq: (message[4] ?? 0) >> 2, rsLun: (message[4] ?? 0) & 0x03,
    command: message[5] ?? 0, completionCode: message[6] ?? 0, data: message.subarray(7, message.length - 1),
  };
}

function verifyChecksums(message: Buffer): void {
  if (ipmiChecksum(message, 0, 2) !== message[2]) throw new IpmiDecodeError('checksum', 'IPMI message checksum 1 is wrong');
  if (ipmiChecksum(message, 3, message.length - 1) !== message[message.length - 1]) {
    throw new IpmiDecodeError('checksum', 'IPMI message checksum 2 is wrong');
  }
}
