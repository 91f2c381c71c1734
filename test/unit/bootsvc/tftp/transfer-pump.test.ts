/**
 * The addon's transfer thread (native/udp-bind/tftp_pump.c) driven directly against a dgram
 * peer on loopback, and the pure conversions of transfer-pump.ts: state handed over and back
 * keeps its meaning; the thread sends windows from a buffer or a file descriptor, opens the next
 * window on an in-window ACK, counts duplicates, retransmits on its timer and hands back the
 * final ACK, any other datagram, a timer out of retries and a cancel — with the socket polled
 * by the event loop again afterwards. Bad options are refused by name and leave the socket as
 * it was.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { encodeAckPacket, encodeErrorPacket } from '../../../../bootsvc/tftp/packet.js';
import { createTransfer, resumeSending, type TransferConfig } from '../../../../bootsvc/tftp/transfer.js';
import { isPumpAddon, pumpStartOptions, startPump, stateAfterPump, type PumpAddon, type PumpReturn, type PumpStartOptions } from '../../../../bootsvc/tftp/transfer-pump.js';
import { DEFAULT_NATIVE_ADDON_PATH, loadConnectedAddon, type ConnectedAddon, type ConnectedHandle } from '../../../../bootsvc/tftp/transfer-socket.js';
import { waitFor } from '../../../helpers/netns.js';
import { mainThreadNice, ownThreads, SCHED_BATCH } from '../../../helpers/threads.js';
import { runMainThreadAtUnitNice } from '../../../helpers/unit-nice.js';

// As systemd starts the agent (Nice=-5): the transfer thread starts there and must move itself back.
runMainThreadAtUnitNice();

const loaded = loadConnectedAddon();
const addon: (ConnectedAddon & PumpAddon) | undefined = loaded !== undefined && isPumpAddon(loaded) ? loaded : undefined;

function requireAddon(t: TestContext): boolean {
  if (addon !== undefined) return true;
  if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') assert.fail(`native addon with the transfer thread missing at ${DEFAULT_NATIVE_ADDON_PATH} (npm run build:native)`);
  t.skip('native addon not built (npm run build:native)');
  return false;
}

const CONFIG: TransferConfig = { fileSizeBytes: 1000, blockSize: 100, windowSize: 4, timeoutMs: 200, minTimeoutMs: 50, maxTimeoutMs: 400, maxRetries: 2, oack: [] };

test('state handed to the thread and back keeps its meaning (times re-based on each clock)', () => {
  const sending = resumeSending(createTransfer(CONFIG), {
    acked: 3, sent: 7, retries: 1, deadlineMs: 10_250, windowSentAtMs: 9_900, windowClean: false, srttMs: 12.5,
    counters: { dataPackets: 9, retransmittedPackets: 2, duplicateAcks: 1, strayAcks: 0, timeouts: 1 },
  });
  const options = pumpStartOptions(CONFIG, sending, { fd: 5 }, 10_000);
  assert.deepEqual([options.deadlineInMs, options.windowSentAgoMs, options.srttMs, options.sizeBytes, options.blockSize], [250, 100, 12.5, 1000, 100]);
  // The thread answers 2 s later on its own clock; the server receives it at 50_000.
  const back = stateAfterPump(sending, { ...options, acked: 7, sent: 10, deadlineInMs: -5, windowSentAgoMs: 30, dataPackets: 12 }, 50_000);
  assert.deepEqual([back.phase, back.acked, back.sent, back.deadlineMs, back.windowSentAtMs, back.srttMs, back.counters.dataPackets], ['sending', 7, 10, 49_995, 49_970, 12.5, 12]);
  const unmeasured = stateAfterPump(sending, { ...options, srttMs: -1 }, 0);
  assert.equal(unmeasured.srttMs, undefined);
  assert.equal(pumpStartOptions(CONFIG, unmeasured, { bytes: Buffer.alloc(1000) }, 0).srttMs, -1);
});

interface Rig {
  handle: ConnectedHandle;
  peer: Socket;
  got: Buffer[];
  messages: number[];
  /** Sends `packet` from the peer to the transfer socket. */
  send(packet: Buffer): void;
  /** Complete options: a fresh transfer of CONFIG with `options` over it. */
  options(options: Partial<PumpStartOptions>): PumpStartOptions;
  pump(options: Partial<PumpStartOptions>): Promise<PumpReturn>;
}

