/**
 * @module IPMI session wrappers (IPMI v2.0 §13.6, table 13-8): the IPMI v1.5 wrapper used only
 * for the sessionless Get Channel Authentication Capabilities, and the IPMI v2.0/RMCP+ wrapper —
 * payload type with its encrypted/authenticated bits, session ID, session sequence number,
 * payload length — with the integrity trailer (integrity pad 0xFF… so that AuthType..Next Header
 * is a multiple of 4, pad length, Next Header 0x07, AuthCode = HMAC-SHA1-96 or HMAC-SHA256-128
 * keyed with K1 over AuthType..Next Header, §13.28.4) and AES-CBC-128 payload confidentiality
 * (16-byte IV, then the encrypted payload + confidentiality pad 01 02 03 … + pad length, a
 * multiple of 16 bytes; §13.29). Session fields are little-endian. IVs come in as arguments.
 * @pure
 */
import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import { IpmiDecodeError, requireLength } from './decode-error.js';
import { encodeRmcpHeader, decodeRmcpHeader, RmcpClass, RMCP_HEADER_LENGTH } from './rmcp.js';

/** Authentication type byte: 0x00 = none (v1.5 wrapper), 0x06 = RMCP+ (v2.0 wrapper). */
export const AuthType = { none: 0x00, rmcpPlus: 0x06 } as const;

/** RMCP+ payload types (IPMI v2.0 table 13-16). */
export const PayloadType = {
  ipmi: 0x00,
  sol: 0x01,
  oemExplicit: 0x02,
  openSessionRequest: 0x10,
  openSessionResponse: 0x11,
  rakp1: 0x12,
  rakp2: 0x13,
  rakp3: 0x14,
  rakp4: 0x15,
} as const;

/** Integrity algorithms this client speaks (IPMI v2.0 table 13-18). */
export type IntegrityAlgorithm = 'hmac-sha1-96' | 'hmac-sha256-128';
/** Confidentiality algorithms this client speaks (IPMI v2.0 table 13-19). */
export type ConfidentialityAlgorithm = 'aes-cbc-128';

/** Keys and algorithms of an active session; packets in it are authenticated and encrypted. */
export interface SessionSecurity {
  readonly integrity: IntegrityAlgorithm;
  /** K1 (20 bytes for SHA-1 suites, 32 for SHA-256). */
  readonly integrityKey: Buffer;
  readonly confidentiality: ConfidentialityAlgorithm;
  /** First 16 bytes of K2. */
  readonly confidentialityKey: Buffer;
}

/** AuthCode length of an integrity algorithm: 12 (SHA1-96) or 16 (SHA256-128) bytes. */
export function authCodeLength(algorithm: IntegrityAlgorithm): number {
  return algorithm === 'hmac-sha1-96' ? 12 : 16;
}

/** Computes the truncated AuthCode of `data` (AuthType..Next Header) with K1. */
export function computeAuthCode(algorithm: IntegrityAlgorithm, key: Buffer, data: Buffer): Buffer {
  const hash = algorithm === 'hmac-sha1-96' ? 'sha1' : 'sha256';
  return createHmac(hash, key).update(data).digest().subarray(0, authCodeLength(algorithm));
}

/** Number of 0xFF integrity pad bytes after `lengthThroughPayload` bytes (from AuthType on). */
export function integrityPadLength(lengthThroughPayload: number): number {
  return (4 - ((lengthThroughPayload + 2) % 4)) % 4; // +2: pad length and Next Header bytes
}

/** Encrypts `plaintext` with AES-CBC-128: returns IV ‖ ciphertext of plaintext + pad 1..N + N. */
export function encryptAesCbc128(key: Buffer, iv: Buffer, plaintext: Uint8Array): Buffer {
  if (key.length !== 16 || iv.length !== 16) throw new RangeError('AES-CBC-128 needs a 16-byte key and a 16-byte IV');
  const padLength = (16 - ((plaintext.length + 1) % 16)) % 16;
  const padded = Buffer.alloc(plaintext.length + padLength + 1);
  padded.set(plaintext, 0);
  for (let i = 1; i <= padLength; i++) padded[plaintext.length + i - 1] = i;
  padded[padded.length - 1] = padLength;
  const cipher = createCipheriv('aes-128-cbc', key, iv).setAutoPadding(false);
  return Buffer.concat([iv, cipher.update(padded), cipher.final()]);
}

