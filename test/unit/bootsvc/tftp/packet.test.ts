import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTftpDecodeError, TftpDecodeError, TftpEncodeError } from '../../../../bootsvc/tftp/errors.js';
import { encodeNetascii } from '../../../../bootsvc/tftp/netascii.js';
import {
  decodeTftpPacket,
  encodeAckPacket,
  encodeDataHeader,
  encodeDataPacket,
  encodeErrorPacket,
  encodeOackPacket,
  encodeTftpRequest,
  type TftpPacket,
} from '../../../../bootsvc/tftp/packet.js';
import { builtPackets, capturedRequests, hex, request } from './fixtures.js';

const decoded: Record<string, { bytes: Uint8Array; expected: TftpPacket }> = {
  'tftp-hpa RRQ without options': {
    bytes: capturedRequests.tftpHpa,
    expected: { kind: 'rrq', filename: 'pxelinux.0', mode: 'octet', options: [] },
  },
  'curl RRQ with tsize, blksize and timeout': {
    bytes: capturedRequests.curl,
    expected: {
      kind: 'rrq',
      filename: 'ipxe.efi',
      mode: 'octet',
      options: [
        { name: 'tsize', value: '0' },
        { name: 'blksize', value: '1468' },
        { name: 'timeout', value: '6' },
      ],
    },
  },
  'atftp RRQ with windowsize': {
    bytes: capturedRequests.atftp,
    expected: {
      kind: 'rrq',
      filename: 'undionly.kpxe',
      mode: 'octet',
      options: [
        { name: 'tsize', value: '0' },
        { name: 'blksize', value: '1468' },
        { name: 'windowsize', value: '16' },
      ],
    },
  },
  'option names and mode are case-insensitive (lower-cased), values kept verbatim': {
    bytes: request(1, ['Boot\\X64.efi', 'OCTET', 'BlkSize', '1024', 'WindowSize', '08']),
    expected: { kind: 'rrq', filename: 'Boot\\X64.efi', mode: 'octet', options: [{ name: 'blksize', value: '1024' }, { name: 'windowsize', value: '08' }] },
  },
  'a repeated option keeps its first value': {
    bytes: request(1, ['f', 'octet', 'blksize', '1024', 'BLKSIZE', '8']),
    expected: { kind: 'rrq', filename: 'f', mode: 'octet', options: [{ name: 'blksize', value: '1024' }] },
  },
  'trailing NUL padding after the options is tolerated': {
    bytes: Buffer.concat([request(1, ['f', 'octet', 'tsize', '0']), Buffer.alloc(7)]),
    expected: { kind: 'rrq', filename: 'f', mode: 'octet', options: [{ name: 'tsize', value: '0' }] },
  },
  'unknown options are decoded (options.ts ignores them)': {
    bytes: request(1, ['f', 'netascii', 'multicast', '']),
    expected: { kind: 'rrq', filename: 'f', mode: 'netascii', options: [{ name: 'multicast', value: '' }] },
  },
  'WRQ': { bytes: builtPackets.wrq, expected: { kind: 'wrq', filename: 'upload.bin', mode: 'octet', options: [] } },
  'DATA': { bytes: builtPackets.data, expected: { kind: 'data', block: 1, data: Buffer.alloc(512, 0x5a) } },
  'DATA with block 65535 and a short payload': { bytes: builtPackets.lastData, expected: { kind: 'data', block: 65535, data: Buffer.from('tail') } },
  'empty DATA (final block of an exact multiple)': { bytes: hex('00030007'), expected: { kind: 'data', block: 7, data: Buffer.alloc(0) } },
  'ACK': { bytes: builtPackets.ack, expected: { kind: 'ack', block: 1 } },
  'ACK of block 0 (after the OACK, or after a wrap)': { bytes: builtPackets.ackWrapped, expected: { kind: 'ack', block: 0 } },
  'ACK with trailing bytes': { bytes: hex('0004001200000000'), expected: { kind: 'ack', block: 18 } },
  'ERROR': { bytes: builtPackets.error, expected: { kind: 'error', errorCode: 1, message: 'File not found' } },
  'ERROR without the final NUL': { bytes: Buffer.concat([hex('00050000'), Buffer.from('cancelled')]), expected: { kind: 'error', errorCode: 0, message: 'cancelled' } },
  'ERROR with no message at all': { bytes: hex('00050008'), expected: { kind: 'error', errorCode: 8, message: '' } },
  'OACK': {
    bytes: builtPackets.oack,
    expected: { kind: 'oack', options: [{ name: 'blksize', value: '1468' }, { name: 'tsize', value: '1048576' }, { name: 'windowsize', value: '16' }] },
  },
};

