/**
 * @module Errors of the DHCP codec: a malformed datagram ({@link DhcpDecodeError}, always with a
 * reason and a byte offset) and a reply that cannot be put on the wire ({@link DhcpEncodeError}).
 * Listeners catch the first per packet, count it and carry on; the second is
 * a configuration or programming error (a boot file name longer than the `file` field allows
 * is not one: the responder moves it to option 67).
 * @pure
 */

/** Stable codes of DHCP codec errors (`RACKSIDE_ERR_<AREA>_<WHAT>`). */
export const DhcpErrorCode = {
  decode: 'RACKSIDE_ERR_DHCP_DECODE',
  encode: 'RACKSIDE_ERR_DHCP_ENCODE',
} as const;

/**
 * A datagram that is not a well-formed BOOTP/DHCP message: `reason` says what is wrong and
 * `offset` where (a byte offset into the datagram). The decoder throws nothing else.
 */
export class DhcpDecodeError extends Error {
  readonly code = DhcpErrorCode.decode;
  /** What is wrong, without the offset (`option length runs past the end`). */
  readonly reason: string;
  /** Byte offset into the datagram at which the problem was found. */
  readonly offset: number;
  constructor(reason: string, offset: number) {
    super(`malformed DHCP packet: ${reason} at byte ${offset}`);
    this.name = 'DhcpDecodeError';
    this.reason = reason;
    this.offset = offset;
  }
}

/** A packet model that cannot be encoded (field too long, bad address, options do not fit). */
export class DhcpEncodeError extends Error {
  readonly code = DhcpErrorCode.encode;
  constructor(message: string) {
    super(`cannot encode DHCP packet: ${message}`);
    this.name = 'DhcpEncodeError';
  }
}

/** True when `err` is a {@link DhcpDecodeError}, checked by its stable code rather than identity. */
export function isDhcpDecodeError(err: unknown): err is DhcpDecodeError {
  return err instanceof Error && (err as Partial<DhcpDecodeError>).code === DhcpErrorCode.decode;
}
