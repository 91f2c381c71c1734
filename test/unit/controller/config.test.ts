import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ControllerConfigError, decodeControllerConfig } from '../../../controller/config.js';
import { decodeCommandRequest } from '../../../controller/commands.js';
import { HttpError } from '../../../controller/http-util.js';
import { escapeHtml, renderFleetPage } from '../../../controller/page.js';

test('a minimal controller config gets the documented defaults', () => {
  const c = decodeControllerConfig('database:\n  url: postgres://rackside@/rackside?host=/run/postgresql\n');
  assert.deepEqual(c, {
    listen: { host: '127.0.0.1', port: 9300 },
    database: { url: 'postgres://rackside@/rackside?host=/run/postgresql', poolSize: 10 },
    offlineAfterSeconds: 180,
    retention: { eventMaxAgeDays: 30, eventsPerRack: 100_000, batchLedgerDays: 30, commandDays: 90 },
    commands: { defaultExpirySeconds: 86_400, maxManifestBytes: 262_144 },
  });
});

test('tls.clientCA is decoded beside tls.cert and tls.key', () => {
  const c = decodeControllerConfig('tls:\n  cert: /etc/c.pem\n  key: /etc/c.key\n  clientCA: /etc/racks-ca.pem\ndatabase:\n  url: postgres://x@/y\n');
  assert.deepEqual(c.tls, { cert: '/etc/c.pem', key: '/etc/c.key', clientCA: '/etc/racks-ca.pem' });
  assert.deepEqual(decodeControllerConfig('tls:\n  cert: /etc/c.pem\n  key: /etc/c.key\ndatabase:\n  url: postgres://x@/y\n').tls, { cert: '/etc/c.pem', key: '/etc/c.key' });
});

const bad: Record<string, [string, string]> = {
  'no database': ['listen: 127.0.0.1:9300\n', 'database'],
  'unknown key': ['database:\n  url: postgres://x@/y\nretention:\n  eventsPerRak: 5\n', 'retention.eventsPerRak'],
  'password in the URL': ['database:\n  url: postgres://u:secret@db/x\n', 'database.url'],
  'bad listen': ['listen: nowhere\ndatabase:\n  url: postgres://x@/y\n', 'listen'],
  'relative token file': ['operatorTokenFile: token\ndatabase:\n  url: postgres://x@/y\n', 'operatorTokenFile'],
  'tls cert without key': ['tls:\n  cert: /a.pem\ndatabase:\n  url: postgres://x@/y\n', 'tls.key'],
  'relative tls.clientCA': ['tls:\n  cert: /a.pem\n  key: /a.key\n  clientCA: ca.pem\ndatabase:\n  url: postgres://x@/y\n', 'tls.clientCA'],
  'tls.clientCA without a certificate': ['tls:\n  clientCA: /ca.pem\ndatabase:\n  url: postgres://x@/y\n', 'tls.cert'],
  'pool size 0': ['database:\n  url: postgres://x@/y\n  poolSize: 0\n', 'database.poolSize'],
};
for (const [name, [text, key]] of Object.entries(bad)) {
  test(`controller config: ${name} is refused naming ${key}`, () => {
    assert.throws(() => decodeControllerConfig(text), (err: unknown) => err instanceof ControllerConfigError && err.key === key && !err.message.includes('secret'));
  });
}

const LIMITS = { defaultExpirySeconds: 60, maxManifestBytes: 1024 };
test('command requests: host actions take NAME or NAMESPACE/NAME; apply takes a manifest', () => {
  assert.deepEqual(decodeCommandRequest({ rack: 'r1', kind: 'power-off', host: 'n1' }, LIMITS), { rack: 'r1', kind: 'power-off', host: { namespace: 'default', name: 'n1' }, expiresInSeconds: 60 });
  assert.deepEqual(decodeCommandRequest({ rack: 'r1', kind: 'reboot', host: 'ns/n1', expiresInSeconds: 5 }, LIMITS), { rack: 'r1', kind: 'reboot', host: { namespace: 'ns', name: 'n1' }, expiresInSeconds: 5 });
  assert.deepEqual(decodeCommandRequest({ rack: 'r1', kind: 'apply', manifest: 'kind: Secret\n' }, LIMITS), { rack: 'r1', kind: 'apply', manifest: 'kind: Secret\n', expiresInSeconds: 60 });
  const cases: [unknown, number, string][] = [
    [{ kind: 'power-off', host: 'n1' }, 400, 'rack'],
    [{ rack: 'r1', kind: 'format-disks', host: 'n1' }, 400, 'kind'],
    [{ rack: 'r1', kind: 'power-on' }, 400, 'host'],
    [{ rack: 'r1', kind: 'power-on', host: 'a/b/c' }, 400, 'host'],
    [{ rack: 'r1', kind: 'apply', manifest: 'x'.repeat(2000) }, 413, 'manifest'],
    [{ rack: 'r1', kind: 'apply', manifest: 'a: 1', host: 'n1' }, 400, 'host'],
    [{ rack: 'r1', kind: 'inspect', host: 'n1', expiresInSeconds: 0 }, 400, 'expiresInSeconds'],
    [[], 400, 'body'],
  ];
  for (const [body, status, field] of cases) {
    assert.throws(() => decodeCommandRequest(body, LIMITS), (err: unknown) => err instanceof HttpError && err.status === status && err.field === field, JSON.stringify(body));
  }
});

test('the fleet page escapes what racks send and links only http(s) status pages', () => {
  const rack = {
    name: 'r<1>', agentId: 'a', agentVersion: '"><script>', wireVersion: 2, statusUrl: 'javascript:alert(1)', lastPushAt: null, lagSeconds: null,
    backlog: null, offline: true, revoked: false, pushes: 0, resets: 0, hosts: 0, errors: 0, states: {}, pendingCommands: 0,
  };
  const html = renderFleetPage({ racks: [rack], errorHosts: [], commands: [], renderedAt: '2026-01-02T03:04:05.000Z', search: { q: '<b>', results: [] } });
  assert.ok(!html.includes('<script>'), 'no markup from a rack');
  assert.ok(!html.includes('javascript:'), 'no non-http link');
  assert.match(html, /r&lt;1&gt; <span class="bad">offline<\/span>/);
  assert.match(html, /Search: &lt;b&gt;/);
  assert.equal(escapeHtml(`&<>"'`), '&amp;&lt;&gt;&quot;&#39;');
});
