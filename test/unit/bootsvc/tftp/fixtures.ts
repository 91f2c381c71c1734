/**
 * Real TFTP datagrams for codec tests and the fuzzer's seeds. The three requests were captured
 * on this machine from Debian 12's clients (a UDP socket printing what arrived); the rest are
 * built byte by byte from RFC 1350 / 2347 layouts.
 */

/** Bytes from a hex string (whitespace ignored). */
export function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

/** Bytes of NUL-separated ASCII fields after a 2-byte opcode (`fields` joined with NULs, plus a final NUL). */
export function request(opcode: number, fields: readonly string[]): Buffer {
  return Buffer.concat([Buffer.from([0, opcode]), Buffer.from(fields.map((f) => `${f}\0`).join(''), 'latin1')]);
}

export const capturedRequests = {
  /** `tftp 127.0.0.1 PORT -m binary -c get pxelinux.0` (tftp-hpa 5.2): no options. */
  tftpHpa: hex('00017078656c696e75782e30006f6374657400'),
  /** `curl tftp://127.0.0.1:PORT/ipxe.efi --tftp-blksize 1468` (curl 7.88.1): tsize, blksize, timeout. */
  curl: hex('0001697078652e656669006f63746574007473697a65003000626c6b73697a6500313436380074696d656f7574003600'),
  /** `atftp --option "blksize 1468" --option "windowsize 16" --option "tsize 0"` (atftp 0.8.0). */
  atftp: hex('0001756e64696f6e6c792e6b707865006f63746574007473697a65003000626c6b73697a6500313436380077696e646f7773697a6500313600'),
};

export const builtPackets = {
  oack: request(6, ['blksize', '1468', 'tsize', '1048576', 'windowsize', '16']),
  data: Buffer.concat([hex('00030001'), Buffer.alloc(512, 0x5a)]),
  lastData: Buffer.concat([hex('0003ffff'), Buffer.from('tail')]),
  ack: hex('00040001'),
  ackWrapped: hex('00040000'),
  error: Buffer.concat([hex('00050001'), Buffer.from('File not found\0')]),
  wrq: request(2, ['upload.bin', 'octet']),
};

/** Every real or built datagram, for the fuzzer's mutations. */
export const seedPackets: readonly Buffer[] = [...Object.values(capturedRequests), ...Object.values(builtPackets)];
