import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeTftpPacket } from '../../../../bootsvc/tftp/packet.js';
import {
  countBlocks,
  createTransfer,
  currentTimeoutMs,
  describeBlock,
  reduceTransfer,
  type TransferAction,
  type TransferConfig,
  type TransferEvent,
  type TransferState,
} from '../../../../bootsvc/tftp/transfer.js';
import { prng } from '../../../helpers/prng.js';

const base: TransferConfig = { fileSizeBytes: 2000, blockSize: 512, windowSize: 1, timeoutMs: 1000, minTimeoutMs: 1000, maxTimeoutMs: 1000, maxRetries: 3, oack: [] };
const withOack = (config: Partial<TransferConfig>): TransferConfig => ({ ...base, oack: [{ name: 'blksize', value: String(config.blockSize ?? 512) }], ...config });

/** Short text for an action, so tables read like a trace. */
function show(action: TransferAction): string {
  switch (action.type) {
    case 'send-packet': {
      const p = decodeTftpPacket(action.packet);
      return `${action.retransmit ? 'resend' : 'send'} ${p.kind.toUpperCase()}`;
    }
    case 'send-blocks':
      return `${action.retransmit ? 'resend' : 'send'} ${action.first}..${action.last}`;
    case 'arm-timer':
      return `timer @${action.deadlineMs}`;
    case 'done':
      return action.confirmed ? 'done' : 'done (unconfirmed)';
    case 'fail':
      return `fail ${action.failure} at ${action.atBlock}: ${action.message}`;
  }
}

type Step = [event: TransferEvent, atMs: number, expected: string[]];

const start: TransferEvent = { type: 'start' };
const ack = (block: number): TransferEvent => ({ type: 'ack', block });
const timer: TransferEvent = { type: 'timer' };

function play(config: TransferConfig, steps: Step[]): TransferState {
  let state = createTransfer(config);
  steps.forEach(([event, atMs, expected], i) => {
    const step = reduceTransfer(state, event, atMs);
    assert.deepEqual(step.actions.map(show), expected, `step ${i} (${JSON.stringify(event)} at ${atMs})`);
    state = step.state;
  });
  return state;
}

