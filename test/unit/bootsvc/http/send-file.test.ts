import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { truncate } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMALL_BODY_BYTES, type SentFile } from '../../../../bootsvc/http/send-file.js';
import { call as callServer, startSendFileServer, type CallReply } from './send-file-server.js';

const LARGE = SMALL_BODY_BYTES * 3 + 12_345;
let dir: string;
let server: Server;
let data: Buffer;
const sentLog: SentFile[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-sendfile-'));
  data = Buffer.alloc(LARGE);
  for (let i = 0; i + 4 <= LARGE; i += 4) data.writeUInt32LE(i, i);
  writeFileSync(join(dir, 'image.raw'), data);
  // ?shrink=N: the file is cut to N bytes after it was opened and planned (a replaced image).
  server = await startSendFileServer(dir, {
    afterOpen: async (name, url) => {
      const shrink = url.searchParams.get('shrink');
      if (shrink !== null) await truncate(join(dir, name), Number(shrink));
    },
    onSent: (sent) => { sentLog.push(sent); },
  });
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  rmSync(dir, { recursive: true, force: true });
});

const call = (path: string, method = 'GET', headers: Record<string, string> = {}): Promise<CallReply> => callServer((server.address() as AddressInfo).port, path, method, headers);

async function lastSent(): Promise<SentFile | undefined> {
  for (let i = 0; i < 100 && sentLog.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  return sentLog.pop();
}

const cases: Record<string, { range?: string; start: number; end: number; status: number }> = {
  'a 64 KiB range (one read, one end)': { range: 'bytes=65536-131071', start: 65536, end: 131071, status: 206 },
  'a range of exactly the small-body limit': { range: `bytes=1-${String(SMALL_BODY_BYTES)}`, start: 1, end: SMALL_BODY_BYTES, status: 206 },
  'a range one byte over the limit (streamed)': { range: `bytes=7-${String(SMALL_BODY_BYTES + 7)}`, start: 7, end: SMALL_BODY_BYTES + 7, status: 206 },
  'the whole large file (streamed)': { start: 0, end: LARGE - 1, status: 200 },
  'a suffix range': { range: 'bytes=-10', start: LARGE - 10, end: LARGE - 1, status: 206 },
};
for (const [name, c] of Object.entries(cases)) {
  test(`sendFile: ${name} sends exactly the planned bytes`, async () => {
    sentLog.length = 0;
    const reply = await call('/image.raw', 'GET', c.range === undefined ? {} : { range: c.range });
    assert.equal(reply.status, c.status);
    assert.equal(reply.error, undefined);
    assert.equal(reply.headers['content-length'], String(c.end - c.start + 1));
    assert.ok(reply.body.equals(data.subarray(c.start, c.end + 1)), 'body bytes match the file');
    const sent = await lastSent();
    assert.equal(sent?.status, c.status);
    assert.equal(sent.bytes, c.end - c.start + 1);
    assert.equal(sent.completed, true);
  });
}

test('sendFile: HEAD sends the headers and no body', async () => {
  sentLog.length = 0;
  const reply = await call('/image.raw', 'HEAD', { range: 'bytes=0-99' });
  assert.equal(reply.status, 206);
  assert.equal(reply.headers['content-length'], '100');
  assert.equal(reply.body.length, 0);
  assert.equal((await lastSent())?.bytes, 0);
});

test('sendFile: a small body of a file that shrank after opening is cut off, not padded or hung', async () => {
  writeFileSync(join(dir, 'shrinks.raw'), data.subarray(0, 200_000));
  sentLog.length = 0;
  const reply = await call('/shrinks.raw?shrink=1000', 'GET', { range: 'bytes=0-99999' });
  assert.notEqual(reply.error, undefined, 'the client sees a broken transfer');
  assert.ok(reply.body.length < 100_000);
  const sent = await lastSent();
  assert.equal(sent?.completed, false);
});

test('sendFile: a streamed body of a file that shrank after opening is cut off, not padded or hung', async () => {
  writeFileSync(join(dir, 'shrinks-big.raw'), data);
  sentLog.length = 0;
  const reply = await call('/shrinks-big.raw?shrink=1000');
  assert.equal(reply.headers['content-length'], String(LARGE), 'the plan promised the whole file');
  assert.notEqual(reply.error, undefined, 'the client sees a broken transfer');
  assert.ok(reply.body.length <= 1000);
  assert.ok(reply.body.equals(data.subarray(0, reply.body.length)));
  const sent = await lastSent();
  assert.equal(sent?.completed, false);
  assert.equal(sent.bytes, 1000);
});

test('sendFile: concurrent streamed and small answers (reused buffers) each get their own bytes', async () => {
  const spans = Array.from({ length: 8 }, (_, i) => {
    const start = i * 4099;
    const length = i % 2 === 0 ? SMALL_BODY_BYTES + 1 + i * 70_001 : 65_536 + i;
    return { start, end: Math.min(LARGE, start + length) - 1 };
  });
  for (let round = 0; round < 3; round++) {
    const replies = await Promise.all(spans.map((s) => call('/image.raw', 'GET', { range: `bytes=${String(s.start)}-${String(s.end)}` })));
    replies.forEach((reply, i) => {
      const s = spans[i];
      assert.ok(s);
      assert.equal(reply.status, 206);
      assert.ok(reply.body.equals(data.subarray(s.start, s.end + 1)), `span ${String(i)} round ${String(round)}`);
    });
  }
});
