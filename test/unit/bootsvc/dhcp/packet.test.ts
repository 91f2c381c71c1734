import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DhcpDecodeError, DhcpEncodeError, isDhcpDecodeError } from '../../../../bootsvc/dhcp/errors.js';
import { DhcpOption } from '../../../../bootsvc/dhcp/options.js';
import {
  decodeDhcpPacket,
  encodeDhcpPacket,
  maxReplyBytes,
  MIN_PACKET_BYTES,
  type DhcpPacket,
} from '../../../../bootsvc/dhcp/packet.js';
import { getBootFileName, getHostName, getMessageType } from '../../../../bootsvc/dhcp/option-values.js';
import { ascii, header, hex, opt, overloadedAck, requestFixtures } from './fixtures.js';
import { assertGolden, summarizePacket, toHex } from './golden.js';

for (const [name, bytes] of Object.entries(requestFixtures)) {
  test(`golden decode: ${name}`, () => {
    assertGolden(name, summarizePacket(decodeDhcpPacket(bytes)));
  });

  test(`round trip: ${name}`, () => {
    const first = decodeDhcpPacket(bytes);
    const encoded = encodeDhcpPacket(first, { maxPacketBytes: 1472 });
    assert.ok(encoded.length >= MIN_PACKET_BYTES);
    assert.deepEqual(decodeDhcpPacket(encoded), first);
  });
}

test('golden decode: option overload into file and sname, option 67 concatenated across areas', () => {
  const p = decodeDhcpPacket(overloadedAck);
  assertGolden('overloadedAck', summarizePacket(p));
  assert.equal(getBootFileName(p.options), 'boot/ipxe');
  assert.equal(getHostName(p.options), 'host');
  assert.equal(p.file, '');
  assert.equal(p.sname, '');
  assert.equal(p.options.has(DhcpOption.overload), false);
});

test('split option instances in the options field are concatenated in order (RFC 3396)', () => {
  const part1 = 'ab'.repeat(255);
  const part2 = 'cd'.repeat(45);
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + opt(53, '01') + opt(43, part1) + opt(43, part2) + 'ff'));
  assert.equal(toHex(p.options.get(43) ?? new Uint8Array()), part1 + part2);
});

test('pads, and bytes after the end option, are ignored', () => {
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + '0000' + opt(53, '01') + '00ff' + '3501ff'));
  assert.deepEqual([...p.options.keys()], [53]);
  assert.equal(getMessageType(p.options), 1);
});

test('a missing end option is tolerated', () => {
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + opt(53, '03')));
  assert.equal(getMessageType(p.options), 3);
});

