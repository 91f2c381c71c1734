/**
 * The boot HTTP server sending large bodies (kernels, initrds, images: over 1 MiB) by sendfile
 * from the addon's sender threads (native/sendfile/sender_thread.c, kernel-send.ts `sendLarge`),
 * against the same server without them (addon off, built nowhere, threads off, paced): whole
 * files of 20 MiB and 50 MiB + 3 bytes and large Range answers (RFC 9110 §14) are byte-identical
 * on one keep-alive connection, with a HEAD and a small follow-up answer on it; 24 clients at
 * once; a client that stops reading for a while (the sender waits for EPOLLOUT) while other
 * clients are answered; a client that goes away mid-body (while reading, and while not
 * reading) — no crash, the job's descriptors are closed, the server keeps serving; a server
 * stopped during a job (the job is cancelled).
 */
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBootHttpServer, type BootHttpServer, type BootHttpServerOptions } from '../../../../bootsvc/http/boot-http-server.js';
import { DEFAULT_SENDFILE_ADDON_PATH, loadSendfileAddon } from '../../../../bootsvc/http/kernel-send.js';
import type { BootEvent } from '../../../../bootsvc/events.js';
import { skipOrFail } from '../../../helpers/integration.js';
import { waitFor } from '../../../helpers/local-agent.js';
import { mainThreadNice, ownThreads, SCHED_BATCH } from '../../../helpers/threads.js';
import { runMainThreadAtUnitNice } from '../../../helpers/unit-nice.js';
import { RawConnection, type HashedResponse } from './raw-http.js';

const MiB = 1024 * 1024;
const SMALL_SIZE = 20 * MiB;
const BIG_SIZE = 50 * MiB + 3;
let dir: string;
let small: Buffer;
let big: Buffer;
const servers = new Map<string, BootHttpServer>();
/** The flight-recorder events of the `threads` server. */
const threadEvents: BootEvent[] = [];
// As systemd starts the agent (Nice=-5): the sender threads start there and must move themselves back.
runMainThreadAtUnitNice();
const addon = loadSendfileAddon();
const hasThreads = addon !== undefined && 'senderSend' in addon;
const THREADED = ['threads (the default)', 'threads, probes'];

function requireThreads(t: TestContext): boolean {
  if (hasThreads) return true;
  skipOrFail(t, `sendfile addon with sender threads missing at ${DEFAULT_SENDFILE_ADDON_PATH} (npm run build:native)`);
  return false;
}

function pattern(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed >>> 0;
  for (let i = 0; i + 4 <= size; i += 4) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out.writeUInt32LE(x, i);
  }
  for (let i = size - (size % 4); i < size; i++) out[i] = i & 0xff;
  return out;
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rackside-boothttp-large-'));
  mkdirSync(join(dir, 'images'));
  small = pattern(SMALL_SIZE, 1);
  big = pattern(BIG_SIZE, 2);
  writeFileSync(join(dir, 'images/kernel'), small);
  writeFileSync(join(dir, 'images/initrd'), big);
  const variants: Record<string, Partial<BootHttpServerOptions>> = {
    'threads (the default)': { sendfile: {}, onEvent: (e) => { threadEvents.push(e); } },
    'threads, probes': { sendfile: { residency: 'probes', largeBodies: true } },
    'threads off': { sendfile: { largeBodies: false } },
    off: { sendfile: false },
    'not built': { sendfile: { addonPath: join(dir, 'nowhere/sendfile_range.node') } },
    paced: { sendfile: {}, maxBytesPerSecond: 4096 * MiB },
  };
  for (const [name, extra] of Object.entries(variants)) {
    servers.set(name, await startBootHttpServer({ host: '127.0.0.1', port: 0, mounts: { images: join(dir, 'images') }, plans: { target: () => Promise.resolve(undefined) }, ...extra }));
  }
});

after(async () => {
  for (const server of servers.values()) await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function checkReply(what: string, reply: HashedResponse, status: number, body: Buffer): void {
  assert.equal(reply.status, status, what);
  assert.equal(reply.headers['content-length'], String(body.length), what);
  assert.equal(reply.length, body.length, `${what}: body length`);
  assert.equal(reply.sha256, sha(body), `${what}: body bytes match the file`);
  assert.equal(reply.headers['transfer-encoding'], undefined, what);
}

/** Descriptors this process holds now on `file` (the server runs in it), or on any socket. */
function descriptorsTo(file: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (file === 'socket' ? target.startsWith('socket:') : target === file) count += 1;
    } catch {
      // closed since the listing
    }
  }
  return count;
}