async function rig(t: TestContext, a: ConnectedAddon & PumpAddon): Promise<Rig> {
  const peer = createSocket('udp4');
  const got: Buffer[] = [];
  peer.on('message', (m) => got.push(m));
  await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve));
  const messages: number[] = [];
  const handle = a.openConnected({
    localAddress: '127.0.0.1', remoteAddress: '127.0.0.1', remotePort: peer.address().port,
    onMessages: (count) => messages.push(count), onError: () => undefined,
  });
  t.after(() => {
    a.closeConnected(handle);
    peer.close();
  });
  const base = pumpStartOptions(CONFIG, resumeSending(createTransfer(CONFIG), { acked: 0, sent: 0, retries: 0, deadlineMs: 0, windowSentAtMs: 0, windowClean: true, srttMs: undefined, counters: createTransfer(CONFIG).counters }), { fd: 0 }, 0);
  return {
    handle, peer, got, messages,
    send: (packet) => {
      peer.send(packet, handle.localPort, '127.0.0.1');
    },
    options: (options) => ({ ...base, ...options }),
    pump: (options) => new Promise((resolve) => startPump(a, handle, { ...base, ...options }, resolve)),
  };
}

/** Waits for `check` (the shared poller, every 5 ms: these exchanges take milliseconds). */
const until = <T>(check: () => T | undefined | false, what: string): Promise<T> => waitFor(check, what, 5000, 5);

/** An open file holding `bytes` in a directory removed after the test. */
async function fileWith(t: TestContext, bytes: Buffer): Promise<FileHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-pump-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'f'), bytes);
  const file = await open(join(dir, 'f'));
  t.after(() => file.close());
  return file;
}

const blockOf = (d: Buffer): number => d.readUInt16BE(2);
const blocks = (got: Buffer[]): number[] => got.filter((d) => d.readUInt16BE(0) === 3).map(blockOf);

test('the thread runs a windowed transfer from a buffer: next window on an in-window ACK, duplicates counted, the final ACK handed back', async (t) => {
  if (!requireAddon(t) || addon === undefined) return;
  const r = await rig(t, addon);
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
  // deadlineInMs 0 with nothing sent: the thread's first timer sends the first window.
  const returned = r.pump({ bytes, deadlineInMs: 0 });
  await until(() => (blocks(r.got).length === 4 ? true : undefined), 'the first window');
  assert.deepEqual(blocks(r.got), [1, 2, 3, 4]);
  // One thread, named for top -H, under SCHED_BATCH at normal priority while the event loop
  // keeps its raised one (native/thread_priority.h).
  const pumps = ownThreads().filter((thread) => thread.name === 'rackside-tftp');
  assert.equal(pumps.length, 1);
  const [pump] = pumps;
  assert.equal(pump?.policy, SCHED_BATCH);
  assert.equal(pump.nice, Math.max(0, mainThreadNice()));
  r.send(encodeAckPacket(2)); // an ACK inside the window: the next window starts after block 2
  await until(() => (blocks(r.got).length === 8 ? true : undefined), 'the window after block 2');
  assert.deepEqual(blocks(r.got).slice(4), [3, 4, 5, 6]);
  r.send(encodeAckPacket(2)); // duplicate: never answered (RFC 1123 §4.2.3.1)
  r.send(encodeAckPacket(6));
  await until(() => (blocks(r.got).length === 12 ? true : undefined), 'the window after block 6');
  assert.deepEqual(blocks(r.got).slice(8), [7, 8, 9, 10]);
  r.send(encodeAckPacket(10));
  await until(() => (blocks(r.got).length === 13 ? true : undefined), 'the last block');
  const last = r.got.at(-1);
  assert.equal(last === undefined ? -1 : blockOf(last), 11);
  assert.equal(last?.length, 4, 'block 11 is the empty block of a file that is a multiple of the block size');
  const payload = Buffer.concat(r.got.filter((d) => [1, 2].includes(blockOf(d))).slice(0, 2).map((d) => d.subarray(4)));
  assert.deepEqual(payload, bytes.subarray(0, 200));
  r.send(encodeAckPacket(11));
  const back = await returned;
  if (back.reason !== 'ack') assert.fail(`handed back for ${back.reason}, not the final ACK`);
  // Handed back before the reducer takes the final ACK: acked is still the block before.
  assert.deepEqual([back.block, back.acked, back.sent, back.duplicateAcks, back.dataPackets, back.retransmittedPackets], [11, 10, 11, 1, 13, 2]);
  assert.ok(back.srttMs >= 0, 'a clean window measured the round trip');
  // The event loop polls the socket again.
  r.send(encodeAckPacket(1));
  await until(() => (r.messages.length > 0 ? true : undefined), 'the socket to report to the event loop again');
});

test('the thread reads a file descriptor, sends and resends on its timer, and hands back the timer that would exceed the retries', async (t) => {
  if (!requireAddon(t) || addon === undefined) return;
  const bytes = Buffer.alloc(1000, 0x5a);
  const file = await fileWith(t, bytes);
  const r = await rig(t, addon);
  const started = Date.now();
  const back = await r.pump({ fd: file.fd, deadlineInMs: 0, windowSize: 1, timeoutMs: 60, minTimeoutMs: 60, maxTimeoutMs: 60 });
  assert.equal(back.reason, 'timer');
  // Nothing was on the wire: the first timer sends block 1, the second resends it (retry 2 of
  // 2), the third would exceed maxRetries and is handed back for the reducer to end.
  assert.deepEqual(blocks(r.got), [1, 1]);
  assert.deepEqual(r.got[0]?.subarray(4), bytes.subarray(0, 100));
  assert.deepEqual([back.timeouts, back.retries, back.retransmittedPackets, back.acked, back.sent], [2, 2, 1, 0, 1]);
  assert.ok(Date.now() - started >= 100, 'two 60 ms timeouts passed');
});