const traces: Record<string, { config: TransferConfig; steps: Step[]; check?: (s: TransferState) => void }> = {
  'plain RFC 1350 lock-step: block 1 at once, final short block, done': {
    config: base,
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 10, ['send 2..2', 'timer @1010']],
      [ack(2), 20, ['send 3..3', 'timer @1020']],
      [ack(3), 30, ['send 4..4', 'timer @1030']],
      [ack(4), 40, ['done']],
      [ack(4), 50, []],
      [timer, 2000, []],
    ],
    check: (s) => { assert.equal(s.phase, 'done'); },
  },
  'OACK first, block 1 after ACK 0 (RFC 2347)': {
    config: withOack({}),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 5, ['send 1..1', 'timer @1005']],
    ],
  },
  'an ACK other than 0 during negotiation is stray': {
    config: withOack({}),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(3), 1, []],
      [ack(0), 2, ['send 1..1', 'timer @1002']],
    ],
    check: (s) => { assert.equal(s.counters.strayAcks, 1); },
  },
  'lost OACK is resent by the timer only': {
    config: withOack({}),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [timer, 1000, ['resend OACK', 'timer @2000']],
      [ack(0), 1500, ['send 1..1', 'timer @2500']],
    ],
  },
  'client refuses the OACK with ERROR 8': {
    config: withOack({}),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [{ type: 'error', errorCode: 8, message: 'bad options' }, 3, ['fail client-error at 1: aborted after the OACK by the client: error 8 "bad options"']],
    ],
  },
  'windows of 4: the ACK of the last block opens the next window': {
    config: withOack({ fileSizeBytes: 9 * 512 + 100, windowSize: 4 }),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 1, ['send 1..4', 'timer @1001']],
      [ack(4), 2, ['send 5..8', 'timer @1002']],
      [ack(8), 3, ['send 9..10', 'timer @1003']],
      [ack(10), 4, ['done']],
    ],
  },
  'an ACK inside the window slides it: the dropped blocks are resent, new ones follow (RFC 7440 §4)': {
    config: withOack({ fileSizeBytes: 20 * 512, windowSize: 4 }),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 1, ['send 1..4', 'timer @1001']],
      [ack(2), 2, ['resend 3..4', 'send 5..6', 'timer @1002']],
      [ack(6), 3, ['send 7..10', 'timer @1003']],
    ],
    check: (s) => { assert.deepEqual([s.acked, s.sent, s.counters.retransmittedPackets, s.counters.dataPackets], [6, 10, 2, 12]); },
  },
  'duplicate ACKs never resend anything (RFC 1123 §4.2.3.1)': {
    config: withOack({ fileSizeBytes: 20 * 512, windowSize: 4 }),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 1, ['send 1..4', 'timer @1001']],
      [ack(0), 2, []],
      [ack(4), 3, ['send 5..8', 'timer @1003']],
      [ack(4), 4, []],
      [ack(4), 5, []],
    ],
    check: (s) => { assert.equal(s.counters.duplicateAcks, 3); },
  },
  "Sorcerer's Apprentice: after a timeout, the delayed ACK and its duplicate send each block once": {
    config: base,
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [timer, 1000, ['resend 1..1', 'timer @2000']],
      [ack(1), 1001, ['send 2..2', 'timer @2001']],
      [ack(1), 1002, []],
      [ack(2), 1003, ['send 3..3', 'timer @2003']],
    ],
  },
  'an ACK beyond what was sent is stray and ignored': {
    config: withOack({ fileSizeBytes: 20 * 512, windowSize: 2 }),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 1, ['send 1..2', 'timer @1001']],
      [ack(7), 2, []],
      [ack(65535), 3, []],
    ],
    check: (s) => { assert.equal(s.counters.strayAcks, 2); },
  },
  'timeout retransmits the outstanding window, bounded retries, then the transfer fails': {
    config: withOack({ fileSizeBytes: 20 * 512, windowSize: 3, maxRetries: 2 }),
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 0, ['send 1..3', 'timer @1000']],
      [ack(1), 10, ['resend 2..3', 'send 4..4', 'timer @1010']],
      [timer, 1010, ['resend 2..4', 'timer @2010']],
      [timer, 2010, ['resend 2..4', 'timer @3010']],
      [timer, 3010, ['fail timeout at 2: client stopped answering: no ACK for block 2 after 2 retransmissions']],
      [ack(4), 3020, []],
    ],
    check: (s) => { assert.deepEqual([s.phase, s.counters.timeouts, s.counters.retransmittedPackets], ['failed', 2, 8]); },
  },
  'a timer firing before the deadline only re-arms': {
    config: base,
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 600, ['send 2..2', 'timer @1600']],
      [timer, 1000, ['timer @1600']],
      [timer, 1600, ['resend 2..2', 'timer @2600']],
    ],
  },
  'a client silent after the final block was sent: done, unconfirmed (its final ACK may be lost, RFC 1350 §6)': {
    config: { ...base, fileSizeBytes: 1000, windowSize: 4, maxRetries: 1, oack: [{ name: 'windowsize', value: '4' }] },
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [ack(0), 0, ['send 1..2', 'timer @1000']],
      [ack(1), 1, ['resend 2..2', 'timer @1001']],
      [timer, 1001, ['resend 2..2', 'timer @2001']],
      [timer, 2001, ['done (unconfirmed)']],
      [ack(2), 2002, []],
    ],
    check: (s) => { assert.equal(s.phase, 'done'); },
  },
  'the client moved on (asked for another file): ignored before the final block, then done, unconfirmed, nothing resent': {
    config: { ...base, fileSizeBytes: 1000, windowSize: 4, oack: [{ name: 'windowsize', value: '4' }] },
    steps: [
      [start, 0, ['send OACK', 'timer @1000']],
      [{ type: 'moved-on' }, 1, []],
      [ack(0), 2, ['send 1..2', 'timer @1002']],
      [{ type: 'moved-on' }, 3, ['done (unconfirmed)']],
      [timer, 1002, []],
      [ack(2), 1003, []],
    ],
    check: (s) => { assert.deepEqual([s.phase, s.counters.timeouts, s.counters.retransmittedPackets], ['done', 0, 0]); },
  },
  'the client moved on in the middle of a lock-step transfer: nothing changes': {
    config: base,
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 1, ['send 2..2', 'timer @1001']],
      [{ type: 'moved-on' }, 2, []],
      [ack(2), 3, ['send 3..3', 'timer @1003']],
    ],
    check: (s) => { assert.equal(s.phase, 'sending'); },
  },
  'port unreachable after the final block was sent: done, unconfirmed': {
    config: { ...base, fileSizeBytes: 600 },
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 1, ['send 2..2', 'timer @1001']],
      [{ type: 'unreachable' }, 5, ['done (unconfirmed)']],
    ],
  },
  'a client ERROR aborts the transfer at its block': {
    config: base,
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 1, ['send 2..2', 'timer @1001']],
      [ack(2), 2, ['send 3..3', 'timer @1002']],
      [{ type: 'error', errorCode: 0, message: 'user cancelled' }, 3, ['fail client-error at 3: aborted at block 3 by the client: error 0 "user cancelled"']],
      [ack(3), 4, []],
    ],
  },
  'ICMP port unreachable ends the transfer at once': {
    config: base,
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [{ type: 'unreachable' }, 5, ['fail unreachable at 1: client port unreachable at block 1: the client went away']],
    ],
  },
  'a file that is an exact multiple of blksize ends with an empty block': {
    config: { ...base, fileSizeBytes: 1024 },
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 1, ['send 2..2', 'timer @1001']],
      [ack(2), 2, ['send 3..3', 'timer @1002']],
      [ack(3), 3, ['done']],
    ],
    check: (s) => { assert.deepEqual(describeBlock(s.config, 3), { offset: 1024, length: 0, wireBlock: 3 }); },
  },
  'an empty file is one empty block': {
    config: { ...base, fileSizeBytes: 0 },
    steps: [
      [start, 0, ['send 1..1', 'timer @1000']],
      [ack(1), 1, ['done']],
    ],
    check: (s) => { assert.deepEqual(describeBlock(s.config, 1), { offset: 0, length: 0, wireBlock: 1 }); },
  },
  'events before start and a second start are ignored': {
    config: base,
    steps: [
      [ack(1), 0, []],
      [timer, 0, []],
      [start, 0, ['send 1..1', 'timer @1000']],
      [start, 1, []],
    ],
  },
};

