/**
 * One table of transfer cases (transfer-cases.ts) against both TFTP engines of
 * bootsvc/tftp/transfer-engine.ts — `event-loop` (the reducer on the event loop) and `thread`
 * (the sending phase on the addon's transfer thread, native/udp-bind/tftp_pump.c) — each over a
 * connected native socket on loopback, played by a dgram client. The addon is part of the build
 * (`npm run build:native`): without it this test fails rather than skipping the thread engine.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { test, type TestContext } from 'node:test';
import { bufferSource } from '../../../../bootsvc/tftp/file-source.js';
import { decodeTftpPacket, encodeAckPacket, encodeErrorPacket } from '../../../../bootsvc/tftp/packet.js';
import { DEFAULT_MAX_WINDOW_BYTES } from '../../../../bootsvc/tftp/options.js';
import { transferConfigFor, type TransferSettings } from '../../../../bootsvc/tftp/request-handler.js';
import type { TftpEvent } from '../../../../bootsvc/tftp/server-types.js';
import { createTransferEngine, type TransferEngine, type TransferEngineKind, type TransferHost } from '../../../../bootsvc/tftp/transfer-engine.js';
import { isPumpAddon } from '../../../../bootsvc/tftp/transfer-pump.js';
import { DEFAULT_NATIVE_ADDON_PATH, loadConnectedAddon, openTransferSocket } from '../../../../bootsvc/tftp/transfer-socket.js';
import { transferCases, type CaseStep, type TransferCase } from './transfer-cases.js';

const DEFAULTS: TransferSettings = { maxBlockSize: 65464, maxWindowSize: 64, maxWindowBytes: DEFAULT_MAX_WINDOW_BYTES, timeoutMs: 1000, minTimeoutMs: 100, maxTimeoutMs: 8000, maxRetries: 8 };
/** How long a step waits for a datagram, and how long `quiet` listens. */
const WAIT_MS = 5000;
const QUIET_MS = 150;

/** A datagram as the table writes it: a DATA block number or an OACK's options. */
type Seen = number | { oack: Record<string, string> };

function seen(bytes: Buffer): Seen {
  const packet = decodeTftpPacket(bytes);
  if (packet.kind === 'data') return packet.block;
  if (packet.kind === 'oack') return { oack: Object.fromEntries(packet.options.map((o) => [o.name, o.value])) };
  return { oack: { unexpected: packet.kind } };
}

/** The client: a dgram socket that queues what arrives and answers to the transfer's port (its TID). */
class Client {
  readonly socket: Socket = createSocket('udp4');
  private readonly queue: Buffer[] = [];
  /** Arrival times, parallel to `queue`. */
  private readonly times: number[] = [];
  /** When the last datagram taken arrived. */
  lastTakenAtMs = 0;
  private wake: (() => void) | undefined;
  private serverPort = 0;
  private closed = false;

  constructor() {
    this.socket.on('message', (bytes, rinfo) => {
      this.serverPort = rinfo.port;
      this.queue.push(bytes);
      this.times.push(performance.now());
      this.wake?.();
    });
  }

  /** Takes the next `count` datagrams; `gapMs` is how long after the last one taken the first of them arrived. */
  async take(count: number, what: string): Promise<Buffer[]> {
    return (await this.takeTimed(count, what)).bytes;
  }

