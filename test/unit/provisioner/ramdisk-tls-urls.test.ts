// The ramdisk router behind boot HTTP's two listeners (docs/https-boot.md): a heartbeat that came
// over TLS is answered with the deploy's image and config drive URLs under the TLS base URL; one
// over plain HTTP keeps them as they are. Both listeners serve the same express app, as in
// bootsvc/http/boot-http-server.ts; the TLS certificate comes from a real boot CA.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { ensureBootCertificate } from '../../../agent/boot/boot-ca.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { RAMDISK_TOKEN_GRACE_MS } from '../../../agent/provisioner/local/node.js';
import { overTls } from '../../../agent/provisioner/local/ramdisk-command-params.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { requireTools } from '../images/helpers.js';

const token = 'tok-abcdefghijklmnopqrstuvwxyz012345';
const bases = { plain: 'http://10.0.0.1:8081', tls: 'https://10.0.0.1:8443' };
const deploy = {
  imageUrl: `${bases.plain}/images/${'a'.repeat(64)}`, checksum: 'b'.repeat(64), checksumType: 'sha256' as const,
  configDrive: { url: `${bases.plain}/configdrive/cd-1.iso`, sha256: 'c'.repeat(64) },
};

test('overTls moves URLs under the plain base to the TLS base and leaves others alone', () => {
  assert.deepEqual(overTls({ deploy }, bases).deploy, {
    ...deploy, imageUrl: `${bases.tls}/images/${'a'.repeat(64)}`, configDrive: { ...deploy.configDrive, url: `${bases.tls}/configdrive/cd-1.iso` },
  });
  const elsewhere = { ...deploy, imageUrl: 'http://[fd00::1]:8081/images/x', configDrive: { url: 'http://10.0.0.1:80811/cd.iso' } };
  assert.deepEqual(overTls({ deploy: elsewhere }, bases).deploy, elsewhere, 'another address, or a port that only starts like the base\'s, is not moved');
  assert.deepEqual(overTls({ clean: { mode: 'metadata' } }, bases), { clean: { mode: 'metadata' } });
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function heartbeatOverTls(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/ramdisk/v1/heartbeat', method: 'POST', ca, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => { resolve(text); });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ version: 't', boot_mac: '52:54:00:00:00:01', ip: '10.0.0.50', uptime_seconds: 3, last_command_id: null }));
  });
}

test('a heartbeat over TLS gets https:// deploy URLs; one over plain HTTP keeps http://', async (t) => {
  if (!requireTools(t, { openssl: 'openssl' })) return;
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-ramdisk-tls-urls-'));
  t.after(() => rm(stateDir, { recursive: true, force: true }));
  const cert = await ensureBootCertificate(stateDir, ['127.0.0.1']);
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  const nowMs = 1_000_000;
  const op = { kind: 'deploy' as const, commandId: 'cmd-1', startedAtMs: nowMs, deadlineMs: nowMs + 60_000, phase: 'sent' as const, deploy };
  await store.nodes.put('uid-1', {
    boot: 'ramdisk', token, tokenExpiresAtMs: nowMs + RAMDISK_TOKEN_GRACE_MS,
    local: { provID: 'p1', name: 'tls-0', bootMACAddress: '52:54:00:00:00:01', state: 'deploying', op },
  });
  const app = express();
  app.use(createRamdiskRouter({ store, nodes, nowMs: () => nowMs, bootBases: bases }));
  const plain = createHttpServer(app);
  const secure = createHttpsServer({ cert: cert.chainPem, key: cert.keyPem }, app) as unknown as Server;
  t.after(() => { for (const s of [plain, secure]) { s.closeAllConnections(); s.close(); } });
  const [plainPort, tlsPort] = [await listen(plain), await listen(secure)];

  const overTlsText = await heartbeatOverTls(tlsPort, cert.caPem);
  assert.match(overTlsText, /^command=deploy$/m);
  assert.match(overTlsText, new RegExp(`^image_url=${bases.tls}/images/a{64}$`, 'm'));
  assert.match(overTlsText, new RegExp(`^configdrive_url=${bases.tls}/configdrive/cd-1\\.iso$`, 'm'));
  assert.doesNotMatch(overTlsText, /http:\/\//);

  const res = await fetch(`http://127.0.0.1:${plainPort}/ramdisk/v1/heartbeat`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ version: 't', boot_mac: '52:54:00:00:00:01', ip: '10.0.0.50', uptime_seconds: 4, last_command_id: null }),
  });
  const plainText = await res.text();
  assert.match(plainText, new RegExp(`^image_url=${bases.plain}/images/a{64}$`, 'm'));
  assert.match(plainText, new RegExp(`^configdrive_url=${bases.plain}/configdrive/cd-1\\.iso$`, 'm'));
});