function serverOf(name: string): BootHttpServer {
  const server = servers.get(name);
  assert.ok(server, name);
  return server;
}

for (const name of ['threads (the default)', 'threads, probes', 'threads off', 'off', 'not built', 'paced']) {
  test(`boot HTTP large bodies (${name}): whole files and large ranges on one keep-alive connection are byte-identical, with HEAD and a small follow-up`, async (t) => {
    if (THREADED.includes(name) && !requireThreads(t)) return;
    const server = serverOf(name);
    const before = server.stats().sendfileAnswers;
    const client = await RawConnection.open(server.port);
    try {
      for (let round = 0; round < 2; round++) {
        checkReply('20 MiB whole', await client.get('/images/kernel'), 200, small);
        checkReply('50 MiB + 3 whole', await client.get('/images/initrd'), 200, big);
        checkReply('range 1000001-30000000', await client.get('/images/initrd', { Range: 'bytes=1000001-30000000' }), 206, big.subarray(1000001, 30000001));
        checkReply('suffix 5 MiB + 1', await client.get('/images/initrd', { Range: `bytes=-${String(5 * MiB + 1)}` }), 206, big.subarray(BIG_SIZE - 5 * MiB - 1));
        const head = await client.get('/images/initrd', {}, 'HEAD');
        assert.equal(head.status, 200);
        assert.equal(head.headers['content-length'], String(BIG_SIZE));
        assert.equal(head.length, 0, 'HEAD has no body');
        checkReply('small follow-up', await client.get('/images/kernel', { Range: 'bytes=100-4195' }), 206, small.subarray(100, 4196));
      }
      assert.equal(client.leftover(), 0, 'no byte beyond the announced bodies');
    } finally {
      client.close();
    }
    // Each round: 4 large bodies by the threads (with them) and 1 small by sendfile (with the addon).
    const expected = THREADED.includes(name) ? 2 * 5 : name === 'threads off' || name === 'paced' ? 2 : 0;
    assert.equal(server.stats().sendfileAnswers - before, expected, 'answers sent by sendfile');
    if (THREADED.includes(name)) {
      // Two sender threads per process, named for top -H, under SCHED_BATCH at normal priority
      // while the event loop keeps its raised one (native/thread_priority.h): one addon instance
      // serves every server of this process.
      const senders = ownThreads().filter((thread) => thread.name === 'rackside-send');
      assert.equal(senders.length, 2);
      for (const sender of senders) {
        assert.equal(sender.policy, SCHED_BATCH);
        assert.equal(sender.nice, Math.max(0, mainThreadNice()));
      }
    }
  });
}

for (const name of ['threads (the default)', 'off']) {
  test(`boot HTTP large bodies (${name}): 24 clients at once each get the whole 20 MiB file, then a second answer on the same connection`, async (t) => {
    if (THREADED.includes(name) && !requireThreads(t)) return;
    const server = serverOf(name);
    const clients = await Promise.all(Array.from({ length: 24 }, () => RawConnection.open(server.port)));
    try {
      const replies = await Promise.all(clients.map((c, i) => c.get(i % 3 === 0 ? '/images/initrd' : '/images/kernel', i % 3 === 0 ? { Range: `bytes=${String(i)}-${String(i + 3 * MiB)}` } : {})));
      replies.forEach((r, i) => {
        if (i % 3 === 0) checkReply(`client ${String(i)}`, r, 206, big.subarray(i, i + 3 * MiB + 1));
        else checkReply(`client ${String(i)}`, r, 200, small);
      });
      const again = await Promise.all(clients.map((c) => c.get('/images/kernel', { Range: 'bytes=0-2097152' })));
      again.forEach((r, i) => { checkReply(`client ${String(i)}, again`, r, 206, small.subarray(0, 2097153)); });
    } finally {
      for (const c of clients) c.close();
    }
  });
}

test('boot HTTP large bodies: a client that stops reading for a while gets every byte, and others are answered meanwhile', async (t) => {
  if (!requireThreads(t)) return;
  const server = serverOf('threads (the default)');
  const slow = await RawConnection.open(server.port);
  try {
    const answer = slow.get('/images/initrd');
    for (let pause = 0; pause < 3; pause++) {
      await waitFor('some body bytes', () => Promise.resolve(slow.bodyBytes > pause * 4 * MiB ? true : undefined), 20_000);
      slow.socket.pause();
      // The server's socket is full now; the sender thread waits for EPOLLOUT while others are served.
      const other = await RawConnection.open(server.port);
      try {
        checkReply('another client meanwhile', await other.get('/images/kernel'), 200, small);
      } finally {
        other.close();
      }
      await sleep(200);
      slow.socket.resume();
    }
    checkReply('slow client', await answer, 200, big);
    checkReply('slow client, follow-up', await slow.get('/images/kernel', { Range: `bytes=${String(MiB)}-${String(4 * MiB)}` }), 206, small.subarray(MiB, 4 * MiB + 1));
  } finally {
    slow.close();
  }
});

