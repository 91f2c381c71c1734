/**
 * @module Controller sync over mutual TLS: certificates made in the test with the `openssl` CLI
 * (a self-signed CA, a server certificate for 127.0.0.1 with an IP SAN, a client certificate),
 * an https controller that requires and verifies client certificates. Without openssl the test
 * skips, or fails under RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createMemoryStore, type Store } from '../../agent/store/index.js';
import { createSyncLoop, type ControllerConfig, type SyncLoop } from '../../agent/sync/index.js';
import { makeHost } from '../unit/store/fixtures.js';
import { FakeController, waitFor } from './sync-controller.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const required = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';
const available = hasOpenssl();
if (!available && required) throw new Error('openssl is required (RACKSIDE_REQUIRE_INTEGRATION=1) but was not found');
const skip = available ? false : 'openssl CLI not found';

let dir = '';
const file = (name: string) => join(dir, name);

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
}

/** Makes a P-256 key and a certificate signed by the test CA with the given extensions. */
async function issue(name: string, cn: string, extensions: string): Promise<void> {
  await writeFile(file(`${name}.ext`), extensions);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`]);
  openssl(['x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-out', file(`${name}.pem`), '-extfile', file(`${name}.ext`)]);
}

before(async () => {
  if (!available) return;
  dir = await mkdtemp(join(tmpdir(), 'rackside-sync-tls-'));
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=rackside test CA']);
  await issue('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n');
  await issue('client', 'rack1-head', 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n');
});

after(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

async function withController(tls: ControllerConfig['tls'], check: (loop: SyncLoop, controller: FakeController, store: Store) => Promise<void>): Promise<void> {
  const controller = await FakeController.start({
    tls: { key: await readFile(file('server.key')), cert: await readFile(file('server.pem')), ca: await readFile(file('ca.pem')) },
  });
  const store = createMemoryStore();
  await store.commit([{ kind: 'host', op: 'put', object: makeHost('node-1') }]);
  const loop = createSyncLoop({
    store,
    agentId: 'rack1-head',
    controller: { url: controller.url, intervalSeconds: 3600, ...(tls === undefined ? {} : { tls }) },
    backoff: { baseMs: 20, capMs: 200 },
    random: () => 0.5,
    flushDelayMs: 10,
    requestTimeoutMs: 5000,
  });
  try {
    await loop.start();
    await check(loop, controller, store);
  } finally {
    await loop.stop();
    await controller.close();
    await store.close();
  }
}

test('pushes over mutual TLS: the controller sees the client certificate', { skip, timeout: 30_000 }, async () => {
  await withController({ ca: file('ca.pem'), cert: file('client.pem'), key: file('client.key') }, async (loop, controller) => {
    await waitFor('delivery over TLS', () => controller.applied.some((r) => r.hosts.length > 0) && loop.status().backlog.hosts === 0);
    assert.equal(controller.deliveries[0]!.clientCn, 'rack1-head');
    assert.equal(controller.deliveries[0]!.headers.authorization, undefined, 'no token configured, none sent');
    assert.equal(loop.status().consecutiveFailures, 0);
  });
});

test('without a client certificate the controller refuses the connection and status says why', { skip, timeout: 30_000 }, async () => {
  await withController({ ca: file('ca.pem') }, async (loop, controller) => {
    await waitFor('a failure', () => loop.status().consecutiveFailures >= 2);
    const error = loop.status().lastError!;
    assert.ok(['tls', 'unreachable'].includes(error.code), error.code);
    assert.match(error.message, /client certificate|certificate required/i);
    assert.equal(controller.deliveries.length, 0);
    assert.equal(loop.status().backlog.hosts, 1);
  });
});

test('a controller certificate from an unknown CA is refused as a TLS error', { skip, timeout: 30_000 }, async () => {
  await withController({ cert: file('client.pem'), key: file('client.key') }, async (loop, controller) => {
    await waitFor('a TLS failure', () => loop.status().lastError?.code === 'tls');
    assert.match(loop.status().lastError!.message, /TLS handshake failed: .*certificate/i);
    assert.equal(controller.deliveries.length, 0);
  });
});

test('an unreadable client key is a config error, retried, never thrown', { skip, timeout: 30_000 }, async () => {
  await withController({ ca: file('ca.pem'), cert: file('client.pem'), key: file('missing.key') }, async (loop) => {
    await waitFor('a config failure', () => loop.status().lastError?.code === 'config');
    assert.match(loop.status().lastError!.message, /cannot read controller\.tls\.key .*missing\.key: .*ENOENT/);
    assert.equal(loop.status().running, true);
  });
});
