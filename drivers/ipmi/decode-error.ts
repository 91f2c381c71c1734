/**
 * @module The one error type the IPMI codecs throw: a datagram or message that cannot be
 * decoded (too short, bad checksum, wrong AuthCode, bad padding, unknown format). The session
 * layer catches it, counts the datagram by {@link IpmiDecodeError.reason} and drops it; the
 * driver turns what reaches a caller into a `BmcError` (PROTOCOL or AUTH).
 * @pure
 */

/** Why a datagram or message was refused; the session layer counts drops under these names. */
export type IpmiDecodeReason =
  | 'truncated' // shorter than its headers or length fields say
  | 'malformed' // a field holds a value the format forbids
  | 'checksum' // IPMI message checksum 1 or 2 wrong (IPMI v2.0 §13.8)
  | 'integrity' // AuthCode (HMAC) mismatch (IPMI v2.0 §13.28)
  | 'padding' // confidentiality pad wrong after decryption (IPMI v2.0 §13.29)
  | 'unsupported'; // a well-formed packet of a kind this client never uses

/** A datagram or message that cannot be decoded; never carries key material. */
export class IpmiDecodeError extends Error {
  readonly reason: IpmiDecodeReason;
  constructor(reason: IpmiDecodeReason, message: string) {
    super(message);
    this.name = 'IpmiDecodeError';
    this.reason = reason;
  }
}

/** Throws a `truncated` {@link IpmiDecodeError} unless `buffer` holds at least `length` bytes. */
export function requireLength(buffer: Uint8Array, length: number, what: string): void {
  if (buffer.length < length) {
    throw new IpmiDecodeError('truncated', `${what}: ${buffer.length} bytes, need at least ${length}`);
  }
}
