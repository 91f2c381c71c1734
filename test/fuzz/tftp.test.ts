/**
 * Fuzzes the TFTP decoder, option parser and negotiation, path rules and the transfer reducer:
 * mutations of real captured requests and built packets, plus random datagrams with plausible opcodes. Every input must either decode or
 * throw TftpDecodeError with an offset inside the datagram (never anything else, never hang);
 * every decoded request's options must parse and negotiate within RFC 2348/7440 limits; its
 * file name must normalize to a root-relative path without `..`, `\` or NUL, or be refused; and
 * a decoded ACK or ERROR fed to a running windowed transfer must keep its invariants.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/tftp.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TftpDecodeError } from '../../bootsvc/tftp/errors.js';
import { MAX_BLOCK_SIZE, negotiateOptions, parseRequestOptions } from '../../bootsvc/tftp/options.js';
import { decodeTftpPacket, type TftpPacket } from '../../bootsvc/tftp/packet.js';
import { normalizeRequestPath } from '../../bootsvc/tftp/path.js';
import { createTransfer, reduceTransfer, type TransferState } from '../../bootsvc/tftp/transfer.js';
import { seedPackets } from '../unit/bootsvc/tftp/fixtures.js';
import type { Dice } from './dice.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';

const INPUTS = fuzzInputs(30_000);

const TOKENS = ['..', '/', '\\', '\0', 'blksize', 'windowsize', 'timeout', 'tsize', 'octet', 'netascii', 'mail', '65464', '65535', '0', '8',
  '99999999999999', '-1', '1e3', '../../etc/passwd', 'ÿ', '\0blksize\0', '\0\0'].map((t) => Buffer.from(t, 'latin1'));

/** Opcodes 0–8 in the second byte, and NUL terminators added or removed. */
function opcodeOrTerminator(dice: Dice, b: Buffer): Buffer {
  if (b.length > 1 && dice.chance(0.5)) b[1] = dice.int(9);
  else if (b.length > 0) b[dice.int(b.length)] = dice.chance(0.5) ? 0 : 0x41;
  return b;
}

/** A transfer in the middle of a windowed send, to feed decoded ACKs and ERRORs to. */
const running: TransferState = {
  ...createTransfer({ fileSizeBytes: 1 << 20, blockSize: 512, windowSize: 8, timeoutMs: 1000, minTimeoutMs: 100, maxTimeoutMs: 8000, maxRetries: 5, oack: [] }),
  phase: 'sending',
  acked: 100,
  sent: 108,
};

function check(bytes: Uint8Array): string {
  let packet: TftpPacket;
  try {
    packet = decodeTftpPacket(bytes);
  } catch (err) {
    if (!(err instanceof TftpDecodeError)) throw err;
    assert.ok(err.offset >= 0 && err.offset <= bytes.length, `offset ${err.offset} outside the datagram`);
    return 'rejected';
  }
  if (packet.kind === 'rrq' || packet.kind === 'wrq') {
    const n = negotiateOptions(parseRequestOptions(packet.options), { maxBlockSize: MAX_BLOCK_SIZE, maxWindowSize: 64, maxWindowBytes: 65536 }, 1234);
    assert.ok(n.blockSize >= 8 && n.blockSize <= MAX_BLOCK_SIZE, `block size ${n.blockSize}`);
    assert.ok(n.windowSize >= 1 && n.windowSize <= 64, `window size ${n.windowSize}`);
    const path = normalizeRequestPath(packet.filename);
    if (path.ok) {
      assert.ok(!path.segments.includes('..') && !path.path.startsWith('/') && !path.path.includes('\\') && !path.path.includes('\0'), `path ${path.path}`);
      assert.ok(path.path.length > 0);
    }
  } else if (packet.kind === 'ack') {
    const step = reduceTransfer(running, { type: 'ack', block: packet.block }, 0);
    assert.ok(step.state.acked >= running.acked && step.state.acked <= running.sent, `acked ${step.state.acked}`);
  } else if (packet.kind === 'error') {
    assert.equal(reduceTransfer(running, { type: 'error', errorCode: packet.errorCode, message: packet.message }, 0).state.phase, 'failed');
  }
  return `decoded ${packet.kind}`;
}

test(`fuzz tftp: ${INPUTS} mutated and random datagrams`, async (t) => {
  const report = await runFuzz({
    name: 'tftp',
    seed: fuzzSeed(0x7f7f),
    inputs: INPUTS,
    generate(dice, i) {
      if (i % 3 !== 2) return mutateBytes(dice, seedPackets[i % seedPackets.length] ?? Buffer.alloc(0), { seeds: seedPackets, tokens: TOKENS, maxBytes: 2048, custom: opcodeOrTerminator });
      const bytes = dice.bytes(dice.chance(0.9) ? dice.int(80) : dice.int(2000));
      if (bytes.length >= 2 && dice.chance(0.7)) bytes[0] = 0;
      if (bytes.length >= 2 && dice.chance(0.7)) bytes[1] = dice.range(1, 6);
      return bytes;
    },
    check,
    show: (b) => showBytes(b),
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  const decoded = Object.entries(report.outcomes).filter(([k]) => k.startsWith('decoded')).reduce((n, [, v]) => n + v, 0);
  assert.ok(decoded > report.inputs / 20, `only ${decoded} inputs decoded: the mutator is too destructive`);
  assert.ok((report.outcomes.rejected ?? 0) > report.inputs / 20, 'the mutator is too gentle');
});
