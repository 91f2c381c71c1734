/**
 * The DHCP address helpers on the hot path: the hand-written dotted-quad scanner agrees with the
 * rule it replaced (four groups of 1–3 ASCII digits, each ≤ 255) on edge cases and on random
 * strings over its alphabet; hex formatting of MACs and machine IDs; Latin-1 option text.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatHexBytes, formatMacAddress, parseIpv4 } from '../../../../bootsvc/dhcp/address.js';
import { encodeText } from '../../../../bootsvc/dhcp/options.js';

/** The rule as the old regular expression had it. */
function byRegex(address: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (m === null) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((v, o) => v * 256 + o, 0);
}

test('parseIpv4: valid, invalid and edge spellings', () => {
  const cases: [string, number | undefined][] = [
    ['0.0.0.0', 0], ['255.255.255.255', 0xffffffff], ['192.0.2.1', 0xc0000201], ['10.88.0.1', 0x0a580001],
    ['001.002.003.004', 0x01020304], ['1.2.3', undefined], ['1.2.3.4.5', undefined], ['256.0.0.1', undefined],
    ['1.2.3.256', undefined], ['1..2.3', undefined], ['.1.2.3', undefined], ['1.2.3.', undefined], ['1.2.3.4 ', undefined],
    [' 1.2.3.4', undefined], ['1.2.3.0004', undefined], ['', undefined], ['a.b.c.d', undefined], ['1.2.3.٤', undefined], ['::1', undefined],
  ];
  for (const [text, expected] of cases) assert.equal(parseIpv4(text), expected, JSON.stringify(text));
});

test('parseIpv4 agrees with the regular expression it replaced on 20,000 random strings', () => {
  const alphabet = '0123456789.9.2551x';
  let state = 12345;
  const random = (n: number): number => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state % n;
  };
  for (let i = 0; i < 20_000; i++) {
    const length = 1 + random(17);
    let s = '';
    for (let j = 0; j < length; j++) s += alphabet[random(alphabet.length)] ?? '';
    assert.equal(parseIpv4(s), byRegex(s), JSON.stringify(s));
  }
});

test('hex formatting of MAC addresses and bytes', () => {
  assert.equal(formatMacAddress(Uint8Array.of(0x52, 0x54, 0x00, 0x0a, 0xff, 0x01)), '52:54:00:0a:ff:01');
  assert.equal(formatHexBytes(Uint8Array.of()), '');
  assert.equal(formatHexBytes(Uint8Array.of(0, 15, 16, 255)), '000f10ff');
  assert.equal(formatHexBytes(Uint8Array.of(1, 2), '-'), '01-02');
});

test('encodeText writes the low byte of each character (Latin-1)', () => {
  assert.deepEqual([...encodeText('PXEClient')], [0x50, 0x58, 0x45, 0x43, 0x6c, 0x69, 0x65, 0x6e, 0x74]);
  assert.deepEqual([...encodeText('é\u0141')], [0xe9, 0x41]);
  assert.equal(encodeText('').length, 0);
});
