/**
 * @module A damaged LevelDB write-ahead log is never a silent loss: the store opens, says what
 * LevelDB dropped (`Store.damage` and a `StoreDamaged` Warning event) and keeps the damaged log;
 * a clean reopen reports nothing and keeps nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../agent/store/index.js';
import { parseRecoveryProblems } from '../../../agent/store/log-recovery.js';
import { makeHost } from './fixtures.js';

async function withHosts(count: number): Promise<{ stateDir: string; logPath: string }> {
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-damage-'));
  const store = await openStore({ stateDir });
  for (let i = 0; i < count; i++) await store.commit([{ kind: 'host', op: 'put', object: makeHost(`h${i}`, 'x'.repeat(200)), ifVersion: 'absent' }]);
  await store.close();
  const logs = (await readdir(join(stateDir, 'db'))).filter((n) => n.endsWith('.log'));
  assert.equal(logs.length, 1);
  return { stateDir, logPath: join(stateDir, 'db', logs[0]!) };
}

test('a flipped byte in the middle of the log: the store opens, reports the dropped bytes and keeps the damaged log', async (t) => {
  const { stateDir, logPath } = await withHosts(60);
  t.after(() => rm(stateDir, { recursive: true, force: true }));
  const bytes = await readFile(logPath);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  await writeFile(logPath, bytes);

  let store: Store = await openStore({ stateDir });
  try {
    const hosts = await store.listHosts();
    assert.ok(hosts.length < 60, 'LevelDB dropped records after the damage (otherwise the test damaged nothing)');
    assert.ok(store.damage !== undefined, 'the loss is reported');
    assert.ok(store.damage.droppedBytes > 0);
    assert.match(store.damage.problems[0] ?? '', /Corruption|dropping/);
    const kept = store.damage.preservedAt ?? '';
    assert.match(kept, /db-recovery\/damaged-/);
    assert.deepEqual(await readFile(join(kept, logPath.split('/').at(-1)!)), bytes, 'the damaged log is kept byte for byte');
    const [event] = await store.listEvents();
    assert.equal(event?.reason, 'StoreDamaged');
    assert.equal(event.type, 'Warning');
    assert.match(event.message, /dropped \d+ bytes/);
    assert.ok(event.message.includes(kept));
  } finally {
    await store.close();
  }
  // Reopening the (now repaired) database is clean again and leaves nothing pending.
  store = await openStore({ stateDir });
  try {
    assert.equal(store.damage, undefined);
    assert.deepEqual((await readdir(join(stateDir, 'db-recovery'))).filter((n) => n === 'pending'), []);
  } finally {
    await store.close();
  }
});

test('a clean reopen and a torn tail (an unacknowledged write cut short) report nothing', async (t) => {
  const { stateDir } = await withHosts(20);
  t.after(() => rm(stateDir, { recursive: true, force: true }));
  let store = await openStore({ stateDir });
  assert.equal(store.damage, undefined);
  assert.equal((await store.listHosts()).length, 20);
  await store.close();
  store = await openStore({ stateDir });
  await store.commit([{ kind: 'host', op: 'put', object: makeHost('tail', 'y'.repeat(300)), ifVersion: 'absent' }]);
  await store.close();
  // The write above is the last record of the current log: cut it short, as a crash mid-write would.
  const logs = (await readdir(join(stateDir, 'db'))).filter((n) => n.endsWith('.log')).sort();
  const current = join(stateDir, 'db', logs.at(-1)!);
  const bytes = await readFile(current);
  assert.ok(bytes.length > 300, `the tail write is in ${current}`);
  await writeFile(current, bytes.subarray(0, bytes.length - 50));
  store = await openStore({ stateDir });
  try {
    assert.equal(store.damage, undefined, JSON.stringify(store.damage));
    const names = (await store.listHosts()).map((h) => h.metadata.name);
    assert.equal(names.length, 20, 'every earlier write is intact, the torn one is not there');
    assert.ok(!names.includes('tail'));
  } finally {
    await store.close();
  }
});

test('LevelDB info-log lines about dropped records are parsed; others are not', () => {
  const log = [
    '2026/11/30-19:58:44.162785 7fa2517766c0 Recovering log #3',
    '2026/11/30-19:58:44.162844 7fa2517766c0 (ignoring error) /s/db/000003.log: dropping 8450 bytes; Corruption: checksum mismatch',
    '2026/11/30-19:58:44.162900 7fa2517766c0 (ignoring error) /s/db/000003.log: dropping 12 bytes; Corruption: bad record length',
    '2026/11/30-19:58:44.163390 7fa2517766c0 Level-0 table #5: 2487 bytes OK',
  ].join('\n');
  assert.deepEqual(parseRecoveryProblems(log), {
    droppedBytes: 8462,
    problems: [
      '(ignoring error) /s/db/000003.log: dropping 8450 bytes; Corruption: checksum mismatch',
      '(ignoring error) /s/db/000003.log: dropping 12 bytes; Corruption: bad record length',
    ],
  });
  assert.deepEqual(parseRecoveryProblems('Recovering log #3\nDelete type=0 #3\n'), { droppedBytes: 0, problems: [] });
});
