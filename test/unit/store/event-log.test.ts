/** @module Event-log arithmetic shared by both stores (agent/store/event-log.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventKey, parseEventKey, planCap } from '../../../agent/store/event-log.js';

test('event keys sort numerically and parse back', () => {
  const seqs = [1, 9, 10, 99, 100, 12345678901];
  const keys = seqs.map(eventKey);
  assert.deepEqual([...keys].sort(), keys);
  assert.deepEqual(keys.map(parseEventKey), seqs);
  assert.equal(parseEventKey('abc'), undefined);
});

const caps: Record<string, { count: number; added: number; cap: number; want: { dropStored: number; skipNew: number } }> = {
  'under the cap': { count: 3, added: 1, cap: 5, want: { dropStored: 0, skipNew: 0 } },
  'exactly the cap': { count: 4, added: 1, cap: 5, want: { dropStored: 0, skipNew: 0 } },
  'one over': { count: 5, added: 1, cap: 5, want: { dropStored: 1, skipNew: 0 } },
  'append larger than the cap': { count: 5, added: 7, cap: 5, want: { dropStored: 5, skipNew: 2 } },
  'empty log, big append': { count: 0, added: 8, cap: 5, want: { dropStored: 0, skipNew: 3 } },
  'cap lowered since last run': { count: 10, added: 1, cap: 5, want: { dropStored: 6, skipNew: 0 } },
};
for (const [name, c] of Object.entries(caps)) {
  test(`planCap: ${name}`, () => {
    assert.deepEqual(planCap(c.count, c.added, c.cap), c.want);
  });
}
