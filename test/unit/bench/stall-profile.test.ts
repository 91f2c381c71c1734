/**
 * stall-profile.ts, pure parts: the stall log's lines, and which profile samples fall inside
 * which stall (self per stall, self and inclusive over all).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStallLog, stallContents, type CpuProfile } from '../../bench/stall-profile.js';

test('parseStallLog: end µs, gap ms, and the split when present; a line that is not one is an error', () => {
  assert.deepEqual(parseStallLog('1000000 12.50 8.00 4.00\n2000000 20 - -\n'), [
    { startUs: 987_500, endUs: 1_000_000, gapMs: 12.5, runningMs: 8, runnableMs: 4 },
    { startUs: 1_980_000, endUs: 2_000_000, gapMs: 20, runningMs: undefined, runnableMs: undefined },
  ]);
  assert.throws(() => parseStallLog('hello world\n'), /not a stall log line/);
});

test('stallContents: the samples inside each stall, by self frame, and the totals with callers counted once per sample', () => {
  const frame = (functionName: string, lineNumber: number): CpuProfile['nodes'][number]['callFrame'] => ({ functionName, url: 'file:///x/agent/a.js', lineNumber });
  // root(1) → handle(2) → encode(3); root → (garbage collector)(4)
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', -1), children: [2, 4] },
      { id: 2, callFrame: frame('handle', 9), children: [3] },
      { id: 3, callFrame: frame('encode', 19) },
      { id: 4, callFrame: frame('(garbage collector)', -1) },
    ],
    startTime: 1_000,
    // Samples at 2_000, 3_000, 4_000, 10_000, 11_000 µs.
    samples: [3, 3, 4, 2, 3],
    timeDeltas: [1_000, 1_000, 1_000, 6_000, 1_000],
  };
  const stalls = parseStallLog('4500 3\n11000 1.5\n');
  const result = stallContents(profile, stalls);
  assert.deepEqual(result.stalls.map((s) => s.samples), [3, 2]);
  assert.deepEqual(result.stalls[0]?.self, [['encode agent/a.js:20', 2], ['(garbage collector) agent/a.js:0', 1]]);
  assert.deepEqual(result.stalls[1]?.self, [['handle agent/a.js:10', 1], ['encode agent/a.js:20', 1]]);
  assert.deepEqual(Object.fromEntries(result.inclusive), { '(root) agent/a.js:0': 5, 'handle agent/a.js:10': 4, 'encode agent/a.js:20': 3, '(garbage collector) agent/a.js:0': 1 });
});
