/**
 * What the status page shows about a host (agent/web/ui/host-model.ts and the formatting in
 * status-report.ts): categories, the lifecycle step indicator, counts, filters, durations.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROVISIONING_STATES, type BareMetalHostStatus, type ProvisioningState } from '../../../agent/host/types.js';
import {
  categoryOf, countHosts, formatDuration, hostDescription, hostMatches, isDiscovered, lifecycleProgress, operationRows, proposedBmc, sortHosts, stateLabel, type StateCategory,
} from '../../../agent/web/ui/host-model.js';
import { downloadFraction, formatBytes, formatRate } from '../../../agent/web/ui/status-report.js';
import { sampleHost } from '../../helpers/fake-backend.js';

function inState(state: ProvisioningState, status: Partial<BareMetalHostStatus> = {}, name = 'node-1'): ReturnType<typeof sampleHost> {
  return sampleHost(name, { status: { provisioning: { state, ID: '', image: { url: '' } }, ...status } });
}

const categories: Record<string, [ReturnType<typeof sampleHost>, StateCategory]> = {
  provisioned: [inState('provisioned'), 'done'],
  'externally provisioned': [inState('externally provisioned'), 'done'],
  available: [inState('available'), 'ready'],
  inspecting: [inState('inspecting'), 'busy'],
  'new host': [inState(''), 'busy'],
  'error wins over state': [inState('provisioned', { operationalStatus: 'error', errorType: 'power management error' }), 'error'],
  detached: [inState('provisioned', { operationalStatus: 'detached' }), 'idle'],
  unmanaged: [inState('unmanaged'), 'idle'],
  deleting: [inState('deleting'), 'gone'],
};
for (const [name, [host, expected]] of Object.entries(categories)) {
  test(`categoryOf: ${name}`, () => {
    assert.equal(categoryOf(host), expected);
  });
}

const progressCases: Record<string, [ReturnType<typeof sampleHost>, string, string]> = {
  'new host': [inState(''), 'current todo todo todo todo todo', 'Step 1 of 6: register'],
  inspecting: [inState('inspecting'), 'done current todo todo todo todo', 'Step 2 of 6: inspect'],
  'match profile counts as preparing': [inState('match profile'), 'done done current todo todo todo', 'Step 3 of 6: prepare'],
  available: [inState('available'), 'done done done done todo todo', 'Step 4 of 6: available'],
  provisioning: [inState('provisioning'), 'done done done done current todo', 'Step 5 of 6: provision'],
  provisioned: [inState('provisioned'), 'done done done done done done', 'Step 6 of 6: provisioned (complete)'],
  'registration error': [inState('registering', { operationalStatus: 'error', errorType: 'registration error' }), 'failed todo todo todo todo todo', 'Step 1 of 6: register (failed)'],
  'available after provisioning gave up': [inState('available', { operationalStatus: 'error', errorType: 'provisioning error' }), 'done done done done failed todo', 'Step 5 of 6: provision (failed)'],
  'power error while provisioned': [inState('provisioned', { operationalStatus: 'error', errorType: 'power management error' }), 'done done done done done failed', 'Step 6 of 6: provisioned (failed)'],
  deprovisioning: [inState('deprovisioning'), 'done current todo', 'Step 2 of 3: deprovision'],
  deleting: [inState('deleting'), 'done current', 'Step 2 of 2: delete'],
  'externally provisioned': [inState('externally provisioned'), 'done done', 'Step 2 of 2: externally provisioned (complete)'],
  unmanaged: [inState('unmanaged'), 'current', 'Step 1 of 1: unmanaged: add BMC details'],
};
for (const [name, [host, statuses, summary]] of Object.entries(progressCases)) {
  test(`lifecycleProgress: ${name}`, () => {
    const progress = lifecycleProgress(host);
    assert.equal(progress.steps.map((s) => s.status).join(' '), statuses);
    assert.equal(progress.summary, summary);
  });
}

test('countHosts: lifecycle order, zero counts left out, errors counted', () => {
  const hosts = [inState('provisioned', {}, 'a'), inState('available', {}, 'b'), inState('provisioned', {}, 'c'), inState('available', { operationalStatus: 'error', errorType: 'provisioning error' }, 'd')];
  assert.deepEqual(countHosts(hosts, PROVISIONING_STATES), { byState: [{ state: 'available', count: 2 }, { state: 'provisioned', count: 2 }], errors: 1, discovered: 0, total: 4 });
});

/** A host discovery recorded (agent/discovery): unmanaged, annotated, no BMC; `proposed`: the in-band BMC (approve: manual). */
function discoveredHost(name: string, proposed?: string): ReturnType<typeof sampleHost> {
  const host = inState('unmanaged', {}, name);
  delete host.spec.bmc;
  host.metadata.annotations = { 'rackside.io/discovered-at': '2026-12-06T10:00:00Z', ...(proposed === undefined ? {} : { 'rackside.io/proposed-bmc-address': proposed }) };
  return host;
}