for (const [name, c] of Object.entries(traces)) {
  test(`trace: ${name}`, () => {
    const state = play(c.config, c.steps);
    c.check?.(state);
  });
}

test('block numbers wrap past 65535 to 0, and the ACK of wire block 0 maps to block 65536', () => {
  const config = withOack({ blockSize: 8, fileSizeBytes: 8 * 70_000 + 3, windowSize: 16 });
  assert.equal(countBlocks(config.fileSizeBytes, config.blockSize), 70_001);
  let state = reduceTransfer(createTransfer(config), start, 0).state;
  let actions = reduceTransfer(state, ack(0), 0);
  state = actions.state;
  const sent: number[] = [];
  for (let guard = 0; state.phase === 'sending' && guard < 10_000; guard++) {
    const blocks = actions.actions.filter((a) => a.type === 'send-blocks');
    for (const a of blocks) for (let b = a.first; b <= a.last; b++) sent.push(b);
    const last = blocks.at(-1);
    assert.ok(last !== undefined);
    actions = reduceTransfer(state, ack(describeBlock(config, last.last).wireBlock), 1);
    state = actions.state;
  }
  assert.equal(state.phase, 'done');
  assert.equal(sent.length, 70_001);
  assert.ok(sent.every((b, i) => b === i + 1), 'every block sent once, in order');
  assert.deepEqual([65535, 65536, 65537, 70_001].map((b) => describeBlock(config, b).wireBlock), [65535, 0, 1, 70_001 - 65536]);
  assert.deepEqual(describeBlock(config, 70_001), { offset: 8 * 70_000, length: 3, wireBlock: 4465 });
});

