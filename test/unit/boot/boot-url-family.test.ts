/**
 * The boot URL per address family (agent/boot/boot-services.ts, boot-services6.ts): IPv6
 * literals are bracketed; a client is IPv6 unless its address is an IPv4-mapped one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootHttpBaseUrl, isIpv6Client } from '../../../agent/boot/boot-services.js';
import { bootHttpBaseUrl6 } from '../../../agent/boot/boot-services6.js';
import type { Config } from '../../../agent/config.js';

function config(address: string | undefined, address6: string | undefined): Config {
  return {
    http: { listen: { host: '::', port: 8081 } },
    provisioning: { ...(address === undefined ? {} : { address }), ...(address6 === undefined ? {} : { address6 }) },
  } as unknown as Config;
}

test('dual-stack: the IPv4 URL is the default, the IPv6 one bracketed beside it', () => {
  const c = config('192.0.2.1', 'fd00:1::1');
  assert.equal(bootHttpBaseUrl(c), 'http://192.0.2.1:8081');
  assert.equal(bootHttpBaseUrl6(c), 'http://[fd00:1::1]:8081');
});

test('IPv6-only: every URL is the bracketed IPv6 literal', () => {
  const c = config(undefined, 'fd00:1::1');
  assert.equal(bootHttpBaseUrl(c), 'http://[fd00:1::1]:8081');
  assert.equal(bootHttpBaseUrl6(c), 'http://[fd00:1::1]:8081');
});

test('isIpv6Client: IPv4-mapped addresses are IPv4 clients', () => {
  assert.equal(isIpv6Client('fe80::5054:ff:fe00:601'), true);
  assert.equal(isIpv6Client('fd00:1::100'), true);
  assert.equal(isIpv6Client('::ffff:192.0.2.10'), false);
  assert.equal(isIpv6Client('192.0.2.10'), false);
});
