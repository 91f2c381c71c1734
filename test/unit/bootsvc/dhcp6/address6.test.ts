/** IPv6 text, wire and EUI-64 helpers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bigIntToIpv6, canonicalIpv6, encodeIpv6, inPrefix, ipv6ToBigInt, isIpv6, macFromEui64, urlHost } from '../../../../bootsvc/dhcp6/address6.js';

test('addresses are written in RFC 5952 canonical form', () => {
  const cases: [string, string][] = [
    ['FD00:0001:0000:0000:0000:0000:0000:0001', 'fd00:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::', '::'],
    ['::1', '::1'],
    ['fe80::5054:ff:fe12:3456%eth0', 'fe80::5054:ff:fe12:3456'],
  ];
  for (const [input, want] of cases) assert.equal(canonicalIpv6(input), want, input);
});

test('malformed addresses are refused', () => {
  for (const bad of ['', '1::2::3', '12345::', 'fd00:1', '1:2:3:4:5:6:7:8:9', 'g::1', '192.0.2.1', '1:2:3:4:5:6:7::8']) assert.equal(isIpv6(bad), false, bad);
});

test('bigint arithmetic round-trips and prefix membership follows the prefix length', () => {
  const a = encodeIpv6('fd00:1::ffff') ?? new Uint8Array();
  assert.equal(bigIntToIpv6(ipv6ToBigInt(a) + 1n), 'fd00:1::1:0');
  assert.equal(inPrefix('fd00:1::1:0', 'fd00:1::', 64), true);
  assert.equal(inPrefix('fd00:2::1', 'fd00:1::', 64), false);
  assert.equal(inPrefix('fd00:1::1:0', 'fd00:1::', 112), false);
});

test('the MAC inside a modified EUI-64 identifier, and none in a stable-privacy one', () => {
  assert.equal(macFromEui64(encodeIpv6('fe80::5054:ff:fe12:3456') ?? new Uint8Array()), '52:54:00:12:34:56');
  assert.equal(macFromEui64(encodeIpv6('fe80::a8bb:ccff:fedd:eeff') ?? new Uint8Array()), 'aa:bb:cc:dd:ee:ff');
  assert.equal(macFromEui64(encodeIpv6('fe80::1c3a:9f2b:6d4e:8a01') ?? new Uint8Array()), undefined);
});

test('URL hosts bracket IPv6 literals only', () => {
  assert.equal(urlHost('fd00:1::1'), '[fd00:1::1]');
  assert.equal(urlHost('[fd00:1::1]'), '[fd00:1::1]');
  assert.equal(urlHost('192.0.2.1'), '192.0.2.1');
});