test('isDiscovered and proposedBmc: unmanaged with the discovered-at annotation and no BMC; the proposal from its annotation', () => {
  const waiting = discoveredHost('host-525400d15c01', 'ipmi://192.0.2.40');
  assert.equal(isDiscovered(waiting), true);
  assert.equal(proposedBmc(waiting), 'ipmi://192.0.2.40');
  assert.equal(proposedBmc(discoveredHost('no-bmc')), '');
  assert.equal(isDiscovered(inState('unmanaged')), false, 'an applied host without a BMC is not a discovered one');
  const enrolled = discoveredHost('enrolled');
  enrolled.status.provisioning.state = 'registering';
  assert.equal(isDiscovered(enrolled), false, 'enrolled: registering');
  const given = discoveredHost('given');
  given.spec.bmc = { address: 'ipmi://192.0.2.41', credentialsName: 'given-bmc-secret' };
  assert.equal(isDiscovered(given), false, 'a BMC in the spec');
  const hosts = [waiting, discoveredHost('no-bmc'), inState('unmanaged', {}, 'applied'), inState('available', {}, 'b')];
  assert.equal(countHosts(hosts, PROVISIONING_STATES).discovered, 2);
  const none = { text: '', state: '', errorsOnly: false };
  assert.deepEqual(hosts.filter((h) => hostMatches(h, { ...none, discoveredOnly: true })).map((h) => h.metadata.name), ['host-525400d15c01', 'no-bmc']);
  assert.equal(hostMatches(waiting, { ...none, text: '192.0.2.40' }), true, 'the text filter finds the proposed BMC');
});

test('hostMatches: state, errors only, and text over name, description, MAC, BMC, error', () => {
  const host = sampleHost('rack1-node7', { spec: { bootMACAddress: 'AA:BB:CC:00:11:22' }, status: { errorMessage: 'BMC timeout', operationalStatus: 'error' } });
  host.metadata.annotations = { 'rackside.io/description': 'GPU box in U12' };
  const none = { text: '', state: '', errorsOnly: false };
  assert.equal(hostMatches(host, none), true);
  for (const text of ['NODE7', 'gpu box', 'aa:bb:cc', 'ipmi://10.0.0', 'bmc timeout', 'available']) assert.equal(hostMatches(host, { ...none, text }), true, text);
  assert.equal(hostMatches(host, { ...none, text: 'node8' }), false);
  assert.equal(hostMatches(host, { ...none, state: 'provisioned' }), false);
  assert.equal(hostMatches(host, { ...none, state: 'available', errorsOnly: true }), true);
  assert.equal(hostMatches(sampleHost('ok'), { ...none, errorsOnly: true }), false);
  assert.equal(hostDescription(host), 'GPU box in U12');
  assert.equal(hostDescription(sampleHost('x', { spec: { description: 'from spec' } })), 'from spec');
});

const durations: Record<string, [number, string]> = {
  'sub-second': [850, '850 ms'],
  seconds: [1234, '1.23 s'],
  'tens of seconds': [12_345, '12.3 s'],
  minutes: [245_000, '4 min 05 s'],
  hours: [2 * 3600_000 + 7 * 60_000, '2 h 07 min'],
  days: [3 * 86_400_000 + 4 * 3600_000, '3 d 4 h'],
  negative: [-1, '—'],
  'not a number': [Number.NaN, '—'],
};
for (const [name, [ms, text]] of Object.entries(durations)) {
  test(`formatDuration: ${name}`, () => {
    assert.equal(formatDuration(ms), text);
  });
}

test('operationRows: finished, running and never-run operations', () => {
  const host = sampleHost('x', {
    status: {
      operationHistory: {
        register: { start: '2026-11-30T10:00:00Z', end: '2026-11-30T10:00:02.500Z' },
        inspect: { start: '2026-11-30T10:01:00Z', end: '' },
        provision: { start: '', end: '' },
        deprovision: { start: '', end: '' },
      },
    },
  });
  const rows = operationRows(host.status.operationHistory, Date.parse('2026-11-30T10:05:00Z'));
  assert.deepEqual(rows.map((r) => [r.operation, r.duration, r.running]), [
    ['register', '2.50 s', false], ['inspect', 'running for 4 min 00 s', true], ['provision', '—', false], ['deprovision', '—', false],
  ]);
});

test('sortHosts and stateLabel', () => {
  assert.deepEqual(sortHosts([sampleHost('b'), sampleHost('a10'), sampleHost('a')]).map((h) => h.metadata.name), ['a', 'a10', 'b']);
  assert.equal(stateLabel(''), 'new');
  assert.equal(stateLabel('match profile'), 'match profile');
});

test('formatBytes, formatRate, downloadFraction', () => {
  assert.deepEqual([0, 512, 1500, 12_345_678, 2.25e9].map(formatBytes), ['0 B', '512 B', '1.50 kB', '12.3 MB', '2.25 GB']);
  assert.equal(formatRate(1_250_000), '1.25 MB/s');
  assert.equal(downloadFraction({ url: 'u', state: 'downloading', bytesDone: 50, bytesTotal: 200 }), 0.25);
  assert.equal(downloadFraction({ url: 'u', state: 'downloading', bytesDone: 50 }), undefined);
  assert.equal(downloadFraction({ url: 'u', state: 'done', bytesDone: 300, bytesTotal: 200 }), 1);
});
