/** The transition table renders docs/host-states.dot; the checked-in file must not drift. */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { PROVISIONING_STATES } from '../../../agent/host/types.js';
import { renderStateDiagram, STEADY_STATES, TRANSITIONS } from '../../../agent/host/states.js';

const DOT = new URL('../../../../docs/host-states.dot', import.meta.url);

test('docs/host-states.dot matches the transition table (UPDATE_GOLDEN=1 rewrites it)', async () => {
  const rendered = renderStateDiagram();
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(DOT, rendered);
  const checkedIn = await readFile(DOT, 'utf8').catch(() => '');
  assert.equal(checkedIn, rendered, 'run the tests with UPDATE_GOLDEN=1 and commit docs/host-states.dot');
});

test('every state appears in the table and every non-deleting state can be deleted', () => {
  const mentioned = new Set(TRANSITIONS.flatMap((t) => [t.from, t.to]));
  for (const state of PROVISIONING_STATES) assert.ok(mentioned.has(state), `state "${state}" is in no transition`);
  for (const state of PROVISIONING_STATES) {
    if (state === 'deleting') continue;
    const next = TRANSITIONS.filter((t) => t.from === state).map((t) => t.to);
    assert.ok(next.length > 0, `state "${state}" is a dead end`);
  }
  assert.ok(STEADY_STATES.includes('provisioned'));
});
