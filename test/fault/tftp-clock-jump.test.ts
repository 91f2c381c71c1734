/**
 * Fault injection: the TFTP server's wall clock jumps back a day (then forward a day) while a
 * DATA block waits for its ACK. The server runs in a child process under libfaketime (its
 * monotonic clock runs on; the machine's clock is untouched); the test is the client, on
 * loopback, and withholds one ACK each time.
 *
 * Defined behaviour: the retransmission timeout is a duration — the unacknowledged block is sent
 * again within its retransmission timeout (an adaptive 100 ms–8 s; 1 s before a round trip is
 * measured), whatever the wall clock did, and the transfer completes with the
 * exact bytes. (With the wall clock, the step back re-armed the timer for a day: a lost block
 * waited a day for its retransmission, and a vanished client held its slot as long.)
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeTftpPacket, encodeAckPacket, encodeTftpRequest } from '../../bootsvc/tftp/packet.js';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { fakeClock } from './faketime.js';

const DAY = 24 * 3_600_000;
const BOOTSVC = resolve(dirname(fileURLToPath(import.meta.url)), '../../bootsvc/index.js');

/** Starts `startTftpServer` (1 s timeout) serving `root` in a child with `env`; resolves with its port. */
async function startServerChild(t: TestContext, dir: string, root: string, env: Readonly<Record<string, string>>): Promise<number> {
  const script = join(dir, 'tftp-child.mjs');
  await writeFile(script, [
    `import { startTftpServer } from ${JSON.stringify(BOOTSVC)};`,
    `const server = await startTftpServer({ listen: { host: '127.0.0.1', port: 0 }, roots: [${JSON.stringify(root)}], timeoutMs: 1000, maxRetries: 4, nativeSockets: false });`,
    'process.stdout.write(JSON.stringify({ port: server.address.port }) + "\\n");',
    "process.on('SIGTERM', () => { void server.stop().then(() => process.exit(0)); });",
  ].join('\n'));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => { done(); }));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  return new Promise<number>((ready, fail) => {
    let line = '';
    child.stdout.on('data', (c: Buffer) => {
      line += c.toString();
      const m = /"port":(\d+)/.exec(line);
      if (m?.[1] !== undefined) ready(Number(m[1]));
    });
    void exited.then(() => { fail(new Error(`TFTP child exited: ${output}`)); });
  });
}

/** A client socket whose datagrams are read one at a time. */
function client(t: TestContext): { socket: Socket; next(timeoutMs: number): Promise<{ data: Buffer; port: number } | undefined> } {
  const socket = createSocket('udp4');
  const queue: { data: Buffer; port: number }[] = [];
  let waiter: (() => void) | undefined;
  socket.on('message', (data, rinfo) => {
    queue.push({ data, port: rinfo.port });
    waiter?.();
  });
  t.after(() => new Promise<void>((done) => { socket.close(() => { done(); }); }));
  return {
    socket,
    async next(timeoutMs) {
      if (queue.length === 0) {
        await new Promise<void>((done) => {
          const timer = setTimeout(done, timeoutMs);
          waiter = () => { clearTimeout(timer); done(); };
        });
        waiter = undefined;
      }
      return queue.shift();
    },
  };
}

test('TFTP: a wall clock stepped back (then forward) a day while a block waits for its ACK: retransmitted within its timeout, the transfer completes', async (t) => {
  const dir = await scratchDir('fault-tftp-clock');
  t.after(() => removeDir(dir));
  const clock = await fakeClock(t, dir);
  if (clock === undefined) return;
  const root = join(dir, 'root');
  await mkdir(root);
  const file = Buffer.alloc(512 * 5 + 100);
  for (let i = 0; i < file.length; i++) file[i] = (i * 7) & 0xff;
  await writeFile(join(root, 'boot.bin'), file);
  const port = await startServerChild(t, dir, root, clock.env);
  const c = client(t);
  await new Promise<void>((done) => { c.socket.bind(0, '127.0.0.1', done); });
  c.socket.send(encodeTftpRequest('rrq', 'boot.bin'), port, '127.0.0.1');

  const received: Buffer[] = [];
  const withheld = new Map<number, number>([[2, -DAY], [4, 0]]); // block → wall-clock offset set while its ACK is withheld
  for (let block = 1; ; block++) {
    const first = await c.next(5000);
    assert.ok(first !== undefined, `DATA ${block} arrives`);
    const packet = decodeTftpPacket(first.data);
    assert.equal(packet.kind === 'data' ? packet.block : -1, block);
    const offset = withheld.get(block);
    let answer = first;
    if (offset !== undefined) {
      await clock.set(offset);
      const startedMs = performance.now();
      const again = await c.next(4000);
      const waitedMs = performance.now() - startedMs;
      assert.ok(again !== undefined, `DATA ${block} is sent again after the step to ${offset / DAY} d (waited ${Math.round(waitedMs)} ms)`);
      const resent = decodeTftpPacket(again.data);
      assert.equal(resent.kind === 'data' ? resent.block : -1, block, 'the same block, retransmitted');
      t.diagnostic(`block ${block}: retransmitted ${Math.round(waitedMs)} ms after the step to ${offset / DAY} d`);
      answer = again;
    }
    if (packet.kind !== 'data') break;
    received.push(Buffer.from(packet.data));
    c.socket.send(encodeAckPacket(block), answer.port, '127.0.0.1');
    if (packet.data.length < 512) break;
  }
  const got = Buffer.concat(received);
  assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(file).digest('hex'), 'the exact bytes');
});
