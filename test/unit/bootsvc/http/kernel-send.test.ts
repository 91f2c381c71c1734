/**
 * sendFile with a KernelSender (sendfile(2) through native/sendfile) on a plain node:http
 * server, for what the whole-server test cannot arrange: a client that does not read (the
 * socket takes only part of the body; the rest follows through Node, in order), a range whose
 * pages are not in the page cache (answered through Node, which warms it for the next one), a
 * file cut short under a planned answer, a TLS socket (never sent by sendfile), the addon's
 * argument checks, and — with a stand-in addon that sends a chosen number of bytes — every way
 * a send can stop short (in the head, after the head, in the body, an error before any byte) —
 * and, with stand-in sender threads, a cancelled job whose final count comes after the close.
 */
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { truncate } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRegularFile } from '../../../../bootsvc/http/file-jail.js';
import type { BootEvent } from '../../../../bootsvc/events.js';
import { DEFAULT_SENDFILE_ADDON_PATH, KernelSender, loadSendfileAddon, type ResidencyCheck, type SendfileAddon, type SenderThreadAddon } from '../../../../bootsvc/http/kernel-send.js';
import { createBootHttpStats, trackResponse } from '../../../../bootsvc/http/response-recorder.js';
import { sendFile, type SentFile } from '../../../../bootsvc/http/send-file.js';
import { requireTools } from '../../../helpers/integration.js';
import { waitFor } from '../../../helpers/local-agent.js';
import { labCertificate } from '../../../lab/redfish/tls.js';
import { RawConnection } from './raw-http.js';

const MiB = 1024 * 1024;
const SIZE = 8 * MiB;
const addon = loadSendfileAddon();
let dir: string;
let data: Buffer;

function requireAddon(t: TestContext): SendfileAddon | undefined {
  if (addon !== undefined) return addon;
  if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') assert.fail(`sendfile addon missing at ${DEFAULT_SENDFILE_ADDON_PATH} (npm run build:native)`);
  t.skip('sendfile addon not built (npm run build:native)');
  return undefined;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-kernel-send-'));
  data = Buffer.alloc(SIZE);
  for (let i = 0; i + 4 <= SIZE; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
  writeFileSync(join(dir, 'image.raw'), data);
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A handler answering `/<name>[?shrink=N]` from `dir` with sendFile and `kernel`; results land in `log`. */
function fileHandler(kernel: KernelSender, log: SentFile[]): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const name = url.pathname.slice(1);
    void (async () => {
      const file = await openRegularFile(join(dir, name));
      if (file.kind !== 'file') throw new Error(`cannot open ${name}: ${file.kind}`);
      // ?shrink=N: the file is cut to N bytes after it was opened and planned.
      const shrink = url.searchParams.get('shrink');
      if (shrink !== null) await truncate(join(dir, name), Number(shrink));
      try {
        log.push(await sendFile(req, res, { fd: file.handle.fd, size: file.size, mtimeMs: file.mtimeMs }, name, undefined, undefined, kernel));
      } finally {
        await file.handle.close();
      }
    })();
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => { resolve(); }));
}

/** Drops the clean pages of `path` from the page cache (fsync, then `dd iflag=nocache`: POSIX_FADV_DONTNEED). */
function evict(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  execFileSync('dd', [`if=${path}`, 'iflag=nocache', 'count=0', 'status=none']);
}

/** Whether the range is in the page cache, as the addon's probes see it. */
function cached(a: SendfileAddon, path: string, offset: number, count: number): boolean {
  const fd = openSync(path, 'r');
  try {
    return a.rangeCached(fd, offset, count, 1) === 1;
  } finally {
    closeSync(fd);
  }
}

