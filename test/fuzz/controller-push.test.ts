/**
 * Fuzzes the fleet controller's push endpoint (`POST /api/v1/racks/push`, controller/push-route.ts)
 * over HTTP against a real PostgreSQL 15: mutated JSON bodies, damaged and bomb gzip, odd
 * Content-Encoding headers, sequences out of order, repeated and huge, tokens right, wrong,
 * missing and another rack's. The contract: every answer is 200, 400, 401, 413 or 415 (never
 * 5xx: malformed input is the client's problem, the database is up); a refused push writes
 * nothing; an accepted one is counted once (applied batches = pushes) and a rack's token never
 * writes another rack's rows.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=20000 node --test dist/test/fuzz/controller-push.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { addRack } from '../../controller/racks.js';
import { controllerFor, eventSummary, hostSummary, push, tableCounts } from '../integration/controller/fleet-fixtures.js';
import type { Dice } from './dice.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';
import { mutateJson, mutateJsonText, type Json } from './mutate-json.js';

const INPUTS = fuzzInputs(400);

interface PushInput {
  token: 'rack1' | 'rack2' | 'wrong' | 'none';
  encoding: string;
  body: Buffer;
}

const SEED = JSON.parse(JSON.stringify(push('rack1', 1, {
  hosts: [hostSummary('n1', 5, { bootMACAddress: '52:54:00:00:00:01', serialNumber: 'SN1' }), hostSummary('n2', 6, { errorType: 'inspection error', errorMessage: 'no disk' })],
  deletedHosts: [{ namespace: 'default', name: 'old' }], events: [eventSummary(1, 'n1')],
  commandResults: [{ id: '0b7b0ad1-2a4c-4f5e-9b1e-1d7a2f3c4b5d', outcome: 'done', message: 'ok', finishedAt: '2026-01-02T03:04:05.000Z' }],
  statusUrl: 'http://10.0.0.1:8080/', backlog: { hosts: 0, events: 0 },
}))) as Json;
const json = { seeds: [SEED], keys: ['version', 'agentId', 'rack', 'streamId', 'sequence', 'hosts', 'resourceVersion', 'commandResults', 'statusUrl'], strings: ['rack1', 'rack2', '1', '18446744073709551616'] };

function generate(dice: Dice): PushInput {
  let doc = dice.chance(0.7) ? mutateJson(dice, SEED, json) : SEED;
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc) && dice.chance(0.5)) doc = { ...doc, sequence: dice.pick([1, 2, 3, dice.int(50), 2 ** 53 - 1, 0, -1]) };
  let body: Buffer = Buffer.from(dice.chance(0.9) ? JSON.stringify(doc) : mutateJsonText(dice, SEED, json));
  const encoding = dice.pick(['gzip', 'gzip', 'gzip', 'identity', 'br', 'GZIP', '']);
  if (encoding.toLowerCase() === 'gzip') {
    body = dice.chance(0.02) ? gzipSync(Buffer.alloc(65 * 1024 * 1024)) : gzipSync(body);
    if (dice.chance(0.2)) body = mutateBytes(dice, body, { seeds: [body], maxBytes: body.length + 64 });
  }
  return { token: dice.pick(['rack1', 'rack1', 'rack1', 'rack2', 'wrong', 'none'] as const), encoding, body };
}

test(`fuzz the controller push endpoint: ${INPUTS} pushes`, { timeout: 900_000 }, async (t) => {
  const c = await controllerFor(t);
  if (c === undefined) return;
  const tokens: Record<string, string> = { rack1: await addRack(c.pool, 'rack1'), rack2: await addRack(c.pool, 'rack2'), wrong: 'rsk_wrong' };
  const check = async (input: PushInput): Promise<string> => {
    const before = await tableCounts(c.pool);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (input.encoding !== '') headers['content-encoding'] = input.encoding;
    const token = tokens[input.token];
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${c.controller.url}/api/v1/racks/push`, { method: 'POST', headers, body: input.body, signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    assert.ok([200, 400, 401, 413, 415].includes(res.status), `answered ${res.status}: ${text.slice(0, 300)}`);
    const after = await tableCounts(c.pool);
    if (res.status !== 200) {
      assert.deepEqual(after, before, `a ${res.status} wrote nothing`);
      return String(res.status);
    }
    const answer = JSON.parse(text) as { acknowledged?: unknown };
    assert.equal(typeof answer.acknowledged, 'number');
    assert.equal(after.applied_batches, after.pushes, 'each applied batch counted once');
    const foreign = await c.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM hosts h JOIN racks r ON r.id = h.rack_id WHERE r.name = 'rack2' AND h.name IN ('n1', 'n2')
         AND NOT EXISTS (SELECT 1 FROM applied_batches b WHERE b.rack_id = r.id)`);
    assert.equal(foreign.rows[0]?.n, '0', 'no rows for a rack that never pushed');
    return (after.applied_batches ?? 0) > (before.applied_batches ?? 0) ? '200 applied' : '200 duplicate';
  };
  const report = await runFuzz<PushInput>({
    name: 'controller-push', seed: fuzzSeed(0xc7), inputs: INPUTS, generate, check, boundMs: 20_000,
    show: (input) => `token ${input.token}, Content-Encoding ${JSON.stringify(input.encoding)}, body ${showBytes(input.body, 1024)}`,
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  for (const outcome of ['200 applied', '200 duplicate', '400', '401']) assert.ok((report.outcomes[outcome] ?? 0) > 0, `no input ended "${outcome}"`);
});
