import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MAX_WINDOW_BYTES, negotiateOptions, parseRequestOptions, type NegotiationLimits } from '../../../../bootsvc/tftp/options.js';
import type { TftpOptionPair } from '../../../../bootsvc/tftp/packet.js';

const pairs = (...flat: string[]): TftpOptionPair[] => {
  const out: TftpOptionPair[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push({ name: flat[i] ?? '', value: flat[i + 1] ?? '' });
  return out;
};

const parsing: Record<string, { options: TftpOptionPair[]; fields: Record<string, number | undefined>; order: string[]; ignored: string[] }> = {
  'no options': { options: [], fields: {}, order: [], ignored: [] },
  'all four, valid': {
    options: pairs('blksize', '1468', 'tsize', '0', 'timeout', '3', 'windowsize', '16'),
    fields: { blockSize: 1468, transferSize: 0, timeoutSeconds: 3, windowSize: 16 },
    order: ['blksize', 'tsize', 'timeout', 'windowsize'],
    ignored: [],
  },
  'blksize bounds 8 and 65464 (RFC 2348)': { options: pairs('blksize', '8'), fields: { blockSize: 8 }, order: ['blksize'], ignored: [] },
  'blksize 65464 accepted': { options: pairs('blksize', '65464'), fields: { blockSize: 65464 }, order: ['blksize'], ignored: [] },
  'blksize 7 and 65465 refused': { options: pairs('blksize', '7'), fields: {}, order: [], ignored: ['blksize=7: outside 8–65464'] },
  'blksize 65465 refused': { options: pairs('blksize', '65465'), fields: {}, order: [], ignored: ['blksize=65465: outside 8–65464'] },
  'timeout 0 and 256 refused (RFC 2349: 1–255)': {
    options: pairs('timeout', '0', 'windowsize', '65536'),
    fields: {},
    order: [],
    ignored: ['timeout=0: outside 1–255', 'windowsize=65536: outside 1–65535'],
  },
  'timeout 255 and windowsize 65535 accepted': {
    options: pairs('timeout', '255', 'windowsize', '65535'),
    fields: { timeoutSeconds: 255, windowSize: 65535 },
    order: ['timeout', 'windowsize'],
    ignored: [],
  },
  'non-decimal values refused': {
    options: pairs('blksize', '0x200', 'tsize', '-1', 'windowsize', ' 4', 'timeout', '1.5'),
    fields: {},
    order: [],
    ignored: ['blksize=0x200: not a decimal integer', 'tsize=-1: not a decimal integer', 'windowsize= 4: not a decimal integer', 'timeout=1.5: not a decimal integer'],
  },
  'leading zeros are decimal': { options: pairs('windowsize', '008'), fields: { windowSize: 8 }, order: ['windowsize'], ignored: [] },
  'unknown options ignored with a reason': {
    options: pairs('multicast', '', 'rollover', '0', 'blksize', '512'),
    fields: { blockSize: 512 },
    order: ['blksize'],
    ignored: ['multicast=: unknown option', 'rollover=0: unknown option'],
  },
  'tsize of a real size (sent by some clients in a read request) is kept': { options: pairs('tsize', '123456'), fields: { transferSize: 123456 }, order: ['tsize'], ignored: [] },
};

for (const [name, c] of Object.entries(parsing)) {
  test(`parse: ${name}`, () => {
    const parsed = parseRequestOptions(c.options);
    assert.deepEqual(
      { blockSize: parsed.blockSize, transferSize: parsed.transferSize, timeoutSeconds: parsed.timeoutSeconds, windowSize: parsed.windowSize },
      { blockSize: undefined, transferSize: undefined, timeoutSeconds: undefined, windowSize: undefined, ...c.fields },
    );
    assert.deepEqual(parsed.order, c.order);
    assert.deepEqual(parsed.ignored.map((i) => `${i.name}=${i.value}: ${i.reason}`), c.ignored);
  });
}

const limits: NegotiationLimits = { maxBlockSize: 65464, maxWindowSize: 64, maxWindowBytes: 64 * 1024 };

const negotiation: Record<string, { options: TftpOptionPair[]; limits?: NegotiationLimits; size: number; blockSize: number; windowSize: number; timeoutSeconds?: number; oack: string[] }> = {
  'no options: 512-byte lock-step, no OACK': { options: [], size: 1000, blockSize: 512, windowSize: 1, oack: [] },
  'only unknown options: no OACK (plain RFC 1350 transfer)': { options: pairs('rollover', '0'), size: 1000, blockSize: 512, windowSize: 1, oack: [] },
  'tsize 0 is answered with the size': { options: pairs('tsize', '0'), size: 1048576, blockSize: 512, windowSize: 1, oack: ['tsize=1048576'] },
  'OACK answers in the client order': {
    options: pairs('windowsize', '8', 'timeout', '2', 'tsize', '0', 'blksize', '1468'),
    size: 5,
    blockSize: 1468,
    windowSize: 8,
    timeoutSeconds: 2,
    oack: ['windowsize=8', 'timeout=2', 'tsize=5', 'blksize=1468'],
  },
  'blksize capped by the server maximum': { options: pairs('blksize', '65464'), limits: { ...limits, maxBlockSize: 1468 }, size: 1, blockSize: 1468, windowSize: 1, oack: ['blksize=1468'] },
  'windowsize capped by the server maximum': { options: pairs('windowsize', '65535'), size: 1, blockSize: 512, windowSize: 64, oack: ['windowsize=64'] },
  'windowsize capped by the window byte budget at large blocks': {
    options: pairs('blksize', '8192', 'windowsize', '16'),
    size: 1,
    blockSize: 8192,
    windowSize: 8,
    oack: ['blksize=8192', 'windowsize=8'],
  },
  'a window byte budget smaller than one block still grants 1': {
    options: pairs('blksize', '65464', 'windowsize', '16'),
    size: 1,
    blockSize: 65464,
    windowSize: 1,
    oack: ['blksize=65464', 'windowsize=1'],
  },
  'windowsize never above 32768, whatever the configuration (unambiguous ACK numbers)': {
    options: pairs('blksize', '8', 'windowsize', '65535'),
    limits: { maxBlockSize: 65464, maxWindowSize: 65535, maxWindowBytes: 1 << 30 },
    size: 1,
    blockSize: 8,
    windowSize: 32768,
    oack: ['blksize=8', 'windowsize=32768'],
  },
  'invalid values are left out of the OACK': { options: pairs('blksize', '4', 'tsize', '0'), size: 9, blockSize: 512, windowSize: 1, oack: ['tsize=9'] },
};

for (const [name, c] of Object.entries(negotiation)) {
  test(`negotiate: ${name}`, () => {
    const n = negotiateOptions(parseRequestOptions(c.options), c.limits ?? limits, c.size);
    assert.equal(n.blockSize, c.blockSize);
    assert.equal(n.windowSize, c.windowSize);
    assert.equal(n.timeoutSeconds, c.timeoutSeconds);
    assert.deepEqual(n.oack.map((o) => `${o.name}=${o.value}`), c.oack);
  });
}

/** windowsize 16 under the server's default budget (80 KiB): what a default Linux receive buffer holds. */
const defaultBudget: Record<string, { blockSize: number; windowSize: number }> = {
  'blksize 512: 16 granted': { blockSize: 512, windowSize: 16 },
  'blksize 1468: 16 granted': { blockSize: 1468, windowSize: 16 },
  'blksize 5120: 16 granted (exactly 80 KiB)': { blockSize: 5120, windowSize: 16 },
  'blksize 8192: 10 granted (12 would fill 208 KiB of receive buffer)': { blockSize: 8192, windowSize: 10 },
  'blksize 65464: 1 granted': { blockSize: 65464, windowSize: 1 },
};
for (const [name, c] of Object.entries(defaultBudget)) {
  test(`default window budget: ${name}`, () => {
    const requested = parseRequestOptions(pairs('blksize', String(c.blockSize), 'windowsize', '16'));
    const n = negotiateOptions(requested, { maxBlockSize: 65464, maxWindowSize: 64, maxWindowBytes: DEFAULT_MAX_WINDOW_BYTES }, 1 << 20);
    assert.deepEqual([n.blockSize, n.windowSize], [c.blockSize, c.windowSize]);
  });
}