test('sendFile by sendfile: to a client that does not read, answers go by sendfile until the socket is full, then the rest through Node, all byte-identical', async (t) => {
  const a = requireAddon(t);
  if (a === undefined) return;
  const kernel = new KernelSender(a);
  const log: SentFile[] = [];
  const server = createServer(fileHandler(kernel, log));
  const port = await listen(server);
  const connection = await RawConnection.open(port);
  try {
    // Not reading: the socket buffers fill, answer after answer, until sendfile stops at EAGAIN.
    connection.socket.pause();
    const spans: { start: number; length: number }[] = [];
    for (let i = 0; i < 64 && kernel.stats().partial === 0; i++) {
      const length = i % 2 === 0 ? MiB : 200_000 + i;
      const start = (i * 1_234_567) % (SIZE - length);
      spans.push({ start, length });
      connection.write({ path: '/image.raw', headers: { Range: `bytes=${String(start)}-${String(start + length - 1)}` } });
      // Counted once sendfile returned (a remainder through Node may wait for the client).
      await waitFor(`answer ${String(i)} taken`, () => Promise.resolve(kernel.stats().answers > i ? true : undefined), 10_000);
    }
    const stats = kernel.stats();
    assert.equal(stats.partial, 1, 'one answer went partly by sendfile');
    assert.equal(stats.answers, spans.length, 'every answer started by sendfile');
    assert.ok(stats.bytes < spans.reduce((sum, s) => sum + s.length, 0), 'Node sent the rest of the last one');
    connection.socket.resume();
    for (const [i, span] of spans.entries()) {
      const reply = await connection.read();
      assert.equal(reply.status, 206);
      assert.ok(reply.body.equals(data.subarray(span.start, span.start + span.length)), `answer ${String(i)}: body bytes match the file`);
    }
    await waitFor('all handed over', () => Promise.resolve(log.length === spans.length ? true : undefined), 10_000);
    assert.deepEqual(log.map((sent) => sent.bytes), spans.map((s) => s.length));
    await waitFor('all completed', () => Promise.resolve(log.every((sent) => sent.completed) ? true : undefined), 10_000);
  } finally {
    connection.close();
    await close(server);
  }
});

for (const residency of ['cachestat', 'probes'] as const satisfies readonly ResidencyCheck[]) {
  test(`sendFile by sendfile (${residency}): a range not in the page cache goes through Node, the next one by sendfile`, async (t) => {
    const a = requireAddon(t);
    if (a === undefined || !requireTools(t, ['dd'])) return;
    const path = join(dir, `cold-${residency}.raw`);
    writeFileSync(path, data);
    evict(path);
    const start = 6 * MiB;
    if (cached(a, path, start, 65536)) {
      t.skip('this file system keeps the pages cached after POSIX_FADV_DONTNEED (tmpfs?)');
      return;
    }
    const kernel = new KernelSender(a, residency);
    const log: SentFile[] = [];
    const server = createServer(fileHandler(kernel, log));
    const port = await listen(server);
    const connection = await RawConnection.open(port);
    try {
      const request = { path: `/cold-${residency}.raw`, headers: { Range: `bytes=${String(start)}-${String(start + 65535)}` } };
      const [cold] = await connection.sequential([request]);
      assert.ok(cold?.body.equals(data.subarray(start, start + 65536)), 'the cold answer is right');
      assert.deepEqual({ cold: kernel.stats().cold, answers: kernel.stats().answers }, { cold: 1, answers: 0 });
      const [warm] = await connection.sequential([request]);
      assert.ok(warm?.body.equals(data.subarray(start, start + 65536)), 'the warm answer is right');
      assert.deepEqual({ cold: kernel.stats().cold, answers: kernel.stats().answers }, { cold: 1, answers: 1 });
    } finally {
      connection.close();
      await close(server);
    }
  });
}

test('sendFile by sendfile: a file cut short after its answer was planned is cut off, not padded or hung', async (t) => {
  const a = requireAddon(t);
  if (a === undefined) return;
  writeFileSync(join(dir, 'shrinks.raw'), data.subarray(0, 200_000));
  const kernel = new KernelSender(a);
  const log: SentFile[] = [];
  const server = createServer(fileHandler(kernel, log));
  const port = await listen(server);
  const connection = await RawConnection.open(port);
  try {
    await assert.rejects(connection.sequential([{ path: '/shrinks.raw?shrink=1000', headers: { Range: 'bytes=0-99999' } }]), /incomplete response|closed/);
    await waitFor('the answer given up', () => Promise.resolve(log.length > 0 ? true : undefined), 10_000);
    assert.equal(log[0]?.completed, false);
  } finally {
    connection.close();
    await close(server);
  }
});

