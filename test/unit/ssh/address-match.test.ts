/**
 * @module Table tests of `from=` pattern matching (OpenSSH match_host_and_ip semantics): CIDR
 * blocks for IPv4 and IPv6, wildcards, negation, IPv4-mapped sources, and malformed lists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkPatternList, matchAddressPatterns, matchWildcard, normalizeAddress, parseCidrBlock, parseIpAddress,
} from '../../../agent/ssh/address-match.js';

const cases: Record<string, { patterns: string; address: string; allowed: boolean }> = {
  'exact IPv4': { patterns: '192.0.2.7', address: '192.0.2.7', allowed: true },
  'other IPv4': { patterns: '192.0.2.7', address: '192.0.2.8', allowed: false },
  'CIDR /24 inside': { patterns: '192.0.2.0/24', address: '192.0.2.200', allowed: true },
  'CIDR /24 outside': { patterns: '192.0.2.0/24', address: '192.0.3.1', allowed: false },
  'CIDR /0 matches every IPv4': { patterns: '0.0.0.0/0', address: '203.0.113.1', allowed: true },
  'CIDR /0 does not match IPv6': { patterns: '0.0.0.0/0', address: '2001:db8::1', allowed: false },
  'wildcard star': { patterns: '10.1.*', address: '10.1.200.3', allowed: true },
  'wildcard question mark': { patterns: '10.0.0.?', address: '10.0.0.7', allowed: true },
  'wildcard question mark is one character': { patterns: '10.0.0.?', address: '10.0.0.17', allowed: false },
  'negation denies even when another entry matches': { patterns: '10.0.0.0/8,!10.0.0.5', address: '10.0.0.5', allowed: false },
  'negation order does not matter': { patterns: '!10.0.0.5,10.0.0.0/8', address: '10.0.0.5', allowed: false },
  'negation alone never allows': { patterns: '!10.0.0.5', address: '10.0.0.6', allowed: false },
  'second entry matches': { patterns: '192.0.2.0/24,127.0.0.1', address: '127.0.0.1', allowed: true },
  'IPv4-mapped source matches IPv4 pattern': { patterns: '127.0.0.0/8', address: '::ffff:127.0.0.1', allowed: true },
  'IPv6 CIDR inside': { patterns: '2001:db8::/32', address: '2001:db8:1::42', allowed: true },
  'IPv6 CIDR outside': { patterns: '2001:db8::/32', address: '2001:db9::1', allowed: false },
  'IPv6 exact, different spelling': { patterns: '2001:db8:0:0::1', address: '2001:db8::1', allowed: true },
  'IPv6 wildcard is case-insensitive': { patterns: 'FE80:*', address: 'fe80::1', allowed: true },
  'loopback IPv6': { patterns: '::1', address: '::1', allowed: true },
  'host bits set: the whole list denies': { patterns: '10.0.0.1/8,127.0.0.1', address: '127.0.0.1', allowed: false },
  'empty entry: the whole list denies': { patterns: '127.0.0.1,', address: '127.0.0.1', allowed: false },
  'star matches anything': { patterns: '*', address: '198.51.100.1', allowed: true },
};

for (const [name, c] of Object.entries(cases)) {
  test(`from=: ${name}`, () => {
    assert.equal(matchAddressPatterns(c.patterns.split(','), c.address), c.allowed);
  });
}

test('parseIpAddress: valid and invalid forms', () => {
  assert.deepEqual(parseIpAddress('10.0.0.1'), { family: 4, bytes: Uint8Array.from([10, 0, 0, 1]) });
  assert.equal(parseIpAddress('::ffff:10.0.0.1')?.family, 4);
  assert.equal(parseIpAddress('fe80::1%eth0')?.family, 6);
  assert.equal(parseIpAddress('::')?.bytes.length, 16);
  for (const bad of ['10.0.0', '10.0.0.256', '010.0.0.1', '1::2::3', '1:2:3:4:5:6:7:8:9', 'host.example', '', ':::1', '1:2:3:4:5:6:7::8:9']) {
    assert.equal(parseIpAddress(bad), undefined, bad);
  }
});

test('normalizeAddress turns IPv4-mapped into IPv4 and leaves the rest', () => {
  assert.equal(normalizeAddress('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(normalizeAddress('2001:db8::1'), '2001:db8::1');
  assert.equal(normalizeAddress('not an address'), 'not an address');
});

test('parseCidrBlock: blocks, patterns, errors', () => {
  assert.deepEqual(parseCidrBlock('10.0.0.0/8'), { network: { family: 4, bytes: Uint8Array.from([10, 0, 0, 0]) }, prefixLength: 8 });
  assert.equal(parseCidrBlock('10.*'), undefined);
  assert.deepEqual(parseCidrBlock('10.0.0.1/8'), { error: '"10.0.0.1/8" has host bits set beyond /8' });
  assert.ok(parseCidrBlock('2001:db8::/129') !== undefined && 'error' in (parseCidrBlock('2001:db8::/129') as object));
  assert.ok('error' in (parseCidrBlock('foo/8') as object));
});

test('checkPatternList names each mistake', () => {
  assert.deepEqual(checkPatternList(['10.0.0.0/8', '!192.0.2.*']), []);
  assert.deepEqual(checkPatternList(['', '!', '10.0.0.1/8']), ['empty pattern', 'empty pattern', '"10.0.0.1/8" has host bits set beyond /8']);
});

test('matchWildcard backtracks and is linear on hostile input', () => {
  assert.equal(matchWildcard('a*b*c', 'axxbyyc'), true);
  assert.equal(matchWildcard('a*b*c', 'axxbyy'), false);
  assert.equal(matchWildcard('*', ''), true);
  assert.equal(matchWildcard('?', ''), false);
  assert.equal(matchWildcard('*a*a*a*a*a*b', 'a'.repeat(2000)), false);
});
