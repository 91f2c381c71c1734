/**
 * The boot URL per address family (agent/boot/boot-services.ts, boot-services6.ts): IPv6
 * literals are bracketed; a client is IPv6 unless its address is an IPv4-mapped one, and then
 * gets the IPv6 base URL and the ramdisk callback rebased onto it (bootsvc familyUrls).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootHttpBaseUrl } from '../../../agent/boot/boot-services.js';
import { familyUrls } from '../../../bootsvc/index.js';
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

test('familyUrls: IPv6 clients get the IPv6 URL and the rebase; IPv4 and IPv4-mapped clients, or no IPv6 URL, the IPv4 one', () => {
  const v4 = 'http://192.0.2.1:8081';
  const v6 = 'http://[fd00:1::1]:8081';
  const six = { baseUrl: v6, rebaseAgentUrl: { from: v4, to: v6 } };
  assert.deepEqual(familyUrls('fe80::5054:ff:fe00:601', v4, v6), six);
  assert.deepEqual(familyUrls('fd00:1::100', v4, v6), six);
  assert.deepEqual(familyUrls('::ffff:192.0.2.10', v4, v6), { baseUrl: v4 });
  assert.deepEqual(familyUrls('192.0.2.10', v4, v6), { baseUrl: v4 });
  assert.deepEqual(familyUrls('fd00:1::100', v4, undefined), { baseUrl: v4 });
});