test('a datagram that is not an ACK is handed back as bytes; a cancel hands the transfer back as it is', async (t) => {
  if (!requireAddon(t) || addon === undefined) return;
  const r = await rig(t, addon);
  const bytes = Buffer.alloc(1000);
  const first = r.pump({ bytes, deadlineInMs: 0, timeoutMs: 5000, minTimeoutMs: 5000, maxTimeoutMs: 5000 });
  await until(() => (blocks(r.got).length === 4 ? true : undefined), 'the first window');
  const error = encodeErrorPacket(0, 'TFTP Aborted');
  r.send(error);
  const back = await first;
  if (back.reason !== 'datagram') assert.fail(`handed back for ${back.reason}, not the datagram`);
  assert.deepEqual(back.bytes, error);
  assert.deepEqual([back.acked, back.sent], [0, 4]);

  let pumped: ReturnType<typeof startPump> | undefined;
  const cancelled = new Promise<PumpReturn>((resolve) => {
    pumped = startPump(addon, r.handle, { ...pumpStartOptions(CONFIG, stateAfterPump(createTransfer(CONFIG), back, 0), { bytes }, 0), deadlineInMs: 5000 }, resolve);
  });
  r.send(encodeAckPacket(4));
  await until(() => (pumped?.progress().acked === 4 ? true : undefined), 'progress readable while the thread has it');
  pumped?.cancel();
  const after = await cancelled;
  assert.deepEqual([after.reason, after.acked, after.sent], ['cancelled', 4, 8]);
  pumped?.cancel(); // a no-op once handed back
});

test('bad options are refused by name and the socket stays with the event loop', async (t) => {
  if (!requireAddon(t) || addon === undefined) return;
  const r = await rig(t, addon);
  const ok = r.options({ bytes: Buffer.alloc(1000), deadlineInMs: 5000 });
  const refused = (options: Partial<PumpStartOptions>, name: string): void => {
    assert.throws(() => startPump(addon, r.handle, { ...ok, ...options }, () => undefined), (err: NodeJS.ErrnoException) => err.code === 'ERR_INVALID_ARG' && err.message.includes(`option ${name} `));
  };
  refused({ blockSize: 4 }, 'blockSize');
  refused({ windowSize: 0 }, 'windowSize');
  refused({ acked: 5, sent: 2 }, 'sent');
  refused({ bytes: Buffer.alloc(10) }, 'bytes');
  refused({ timeoutMs: Number.NaN }, 'timeoutMs');
  assert.throws(() => {
    addon.pumpStart({}, ok, () => undefined);
  }, { code: 'ERR_INVALID_ARG' });
  assert.throws(() => {
    addon.pumpProgress({}, new Float64Array(7));
  }, { code: 'ERR_INVALID_ARG' });
  r.send(encodeAckPacket(1));
  await until(() => (r.messages.length > 0 ? true : undefined), 'the event loop still reads the socket');
});

test('a file larger than the read-ahead arrives byte-exact, through refills and a window rewound by an earlier ACK', async (t) => {
  if (!requireAddon(t) || addon === undefined) return;
  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7 + (i >> 8)) & 0xff));
  const file = await fileWith(t, bytes);
  const r = await rig(t, addon);
  const total = Math.floor(bytes.length / 1000) + 1;
  const returned = r.pump({ fd: file.fd, sizeBytes: bytes.length, blockSize: 1000, windowSize: 8, deadlineInMs: 0, timeoutMs: 5000, minTimeoutMs: 5000, maxTimeoutMs: 5000 });
  const data = new Map<number, Buffer>();
  let acked = 0;
  let rewound = false;
  let seen = 0;
  while (acked < total) {
    const window = Math.min(acked + 8, total);
    await until(() => (blocks(r.got).slice(seen).filter((b) => b === window).length > 0 ? true : undefined), `block ${window}`);
    for (const d of r.got.slice(seen)) data.set(blockOf(d), Buffer.from(d.subarray(4)));
    seen = r.got.length;
    // Once, far into the file, acknowledge only the middle of the window: the next window starts there.
    acked = !rewound && window > 150 ? window - 4 : window;
    rewound ||= window > 150;
    r.send(encodeAckPacket(acked));
  }
  const back = await returned;
  assert.equal(back.reason, 'ack');
  assert.ok(back.retransmittedPackets >= 4, 'the rewound window resent the blocks after the ACK');
  const received = Buffer.concat(Array.from({ length: total }, (_, i) => data.get(i + 1) ?? Buffer.alloc(0)));
  assert.equal(received.length, bytes.length);
  assert.ok(received.equals(bytes), 'every byte as in the file');
});