for (const [name, c] of Object.entries(decoded)) {
  test(`decode: ${name}`, () => {
    const packet = decodeTftpPacket(c.bytes);
    if (packet.kind === 'data' && c.expected.kind === 'data') {
      assert.equal(packet.block, c.expected.block);
      assert.deepEqual(Buffer.from(packet.data), Buffer.from(c.expected.data));
    } else {
      assert.deepEqual(packet, c.expected);
    }
  });
}

const malformed: Record<string, { bytes: Uint8Array; reason: RegExp; offset: number }> = {
  'empty datagram': { bytes: new Uint8Array(0), reason: /shorter than the 2-byte opcode/, offset: 0 },
  'one byte': { bytes: hex('00'), reason: /shorter than the 2-byte opcode/, offset: 0 },
  'opcode 0': { bytes: hex('0000'), reason: /unknown opcode 0/, offset: 0 },
  'opcode 7': { bytes: hex('00070001'), reason: /unknown opcode 7/, offset: 0 },
  'opcode 256 (byte order)': { bytes: hex('0100'), reason: /unknown opcode 256/, offset: 0 },
  'RRQ without a filename terminator': { bytes: Buffer.from('\0\x01file', 'latin1'), reason: /filename is not NUL-terminated/, offset: 2 },
  'RRQ with an empty filename': { bytes: request(1, ['', 'octet']), reason: /empty filename/, offset: 2 },
  'RRQ without a mode': { bytes: Buffer.from('\0\x01file\0', 'latin1'), reason: /mode is missing/, offset: 7 },
  'RRQ with an unterminated mode': { bytes: Buffer.from('\0\x01file\0octet', 'latin1'), reason: /mode is not NUL-terminated/, offset: 7 },
  'RRQ with an empty mode': { bytes: Buffer.from('\0\x01file\0\0', 'latin1'), reason: /empty mode/, offset: 7 },
  'option without a value': { bytes: Buffer.from('\0\x01f\0octet\0blksize\0', 'latin1'), reason: /option "blksize" has no value/, offset: 18 },
  'option with an unterminated value': { bytes: Buffer.from('\0\x01f\0octet\0blksize\x001468', 'latin1'), reason: /value of option "blksize" is not NUL-terminated/, offset: 18 },
  'option name not terminated': { bytes: Buffer.from('\0\x01f\0octet\0blksize', 'latin1'), reason: /option name is not NUL-terminated/, offset: 10 },
  'empty option name followed by data': { bytes: Buffer.from('\0\x01f\0octet\0\0x\0', 'latin1'), reason: /empty option name/, offset: 10 },
  'DATA shorter than its header': { bytes: hex('000300'), reason: /DATA is 3 bytes, shorter than its 4-byte header/, offset: 3 },
  'ACK shorter than its header': { bytes: hex('0004'), reason: /ACK is 2 bytes/, offset: 2 },
  'ERROR shorter than its header': { bytes: hex('000500'), reason: /ERROR is 3 bytes/, offset: 3 },
  'OACK with a dangling option': { bytes: Buffer.from('\0\x06blksize\x00512\0tsize\0', 'latin1'), reason: /option "tsize" has no value/, offset: 20 },
};

