import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBootCertificate } from '../../../../agent/boot/boot-ca.js';
import type { BootEvent, HttpBootEvent } from '../../../../bootsvc/events.js';
import { startBootHttpServer } from '../../../../bootsvc/http/boot-http-server.js';
import type { BootTarget } from '../../../../bootsvc/ipxe/boot-plan.js';

const MAC = '52:54:00:00:00:0a';
const TARGET: BootTarget = { host: 'node-a', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://127.0.0.1:1', token: 'abcdefghijklmnop0123' } };

function get(port: number, path: string, ca: string, range?: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca, headers: range === undefined ? {} : { range } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }); });
    });
    req.on('error', reject);
    req.end();
  });
}

test('the TLS listener serves the same routes: files with Range (no sendfile), scripts naming https URLs, events marked tls; failed handshakes are counted', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-boot-tls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const cert = await ensureBootCertificate(join(dir, 'state'), ['127.0.0.1']);
  const other = await ensureBootCertificate(join(dir, 'other'), ['127.0.0.1']);
  await mkdir(join(dir, 'ramdisk'));
  const kernel = Buffer.alloc(200_000, 5);
  kernel.write('rackside', 1000);
  await writeFile(join(dir, 'ramdisk', 'vmlinuz'), kernel);
  const events: BootEvent[] = [];
  const server = await startBootHttpServer({
    host: '127.0.0.1', port: 0, plans: { target: (q) => Promise.resolve(q.mac === MAC ? TARGET : undefined) }, mounts: { ramdisk: join(dir, 'ramdisk') },
    tls: { cert: cert.chainPem, key: cert.keyPem, port: 0 }, onEvent: (e) => { events.push(e); },
  });
  t.after(() => server.stop());
  assert.ok(server.tlsPort !== undefined && server.tlsUrl === `https://127.0.0.1:${server.tlsPort}`);

  const ranged = await get(server.tlsPort, '/ramdisk/vmlinuz', cert.caPem, 'bytes=1000-1007');
  assert.equal(ranged.status, 206);
  assert.equal(ranged.body.toString(), 'rackside');
  const whole = await get(server.tlsPort, '/ramdisk/vmlinuz', cert.caPem);
  assert.deepEqual(whole.body, kernel);
  assert.equal(server.stats().sendfileAnswers, 0, 'no body went by sendfile on a TLS socket');

  const script = await get(server.tlsPort, `/boot/${MAC.replaceAll(':', '-')}.ipxe`, cert.caPem);
  assert.equal(script.status, 200);
  assert.ok(script.body.toString().includes(` ${server.tlsUrl}/ramdisk/vmlinuz `), `a script fetched over TLS names the https listener:\n${script.body.toString()}`);
  const plain = await fetch(`${server.url}/boot/${MAC.replaceAll(':', '-')}.ipxe`);
  assert.ok((await plain.text()).includes(` ${server.url}/ramdisk/vmlinuz `), 'the plain listener keeps http URLs');

  for (let i = 0; i < 100 && events.filter((e) => e.kind === 'http').length < 4; i++) await new Promise((r) => setTimeout(r, 10));
  const http = events.filter((e): e is HttpBootEvent => e.kind === 'http');
  assert.deepEqual(http.map((e) => `${e.path} ${e.tls === true ? 'tls' : 'plain'}`).sort(), [
    '/boot/52-54-00-00-00-0a.ipxe plain', '/boot/52-54-00-00-00-0a.ipxe tls', '/ramdisk/vmlinuz tls', '/ramdisk/vmlinuz tls',
  ]);

  await assert.rejects(get(server.tlsPort, '/ramdisk/vmlinuz', other.caPem), /self[- ]signed|unable to verify|certificate/i);
  // A client that aborts the handshake (as firmware that does not trust the CA does) is counted.
  await new Promise<void>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: server.tlsPort ?? 0, ca: other.caPem });
    socket.on('error', () => { socket.destroy(); resolve(); });
  });
  for (let i = 0; i < 100 && server.stats().tlsHandshakeFailures === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(server.stats().tlsHandshakeFailures >= 1, JSON.stringify(server.stats()));
  assert.equal(events.filter((e) => e.kind === 'http').length, 4, 'a refused handshake is no request');
});
