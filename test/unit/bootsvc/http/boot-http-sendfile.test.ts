/**
 * The boot HTTP server with sendfile(2) (native/sendfile, kernel-send.ts) against the same
 * server without it: on one keep-alive connection, requests one after another and pipelined,
 * every answer (Range answers of RFC 9110 §14 at the start, middle and end of a file, a range
 * past the end, a suffix, exactly the 1 MiB sendfile limit and one byte over it, a one-byte
 * file, an empty file, an unsatisfiable range, HEAD, a multi-range that is answered whole) has
 * the same status, headers and body bytes as the file says; the sendfile server counts the
 * answers it sent with sendfile, and the server without the addon (turned off, or built
 * nowhere) answers alike.
 */
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBootHttpServer, type BootHttpServer } from '../../../../bootsvc/http/boot-http-server.js';
import { DEFAULT_SENDFILE_ADDON_PATH, SENDFILE_MAX_BYTES, loadSendfileAddon, type SendfileOptions } from '../../../../bootsvc/http/kernel-send.js';
import { RawConnection, type RawRequest, type RawResponse } from './raw-http.js';

const MiB = 1024 * 1024;
const SIZE = 3 * MiB + 123;
let dir: string;
let data: Buffer;
const servers = new Map<string, BootHttpServer>();
const addon = loadSendfileAddon();

/** Skips (or fails under RACKSIDE_REQUIRE_INTEGRATION=1) when the addon is not built. */
function requireAddon(t: TestContext): boolean {
  if (addon !== undefined) return true;
  if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') assert.fail(`sendfile addon missing at ${DEFAULT_SENDFILE_ADDON_PATH} (npm run build:native)`);
  t.skip('sendfile addon not built (npm run build:native)');
  return false;
}

interface Case {
  request: RawRequest;
  status: number;
  /** The file and the byte span [start, end] of the body; none: an empty body. */
  body?: { file: Buffer; start: number; end: number };
  /** Whether a sendfile server sends this body by sendfile (when it asks one at a time). */
  kernel: boolean;
}

const range = (spec: string): Record<string, string> => ({ Range: spec });

function cases(): Case[] {
  const whole = { file: data, start: 0, end: SIZE - 1 };
  const one = Buffer.from('x');
  return [
    { request: { path: '/images/disk.raw', headers: range('bytes=0-65535') }, status: 206, body: { file: data, start: 0, end: 65535 }, kernel: true },
    { request: { path: '/images/disk.raw', headers: range('bytes=1048576-1114111') }, status: 206, body: { file: data, start: MiB, end: MiB + 65535 }, kernel: true },
    { request: { path: '/images/disk.raw', headers: range(`bytes=${String(SIZE - 100)}-`) }, status: 206, body: { file: data, start: SIZE - 100, end: SIZE - 1 }, kernel: true },
    { request: { path: '/images/disk.raw', headers: range(`bytes=${String(SIZE - 10)}-${String(SIZE + 1000)}`) }, status: 206, body: { file: data, start: SIZE - 10, end: SIZE - 1 }, kernel: true },
    { request: { path: '/images/disk.raw', headers: range('bytes=-1') }, status: 206, body: { file: data, start: SIZE - 1, end: SIZE - 1 }, kernel: true },
    { request: { path: '/images/disk.raw', headers: range(`bytes=7-${String(7 + SENDFILE_MAX_BYTES - 1)}`) }, status: 206, body: { file: data, start: 7, end: 7 + SENDFILE_MAX_BYTES - 1 }, kernel: true },
    { request: { path: '/images/disk.raw', headers: range(`bytes=7-${String(7 + SENDFILE_MAX_BYTES)}`) }, status: 206, body: { file: data, start: 7, end: 7 + SENDFILE_MAX_BYTES }, kernel: true },
    { request: { path: '/images/one.raw' }, status: 200, body: { file: one, start: 0, end: 0 }, kernel: true },
    { request: { path: '/images/empty.raw' }, status: 200, kernel: false },
    { request: { path: '/images/empty.raw', headers: range('bytes=0-0') }, status: 200, kernel: false },
    { request: { path: '/images/disk.raw', headers: range(`bytes=${String(SIZE)}-`) }, status: 416, kernel: false },
    { request: { method: 'HEAD', path: '/images/disk.raw', headers: range('bytes=0-99') }, status: 206, kernel: false },
    { request: { path: '/images/disk.raw', headers: range('bytes=0-1,5-6') }, status: 200, body: whole, kernel: true },
    { request: { path: '/images/disk.raw', headers: range('bytes=65536-131071') }, status: 206, body: { file: data, start: 65536, end: 131071 }, kernel: true },
  ];
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-boothttp-sendfile-'));
  mkdirSync(join(dir, 'images'));
  data = Buffer.alloc(SIZE);
  for (let i = 0; i + 4 <= SIZE; i += 4) data.writeUInt32LE(i ^ 0x5a5a5a5a, i);
  writeFileSync(join(dir, 'images/disk.raw'), data);
  writeFileSync(join(dir, 'images/one.raw'), 'x');
  writeFileSync(join(dir, 'images/empty.raw'), '');
  const variants: Record<string, SendfileOptions | false> = {
    // Large bodies by the sender threads too (opt-in): every case over 1 MiB goes by sendfile.
    cachestat: { largeBodies: true },
    probes: { residency: 'probes', largeBodies: true },
    off: false,
    'not built': { addonPath: join(dir, 'nowhere/sendfile_range.node') },
  };
  for (const [name, sendfile] of Object.entries(variants)) {
    servers.set(name, await startBootHttpServer({ host: '127.0.0.1', port: 0, mounts: { images: join(dir, 'images') }, plans: { target: () => Promise.resolve(undefined) }, sendfile }));
  }
});