for (const [name, c] of Object.entries(malformed)) {
  test(`malformed: ${name}`, () => {
    assert.throws(
      () => decodeTftpPacket(c.bytes),
      (err: unknown) => {
        assert.ok(err instanceof TftpDecodeError, `threw ${String(err)}`);
        assert.ok(isTftpDecodeError(err));
        assert.match(err.reason, c.reason);
        assert.equal(err.offset, c.offset);
        assert.match(err.message, /^malformed TFTP packet: .* at byte \d+$/);
        return true;
      },
    );
  });
}

test('round trip: requests, OACK, ACK, ERROR, DATA', () => {
  const options = [{ name: 'blksize', value: '8192' }, { name: 'windowsize', value: '16' }];
  assert.deepEqual(decodeTftpPacket(encodeTftpRequest('rrq', 'grub/grub.cfg', 'octet', options)), { kind: 'rrq', filename: 'grub/grub.cfg', mode: 'octet', options });
  assert.deepEqual(decodeTftpPacket(encodeTftpRequest('wrq', 'x')), { kind: 'wrq', filename: 'x', mode: 'octet', options: [] });
  assert.deepEqual(decodeTftpPacket(encodeOackPacket(options)), { kind: 'oack', options });
  assert.deepEqual(decodeTftpPacket(encodeAckPacket(65535)), { kind: 'ack', block: 65535 });
  assert.deepEqual(decodeTftpPacket(encodeErrorPacket(2, 'access violation')), { kind: 'error', errorCode: 2, message: 'access violation' });
  const data = decodeTftpPacket(encodeDataPacket(42, Buffer.from('abc')));
  assert.ok(data.kind === 'data');
  assert.deepEqual([data.block, Buffer.from(data.data).toString()], [42, 'abc']);
  assert.deepEqual(encodeDataHeader(0x1234), hex('00031234'));
});

test('the captured requests re-encode byte for byte', () => {
  for (const bytes of Object.values(capturedRequests)) {
    const p = decodeTftpPacket(bytes);
    assert.ok(p.kind === 'rrq');
    assert.deepEqual(encodeTftpRequest('rrq', p.filename, p.mode, p.options), bytes);
  }
});

test('an ERROR message is truncated to 255 characters', () => {
  const p = decodeTftpPacket(encodeErrorPacket(0, 'x'.repeat(1000)));
  assert.ok(p.kind === 'error');
  assert.equal(p.message.length, 255);
});

const unencodable: Record<string, () => unknown> = {
  'block number above 65535': () => encodeAckPacket(65536),
  'negative block number': () => encodeDataHeader(-1),
  'fractional block number': () => encodeAckPacket(1.5),
  'NUL inside a filename': () => encodeTftpRequest('rrq', 'a\0b'),
  'empty filename': () => encodeTftpRequest('rrq', ''),
  'NUL inside an option value': () => encodeOackPacket([{ name: 'blksize', value: '1\0' }]),
  'empty option name': () => encodeOackPacket([{ name: '', value: '1' }]),
  'non-latin1 character in an error message': () => encodeErrorPacket(0, 'snow ☃'),
};

for (const [name, encode] of Object.entries(unencodable)) {
  test(`encode refuses: ${name}`, () => {
    assert.throws(encode, TftpEncodeError);
  });
}

test('netascii: LF becomes CR LF, CR becomes CR NUL, other bytes unchanged', () => {
  assert.deepEqual(encodeNetascii(Buffer.from('a\nb\rc\r\n')), Buffer.from('a\r\nb\r\0c\r\0\r\n', 'latin1'));
  assert.deepEqual(encodeNetascii(Buffer.alloc(0)), Buffer.alloc(0));
  assert.deepEqual(encodeNetascii(Buffer.from([0, 255, 9])), Buffer.from([0, 255, 9]));
});