test('after a wrap, a stale ACK from before it is stray, not progress', () => {
  const config = withOack({ blockSize: 8, fileSizeBytes: 8 * 70_000, windowSize: 4 });
  let state: TransferState = { ...createTransfer(config), phase: 'sending', acked: 65534, sent: 65538 };
  const stale = reduceTransfer(state, ack(65530), 0);
  assert.deepEqual(stale.actions, []);
  assert.equal(stale.state.counters.strayAcks, 1);
  const wrapped = reduceTransfer(state, ack(1), 0);
  state = wrapped.state;
  assert.equal(state.acked, 65537);
  assert.deepEqual(wrapped.actions.map(show), ['resend 65538..65538', 'send 65539..65541', 'timer @1000']);
});

test('adaptive timeout: 4 × smoothed RTT within [min, max], doubling per retry, Karn: no sample from a retransmitted window', () => {
  const config: TransferConfig = { ...base, fileSizeBytes: 100 * 512, timeoutMs: 1000, minTimeoutMs: 50, maxTimeoutMs: 1000 };
  let state = reduceTransfer(createTransfer(config), start, 0).state;
  assert.equal(currentTimeoutMs(state), 1000, 'no RTT measured yet: the maximum');
  state = reduceTransfer(state, ack(1), 40).state;
  assert.equal(state.srttMs, 40);
  assert.equal(currentTimeoutMs(state), 160);
  assert.equal(state.deadlineMs, 200);
  state = reduceTransfer(state, ack(2), 48).state;
  assert.equal(state.srttMs, 40 + (8 - 40) / 8);
  assert.equal(currentTimeoutMs(state), 144);
  state = reduceTransfer(state, ack(3), 49).state; // 1 ms round trip: the floor applies
  for (let i = 0; i < 10; i++) state = reduceTransfer(state, ack(4 + i), 50 + i).state;
  assert.equal(currentTimeoutMs(state), 50);
  const deadlines: number[] = [];
  for (let i = 0; i < 3; i++) {
    state = reduceTransfer(state, timer, state.deadlineMs).state;
    deadlines.push(currentTimeoutMs(state));
  }
  assert.deepEqual(deadlines, [100, 200, 400]);
  const before = state.srttMs;
  state = reduceTransfer(state, ack(14), state.deadlineMs - 1).state;
  assert.equal(state.srttMs, before, 'the ACK of a retransmitted window is no RTT sample');
  assert.equal(currentTimeoutMs(state), 50, 'progress resets the backoff');
  const capped: TransferState = { ...state, retries: 10 };
  assert.equal(currentTimeoutMs(capped), 1000, 'backoff stops at the maximum');
});

test('before any round trip is measured, the backoff doubles from timeoutMs up to maxTimeoutMs', () => {
  const config: TransferConfig = { ...base, fileSizeBytes: 100 * 512, timeoutMs: 1000, minTimeoutMs: 100, maxTimeoutMs: 8000, maxRetries: 10 };
  let state = reduceTransfer(createTransfer(config), start, 0).state;
  const gaps: number[] = [];
  for (let i = 0; i < 6; i++) {
    const before = state.deadlineMs;
    state = reduceTransfer(state, timer, before).state;
    gaps.push(state.deadlineMs - before);
  }
  assert.deepEqual(gaps, [2000, 4000, 8000, 8000, 8000, 8000]);
});

test("a client's RFC 2349 timeout is used as is: no adaptation, no backoff", () => {
  const config: TransferConfig = { ...base, fileSizeBytes: 100 * 512, timeoutMs: 3000, minTimeoutMs: 3000, maxTimeoutMs: 3000 };
  let state = reduceTransfer(createTransfer(config), start, 0).state;
  state = reduceTransfer(state, ack(1), 1).state;
  assert.equal(currentTimeoutMs(state), 3000);
  state = reduceTransfer(state, timer, state.deadlineMs).state;
  assert.equal(state.deadlineMs, 3001 + 3000);
});


