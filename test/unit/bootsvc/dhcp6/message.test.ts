/** The DHCPv6 message codec: golden decodes of real clients' requests, round trips, and malformed input. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dhcp6DecodeError, isDhcp6DecodeError } from '../../../../bootsvc/dhcp6/errors.js';
import { decodeDhcp6Message, encodeDhcp6Message, MAX_RELAY_DEPTH, unwrapRelays } from '../../../../bootsvc/dhcp6/message.js';
import { bytes, captured6, h16, h32, msg6, opt6, relayedSolicit, relayForw, requests6 } from './fixtures.js';
import { assertGolden6, summarize6 } from './golden.js';

for (const [name, hex] of Object.entries({ ...requests6, relayedSolicit, ...captured6 })) {
  test(`${name} decodes to its golden summary and re-encodes to the same bytes`, () => {
    const m = decodeDhcp6Message(bytes(hex));
    assertGolden6(name, summarize6(m));
    assert.equal(encodeDhcp6Message(m).toString('hex'), hex);
  });
}

test('a relayed message unwraps to the client message and its relays, outermost first', () => {
  const twice = relayForw(1, '::', 'fd00:2::1', relayedSolicit);
  const { client, relays } = unwrapRelays(decodeDhcp6Message(bytes(twice)));
  assert.equal(client.type, 1);
  assert.equal(client.transactionId, 0x4d5e6f);
  assert.deepEqual(relays.map((r) => [r.hopCount, r.peerAddress]), [[1, 'fd00:2::1'], [0, 'fe80::5054:ff:fe12:3456']]);
});

const malformed: Record<string, string> = {
  'empty datagram': '',
  'three bytes': '010203',
  'message type 0': '00000001',
  'option header cut short': msg6(1, 1) + '0001',
  'option running past the end': msg6(1, 1) + h16(1) + h16(10) + '0003',
  'elapsed time of 3 bytes': msg6(1, 1, opt6(8, '000000')),
  'rapid commit with a value': msg6(1, 1, opt6(14, '00')),
  'client id of 2 bytes': msg6(1, 1, opt6(1, '0003')),
  'IA_NA of 11 bytes': msg6(1, 1, opt6(3, '00'.repeat(11))),
  'IAADDR too short inside IA_NA': msg6(3, 1, opt6(3, h32(1) + h32(0) + h32(0) + opt6(5, '00'.repeat(20)))),
  'IA_NA inner option running past it': msg6(3, 1, opt6(3, h32(1) + h32(0) + h32(0) + h16(5) + h16(40))),
  'odd client arch list': msg6(1, 1, opt6(61, '000700')),
  'user class item past the option': msg6(1, 1, opt6(15, h16(9) + '6950'.repeat(2))),
  'vendor class without an enterprise number': msg6(1, 1, opt6(16, '0000')),
  'vendor class item past the option': msg6(1, 1, opt6(16, h32(343) + h16(40) + '50')),
  'option 79 of 2 bytes': msg6(1, 1, opt6(79, '0001')),
  'relay message option in a client message': msg6(1, 1, opt6(9, msg6(1, 2))),
  'relay header cut short': '0c00' + '00'.repeat(20),
  'relay without a relay message option': '0c00' + '00'.repeat(32) + opt6(18, '01'),
  'relay with two relay message options': '0c00' + '00'.repeat(32) + opt6(9, msg6(1, 2)) + opt6(9, msg6(1, 3)),
  'relay whose inner message is malformed': relayForw(0, '::', 'fe80::1', msg6(1, 1, opt6(8, '00'))),
};

for (const [name, hex] of Object.entries(malformed)) {
  test(`${name}: throws Dhcp6DecodeError with an offset inside the datagram`, () => {
    const input = bytes(hex);
    assert.throws(() => decodeDhcp6Message(input), (err: unknown) => {
      assert.ok(isDhcp6DecodeError(err) && err instanceof Dhcp6DecodeError, String(err));
      assert.ok(err.offset >= 0 && err.offset <= input.length, `offset ${err.offset} of ${input.length}`);
      return true;
    });
  });
}

test(`relays nested deeper than ${MAX_RELAY_DEPTH} are refused`, () => {
  let hex = msg6(1, 1);
  for (let i = 0; i < MAX_RELAY_DEPTH; i++) hex = relayForw(i, '::', 'fe80::1', hex);
  assert.ok(decodeDhcp6Message(bytes(hex)).kind === 'relay');
  assert.throws(() => decodeDhcp6Message(bytes(relayForw(9, '::', 'fe80::1', hex))), Dhcp6DecodeError);
});

test('decoded option values do not change when the receive buffer is reused', () => {
  const buf = Buffer.from(requests6.udhcpc6Solicit, 'hex');
  const m = decodeDhcp6Message(buf);
  const before = Buffer.from(m.kind === 'client' ? m.options[0]?.value ?? [] : []).toString('hex');
  buf.fill(0);
  assert.equal(Buffer.from(m.kind === 'client' ? m.options[0]?.value ?? [] : []).toString('hex'), before);
});

test('encoding refuses a bad transaction id, message type or relay address', () => {
  assert.throws(() => encodeDhcp6Message({ kind: 'client', type: 2, transactionId: 0x1000000, options: [] }), /transaction id/);
  assert.throws(() => encodeDhcp6Message({ kind: 'client', type: 12, transactionId: 1, options: [] }), /message type/);
  assert.throws(() => encodeDhcp6Message({ kind: 'relay', type: 13, hopCount: 0, linkAddress: 'x', peerAddress: '::', options: [], message: { kind: 'client', type: 7, transactionId: 1, options: [] } }), /link-address/);
});
