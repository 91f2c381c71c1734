/**
 * Fuzzes the TFTP decoder, option parser, path rules and the transfer reducer with a seeded
 * PRNG: mutations of real captured requests and built packets, plus random byte strings. Every
 * input must either decode or throw TftpDecodeError (never anything else, never hang); every
 * decoded request's options must parse and negotiate without throwing and within RFC limits;
 * its file name must normalize to a root-relative path without `..` or be refused; and any
 * decoded ACK/ERROR fed to a running transfer must not throw.
 *
 * CI runs 20,000 mutations plus 10,000 random inputs. The documented long run (issue 3's
 * 100,000 inputs) is:
 * `RACKSIDE_FUZZ_ITERATIONS=100000 node --test dist/test/unit/bootsvc/tftp/fuzz.test.js`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TftpDecodeError } from '../../../../bootsvc/tftp/errors.js';
import { MAX_BLOCK_SIZE, negotiateOptions, parseRequestOptions } from '../../../../bootsvc/tftp/options.js';
import { decodeTftpPacket, type TftpPacket } from '../../../../bootsvc/tftp/packet.js';
import { normalizeRequestPath } from '../../../../bootsvc/tftp/path.js';
import { createTransfer, reduceTransfer, type TransferState } from '../../../../bootsvc/tftp/transfer.js';
import { seedPackets } from './fixtures.js';
import { prng } from '../../../helpers/prng.js';

const MUTATIONS = Number(process.env.RACKSIDE_FUZZ_ITERATIONS ?? 20_000);
const RANDOMS = Math.ceil(MUTATIONS / 2);


const INTERESTING = ['..', '/', '\\', '\0', 'blksize', 'windowsize', 'timeout', 'tsize', '65464', '65535', '0', '99999999999999', '../../etc/passwd', 'ÿ'];

function mutate(rand: () => number, input: Uint8Array): Uint8Array {
  const int = (n: number): number => Math.floor(rand() * n);
  let b = Uint8Array.from(input);
  for (let r = 1 + int(4); r > 0; r--) {
    switch (int(7)) {
      case 0: // flip bytes
        for (let k = 1 + int(4); k > 0; k--) if (b.length > 0) b[int(b.length)] = int(256);
        break;
      case 1: // truncate
        b = b.subarray(0, int(b.length + 1));
        break;
      case 2: {
        // insert random bytes
        const at = int(b.length + 1);
        const extra = Uint8Array.from({ length: 1 + int(20) }, () => int(256));
        b = Uint8Array.from([...b.subarray(0, at), ...extra, ...b.subarray(at)]);
        break;
      }
      case 3: {
        // insert an interesting token (separators, option names, extreme numbers)
        const at = int(b.length + 1);
        const token = Buffer.from(INTERESTING[int(INTERESTING.length)] ?? '', 'latin1');
        b = Uint8Array.from([...b.subarray(0, at), ...token, ...b.subarray(at)]);
        break;
      }
      case 4: // NULs: remove or add terminators
        if (b.length > 0) b[int(b.length)] = rand() < 0.5 ? 0 : 0x41;
        break;
      case 5: // opcode
        if (b.length > 1) b[1] = int(9);
        break;
      default: {
        // splice with another seed
        const other = seedPackets[int(seedPackets.length)] ?? input;
        const cut = int(Math.min(b.length, other.length) + 1);
        b = Uint8Array.from([...b.subarray(0, cut), ...other.subarray(cut)]);
      }
    }
  }
  return b;
}

interface Tally {
  decoded: number;
  rejected: number;
}

/** A transfer in the middle of a windowed send, to feed decoded ACKs and ERRORs to. */
const running: TransferState = {
  ...createTransfer({ fileSizeBytes: 1 << 20, blockSize: 512, windowSize: 8, timeoutMs: 1000, minTimeoutMs: 100, maxTimeoutMs: 8000, maxRetries: 5, oack: [] }),
  phase: 'sending',
  acked: 100,
  sent: 108,
};

function check(bytes: Uint8Array, tally: Tally): void {
  let packet: TftpPacket;
  try {
    packet = decodeTftpPacket(bytes);
  } catch (err) {
    assert.ok(err instanceof TftpDecodeError, `input ${Buffer.from(bytes).toString('hex')} threw ${String(err)}`);
    assert.ok(err.offset >= 0 && err.offset <= bytes.length, `offset ${err.offset} outside the datagram`);
    tally.rejected++;
    return;
  }
  tally.decoded++;
  if (packet.kind === 'rrq' || packet.kind === 'wrq') {
    const n = negotiateOptions(parseRequestOptions(packet.options), { maxBlockSize: MAX_BLOCK_SIZE, maxWindowSize: 64, maxWindowBytes: 65536 }, 1234);
    assert.ok(n.blockSize >= 8 && n.blockSize <= MAX_BLOCK_SIZE);
    assert.ok(n.windowSize >= 1 && n.windowSize <= 64);
    const path = normalizeRequestPath(packet.filename);
    if (path.ok) {
      assert.ok(!path.segments.includes('..') && !path.path.startsWith('/') && !path.path.includes('\\') && !path.path.includes('\0'));
      assert.ok(path.path.length > 0);
    }
  } else if (packet.kind === 'ack') {
    const step = reduceTransfer(running, { type: 'ack', block: packet.block }, 0);
    assert.ok(step.state.acked >= running.acked && step.state.acked <= running.sent);
  } else if (packet.kind === 'error') {
    assert.equal(reduceTransfer(running, { type: 'error', errorCode: packet.errorCode, message: packet.message }, 0).state.phase, 'failed');
  }
}

test(`fuzz: ${MUTATIONS} mutations of real packets decode or throw only TftpDecodeError`, () => {
  const rand = prng(0x7f7f);
  const tally: Tally = { decoded: 0, rejected: 0 };
  for (let i = 0; i < MUTATIONS; i++) {
    const seed = seedPackets[i % seedPackets.length];
    assert.ok(seed !== undefined);
    check(mutate(rand, seed), tally);
  }
  assert.ok(tally.decoded > MUTATIONS / 20, `only ${tally.decoded} mutations decoded: the mutator is too destructive`);
  assert.ok(tally.rejected > MUTATIONS / 20, `only ${tally.rejected} mutations were rejected: the mutator is too gentle`);
});

test(`fuzz: ${RANDOMS} random datagrams decode or throw only TftpDecodeError`, () => {
  const rand = prng(0x1350);
  const tally: Tally = { decoded: 0, rejected: 0 };
  for (let i = 0; i < RANDOMS; i++) {
    const length = rand() < 0.9 ? Math.floor(rand() * 80) : Math.floor(rand() * 2000);
    const bytes = Uint8Array.from({ length }, () => Math.floor(rand() * 256));
    if (length >= 2 && rand() < 0.7) bytes[0] = 0; // plausible opcodes more often
    if (length >= 2 && rand() < 0.7) bytes[1] = 1 + Math.floor(rand() * 6);
    check(bytes, tally);
  }
  assert.equal(tally.decoded + tally.rejected, RANDOMS);
  assert.ok(tally.decoded > 0 && tally.rejected > 0);
});
