/**
 * Fuzzes the BareMetalHost manifest path of `rackside apply` without HTTP: the body decoder
 * (agent/web/manifests.ts: multi-document YAML or JSON, lists) and the admission decoders and
 * webhook rules (agent/host/validation*.ts: decodeManifest, then checkHostUpdate against stored
 * hosts in several states), with mutated realistic manifests and YAML's classic hazards. The
 * body decoder may only throw a ValidationError; admission only an ApiError that names the field
 * (ValidationError 400, ConflictError 409) — never a TypeError, a RangeError or a hang.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/manifests.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, ValidationError } from '../../agent/errors.js';
import type { BareMetalHost } from '../../agent/host/types.js';
import { checkHostUpdate, decodeManifest } from '../../agent/host/validation.js';
import { decodeManifests } from '../../agent/web/manifests.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { MANIFEST_DOCS, mutateManifestBody, type ManifestBody } from './manifest-inputs.js';
import { showText } from './mutate-text.js';

const INPUTS = fuzzInputs(2000);

/** Stored hosts to check updates against: every seed host, in states that gate the update rules. */
const STORED: BareMetalHost[] = MANIFEST_DOCS.flatMap((doc) => {
  try {
    const decoded = decodeManifest(doc);
    if (decoded.kind !== 'BareMetalHost') return [];
    return (['registering', 'available', 'provisioned'] as const).map((state) => ({
      ...decoded.host, status: { ...decoded.host.status, provisioning: { ...decoded.host.status.provisioning, state } },
    }));
  } catch {
    return [];
  }
});

/** Inputs of past findings (all fixed in agent/web/manifests.ts). */
const REGRESSIONS: readonly ManifestBody[] = [
  // An alias bomb: yaml's "Excessive alias count" ReferenceError escaped as a 500.
  { json: false, text: `kind: BareMetalHost\nmetadata:\n  annotations:\n    a0: &a0 [x,x,x,x,x,x,x,x,x]\n${[1, 2, 3, 4, 5].map((i) => `    a${i}: &a${i} [${`*a${i - 1},`.repeat(8)}*a${i - 1}]`).join('\n')}\n` },
  // One mapping of 8000 keys: yaml's uniqueKeys check compared every pair (1.6 s of CPU).
  { json: false, text: `kind: BareMetalHost\nmetadata:\n  name:\n${Array.from({ length: 8000 }, (_, i) => `    k${i}: ${i}`).join('\n')}\n` },
  // Thousands of compact block mappings on one line overflowed the yaml parser's recursion: a 500.
  { json: false, text: `a:\n  b:\n    name: x\n    ${'namespace: metal3      '.repeat(5000)}\n  c: 1\n` },
  // Runs of anchors or tags on one node: yaml's parser is quadratic (150 KiB took 11 s of CPU); deep
  // flow nesting and many block indicators on one line cost seconds too. Now refused by a lexer pre-scan.
  { json: false, text: `kind: Secret\nmetadata: ${'&a '.repeat(50_000)}x\n` },
  { json: false, text: `kind: Secret\nmetadata: ${'!t '.repeat(50_000)}x\n` },
  { json: false, text: `kind: Secret\nmetadata: ${'['.repeat(300_000)}\n` },
  { json: false, text: `kind: Secret\nmetadata:\n  ${'a: '.repeat(200_000)}x\n` },
  // An empty key (`: x`) at the root: "unknown field" with an empty field path (fixed in agent/host/decode.ts).
  { json: false, text: 'apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\n: x\nmetadata:\n  name: node-0\n' },
];

function apiFailure(err: unknown, what: string): string {
  if (!(err instanceof ApiError)) throw new Error(`${what} threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)} instead of an ApiError`, { cause: err });
  assert.ok(err.field !== '' || err.status !== 400, `${what}: a 400 without a field: ${err.message}`);
  return String(err.status);
}

function check(body: ManifestBody): string {
  let docs: Record<string, unknown>[];
  try {
    docs = decodeManifests(body.json ? 'json' : 'yaml', body.text);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw new Error(`decodeManifests threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, { cause: err });
    return 'body 400';
  }
  const outcomes = new Set<string>();
  for (const [i, doc] of docs.entries()) {
    let decoded: ReturnType<typeof decodeManifest>;
    try {
      decoded = decodeManifest(doc, docs.length > 1 ? `items[${i}].` : undefined);
    } catch (err) {
      outcomes.add(`manifest ${apiFailure(err, 'decodeManifest')}`);
      continue;
    }
    if (decoded.kind !== 'BareMetalHost') {
      outcomes.add(`${decoded.kind} ok`);
      continue;
    }
    outcomes.add('host ok');
    for (const stored of STORED) {
      if (stored.metadata.name !== decoded.host.metadata.name) continue;
      try {
        checkHostUpdate(stored, decoded.host);
      } catch (err) {
        outcomes.add(`update ${apiFailure(err, 'checkHostUpdate')}`);
      }
    }
  }
  return [...outcomes].sort().join('+') || 'empty';
}

test('fuzz setup: the seed manifests decode and are admitted', () => {
  assert.ok(STORED.length >= 6, 'stored hosts to update');
});

test(`fuzz manifests: ${INPUTS} mutated apply bodies through decoding, admission and update rules`, async (t) => {
  const report = await runFuzz<ManifestBody>({
    name: 'manifests', seed: fuzzSeed(0xb4e7), inputs: INPUTS, regressions: REGRESSIONS, generate: (dice) => mutateManifestBody(dice), check,
    show: (b) => `${b.json ? 'json' : 'yaml'} ${showText(b.text)}`,
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  const keys = Object.keys(report.outcomes);
  assert.ok(keys.some((k) => k.includes('host ok')), 'some mutated hosts are admitted');
  assert.ok(keys.some((k) => k.includes('manifest 400')), 'some mutated manifests are refused');
  assert.ok(keys.includes('body 400'), 'some bodies do not parse');
});