/**
 * Runs the reducer against a simulated RFC 7440 receiver over a channel that drops `lossRate`
 * of the packets both ways: the receiver ACKs the last block of each window and, on an
 * out-of-order or duplicate block, re-ACKs its last in-order block (the duplicates that cause
 * the Sorcerer's Apprentice syndrome if the sender answers them). Time only moves when nothing
 * is in flight: to the timer's deadline.
 */
function simulate(config: TransferConfig, lossRate: number, seed: number): { state: TransferState; received: number[]; dataSent: number } {
  const rand = prng(seed);
  const received: number[] = [];
  let expect = 1;
  let sinceAck = 0;
  let nowMs = 0;
  let dataSent = 0;
  const toServer: number[] = [];
  let state = createTransfer(config);
  const apply = (event: TransferEvent): void => {
    const step = reduceTransfer(state, event, nowMs);
    if (event.type === 'ack' && state.phase === 'sending' && event.block === (state.acked & 0xffff)) {
      assert.deepEqual(step.actions, [], 'a duplicate ACK caused a send');
    }
    state = step.state;
    for (const action of step.actions) {
      if (action.type === 'send-packet' && rand() >= lossRate) toServer.push(0); // the client ACKs the OACK
      if (action.type !== 'send-blocks') continue;
      for (let b = action.first; b <= action.last; b++) {
        dataSent++;
        if (rand() < lossRate) continue;
        const { wireBlock, length } = describeBlock(config, b);
        let ackWire: number;
        if (wireBlock === (expect & 0xffff)) {
          received.push(expect);
          expect++;
          sinceAck++;
          if (length < config.blockSize || sinceAck === config.windowSize) ackWire = wireBlock;
          else continue;
        } else {
          ackWire = (expect - 1) & 0xffff;
        }
        sinceAck = 0;
        if (rand() >= lossRate) toServer.push(ackWire);
      }
    }
  };
  apply(start);
  for (let guard = 0; state.phase !== 'done' && state.phase !== 'failed'; guard++) {
    assert.ok(guard < 2_000_000, 'simulation did not converge');
    const next = toServer.shift();
    if (next !== undefined) apply(ack(next));
    else {
      nowMs = Math.max(nowMs, state.deadlineMs);
      apply(timer);
    }
  }
  return { state, received, dataSent };
}

const lossy: Record<string, { config: TransferConfig; loss: number }> = {
  'lock-step, 512-byte blocks, 10 % loss': { config: { ...base, fileSizeBytes: 300 * 512 + 7, maxRetries: 30 }, loss: 0.1 },
  'window 4, 10 % loss, exact multiple of the block size': { config: withOack({ fileSizeBytes: 400 * 512, windowSize: 4, maxRetries: 30 }), loss: 0.1 },
  'window 16, 3 % loss': { config: withOack({ blockSize: 1468, fileSizeBytes: 1468 * 700 + 1, windowSize: 16, maxRetries: 30 }), loss: 0.03 },
  'window 16, 8-byte blocks past the wrap, 3 % loss': { config: withOack({ blockSize: 8, fileSizeBytes: 8 * 66_000 + 5, windowSize: 16, maxRetries: 30 }), loss: 0.03 },
};

for (const [name, c] of Object.entries(lossy)) {
  test(`lossy channel: ${name} — every block arrives once, in order`, () => {
    for (const seed of [1, 2, 3]) {
      const { state, received, dataSent } = simulate(c.config, c.loss, seed);
      const total = countBlocks(c.config.fileSizeBytes, c.config.blockSize);
      assert.equal(state.phase, 'done', `seed ${seed}`);
      assert.equal(received.length, total, `seed ${seed}`);
      assert.ok(received.every((b, i) => b === i + 1), `seed ${seed}: blocks out of order`);
      assert.equal(state.counters.dataPackets, dataSent);
      assert.ok(state.counters.retransmittedPackets > 0, `seed ${seed}: the loss caused no retransmission`);
    }
  });
}