after(async () => {
  for (const server of servers.values()) await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function checkAnswers(label: string, list: Case[], replies: RawResponse[]): void {
  assert.equal(replies.length, list.length);
  list.forEach((c, i) => {
    const reply = replies[i];
    assert.ok(reply);
    const what = `${label}: ${c.request.method ?? 'GET'} ${c.request.path} ${JSON.stringify(c.request.headers ?? {})}`;
    assert.equal(reply.status, c.status, what);
    const expected = c.body === undefined ? Buffer.alloc(0) : c.body.file.subarray(c.body.start, c.body.end + 1);
    if (c.request.method !== 'HEAD') {
      assert.equal(reply.headers['content-length'], String(expected.length), what);
      assert.ok(reply.body.equals(expected), `${what}: body bytes match the file`);
    }
    if (c.status === 206 && c.body !== undefined) assert.equal(reply.headers['content-range'], `bytes ${String(c.body.start)}-${String(c.body.end)}/${String(SIZE)}`, what);
    assert.equal(reply.headers['transfer-encoding'], undefined, what);
  });
}

/** Headers that differ between two servers or two moments by nature. */
function comparable(reply: RawResponse): Record<string, string> {
  const { date: _date, ...rest } = reply.headers;
  return rest;
}

for (const name of ['cachestat', 'probes', 'off', 'not built']) {
  test(`boot HTTP (sendfile ${name}): Range answers one after another on one keep-alive connection are byte-identical to the file`, async (t) => {
    if ((name === 'cachestat' || name === 'probes') && !requireAddon(t)) return;
    const server = servers.get(name);
    assert.ok(server);
    const list = cases();
    const before = server.stats().sendfileAnswers;
    const connection = await RawConnection.open(server.port);
    try {
      checkAnswers(name, list, await connection.sequential(list.map((c) => c.request)));
      // Twice: the second round starts on a connection whose previous answers all ended well.
      checkAnswers(`${name}, again`, list, await connection.sequential(list.map((c) => c.request)));
      assert.equal(connection.leftover(), 0, 'no byte beyond the announced bodies');
    } finally {
      connection.close();
    }
    const expected = name === 'cachestat' || name === 'probes' ? 2 * list.filter((c) => c.kernel).length : 0;
    assert.equal(server.stats().sendfileAnswers - before, expected, 'answers sent by sendfile');
  });

  test(`boot HTTP (sendfile ${name}): pipelined requests get their answers in order, byte-identical`, async (t) => {
    if ((name === 'cachestat' || name === 'probes') && !requireAddon(t)) return;
    const server = servers.get(name);
    assert.ok(server);
    const list = cases();
    const connection = await RawConnection.open(server.port);
    try {
      checkAnswers(`${name}, pipelined`, list, await connection.pipelined(list.map((c) => c.request)));
      assert.equal(connection.leftover(), 0);
    } finally {
      connection.close();
    }
  });
}

test('boot HTTP: answers by sendfile carry the same headers as answers through Node', async (t) => {
  if (!requireAddon(t)) return;
  const kernel = servers.get('cachestat');
  const node = servers.get('off');
  assert.ok(kernel && node);
  const list = cases();
  const a = await RawConnection.open(kernel.port);
  const b = await RawConnection.open(node.port);
  try {
    const viaKernel = await a.sequential(list.map((c) => c.request));
    const viaNode = await b.sequential(list.map((c) => c.request));
    viaKernel.forEach((reply, i) => {
      const other = viaNode[i];
      assert.ok(other);
      assert.deepEqual(comparable(reply), comparable(other), `case ${String(i)}`);
    });
  } finally {
    a.close();
    b.close();
  }
});
