import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, formatBytes, humanDuration, renderFields, renderTable } from '../../../agent/cli/table.js';
import { parseCommandLine, parseDuration } from '../../../agent/cli/args.js';
import { exitCodeForStatus } from '../../../agent/cli/client.js';
import { formatCliError } from '../../../agent/cli/run.js';
import { CliError } from '../../../agent/cli/io.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

/** kubectl's HumanDuration boundaries. */
const durations: Record<string, [number, string]> = {
  'negative beyond a second': [-5 * S, '<invalid>'],
  'just negative': [-500, '0s'],
  zero: [0, '0s'],
  '119 seconds': [119 * S, '119s'],
  '2 minutes': [2 * M, '2m'],
  '3m20s': [3 * M + 20 * S, '3m20s'],
  '10 minutes': [10 * M, '10m'],
  '179 minutes': [179 * M, '179m'],
  '3 hours': [3 * H, '3h'],
  '5h30m': [5 * H + 30 * M, '5h30m'],
  '8 hours': [8 * H, '8h'],
  '47 hours': [47 * H, '47h'],
  '2 days': [2 * D, '2d'],
  '3d4h': [3 * D + 4 * H, '3d4h'],
  '8 days': [8 * D, '8d'],
  '729 days': [729 * D, '729d'],
  '2y10d': [(730 + 10) * D, '2y10d'],
  '9 years': [9 * 365 * D, '9y'],
};
for (const [name, [ms, text]] of Object.entries(durations)) {
  test(`humanDuration ${name}`, () => {
    assert.equal(humanDuration(ms), text);
  });
}

test('formatAge handles unset and invalid timestamps', () => {
  const now = Date.parse('2026-01-01T00:00:10Z');
  assert.equal(formatAge('2026-01-01T00:00:00Z', now), '10s');
  assert.equal(formatAge('', now), '<unknown>');
  assert.equal(formatAge(undefined, now), '<unknown>');
  assert.equal(formatAge('yesterday', now), '<unknown>');
});

test('formatBytes uses decimal units as disk labels do', () => {
  assert.equal(formatBytes(undefined), '');
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(480_103_981_056), '480 GB');
  assert.equal(formatBytes(1_920_383_410_176), '1.9 TB');
  assert.equal(formatBytes(8_000_000_000), '8 GB');
});

test('renderTable pads all but the last column by three spaces', () => {
  assert.equal(renderTable(['A', 'LONG'], [['xx', ''], ['y', 'z']]), 'A    LONG\nxx\ny    z\n');
  assert.equal(renderFields([['Key', 'v'], ['Longer', 'w'], ['Empty', '']], '  '), '  Key:     v\n  Longer:  w\n  Empty:\n');
});

const parsedDurations: Record<string, number | undefined> = {
  '30': 30 * S, '30s': 30 * S, '5m': 5 * M, '1h': H, '1m30s': 90 * S, '500ms': 500, '1.5s': 1500, '': undefined, soon: undefined, '5x': undefined,
};
for (const [text, ms] of Object.entries(parsedDurations)) {
  test(`parseDuration ${JSON.stringify(text)}`, () => {
    assert.equal(parseDuration(text), ms);
  });
}

test('status codes map to the documented exit codes', () => {
  assert.deepEqual([400, 401, 404, 409, 413, 415, 500, 503].map(exitCodeForStatus), [5, 1, 3, 4, 5, 5, 1, 1]);
});

test('errors name their field once', () => {
  assert.equal(formatCliError(new CliError(5, 'must be hard or soft', 'mode')), 'error: mode: must be hard or soft\n');
  assert.equal(formatCliError(new CliError(5, 'spec.online: wrong', 'spec.online')), 'error: spec.online: wrong\n');
  assert.equal(formatCliError(new CliError(1, 'boom')), 'error: boom\n');
});

test('parseCommandLine accepts global options anywhere and bare --wait', () => {
  const parsed = parseCommandLine(['--server', 'http://x:1', 'delete', 'host', 'a', '--wait', '--timeout', '1m']);
  assert.deepEqual(parsed.positionals, ['delete', 'host', 'a']);
  assert.deepEqual({ ...parsed.options }, { server: 'http://x:1', wait: 'true', timeout: '1m' });
});