test('sendFile by sendfile: a TLS socket is never sent by sendfile (the bytes must go through TLS)', async (t) => {
  const a = requireAddon(t);
  if (a === undefined || !requireTools(t, ['openssl'])) return;
  const kernel = new KernelSender(a);
  const log: SentFile[] = [];
  const { key, cert } = await labCertificate();
  const server = createHttpsServer({ key, cert }, fileHandler(kernel, log));
  const port = await listen(server);
  try {
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, path: '/image.raw', headers: { Range: 'bytes=65536-131071' }, ca: cert, servername: 'localhost' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => { resolve(Buffer.concat(chunks)); });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    assert.ok(body.equals(data.subarray(65536, 131072)));
    assert.equal(kernel.stats().answers, 0);
  } finally {
    await close(server);
  }
});

/** An addon stand-in whose sendRange writes the first `bytesFor(head, body)` bytes of head + body itself (or returns a negative errno). */
function standIn(bytesFor: (headBytes: number, bodyBytes: number) => number): SendfileAddon {
  return {
    rangeCached: () => 1,
    sendRange: (socketFd, fileFd, offset, count, header = '') => {
      const n = bytesFor(header.length, count);
      if (n <= 0) return n;
      const body = Buffer.alloc(count);
      readSync(fileFd, body, 0, count, offset);
      // Small answers: a fresh loopback socket takes them whole.
      writeSync(socketFd, Buffer.concat([Buffer.from(header, 'latin1'), body]).subarray(0, n));
      return n;
    },
  };
}

const stops: Record<string, (head: number, body: number) => number> = {
  'in the head': () => 10,
  'right after the head': (head) => head,
  'in the body': (head) => head + 300,
  'with everything sent': (head, body) => head + body,
  'at a full socket (nothing sent)': () => 0,
  'at an error before any byte (EPIPE)': () => -32,
};
for (const [name, bytesFor] of Object.entries(stops)) {
  test(`sendFile by sendfile: a send that stops ${name} is completed through Node, byte-identical, and keep-alive goes on`, async () => {
    const kernel = new KernelSender(standIn(bytesFor));
    const log: SentFile[] = [];
    const server = createServer(fileHandler(kernel, log));
    const port = await listen(server);
    const connection = await RawConnection.open(port);
    try {
      const replies = await connection.sequential([
        { path: '/image.raw', headers: { Range: 'bytes=1000-2999' } },
        { path: '/image.raw', headers: { Range: 'bytes=5000-5999' } },
      ]);
      assert.equal(replies[0]?.status, 206);
      assert.equal(replies[0].headers['content-range'], `bytes 1000-2999/${String(SIZE)}`);
      assert.ok(replies[0].body.equals(data.subarray(1000, 3000)), 'first answer: body bytes match the file');
      assert.ok(replies[1]?.body.equals(data.subarray(5000, 6000)), 'second answer on the same connection');
      assert.equal(connection.leftover(), 0);
      await waitFor('both completed', () => Promise.resolve(log.length === 2 && log.every((sent) => sent.completed) ? true : undefined), 10_000);
      assert.deepEqual(log.map((sent) => sent.bytes), [2000, 1000]);
      assert.equal(kernel.stats().answers, 2);
    } finally {
      connection.close();
      await close(server);
    }
  });
}

