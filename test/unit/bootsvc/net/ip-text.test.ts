/** IPv4-mapped addresses of dual-stack listeners are shown as IPv4 (RFC 4291 §2.5.5.2). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { unmapIpv4 } from '../../../../bootsvc/net/ip-text.js';

test('IPv4-mapped addresses lose their prefix; other addresses are unchanged', () => {
  const cases: [string, string][] = [
    ['::ffff:192.0.2.10', '192.0.2.10'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['192.0.2.10', '192.0.2.10'],
    ['fd00:1::2', 'fd00:1::2'],
    ['::ffff:c000:20a', '::ffff:c000:20a'],
    ['::1', '::1'],
    ['', ''],
  ];
  for (const [input, want] of cases) assert.equal(unmapIpv4(input), want, input);
});