/** Decrypts IV ‖ ciphertext and strips the confidentiality pad, checking its bytes are 1..N. */
export function decryptAesCbc128(key: Buffer, data: Buffer): Buffer {
  requireLength(data, 32, 'AES-CBC-128 payload');
  if (data.length % 16 !== 0) throw new IpmiDecodeError('malformed', `encrypted payload length ${data.length} is not a multiple of 16`);
  const decipher = createDecipheriv('aes-128-cbc', key, data.subarray(0, 16)).setAutoPadding(false);
  const plain = Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]);
  const padLength = plain[plain.length - 1] ?? 0;
  if (padLength > 15) throw new IpmiDecodeError('padding', `confidentiality pad length ${padLength} > 15`);
  const end = plain.length - 1 - padLength;
  for (let i = 0; i < padLength; i++) {
    if (plain[end + i] !== i + 1) throw new IpmiDecodeError('padding', 'confidentiality pad bytes are not 01 02 03 …');
  }
  return plain.subarray(0, end);
}

/** A session-layer packet (either wrapper), payload decrypted and AuthCode checked. */
export interface SessionPacket {
  /** `v1.5` for AuthType none, `v2.0` for RMCP+. */
  readonly format: 'v1.5' | 'v2.0';
  /** RMCP+ payload type; `ipmi` (0) for the v1.5 wrapper. */
  readonly payloadType: number;
  readonly encrypted: boolean;
  readonly authenticated: boolean;
  readonly sessionId: number;
  readonly sequence: number;
  readonly payload: Buffer;
}

/** What {@link encodeSessionPacket} wraps. */
export interface OutboundPacket {
  readonly payloadType: number;
  readonly sessionId: number;
  readonly sequence: number;
  readonly payload: Uint8Array;
}

/**
 * Encodes a complete RMCP+ datagram. With `security`, the payload is encrypted (needs a fresh
 * 16-byte `iv`) and the packet authenticated; without, it goes in the clear (session setup).
 */
export function encodeSessionPacket(packet: OutboundPacket, security?: SessionSecurity, iv?: Buffer): Buffer {
  let payload: Uint8Array = packet.payload;
  if (security !== undefined) {
    if (iv === undefined) throw new RangeError('an encrypted packet needs an IV');
    payload = encryptAesCbc128(security.confidentialityKey, iv, payload);
  }
  if (payload.length > 0xffff) throw new RangeError(`payload of ${payload.length} bytes does not fit a 16-bit length`);
  const header = Buffer.alloc(12);
  header[0] = AuthType.rmcpPlus;
  header[1] = (packet.payloadType & 0x3f) | (security === undefined ? 0 : 0xc0);
  header.writeUInt32LE(packet.sessionId >>> 0, 2);
  header.writeUInt32LE(packet.sequence >>> 0, 6);
  header.writeUInt16LE(payload.length, 10);
  const rmcp = encodeRmcpHeader(RmcpClass.ipmi);
  if (security === undefined) return Buffer.concat([rmcp, header, payload]);
  const padLength = integrityPadLength(header.length + payload.length);
  const trailer = Buffer.alloc(padLength + 2, 0xff);
  trailer[padLength] = padLength;
  trailer[padLength + 1] = 0x07; // Next Header: always 07h
  const covered = Buffer.concat([header, payload, trailer]);
  return Buffer.concat([rmcp, covered, computeAuthCode(security.integrity, security.integrityKey, covered)]);
}

/** Encodes an IPMI v1.5 datagram with AuthType none (only Get Channel Auth Capabilities uses it). */
export function encodeIpmi15Packet(message: Uint8Array, sessionId = 0, sequence = 0): Buffer {
  const header = Buffer.alloc(10);
  header[0] = AuthType.none;
  header.writeUInt32LE(sequence >>> 0, 1);
  header.writeUInt32LE(sessionId >>> 0, 5);
  header[9] = message.length;
  return Buffer.concat([encodeRmcpHeader(RmcpClass.ipmi), header, message]);
}

/**
 * Decodes an IPMI-class RMCP datagram. Authenticated packets are checked against `security`
 * (wrong AuthCode → `integrity`), encrypted ones decrypted; an authenticated or encrypted packet
 * without `security` is refused. Other RMCP classes, v1.5 AuthTypes other than none and OEM
 * payloads are `unsupported`. Never trusts a length field beyond the datagram.
 */
