/**
 * @module netascii transfer mode (RFC 1350 §1 and RFC 764's NVT-ASCII): on the wire every LF
 * becomes CR LF and every bare CR becomes CR NUL, and the client converts back. PXE firmware
 * always asks for `octet`; netascii exists for people debugging with `tftp` (tftp-hpa's default
 * mode). The conversion changes the size, so the server converts whole (small) files up front.
 * @pure
 */

/** Largest file served in netascii mode (it is converted in memory). */
export const MAX_NETASCII_SOURCE_BYTES = 16 * 1024 * 1024;

/** Converts local bytes to their netascii wire form (LF → CR LF, CR → CR NUL). */
export function encodeNetascii(bytes: Uint8Array): Buffer {
  let extra = 0;
  for (const b of bytes) if (b === 0x0a || b === 0x0d) extra++;
  const out = Buffer.allocUnsafe(bytes.length + extra);
  let at = 0;
  for (const b of bytes) {
    if (b === 0x0a) {
      out[at++] = 0x0d;
      out[at++] = 0x0a;
    } else if (b === 0x0d) {
      out[at++] = 0x0d;
      out[at++] = 0x00;
    } else {
      out[at++] = b;
    }
  }
  return out;
}
