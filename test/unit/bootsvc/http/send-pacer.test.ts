/**
 * Boot HTTP's byte pace (bootsvc/http/send-pacer.ts, `maxBytesPerSecond`): every body byte of a
 * file answer goes through the pacer — small bodies, streamed ones, ranges — and the bytes stay
 * intact; HEAD and 304 answers pace nothing; a paced server answers whole and ranged GETs alike.
 * The pacer itself (its booking arithmetic) is tested in test/unit/boot/governor.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startBootHttpServer } from '../../../../bootsvc/http/boot-http-server.js';
import { SMALL_BODY_BYTES } from '../../../../bootsvc/http/send-file.js';
import { BytePacer } from '../../../../bootsvc/http/send-pacer.js';
import { call, startSendFileServer } from './send-file-server.js';

/** A pacer that lets everything through at once and notes what it was asked for. */
class RecordingPacer extends BytePacer {
  readonly asked: number[] = [];
  constructor() {
    super(1);
  }

  override pace(bytes: number): Promise<void> {
    this.asked.push(bytes);
    return Promise.resolve();
  }
}

const LARGE = SMALL_BODY_BYTES * 4 + 777;
let dir: string;
let data: Buffer;
let server: Server;
let pacer: RecordingPacer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-pacer-'));
  data = Buffer.alloc(LARGE);
  for (let i = 0; i < LARGE; i++) data[i] = (i * 7) & 0xff;
  writeFileSync(join(dir, 'image.raw'), data);
  writeFileSync(join(dir, 'small.txt'), 'a small file\n');
  server = await startSendFileServer(dir, { pacer: () => pacer });
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  rmSync(dir, { recursive: true, force: true });
});

const cases: Record<string, { path: string; method?: string; headers?: Record<string, string>; status: number; body: () => Buffer }> = {
  'a small body': { path: '/small.txt', status: 200, body: () => Buffer.from('a small file\n') },
  'a streamed body': { path: '/image.raw', status: 200, body: () => data },
  'a large range': { path: '/image.raw', headers: { range: `bytes=1000-${String(SMALL_BODY_BYTES * 2 + 999)}` }, status: 206, body: () => data.subarray(1000, SMALL_BODY_BYTES * 2 + 1000) },
  'a 64 KiB range': { path: '/image.raw', headers: { range: 'bytes=65536-131071' }, status: 206, body: () => data.subarray(65536, 131072) },
  'HEAD': { path: '/image.raw', method: 'HEAD', status: 200, body: () => Buffer.alloc(0) },
};
for (const [name, c] of Object.entries(cases)) {
  test(`paced send: ${name} — every body byte asked for, bytes intact`, async () => {
    pacer = new RecordingPacer();
    const reply = await call((server.address() as AddressInfo).port, c.path, c.method, c.headers);
    assert.equal(reply.status, c.status);
    assert.ok(reply.body.equals(c.body()), 'the body is the file\'s bytes');
    assert.equal(pacer.asked.reduce((a, b) => a + b, 0), c.body().length, `paced ${JSON.stringify(pacer.asked)}`);
  });
}

test('a boot HTTP server with maxBytesPerSecond answers whole and ranged GETs intact', async (t) => {
  const mount = mkdtempSync(join(tmpdir(), 'rackside-pacer-mount-'));
  t.after(() => { rmSync(mount, { recursive: true, force: true }); });
  writeFileSync(join(mount, 'initrd'), data);
  const plans = { target: () => Promise.resolve(undefined) };
  const boot = await startBootHttpServer({ host: '127.0.0.1', port: 0, plans, mounts: { ramdisk: mount }, maxBytesPerSecond: 1e9 });
  t.after(() => boot.stop());
  const whole = await call(boot.port, '/ramdisk/initrd');
  assert.equal(whole.status, 200);
  assert.ok(whole.body.equals(data));
  const range = await call(boot.port, '/ramdisk/initrd', 'GET', { range: 'bytes=10-20' });
  assert.equal(range.status, 206);
  assert.ok(range.body.equals(data.subarray(10, 21)));
  assert.throws(() => new BytePacer(Number.NaN), /bytes per second must be a number > 0/);
});