const base = (rest: string): Uint8Array => hex(header({ xid: '00000001', mac: '525400000001' }) + rest);
const malformed: Record<string, { bytes: Uint8Array; reason: RegExp; offset: number }> = {
  'empty datagram': { bytes: new Uint8Array(0), reason: /truncated header/, offset: 0 },
  'header one byte short': { bytes: new Uint8Array(235).fill(1), reason: /truncated header/, offset: 235 },
  'bad op': { bytes: hex('03' + header({ xid: '00000001', mac: '52' }).slice(2)), reason: /bad op 3/, offset: 0 },
  'hlen 17': { bytes: hex('010111' + header({ xid: '00000001', mac: '52' }).slice(6)), reason: /bad hlen 17/, offset: 2 },
  'no magic cookie': { bytes: base('').subarray(0, 236), reason: /truncated magic cookie/, offset: 236 },
  'wrong magic cookie': { bytes: hex(header({ xid: '00000001', mac: '52' }).slice(0, -8) + '63825364ff'), reason: /bad magic cookie/, offset: 236 },
  'option without length byte': { bytes: base('35'), reason: /option 53 has no length byte/, offset: 240 },
  'option value past the end': { bytes: base('3502' + '01'), reason: /option 53 length 2 runs past/, offset: 241 },
  'message type of length 2': { bytes: base(opt(53, '0101') + 'ff'), reason: /option 53 has length 2, expected 1/, offset: 240 },
  'server identifier of length 3': { bytes: base(opt(53, '03') + opt(54, '0a0000') + 'ff'), reason: /option 54 has length 3/, offset: 243 },
  'client arch of odd length': { bytes: base(opt(53, '01') + opt(93, '000700') + 'ff'), reason: /option 93 has odd or zero length 3/, offset: 243 },
  'overload value 4': { bytes: base(opt(52, '04') + 'ff'), reason: /bad option overload value 4/, offset: 242 },
  'overload twice': { bytes: base(opt(52, '01') + opt(52, '01') + 'ff'), reason: /option 52 must appear once/, offset: 240 },
  'overloaded file with a bad option': {
    bytes: hex(header({ xid: '00000001', mac: '52', file: '00'.repeat(126) + '0f09' }) + opt(53, '01') + opt(52, '01') + 'ff'),
    reason: /option 15 length 9 runs past/,
    offset: 235,
  },
};
for (const [name, c] of Object.entries(malformed)) {
  test(`decode rejects: ${name}`, () => {
    assert.throws(
      () => decodeDhcpPacket(c.bytes),
      (err: unknown) => isDhcpDecodeError(err) && err instanceof DhcpDecodeError && c.reason.test(err.reason) && err.offset === c.offset,
    );
  });
}

/** A small reply model for encoder tests. */
function reply(options: [number, Uint8Array][], fields: Partial<DhcpPacket> = {}): DhcpPacket {
  return {
    op: 2, htype: 1, hlen: 6, hops: 0, xid: 0x01020304, secs: 0, flags: 0x8000,
    ciaddr: '0.0.0.0', yiaddr: '10.20.0.100', siaddr: '10.20.0.1', giaddr: '0.0.0.0',
    chaddr: hex('52540012345600000000000000000000'), sname: '', file: 'ipxe.efi',
    options: new Map(options), ...fields,
  };
}

test('encode writes the header, cookie, options in stable order, end, and pads to 300 bytes', () => {
  const out = encodeDhcpPacket(reply([[82, hex('0101aa')], [1, hex('ffffff00')], [54, hex('0a140001')], [53, hex('02')]]));
  assert.equal(out.length, 300);
  assert.equal(toHex(out.subarray(0, 12)), '0201060001020304' + '0000' + '8000');
  assert.equal(toHex(out.subarray(16, 24)), '0a1400640a140001');
  assert.equal(out.subarray(108, 116).toString('latin1'), 'ipxe.efi');
  assert.equal(toHex(out.subarray(236, 240)), '63825363');
  // 53 first, 54 next, ascending codes, 82 last (RFC 3046 §2.2), then end and zero padding.
  assert.equal(toHex(out.subarray(240, 261)), '350102' + '36040a140001' + '0104ffffff00' + '52030101aa' + 'ff');
  assert.ok(out.subarray(261).every((b) => b === 0));
});

test('encode splits an option longer than 255 bytes into consecutive instances', () => {
  const long = new Uint8Array(300).fill(7);
  const out = encodeDhcpPacket(reply([[53, hex('05')], [43, long]]), { maxPacketBytes: 1472 });
  assert.equal(out[243], 43);
  assert.equal(out[244], 255);
  assert.equal(out[243 + 257], 43);
  assert.equal(out[243 + 258], 45);
  assert.deepEqual(decodeDhcpPacket(out).options.get(43), long);
});

