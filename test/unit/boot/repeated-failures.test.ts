/**
 * The same boot request failing the same way again is one fact (agent/boot/repeated-failures.ts):
 * the flight recorder stores the first failure and then one BootFailureRepeated summary at 3, 6,
 * 12 … failures in a row, and the diagnosis (agent/web/ui/diagnosis.ts) — on the status page and
 * in `describe host` — turns it into one finding: "the ramdisk is missing on this head node",
 * until the request succeeds. A host waiting for the ramdisk build says so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFlightRecorder } from '../../../agent/boot/flight-recorder.js';
import { outcomeOf, RepeatTracker } from '../../../agent/boot/repeated-failures.js';
import { renderHostDescription } from '../../../agent/cli/render.js';
import { createMemoryStore } from '../../../agent/store/memory-store.js';
import type { StoredEvent } from '../../../agent/store/types.js';
import { diagnoseHost } from '../../../agent/web/ui/diagnosis.js';
import type { BootEvent } from '../../../bootsvc/events.js';
import { sampleHost } from '../../helpers/fake-backend.js';

const MAC = '52:54:00:aa:bb:01';
const T0 = 1_700_000_000_000;

const get = (path: string, status: number): BootEvent => ({ kind: 'http', method: 'GET', path, status, bytes: status === 200 ? 300 : 0, durationMs: 1, clientAddress: '10.0.0.50', completed: true, mac: MAC });

test('RepeatTracker: the first failure is stored, the repeats summarized at 3, 6, 12; a success or another failure starts over', () => {
  const tracker = new RepeatTracker(3);
  const notFound = { request: 'GET /ramdisk/vmlinuz', failure: '404' };
  const verdicts = Array.from({ length: 12 }, (_, i) => tracker.observe('c', notFound, i));
  assert.deepEqual(verdicts.map((v) => (v.store ? 'store' : v.summary === undefined ? '-' : `sum${v.summary.count}`)), ['store', '-', 'sum3', '-', '-', 'sum6', '-', '-', '-', '-', '-', 'sum12']);
  assert.equal(verdicts[2]?.summary?.firstMs, 0);
  assert.deepEqual(tracker.observe('other-client', notFound, 20), { store: true }, 'per client');
  assert.deepEqual(tracker.observe('c', { request: 'GET /ramdisk/vmlinuz', failure: '500' }, 21), { store: true }, 'another failure is news');
  assert.deepEqual(tracker.observe('c', { request: 'GET /ramdisk/vmlinuz' }, 22), { store: true });
  assert.deepEqual(tracker.observe('c', notFound, 23), { store: true }, 'a success ended the run');
  assert.throws(() => new RepeatTracker(1), RangeError);
  assert.equal(outcomeOf({ kind: 'http', method: 'GET', path: '/x', status: 404, bytes: 0, durationMs: 1, clientAddress: '', completed: true, servedAs: 'probe' })?.failure, undefined, 'a probe\'s 404 is expected');
  assert.equal(outcomeOf({ kind: 'dhcp', message: 'discover', mac: MAC }), undefined);
});

test('a 404 loop on the ramdisk is one warning and summaries in the timeline, and one diagnosis', async () => {
  const store = createMemoryStore();
  await store.commit([{ kind: 'host', op: 'put', object: sampleHost('node-0', { spec: { bootMACAddress: MAC } }) }]);
  let now = T0;
  const recorder = createFlightRecorder({ store, nowMs: () => now });
  for (let i = 0; i < 10; i += 1) {
    recorder.record(get('/boot/52-54-00-aa-bb-01.ipxe', 200));
    recorder.record(get('/ramdisk/vmlinuz', 404));
    now += 10_000;
  }
  await recorder.close();
  const events = await store.listEvents({ mac: MAC });
  const warnings = events.filter((e) => e.type === 'Warning');
  assert.deepEqual(warnings.map((e) => e.reason), ['HTTPRequest', 'BootFailureRepeated', 'BootFailureRepeated'], 'not ten warnings');
  assert.match(warnings[2]?.message ?? '', /^GET \/ramdisk\/vmlinuz → 404: the same failure 6 times in a row since 2023-11-14T22:13:20\.000Z/);
  assert.equal(events.filter((e) => e.reason === 'HTTPRequest').length, 11, 'the successful script fetches are all kept');
  assert.equal(recorder.stats().repeated, 9);

  const host = sampleHost('node-0', { spec: { bootMACAddress: MAC }, status: { provisioning: { state: 'inspecting', ID: 'x', image: { url: '' } } } });
  const findings = diagnoseHost({ host, events, nowMs: now });
  const finding = findings.find((f) => f.rule === 'repeated-boot-failure');
  assert.equal(finding?.title, 'The ramdisk is missing on this head node: GET /ramdisk/vmlinuz answered 404 6 times in a row');
  assert.match(finding.detail, /RACKSIDE_RAMDISK_BUILD=off, build it with "rackside images build"/);
  const described = renderHostDescription(host, [], now, undefined, findings);
  assert.match(described, /^Diagnosis:\n {2}ERROR: The ramdisk is missing on this head node/m, 'describe host shows it');

  const fixed: StoredEvent = { ...(events.at(-1) as StoredEvent), seq: 10_000, time: new Date(now + 1000).toISOString(), type: 'Normal', reason: 'HTTPRequest', data: { method: 'GET', path: '/ramdisk/vmlinuz', status: 200 } };
  assert.equal(diagnoseHost({ host, events: [...events, fixed], nowMs: now + 2000 }).find((f) => f.rule === 'repeated-boot-failure'), undefined, 'a later success ends it');
});

test('a host waiting for the ramdisk build says so until RamdiskReady', () => {
  const at = (ms: number, reason: string, message: string): StoredEvent => ({ seq: ms, time: new Date(T0 + ms).toISOString(), type: 'Normal', reason, message, source: 'host-controller', host: 'node-0' });
  const waiting = [at(1, 'WaitingForRamdisk', 'waiting for the amd64 ramdisk build (step 3/5, composing the initramfs, 40 %)')];
  const findings = diagnoseHost({ events: waiting, nowMs: T0 + 10 });
  assert.deepEqual(findings.map((f) => [f.rule, f.severity, f.title]), [['waiting-for-ramdisk', 'info', 'Waiting for the amd64 ramdisk build (step 3/5, composing the initramfs, 40 %)']]);
  assert.deepEqual(diagnoseHost({ events: [...waiting, at(2, 'RamdiskReady', 'built')], nowMs: T0 + 10 }), []);
});
