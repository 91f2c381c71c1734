/**
 * @module Errors of the DHCPv6 codec: a malformed datagram ({@link Dhcp6DecodeError}, with a
 * reason and a byte offset) and a message model that cannot be encoded
 * ({@link Dhcp6EncodeError}). The server catches the first per datagram, counts it as
 * `malformed` and drops the datagram; the second is a programming or configuration error.
 * @pure
 */

/** Stable codes of DHCPv6 codec errors (`RACKSIDE_ERR_<AREA>_<WHAT>`). */
export const Dhcp6ErrorCode = {
  decode: 'RACKSIDE_ERR_DHCP6_DECODE',
  encode: 'RACKSIDE_ERR_DHCP6_ENCODE',
} as const;

/**
 * A datagram (or an option value) that is not well-formed DHCPv6 (RFC 8415): `reason` says
 * what is wrong, `offset` where (a byte offset into the buffer being decoded). The decoders
 * of this folder throw nothing else on any input.
 */
export class Dhcp6DecodeError extends Error {
  readonly code = Dhcp6ErrorCode.decode;
  readonly reason: string;
  readonly offset: number;
  constructor(reason: string, offset: number) {
    super(`malformed DHCPv6 message: ${reason} at byte ${offset}`);
    this.name = 'Dhcp6DecodeError';
    this.reason = reason;
    this.offset = offset;
  }
}

/** A message model that cannot be put on the wire (value too long, bad address). */
export class Dhcp6EncodeError extends Error {
  readonly code = Dhcp6ErrorCode.encode;
  constructor(message: string) {
    super(`cannot encode DHCPv6 message: ${message}`);
    this.name = 'Dhcp6EncodeError';
  }
}

/** True when `err` is a {@link Dhcp6DecodeError}, checked by its stable code. */
export function isDhcp6DecodeError(err: unknown): err is Dhcp6DecodeError {
  return err instanceof Error && (err as Partial<Dhcp6DecodeError>).code === Dhcp6ErrorCode.decode;
}
