import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { decodeCpio, encodeCpio } from '../../../images/cpio.js';
import { buildCaOverlay, buildHostOverlay, concatInitrds, HostOverlayError, RAMDISK_CA_PATH, ramdiskKernelArgs } from '../../../images/host-overlay.js';

const token = 'tok_0123456789abcdef';

test('buildHostOverlay writes url, token (0600) and network data', () => {
  const networkData = { links: [{ id: 'eth0', type: 'phy', ethernet_mac_address: '52:54:00:00:00:01' }], networks: [], services: [] };
  const entries = decodeCpio(buildHostOverlay({ agentUrl: 'http://192.0.2.1:8081/', token, networkData }));
  const files = new Map(entries.map((e) => [e.path, e]));
  const url = files.get('etc/rackside/url');
  assert.ok(url?.type === 'file' && Buffer.from(url.data).toString() === 'http://192.0.2.1:8081\n');
  const tok = files.get('etc/rackside/token');
  assert.ok(tok?.type === 'file' && tok.mode === 0o600 && Buffer.from(tok.data).toString() === `${token}\n`);
  const nd = files.get('etc/rackside/network_data.json');
  assert.ok(nd?.type === 'file');
  assert.deepEqual(JSON.parse(Buffer.from(nd.data).toString()), networkData);
  assert.ok(buildHostOverlay({ agentUrl: 'http://a', token }).equals(buildHostOverlay({ agentUrl: 'http://a', token })));
});

const unsafe: Record<string, { agentUrl: string; token: string }> = {
  'relative URL': { agentUrl: '/ramdisk', token },
  'URL with a space': { agentUrl: 'http://a b', token },
  'URL with a quote': { agentUrl: 'http://a"$(reboot)"', token },
  'ftp URL': { agentUrl: 'ftp://a', token },
  'short token': { agentUrl: 'http://a', token: 'short' },
  'token with a space': { agentUrl: 'http://a', token: 'abcdefgh ijklmnopq' },
  'token with a semicolon': { agentUrl: 'http://a', token: 'abcdefghijklmnop;reboot' },
};
for (const [name, options] of Object.entries(unsafe)) {
  test(`buildHostOverlay and ramdiskKernelArgs reject a ${name}`, () => {
    assert.throws(() => buildHostOverlay(options), HostOverlayError);
    assert.throws(() => ramdiskKernelArgs(options), HostOverlayError);
  });
}

test('ramdiskKernelArgs carries url and token', () => {
  assert.deepEqual(ramdiskKernelArgs({ agentUrl: 'http://192.0.2.1:8081', token }), ['rackside.url=http://192.0.2.1:8081', `rackside.token=${token}`]);
  // An IPv6 agent keeps its bracketed literal: the ramdisk reads the brackets as "configure IPv6" (lib-net6.sh).
  assert.deepEqual(ramdiskKernelArgs({ agentUrl: 'http://[fd00:1::1]:8081/', token }), ['rackside.url=http://[fd00:1::1]:8081', `rackside.token=${token}`]);
});

test('concatInitrds pads every part to 4 bytes so an uncompressed overlay starts aligned', () => {
  const base = gzipSync(encodeCpio([{ type: 'file', path: 'a', mode: 0o644, data: Buffer.from('base') }], { mtimeSeconds: 0 }));
  const overlay = buildHostOverlay({ agentUrl: 'http://a', token });
  const joined = concatInitrds([base, overlay]);
  const overlayStart = joined.length - overlay.length;
  assert.equal(overlayStart % 4, 0);
  assert.ok(overlayStart >= base.length && overlayStart - base.length < 4);
  assert.ok(joined.subarray(base.length, overlayStart).every((b) => b === 0));
  assert.ok(joined.subarray(overlayStart).equals(overlay));
  assert.equal(concatInitrds([Buffer.alloc(8)]).length, 8);
});

test('buildCaOverlay: the certificates of a PEM bundle at etc/rackside/ca.pem, nothing else of it; no certificate is an error', () => {
  const cert = (body: string): string => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`;
  const bundle = `subject=CN = rackside boot CA\n${cert('QUJD')}\n-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n${cert('REVG')}\n`;
  const entries = decodeCpio(buildCaOverlay(bundle));
  assert.deepEqual(entries.map((e) => e.path), ['etc', 'etc/rackside', RAMDISK_CA_PATH]);
  const ca = entries[2];
  assert.ok(ca?.type === 'file' && ca.mode === 0o644);
  assert.equal(Buffer.from(ca.data).toString(), `${cert('QUJD')}\n${cert('REVG')}\n`, 'the key and the text around are left out');
  assert.ok(buildCaOverlay(bundle).equals(buildCaOverlay(bundle)), 'the same bytes each time');
  assert.throws(() => buildCaOverlay('-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n'), HostOverlayError);
});
