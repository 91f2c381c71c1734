/**
 * Fuzzes the Router Solicitation decoder (`bootsvc/ra/ra-codec.ts`): mutations of real
 * solicitations (rdisc6-style with a source link-layer address option, the kernel's from `::`
 * without one), random byte strings, and random options behind a valid header, each with a
 * random or the required hop limit and a random or unspecified source. Every input must either
 * decode or throw RaDecodeError (nothing else, never hang); a decoded one must have had hop
 * limit 255, type 133 and code 0, and a MAC only from a source other than `::`.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=110000 node --test dist/test/fuzz/ra.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeRouterSolicitation, RaDecodeError } from '../../bootsvc/ra/ra-codec.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';

const INPUTS = fuzzInputs(30_000);
const header = Buffer.from([133, 0, 0, 0, 0, 0, 0, 0]);
const seeds: readonly Uint8Array[] = [
  Buffer.concat([header, Buffer.from([1, 1, 0x52, 0x54, 0, 0x12, 0x34, 0x56])]),
  header,
  Buffer.concat([header, Buffer.from([1, 1, 2, 0, 0, 0x77, 0, 1, 99, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])]),
];
const TOKENS = [Buffer.from([1, 1]), Buffer.from([1, 0]), Buffer.from([3, 4]), Buffer.from([133, 0]), Buffer.from([0, 0, 0, 0])];

interface Input { bytes: Uint8Array; source: string; hopLimit: number }

function check(input: Input): string {
  let out: ReturnType<typeof decodeRouterSolicitation>;
  try {
    out = decodeRouterSolicitation(input.bytes, input.source, input.hopLimit);
  } catch (err) {
    if (!(err instanceof RaDecodeError)) throw err;
    return 'rejected';
  }
  assert.equal(input.hopLimit, 255);
  assert.ok(input.bytes.length >= 8 && input.bytes[0] === 133 && input.bytes[1] === 0, 'only an RS of code 0 decodes');
  if (out.sourceMac !== undefined) {
    assert.notEqual(input.source, '::');
    assert.match(out.sourceMac, /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
  }
  return 'decoded';
}

test('fuzz setup: the seeds decode', () => {
  for (const bytes of seeds) assert.equal(check({ bytes, source: 'fe80::1', hopLimit: 255 }), 'decoded');
});

test(`fuzz ra: ${INPUTS} mutated, random and header-prefixed solicitations`, async (t) => {
  const report = await runFuzz<Input>({
    name: 'ra',
    seed: fuzzSeed(0x5eed4861),
    inputs: INPUTS,
    generate(dice, i) {
      const bytes = i % 3 !== 2 ? mutateBytes(dice, seeds[i % seeds.length] ?? header, { seeds, tokens: TOKENS, maxBytes: 256 })
        : i % 2 === 0 ? dice.bytes(dice.int(64)) : Buffer.concat([header, dice.bytes(dice.int(64))]);
      return { bytes, source: dice.int(4) === 0 ? '::' : 'fe80::1', hopLimit: dice.int(8) === 0 ? dice.int(256) : 255 };
    },
    check,
    show: (x) => `${x.source} hop ${x.hopLimit} ${showBytes(x.bytes)}`,
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  assert.ok((report.outcomes.rejected ?? 0) > 0 && (report.outcomes.decoded ?? 0) > 0, 'the mutator both breaks and keeps solicitations');
});
