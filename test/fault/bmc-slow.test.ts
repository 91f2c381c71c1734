/**
 * Fault injection: a slow BMC — every answer takes 2 s, under the driver's request timeout (5 s
 * here) — through the real host state machine, the local provisioner and the real Redfish driver
 * against the virtual Redfish BMC, with the reconciler running on its own timers while the user
 * changes the host mid-call. The host keeps working (powers on, then off, as asked) with no
 * Warning event, no error, and no write sent twice: exactly one Reset per power change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitFor } from '../helpers/local-agent.js';
import { availableHost } from './bmc-rig.js';

const DELAY_MS = 2000;

test('a BMC answering every request after 2 s (timeout 5 s): the host powers on and off as asked, no warning, no duplicate Reset', async (t) => {
  const r = await availableHost(t, { timeoutMs: 5000, timeScale: 0.001 });
  const writesBefore = r.bmc.state.requests.filter((q) => q.method === 'POST' || q.method === 'PATCH').length;
  r.bmc.state.inject({ kind: 'slow', delayMs: DELAY_MS });
  await r.reconciler.start();
  t.after(() => r.reconciler.stop());
  await r.setOnline(true);
  // A change arriving while a slow call is in flight only asks for one more reconcile afterwards.
  await new Promise((resolve) => setTimeout(resolve, DELAY_MS / 2));
  const current = await r.host();
  await r.service.apply([{ ...structuredClone(current), metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, touched: '1' } } }]);
  await waitFor('power on', async () => ((await r.host()).status.poweredOn ? true : undefined), 60_000);
  await r.setOnline(false);
  await waitFor('power off', async () => ((await r.host()).status.poweredOn ? undefined : true), 60_000);
  await r.reconciler.stop();
  const posts = r.bmc.state.requests.filter((q) => q.method === 'POST' || q.method === 'PATCH');
  const writes = posts.slice(writesBefore).map((q) => `${q.method} ${q.path}`);
  t.diagnostic(`${r.bmc.state.requests.length} requests; writes after the fault: ${writes.join(', ')}`);
  assert.deepEqual(writes.filter((w) => w.includes('ComputerSystem.Reset')), [
    'POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset',
    'POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset',
  ], 'one Reset to power on, one to power off');
  assert.equal(r.bmc.state.maxInFlight, 1, 'never two requests at once to the BMC');
  const h = await r.host();
  assert.equal(h.status.provisioning.state, 'available');
  assert.equal(h.status.errorMessage, '');
  assert.equal(h.status.operationalStatus, 'OK');
  const events = await r.events();
  assert.ok(!events.some((e) => e.startsWith('TransientFailure') || e.startsWith('PowerManagementError')), `no warning: ${events.join(' | ')}`);
});
