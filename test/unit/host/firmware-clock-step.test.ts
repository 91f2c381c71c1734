/**
 * The firmware refresh cadence (HostFirmwareSettings/Components re-read every 5 min) survives a
 * wall clock that steps back: one refresh at the next reconcile, then the usual cadence — not a
 * day without refreshes after a one-day step back. A forward step costs one early refresh.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { HostService } from '../../../agent/host/service.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { Fixture } from '../../../agent/provisioner/fixture.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests } from '../../helpers/host-harness.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

test('a wall clock stepped back by a day refreshes the firmware once at the next reconcile, then every 5 min again', async () => {
  const clock = { ms: Date.parse('2026-11-30T12:00:00Z') };
  const store = createMemoryStore();
  const fixture = new Fixture({ delayScale: 0 });
  const reconciler = new Reconciler({
    store, factory: fixture, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0,
    now: () => new Date(clock.ms),
  });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'fixture', startedAt: '' } });
  await service.apply(hostManifests('fw0', { online: false }, { 'inspect.metal3.io': 'disabled' }));
  for (let i = 0; i < 40 && (await service.getHost('fw0')).status.provisioning.state !== 'available'; i++) await reconciler.reconcileOnce('fw0');
  assert.equal((await service.getHost('fw0')).status.provisioning.state, 'available');
  const reads = (): number => fixture.callsFor('fw0', 'getFirmwareSettings').length;
  const step = async (ms: number): Promise<number> => {
    clock.ms += ms;
    const before = reads();
    await reconciler.reconcileOnce('fw0');
    return reads() - before;
  };

  assert.equal(await step(MINUTE), 0, 'not due after 1 min');
  assert.equal(await step(5 * MINUTE), 1, 'due after 5 min');
  assert.equal(await step(-DAY), 1, 'a step back by a day: refreshed at once');
  assert.equal(await step(MINUTE), 0, 'then the cadence resumes from the new time');
  assert.equal(await step(5 * MINUTE), 1);
  assert.equal(await step(DAY), 1, 'a step forward: one early refresh');
  assert.equal(await step(MINUTE), 0);
});
