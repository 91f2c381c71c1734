import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMemoryStore } from '../../../agent/store/index.js';
import { Outbox, WIRE_VERSION, summarizeEvent, summarizeHost } from '../../../agent/sync/index.js';
import { makeHost } from '../store/fixtures.js';
import { richHost } from './fixtures.js';
import { checkSchema, type SchemaNode } from './schema-check.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const schema = JSON.parse(readFileSync(resolve(ROOT, 'docs/sync-summary.schema.json'), 'utf8')) as SchemaNode;

async function producedPayload() {
  const store = createMemoryStore();
  const outbox = await Outbox.open({ kv: store.outbox, newStreamId: () => 'stream-1' });
  await outbox.putHost(summarizeHost(richHost('node-1')));
  await outbox.putHost(summarizeHost(makeHost('node-2')));
  await outbox.putDeletedHost({ namespace: 'default', name: 'gone' });
  await outbox.addEvent(summarizeEvent({ seq: 1, time: '2026-01-02T03:04:05Z', type: 'Warning', reason: 'PowerFailed', message: 'bmc said no', source: 'bmc', host: 'node-1', mac: '52:54:00:00:00:01' }));
  const { request } = await outbox.nextBatch({
    agentId: 'rack1-head', rack: 'rack1', sentAt: '2026-01-02T03:04:05.000Z', maxHosts: 10, maxEvents: 10,
    bootServices: { dhcp: { healthy: true, counters: { offers: 4 } }, tftp: { healthy: false, message: 'port 69 in use' } },
  });
  await store.close();
  return JSON.parse(JSON.stringify(request)) as unknown;
}

test('the schema declares wire version 1 and the 2020-12 dialect', () => {
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.deepEqual((schema.properties as Record<string, SchemaNode>).version, { ...(schema.properties as Record<string, SchemaNode>).version, const: WIRE_VERSION });
});

test('a payload the agent produces validates against docs/sync-summary.schema.json', async () => {
  assert.deepEqual(checkSchema(schema, await producedPayload()), []);
});

const broken: Record<string, [(p: Record<string, unknown>) => void, RegExp]> = {
  'missing sequence': [(p) => { delete p.sequence; }, /missing required sequence/],
  'host without hardware key': [(p) => { delete (p.hosts as Record<string, unknown>[])[0]!.hardware; }, /\$\.hosts\[0\]: missing required hardware/],
  'a smuggled secret field': [(p) => { (p.hosts as Record<string, unknown>[])[0]!.password = 'x'; }, /unexpected property password/],
  'wrong version': [(p) => { p.version = 2; }, /\$\.version: expected 1/],
  'bad event type': [(p) => { (p.events as Record<string, unknown>[])[0]!.type = 'Error'; }, /\$\.events\[0\]\.type: not one of/],
};
for (const [name, [mutate, problem]] of Object.entries(broken)) {
  test(`the checker catches ${name}`, async () => {
    const payload = (await producedPayload()) as Record<string, unknown>;
    mutate(payload);
    const problems = checkSchema(schema, payload);
    assert.ok(problems.some((p) => problem.test(p)), problems.join('\n'));
  });
}