test('sendfile addon: bad arguments throw ERR_INVALID_ARG; a send on a descriptor that is no socket reports -errno', (t) => {
  const a = requireAddon(t);
  if (a === undefined) return;
  const fd = openSync(join(dir, 'image.raw'), 'r');
  try {
    const invalid = { code: 'ERR_INVALID_ARG' };
    assert.throws(() => a.rangeCached(-1, 0, 1, 0), invalid);
    assert.throws(() => a.rangeCached(fd, -1, 1, 0), invalid);
    assert.throws(() => a.rangeCached(fd, 0.5, 1, 0), invalid);
    assert.throws(() => a.rangeCached(fd, 0, 0, 0), invalid);
    assert.throws(() => a.rangeCached(fd, 0, 1, 7), invalid);
    assert.throws(() => a.sendRange(Number.NaN, fd, 0, 1), invalid);
    assert.throws(() => a.sendRange(fd, fd, 0, Number.MAX_SAFE_INTEGER + 2), invalid);
    assert.throws(() => a.sendRange(fd, fd, 0, 1, 42 as unknown as string), invalid);
    // A range past the end of the file is not cached (the file shrank): answered through Node.
    assert.equal(a.rangeCached(fd, SIZE - 1, 2, 0), 0);
    assert.equal(a.rangeCached(fd, SIZE - 1, 2, 1), 0);
    assert.equal(a.rangeCached(fd, 0, SIZE, 0), 1);
    // sendfile(2) to a read-only regular file: EBADF ("out_fd was not opened for writing").
    assert.equal(a.sendRange(fd, fd, 0, 10), -9);
    // send(2) of a head on a descriptor that is no socket: ENOTSOCK (88).
    assert.equal(a.sendRange(fd, fd, 0, 10, 'HTTP/1.1 200 OK\r\n\r\n'), -88);
  } finally {
    closeSync(fd);
  }
});

test('sendFile by the sender threads: a job cancelled while a sendfile call is in flight reports its final bytes to the flight recorder, not the cancel-time snapshot', async () => {
  // A stand-in for the threads, to fix the race the real ones lose now and then: at cancel the
  // job has sent 100 body bytes; the call in flight adds 4900 before the shutdown ends it.
  let onDone: ((id: number, bytes: number, errno: number) => void) | undefined;
  const cancels: number[] = [];
  const threads: SendfileAddon & SenderThreadAddon = {
    ...standIn(() => 0),
    senderStart: (done) => { onDone = done; },
    senderSend: () => 0,
    senderCancel: (id) => {
      cancels.push(id);
      setTimeout(() => onDone?.(id, 5000, 32), 50);
      return 100;
    },
    senderStats: () => [0, 0],
  };
  const kernel = new KernelSender(threads);
  const events: BootEvent[] = [];
  const stats = createBootHttpStats();
  let queued: (() => void) | undefined;
  const jobQueued = new Promise<void>((resolve) => { queued = resolve; });
  const server = createServer((req, res) => {
    const notes = trackResponse(req, res, { stats, onEvent: (e) => { events.push(e); } });
    const sent: SentFile = { status: 0, bytes: 0, completed: false };
    notes.sent = sent;
    void (async () => {
      const file = await openRegularFile(join(dir, 'image.raw'));
      if (file.kind !== 'file') throw new Error('cannot open image.raw');
      try {
        const done = sendFile(req, res, { fd: file.handle.fd, size: file.size, mtimeMs: file.mtimeMs }, 'image.raw', sent, undefined, kernel);
        queued?.();
        await done;
      } finally {
        await file.handle.close();
      }
    })();
  });
  const port = await listen(server);
  const connection = await RawConnection.open(port);
  try {
    const answer = connection.get('/image.raw').catch((err: unknown) => err);
    await jobQueued;
    // Node closes the socket mid-job (as a server stop does): the job is cancelled.
    server.closeAllConnections();
    assert.ok((await answer) instanceof Error, 'the answer was cut short');
    const event = await waitFor('the response event', () => Promise.resolve(events[0]), 10_000);
    assert.equal(cancels.length, 1);
    assert.ok(event.kind === 'http');
    assert.equal(event.completed, false);
    assert.equal(event.bytes, 5000, 'the final count of the job');
    assert.equal(stats.bytes, 5000);
    assert.equal(stats.active, 0);
    assert.equal(kernel.stats().threadBytes, 5000);
  } finally {
    connection.close();
    await close(server);
  }
});
