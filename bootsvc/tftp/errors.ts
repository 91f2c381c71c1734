/**
 * @module Errors of the TFTP codec and the wire error codes of RFC 1350 §5 and RFC 2347.
 * {@link TftpDecodeError} is the only thing the decoder throws: listeners catch it per datagram,
 * count it and drop the datagram.
 * @pure
 */

/** Stable codes of TFTP codec errors (`RACKSIDE_ERR_<AREA>_<WHAT>`). */
export const TftpErrorCode = {
  decode: 'RACKSIDE_ERR_TFTP_DECODE',
  encode: 'RACKSIDE_ERR_TFTP_ENCODE',
} as const;

/**
 * Error codes carried by an ERROR packet: 0–7 from RFC 1350 §5 ("Error Codes" appendix),
 * 8 from RFC 2347 (option negotiation refused).
 */
export const TftpWireError = {
  notDefined: 0,
  fileNotFound: 1,
  accessViolation: 2,
  diskFull: 3,
  illegalOperation: 4,
  unknownTransferId: 5,
  fileExists: 6,
  noSuchUser: 7,
  optionRefused: 8,
} as const;

/** One of the numeric wire error codes (any 16-bit value decodes; these are the named ones). */
export type TftpWireErrorCode = (typeof TftpWireError)[keyof typeof TftpWireError];

/**
 * A datagram that is not a well-formed TFTP packet: `reason` says what is wrong and `offset`
 * where (a byte offset into the datagram). The decoder throws nothing else.
 */
export class TftpDecodeError extends Error {
  readonly code = TftpErrorCode.decode;
  /** What is wrong, without the offset (`filename is not NUL-terminated`). */
  readonly reason: string;
  /** Byte offset into the datagram at which the problem was found. */
  readonly offset: number;
  constructor(reason: string, offset: number) {
    super(`malformed TFTP packet: ${reason} at byte ${offset}`);
    this.name = 'TftpDecodeError';
    this.reason = reason;
    this.offset = offset;
  }
}

/** A packet model that cannot be put on the wire (block number out of range, NUL in a string). */
export class TftpEncodeError extends Error {
  readonly code = TftpErrorCode.encode;
  constructor(message: string) {
    super(`cannot encode TFTP packet: ${message}`);
    this.name = 'TftpEncodeError';
  }
}

/** True when `err` is a {@link TftpDecodeError}, checked by its stable code rather than identity. */
export function isTftpDecodeError(err: unknown): err is TftpDecodeError {
  return err instanceof Error && (err as Partial<TftpDecodeError>).code === TftpErrorCode.decode;
}
