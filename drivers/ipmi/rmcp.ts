/**
 * @module RMCP framing (DMTF ASF 2.0 §3.2.2, IPMI v2.0 §13.1): the 4-byte RMCP header every
 * IPMI-over-LAN datagram starts with, and the ASF presence ping/pong (ASF 2.0 §3.2.4.3/§3.2.4.4,
 * IPMI v2.0 §13.2.3) used to see whether a BMC answers at all before opening a session.
 * ASF fields are big-endian (network order), unlike the little-endian IPMI session fields.
 * @pure
 */
import { IpmiDecodeError, requireLength } from './decode-error.js';

/** RMCP version 1.0 (the only one; IPMI v2.0 §13.1.3). */
export const RMCP_VERSION = 0x06;
/** RMCP sequence number meaning "no RMCP ACK wanted"; IPMI messages always use it. */
export const RMCP_SEQUENCE_NO_ACK = 0xff;
/** Default RMCP port (primary RMCP port 623, "asf-rmcp"). */
export const RMCP_PORT = 623;
/** IANA enterprise number of the ASF (4542), carried in every ASF message. */
export const ASF_IANA = 4542;

/** RMCP message classes (low 5 bits of header byte 3; bit 7 set = RMCP ACK). */
export const RmcpClass = { asf: 0x06, ipmi: 0x07 } as const;

/** ASF message types used here. */
export const AsfMessageType = { presencePing: 0x80, presencePong: 0x40 } as const;

/** Length of the RMCP header. */
export const RMCP_HEADER_LENGTH = 4;

/** A decoded RMCP header. */
export interface RmcpHeader {
  readonly sequence: number;
  /** Class number without the ACK bit. */
  readonly messageClass: number;
  /** True for an RMCP ACK (bit 7 of the class byte); IPMI never asks for them. */
  readonly isAck: boolean;
}

/** Encodes the RMCP header for `messageClass` with sequence 0xFF (no ACK), as IPMI requires. */
export function encodeRmcpHeader(messageClass: number, sequence: number = RMCP_SEQUENCE_NO_ACK): Buffer {
  return Buffer.from([RMCP_VERSION, 0x00, sequence & 0xff, messageClass & 0x1f]);
}

/** Decodes the RMCP header at the start of `datagram`; throws `IpmiDecodeError` if absent or not v1.0. */
export function decodeRmcpHeader(datagram: Buffer): RmcpHeader {
  requireLength(datagram, RMCP_HEADER_LENGTH, 'RMCP header');
  if (datagram[0] !== RMCP_VERSION) {
    throw new IpmiDecodeError('malformed', `RMCP version 0x${(datagram[0] ?? 0).toString(16)} is not 0x06`);
  }
  const classByte = datagram[3] ?? 0;
  return { sequence: datagram[2] ?? 0, messageClass: classByte & 0x1f, isAck: (classByte & 0x80) !== 0 };
}

/** Encodes a complete ASF Presence Ping datagram (RMCP header + ASF message header, no data). */
export function encodeAsfPing(messageTag: number): Buffer {
  const asf = Buffer.alloc(8);
  asf.writeUInt32BE(ASF_IANA, 0);
  asf[4] = AsfMessageType.presencePing;
  asf[5] = messageTag & 0xff; // 0xFF is reserved for unidirectional messages; callers use 0–0xFE
  asf[6] = 0x00;
  asf[7] = 0x00; // data length
  return Buffer.concat([encodeRmcpHeader(RmcpClass.asf), asf]);
}

/** A decoded ASF Presence Pong. */
export interface AsfPong {
  readonly messageTag: number;
  /** IANA number of the responder's OEM (4542 when none). */
  readonly oemIana: number;
  readonly oemDefined: number;
  /** "IPMI supported" bit of Supported Entities (bit 7). */
  readonly supportsIpmi: boolean;
  /** ASF version bits of Supported Entities (low 4 bits; 1 = ASF 1.0). */
  readonly asfVersion: number;
  /** Supported Interactions byte (bit 5: RMCP security extensions; bit 0: DASH). */
  readonly supportedInteractions: number;
}

/** Decodes an ASF Presence Pong datagram; throws `IpmiDecodeError` for anything else. */
export function decodeAsfPong(view: Buffer): AsfPong {
  const header = decodeRmcpHeader(view);
  if (header.messageClass !== RmcpClass.asf) throw new IpmiDecodeError('unsupported', `RMCP class ${header.messageClass} is not ASF`);
  requireLength(view, 12, 'ASF message header');
  if (view.readUInt32BE(4) !== ASF_IANA) throw new IpmiDecodeError('malformed', 'ASF message IANA is not 4542');
  if (view[8] !== AsfMessageType.presencePong) {
    throw new IpmiDecodeError('unsupported', `ASF message type 0x${(view[8] ?? 0).toString(16)} is not a Presence Pong`);
  }
  const dataLength = view[11] ?? 0;
  if (dataLength < 16) throw new IpmiDecodeError('malformed', `Presence Pong data length ${dataLength} < 16`);
  requireLength(view, 12 + dataLength, 'Presence Pong data');
  const entities = view[20] ?? 0;
  return {
    messageTag: view[9] ?? 0,
    oemIana: view.readUInt32BE(12),
    oemDefined: view.readUInt32BE(16),
    supportsIpmi: (entities & 0x80) !== 0,
    asfVersion: entities & 0x0f,
    supportedInteractions: view[21] ?? 0,
  };
}

/** Encodes a Presence Pong (what a BMC answers); used by test fakes and round-trip tests. */
export function encodeAsfPong(pong: AsfPong): Buffer {
  const body = Buffer.alloc(8 + 16);
  body.writeUInt32BE(ASF_IANA, 0);
  body[4] = AsfMessageType.presencePong;
  body[5] = pong.messageTag & 0xff;
  body[7] = 16;
  body.writeUInt32BE(pong.oemIana >>> 0, 8);
  body.writeUInt32BE(pong.oemDefined >>> 0, 12);
  body[16] = (pong.supportsIpmi ? 0x80 : 0) | (pong.asfVersion & 0x0f);
  body[17] = pong.supportedInteractions & 0xff;
  return Buffer.concat([encodeRmcpHeader(RmcpClass.asf), body]);
}