  async takeTimed(count: number, what: string): Promise<{ bytes: Buffer[]; gapMs: number; atMs: number }> {
    const deadline = Date.now() + WAIT_MS;
    while (this.queue.length < count) {
      const left = deadline - Date.now();
      assert.ok(left > 0, `waited ${WAIT_MS} ms for ${what}; got ${this.queue.length} of ${count}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    const times = this.times.splice(0, count);
    const gapMs = (times[0] ?? 0) - this.lastTakenAtMs;
    this.lastTakenAtMs = times.at(-1) ?? this.lastTakenAtMs;
    return { bytes: this.queue.splice(0, count), gapMs, atMs: times[0] ?? 0 };
  }

  /** What arrived and was not taken. */
  rest(): Seen[] {
    this.times.splice(0);
    return this.queue.splice(0).map(seen);
  }

  send(packet: Buffer): void {
    this.socket.send(packet, this.serverPort, '127.0.0.1');
  }

  /** Closes the socket (once). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close();
  }
}

interface Ended {
  ok: boolean;
  confirmed: boolean;
  event: TftpEvent;
}

async function play(t: TestContext, kind: TransferEngineKind, c: TransferCase): Promise<{ engine: TransferEngine; ended: Ended; client: Client }> {
  const addon = loadConnectedAddon();
  assert.ok(addon !== undefined && isPumpAddon(addon), `the native addon with the transfer thread is missing at ${DEFAULT_NATIVE_ADDON_PATH} (npm run build:native)`);
  const client = new Client();
  await new Promise<void>((resolve) => client.socket.bind(0, '127.0.0.1', resolve));
  t.after(() => {
    client.close();
  });
  const bytes = Buffer.from(Array.from({ length: c.sizeBytes }, (_, i) => (i * 13 + 7) & 0xff));
  const { config, ignored } = transferConfigFor({ options: c.options ?? [] }, { ...DEFAULTS, ...c.settings }, bytes.length);
  const socket = await openTransferSocket(addon, '127.0.0.1', '127.0.0.1', client.socket.address().port);
  assert.equal(socket.native, true);
  let end: (ended: Ended) => void = () => undefined;
  const endedP = new Promise<Ended>((resolve) => {
    end = resolve;
  });
  let last: TftpEvent | undefined;
  const host: TransferHost = {
    now: () => performance.timeOrigin + performance.now(),
    emit: (event) => {
      last = event;
    },
    finished: (_run, ok, confirmed) => {
      assert.ok(last !== undefined);
      end({ ok, confirmed, event: last });
    },
    malformed: () => assert.fail('malformed datagram'),
    unexpected: () => assert.fail('unexpected datagram'),
  };
  const engine = createTransferEngine(host, {
    key: 'case', client: { address: '127.0.0.1', port: client.socket.address().port }, file: 'f', socket, source: bufferSource(bytes), startedAtMs: host.now(),
    config, ignoredOptions: ignored, transferThread: kind === 'thread',
  });
  assert.equal(engine.kind, kind);
  t.after(() => engine.abort('test over'));
  const since: Since = { atMs: performance.now(), gapsMs: 0 };
  engine.start();
  for (const [i, step] of c.script.entries()) await runStep(engine, client, since, step, `step ${i} ${JSON.stringify(step)}`);
  return { engine, ended: await withDeadline(endedP, 'the transfer to end'), client };
}

async function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`waited ${WAIT_MS} ms for ${what}`));
    }, WAIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The last moment the test knows came before the server's next datagram (the engine's start, or
 * the client's last send), and the `gapMs` expected since. A datagram's arrival here is read when
 * this process's loop gets to it: on a loaded machine the previous one's can be read late (CI,
 * two CPU hogs: a 100 ms retransmission "arrived" 71 ms after it), so gaps are summed from a
 * moment before the server's send instead — each send comes at least its gap after the one
 * before, so at least their sum after that moment, however late anything is read.
 */
interface Since {
  atMs: number;
  gapsMs: number;
}

async function runStep(engine: TransferEngine, client: Client, since: Since, step: CaseStep, what: string): Promise<void> {
  if ('expect' in step) {
    const got = await client.takeTimed(step.expect.length, what);
    assert.deepEqual(got.bytes.map(seen), step.expect, what);
    // Timers fire no earlier than their delay; 2 ms for the clocks' rounding.
    if (step.gapMs !== undefined) {
      since.gapsMs += step.gapMs;
      const afterMs = got.atMs - since.atMs;
      assert.ok(afterMs >= since.gapsMs - 2, `${what}: arrived ${afterMs.toFixed(1)} ms after the last known moment before the server sent (gaps since: ${String(since.gapsMs)} ms; ${got.gapMs.toFixed(1)} ms after the previous datagram)`);
    }
  } else if ('ack' in step) {
    [since.atMs, since.gapsMs] = [performance.now(), 0];
    client.send(encodeAckPacket(step.ack));
  } else if ('error' in step) {
    [since.atMs, since.gapsMs] = [performance.now(), 0];
    client.send(encodeErrorPacket(step.error, step.message));
  } else if ('movedOn' in step) {
    engine.clientMovedOn();
  } else if ('close' in step) {
    client.close();
  } else if ('quiet' in step) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    assert.deepEqual(client.rest(), [], `${what}: nothing arrives`);
  } else {
    await drain(client, step.drain.window, step.drain.blocks, what);
  }
}

/** ACKs the last block of each window until `blocks` DATA arrived in order, the last one short. */
async function drain(client: Client, window: number, blocks: number, what: string): Promise<void> {
  let next = 1;
  while (next <= blocks) {
    const count = Math.min(window, blocks - next + 1);
    const got = (await client.take(count, `${what}: blocks ${next}…`)).map(seen);
    assert.deepEqual(got, Array.from({ length: count }, (_, i) => (next + i) & 0xffff), `${what}: the window from block ${next}`);
    next += count;
    client.send(encodeAckPacket((next - 1) & 0xffff));
  }
}

function checkOutcome(c: TransferCase, engine: TransferEngine, ended: Ended, client: Client): void {
  const o = c.outcome;
  assert.deepEqual([ended.ok, ended.ok ? ended.confirmed : undefined], [o.ok, o.ok ? o.confirmed : undefined], `outcome: ${JSON.stringify(ended.event)}`);
  assert.equal(ended.event.type, o.ok ? 'done' : 'error');
  if (ended.event.type === 'error') {
    if (o.origin !== undefined) assert.equal(ended.event.origin, o.origin);
    if (o.message !== undefined) assert.match(ended.event.message, o.message);
  }
  const counters = engine.state.counters;
  for (const [name, value] of Object.entries(o.counters ?? {})) assert.equal(counters[name as keyof typeof counters], value, `counter ${name}`);
  if (o.rtt !== undefined) assert.equal(engine.state.srttMs === undefined ? 'none' : 'measured', o.rtt, 'round trip measured');
  assert.deepEqual(client.rest(), [], 'no datagram beyond the script');
}

const engines: readonly TransferEngineKind[] = ['event-loop', 'thread'];

for (const [name, c] of Object.entries(transferCases)) {
  for (const kind of engines) {
    test(`${kind} engine: ${name}`, async (t) => {
      const { engine, ended, client } = await play(t, kind, c);
      checkOutcome(c, engine, ended, client);
      // The thread engine runs every sending phase of a non-empty file on the thread (the addon
      // takes no empty buffer: an empty file's one block stays on the event loop); the
      // event-loop engine never hands over.
      if (kind === 'thread' && c.sizeBytes > 0 && engine.state.counters.dataPackets > 0) assert.ok(engine.handOvers > 0, 'the sending phase ran on the transfer thread');
      if (kind === 'event-loop') assert.equal(engine.handOvers, 0);
    });
  }
}
