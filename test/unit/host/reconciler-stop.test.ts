/** Reconciler.stop waits for reconciles in flight, but not forever: a provisioner call that never returns does not hold the shutdown. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { Reconciler } from '../../../agent/host/reconciler.js';
import type { Factory, Provisioner } from '../../../agent/provisioner/index.js';
import { HostService } from '../../../agent/host/service.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests } from '../../helpers/host-harness.js';

test('stop gives up on a reconcile stuck in the provisioner after its grace time', async () => {
  const store = createMemoryStore();
  const seen = { entered: false };
  const hanging: Factory = {
    newProvisioner: () => {
      seen.entered = true;
      // A backend that never answers (an unresponsive BMC with no timeout, say).
      return new Promise<Provisioner>(() => undefined);
    },
  };
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => { lines.push(line); } });
  const reconciler = new Reconciler({ store, factory: hanging, logger, concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  await new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'fixture', startedAt: '' } }).apply(hostManifests('stuck-0'));
  await reconciler.start();
  for (let i = 0; i < 100 && !seen.entered; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(seen.entered, 'the reconcile reached the provisioner');
  await reconciler.stop(200); // without the grace time this never resolves (the test would time out)
  assert.ok(lines.some((l) => l.includes('reconciles still running at shutdown') && l.includes('"inFlight":1')), lines.join(''));
});