for (const when of ['while reading', 'while not reading']) {
  test(`boot HTTP large bodies: a client that goes away mid-body (${when}) costs no descriptor and the server keeps serving`, async (t) => {
    if (!requireThreads(t)) return;
    const server = serverOf('threads (the default)');
    // Warm the open-file cache, so the descriptor count below holds only what the job adds.
    const warm = await RawConnection.open(server.port);
    checkReply('warm-up', await warm.get('/images/initrd', { Range: 'bytes=0-9' }), 206, big.subarray(0, 10));
    warm.close();
    await waitFor('the warm-up connection closed', () => Promise.resolve(server.stats().active === 0 ? true : undefined), 10_000);
    const initrd = join(dir, 'images/initrd');
    const files = descriptorsTo(initrd);
    const sockets = descriptorsTo('socket');
    assert.ok(files >= 1, 'the open-file cache holds the file');
    for (let i = 0; i < 3; i++) {
      const client = await RawConnection.open(server.port);
      const answer = client.get('/images/initrd').catch((err: unknown) => err);
      await waitFor('the body started', () => Promise.resolve(client.bodyBytes > 2 * MiB ? true : undefined), 20_000);
      if (when === 'while not reading') {
        client.socket.pause();
        await sleep(100);
      }
      client.socket.resetAndDestroy();
      assert.ok((await answer) instanceof Error, 'the client saw an incomplete answer');
    }
    await waitFor('every response closed', () => Promise.resolve(server.stats().active === 0 ? true : undefined), 20_000);
    // The jobs' dups of the file and of the sockets are closed, as are the server's sockets.
    await waitFor('the descriptors of the jobs closed', () => Promise.resolve(descriptorsTo(initrd) <= files && descriptorsTo('socket') <= sockets ? true : undefined), 20_000);
    // Each cut answer is reported incomplete, with the body bytes the sender thread sent (at
    // least what the client had read) — heard before the socket was destroyed.
    const cut = threadEvents.slice(-3);
    assert.equal(cut.length, 3);
    for (const e of cut) {
      assert.ok(e.kind === 'http' && e.path === '/images/initrd' && !e.completed, JSON.stringify(e));
      assert.ok(e.bytes > 2 * MiB && e.bytes < BIG_SIZE, `bytes ${String(e.bytes)}`);
    }
    const next = await RawConnection.open(server.port);
    try {
      checkReply('after the disconnects', await next.get('/images/kernel'), 200, small);
    } finally {
      next.close();
    }
  });
}

test('boot HTTP large bodies: stopping the server during a job cancels it and closes the connection', async (t) => {
  if (!requireThreads(t)) return;
  const events: BootEvent[] = [];
  const server = await startBootHttpServer({ host: '127.0.0.1', port: 0, mounts: { images: join(dir, 'images') }, plans: { target: () => Promise.resolve(undefined) }, onEvent: (e) => { events.push(e); } });
  const client = await RawConnection.open(server.port);
  const initrd = join(dir, 'images/initrd');
  const before = descriptorsTo(initrd);
  try {
    const answer = client.get('/images/initrd').catch((err: unknown) => err);
    await waitFor('the body started', () => Promise.resolve(client.bodyBytes > MiB ? true : undefined), 20_000);
    client.socket.pause();
    await sleep(100);
    await server.stop();
    client.socket.resume();
    const outcome = await answer;
    assert.ok(outcome instanceof Error, 'the answer was cut short');
    // At most the open-file cache's descriptor (closed when idle) is left: the job's dup is gone.
    await waitFor('the job descriptors closed', () => Promise.resolve(descriptorsTo(initrd) <= before + 1 ? true : undefined), 20_000);
    // The flight recorder hears of an incomplete answer, with every byte the thread sent —
    // counted when the job let go, so at least what the client read.
    const event = await waitFor('the response event', () => Promise.resolve(events.find((e) => e.kind === 'http' && e.path === '/images/initrd')), 20_000);
    assert.ok(event.kind === 'http');
    assert.equal(event.completed, false);
    assert.ok(event.bytes >= client.bodyBytes && event.bytes > MiB && event.bytes < BIG_SIZE, `bytes ${String(event.bytes)} (client got ${String(client.bodyBytes)})`);
  } finally {
    client.close();
  }
});
