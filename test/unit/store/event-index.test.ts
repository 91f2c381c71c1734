/**
 * @module The event index (agent/store/event-index.ts) and the LevelDB store's indexed event
 * listings: table cases for the selection rules, then a differential run — seeded random
 * appends (with the cap dropping the oldest) to the LevelDB store and the memory store (which
 * scans its array), and random host/MAC/afterSeq/limit listings that must agree exactly,
 * including across a reopen (the index is rebuilt by one scan). And the shared host snapshot.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EventIndex } from '../../../agent/store/event-index.js';
import { normalizeFilter } from '../../../agent/store/event-log.js';
import { createMemoryStore, openStore, type EventFilter, type Store } from '../../../agent/store/index.js';
import { prng } from '../../helpers/prng.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { makeEvent, makeHost } from './fixtures.js';

function indexOf(events: { seq: number; host?: string; mac?: string }[]): EventIndex {
  const index = new EventIndex();
  for (const e of events) index.add(e, 1);
  return index;
}

const EVENTS = [
  { seq: 1, host: 'a', mac: 'm1' }, { seq: 2, host: 'b' }, { seq: 3, host: 'a' }, { seq: 4, mac: 'm1' },
  { seq: 5, host: 'a', mac: 'm1' }, { seq: 6, host: 'b', mac: 'm2' }, { seq: 7, host: 'a', mac: 'm2' },
];

const cases: Record<string, { filter: EventFilter; oldest?: number; last?: number; want: number[] }> = {
  'by host, oldest first': { filter: { host: 'a' }, want: [1, 3, 5, 7] },
  'by MAC': { filter: { mac: 'M1' }, want: [1, 4, 5] },
  'host and MAC together': { filter: { host: 'a', mac: 'm1' }, want: [1, 5] },
  'the newest `limit`': { filter: { host: 'a', limit: 2 }, want: [5, 7] },
  'after a seq': { filter: { host: 'a', afterSeq: 3 }, want: [5, 7] },
  'dropped seqs are not selected': { filter: { host: 'a' }, oldest: 4, want: [5, 7] },
  'seqs beyond the last stored are not selected': { filter: { host: 'a' }, last: 5, want: [1, 3, 5] },
  'an unknown host selects nothing': { filter: { host: 'zz' }, want: [] },
  'unfiltered is the newest range': { filter: { limit: 3 }, want: [5, 6, 7] },
  'unfiltered after a seq within the stored range': { filter: { afterSeq: 5 }, oldest: 2, want: [6, 7] },
  'limit 0': { filter: { host: 'a', limit: 0 }, want: [] },
};

for (const [name, c] of Object.entries(cases)) {
  test(`event index: ${name}`, () => {
    assert.deepEqual(indexOf(EVENTS).select(normalizeFilter(c.filter), c.oldest ?? 1, c.last ?? 7), c.want);
  });
}

test('event index: hosts and MACs whose events were all dropped are forgotten by the periodic sweep', () => {
  const index = new EventIndex();
  for (let seq = 1; seq <= 100; seq++) index.add({ seq, mac: `mac-${String(seq)}` }, Math.max(1, seq - 9), 50);
  // After the sweep at add 100 only MACs with seq ≥ 91 (the 10 stored) remain.
  assert.equal(index.size, 10);
  assert.deepEqual(index.select(normalizeFilter({ mac: 'mac-95' }), 91, 100), [95]);
});

async function withStores(cap: number, body: (level: Store, memory: Store, reopen: () => Promise<Store>) => Promise<void>): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-evindex-'));
  let level = await openStore({ stateDir, eventCap: cap });
  const memory = createMemoryStore({ eventCap: cap });
  try {
    await body(level, memory, async () => {
      await level.close();
      level = await openStore({ stateDir, eventCap: cap });
      return level;
    });
  } finally {
    await level.close();
    await memory.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

test('LevelDB store listings agree with the memory store under random appends, caps and filters (seeded)', async () => {
  const rand = prng(20261130);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const hosts = ['h0', 'h1', 'h2', 'h3', 'h4'];
  const macs = ['aa:00:00:00:00:01', 'AA:00:00:00:00:02', 'aa:00:00:00:00:03'];
  await withStores(300, async (level, memory, reopen) => {
    let store = level;
    let listings = 0;
    for (let round = 0; round < 120; round++) {
      const batch = Array.from({ length: 1 + Math.floor(rand() * 12) }, (_, i) => {
        const about: { host?: string; mac?: string } = {};
        if (rand() < 0.7) about.host = pick(hosts);
        if (rand() < 0.5) about.mac = pick(macs);
        return makeEvent(`r${String(round)}-${String(i)}`, about);
      });
      await store.appendEvents(batch);
      await memory.appendEvents(batch);
      if (round === 60) store = await reopen();
      for (let k = 0; k < 4; k++) {
        const filter: EventFilter = {};
        if (rand() < 0.6) filter.host = pick([...hosts, 'nobody']);
        if (rand() < 0.4) filter.mac = pick(macs).toUpperCase();
        if (rand() < 0.5) filter.limit = Math.floor(rand() * 40);
        if (rand() < 0.3) filter.afterSeq = Math.floor(rand() * (round * 6));
        assert.deepEqual(await store.listEvents(filter), await memory.listEvents(filter), `round ${String(round)}, filter ${JSON.stringify(filter)}`);
        listings += 1;
      }
    }
    assert.equal(listings, 480);
  });
});

for (const [label, open] of [
  ['LevelDB store', async (dir: string) => openStore({ stateDir: dir })],
  ['memory store', () => Promise.resolve(createMemoryStore())],
] as const) {
  test(`${label}: hostSnapshot equals listHosts after every commit, is shared until the next, and is frozen`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rackside-snapshot-'));
    const store = await open(dir);
    try {
      const host = (name: string, online: boolean): BareMetalHost => ({ ...makeHost(name), spec: { ...makeHost(name).spec, online } });
      await store.commit([{ kind: 'host', op: 'put', object: host('b', true) }, { kind: 'host', op: 'put', object: host('a', true) }]);
      const first = await store.hostSnapshot();
      assert.deepEqual(first, await store.listHosts());
      assert.equal(await store.hostSnapshot(), first, 'the same array until a commit');
      assert.throws(() => { (first[0] as BareMetalHost).spec.online = false; }, TypeError);
      const current = await store.getHost('a');
      assert.ok(current);
      await store.commit([{ kind: 'host', op: 'put', object: { ...current, spec: { ...current.spec, online: false } }, ifVersion: current.metadata.resourceVersion }]);
      await store.commit([{ kind: 'host', op: 'put', object: host('c', true) }]);
      await store.commit([{ kind: 'host', op: 'delete', name: 'b' }]);
      const after = await store.hostSnapshot();
      assert.notEqual(after, first);
      assert.deepEqual(after, await store.listHosts());
      assert.deepEqual(after.map((h) => [h.metadata.name, h.spec.online]), [['a', false], ['c', true]]);
      assert.equal(first[0]?.spec.online, true, 'an earlier snapshot is not changed by later commits');
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
}