export function decodeSessionPacket(datagram: Buffer, security?: SessionSecurity): SessionPacket {
  const rmcp = decodeRmcpHeader(datagram);
  if (rmcp.messageClass !== RmcpClass.ipmi || rmcp.isAck) {
    throw new IpmiDecodeError('unsupported', `RMCP class ${rmcp.messageClass}${rmcp.isAck ? ' ACK' : ''} is not an IPMI message`);
  }
  const session = datagram.subarray(RMCP_HEADER_LENGTH);
  requireLength(session, 1, 'session header');
  if (session[0] === AuthType.none) return decodeV15(session);
  if (session[0] !== AuthType.rmcpPlus) {
    throw new IpmiDecodeError('unsupported', `IPMI v1.5 AuthType 0x${(session[0] ?? 0).toString(16)} is not supported`);
  }
  requireLength(session, 12, 'RMCP+ session header');
  const typeByte = session[1] ?? 0;
  const encrypted = (typeByte & 0x80) !== 0;
  const authenticated = (typeByte & 0x40) !== 0;
  const payloadType = typeByte & 0x3f;
  if (payloadType === PayloadType.oemExplicit) throw new IpmiDecodeError('unsupported', 'OEM explicit payloads are not supported');
  const payloadLength = session.readUInt16LE(10);
  requireLength(session, 12 + payloadLength, 'RMCP+ payload');
  const sessionId = session.readUInt32LE(2);
  const sequence = session.readUInt32LE(6);
  if ((authenticated || encrypted) && security === undefined) {
    throw new IpmiDecodeError('integrity', 'authenticated or encrypted packet outside an active session');
  }
  if (authenticated && security !== undefined) checkTrailer(session, 12 + payloadLength, security);
  else if (session.length !== 12 + payloadLength) {
    throw new IpmiDecodeError('malformed', `${session.length - 12 - payloadLength} stray bytes after an unauthenticated payload`);
  }
  let payload = session.subarray(12, 12 + payloadLength);
  if (encrypted && security !== undefined) payload = decryptAesCbc128(security.confidentialityKey, payload);
  return { format: 'v2.0', payloadType, encrypted, authenticated, sessionId, sequence, payload };
}

function decodeV15(session: Buffer): SessionPacket {
  requireLength(session, 10, 'IPMI v1.5 session header');
  const length = session[9] ?? 0;
  requireLength(session, 10 + length, 'IPMI v1.5 message');
  return {
    format: 'v1.5', payloadType: PayloadType.ipmi, encrypted: false, authenticated: false,
    sessionId: session.readUInt32LE(5), sequence: session.readUInt32LE(1), payload: session.subarray(10, 10 + length),
  };
}

function checkTrailer(session: Buffer, payloadEnd: number, security: SessionSecurity): void {
  const codeLength = authCodeLength(security.integrity);
  const coveredEnd = session.length - codeLength;
  const padLength = coveredEnd - 2 - payloadEnd;
  if (padLength < 0) throw new IpmiDecodeError('truncated', 'integrity trailer is cut short');
  const expected = computeAuthCode(security.integrity, security.integrityKey, session.subarray(0, coveredEnd));
  if (!timingSafeEqual(expected, session.subarray(coveredEnd))) throw new IpmiDecodeError('integrity', 'AuthCode does not match');
  if (padLength > 3 || session[coveredEnd - 2] !== padLength || coveredEnd % 4 !== 0) {
    throw new IpmiDecodeError('malformed', 'integrity pad length is inconsistent');
  }
  if (session[coveredEnd - 1] !== 0x07) throw new IpmiDecodeError('malformed', 'Next Header is not 0x07');
  for (let i = payloadEnd; i < payloadEnd + padLength; i++) {
    if (session[i] !== 0xff) throw new IpmiDecodeError('malformed', 'integrity pad bytes are not 0xFF');
  }
}

/** Session ID of an RMCP+ datagram without checking anything else; undefined if not RMCP+. */
export function peekSessionId(datagram: Buffer): number | undefined {
  if (datagram.length < 4 + 12 || datagram[3] !== RmcpClass.ipmi || datagram[4] !== AuthType.rmcpPlus) return undefined;
  return datagram.readUInt32LE(6);
}