test('encode overloads file and sname when the options do not fit the size limit', () => {
  const options: [number, Uint8Array][] = [[53, hex('05')]];
  for (let code = 200; code < 220; code++) options.push([code, new Uint8Array(8).fill(code)]);
  const model = reply(options, { file: '' });
  const out = encodeDhcpPacket(model, { maxPacketBytes: 300 });
  assert.equal(out.length, 300);
  assert.equal(toHex(out.subarray(240, 243)), '340103');
  assert.equal(out[108 + 120], 0xff, 'file area ends with the end option');
  const back = decodeDhcpPacket(out);
  assert.deepEqual(back.options, model.options);
  assert.equal(back.file, '');
});

test('encode keeps a non-empty file field and overflows only into sname', () => {
  const options: [number, Uint8Array][] = [[53, hex('05')]];
  for (let code = 200; code < 212; code++) options.push([code, new Uint8Array(4).fill(code)]);
  const out = encodeDhcpPacket(reply(options), { maxPacketBytes: 300 });
  assert.equal(toHex(out.subarray(240, 243)), '340102');
  const back = decodeDhcpPacket(out);
  assert.equal(back.file, 'ipxe.efi');
  assert.deepEqual(back.options, new Map(options));
});

test('encode overflowing only into file leaves sname untouched', () => {
  const options: [number, Uint8Array][] = [[53, hex('05')]];
  for (let code = 200; code < 212; code++) options.push([code, new Uint8Array(4).fill(code)]);
  const out = encodeDhcpPacket(reply(options, { file: '' }), { maxPacketBytes: 300 });
  assert.equal(toHex(out.subarray(240, 243)), '340101');
  assert.ok(out.subarray(44, 108).every((b) => b === 0), 'sname stays zero');
  const back = decodeDhcpPacket(out);
  assert.equal(back.sname, '');
  assert.deepEqual(back.options, new Map(options));
});

const unencodable: Record<string, DhcpPacket> = {
  'options that fit nowhere': reply([[53, hex('05')], [200, new Uint8Array(255)], [201, new Uint8Array(255)]]),
  'a file name of 129 bytes': reply([[53, hex('05')]], { file: 'x'.repeat(129) }),
  'an sname of 65 bytes': reply([[53, hex('05')]], { sname: 'x'.repeat(65) }),
  'a malformed address': reply([[53, hex('05')]], { yiaddr: '10.20.0.300' }),
  'option code 0': reply([[0, hex('05')]]),
  'option code 255': reply([[255, hex('05')]]),
  'option 52 set directly': reply([[52, hex('01')]]),
  'a 17-byte chaddr': reply([[53, hex('05')]], { chaddr: new Uint8Array(17) }),
};
test('encode rejects a size limit that is not a number', () => {
  assert.throws(() => encodeDhcpPacket(reply([[53, hex('05')]]), { maxPacketBytes: Number.NaN }), DhcpEncodeError);
});
for (const [name, model] of Object.entries(unencodable)) {
  test(`encode rejects ${name}`, () => {
    assert.throws(() => encodeDhcpPacket(model), DhcpEncodeError);
  });
}

const sizes: Record<string, { option57?: string; expected: number }> = {
  'no option 57: the RFC 2131 minimum': { expected: 548 },
  'iPXE 1472 (counts the whole datagram)': { option57: '05c0', expected: 1444 },
  'below 576 is raised': { option57: '0100', expected: 548 },
  'jumbo is capped at an Ethernet MTU': { option57: '2328', expected: 1472 },
};
for (const [name, c] of Object.entries(sizes)) {
  test(`maxReplyBytes: ${name}`, () => {
    const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400000001' }) + opt(53, '01') + (c.option57 === undefined ? '' : opt(57, c.option57)) + 'ff'));
    assert.equal(maxReplyBytes(p), c.expected);
  });
}

test('text fields are read up to the first NUL', () => {
  const p = decodeDhcpPacket(hex(header({ xid: '00000001', mac: '52', sname: ascii('srv') + '00' + ascii('junk'), file: ascii('pxelinux.0') }) + opt(53, '01') + 'ff'));
  assert.equal(p.sname, 'srv');
  assert.equal(p.file, 'pxelinux.0');
});
