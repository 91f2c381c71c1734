/**
 * Fault injection at the BMC, through the real host state machine, the local provisioner and the
 * real Redfish driver against the virtual Redfish BMC: the BMC goes down, answers 5xx storms,
 * hangs and flaps (its TLS certificate changing: bmc-tls.test.ts). Each fault ends in a defined state with a clear
 * error on the host (never a crash or a stuck reconcile), and the host recovers by itself once
 * the fault clears.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VirtualBmcFault } from '../lab/redfish/state.js';
import { availableHost } from './bmc-rig.js';

const faults: Record<string, VirtualBmcFault[]> = {
  'a 503 storm': [{ kind: 'status', status: 503, retryAfterSeconds: 0 }],
  'a 500 storm': [{ kind: 'status', status: 500 }],
  'connection resets (BMC down)': [{ kind: 'reset' }],
  'a hanging BMC': [{ kind: 'hang' }],
  'HTML error pages': [{ kind: 'html', status: 502 }],
};

for (const [name, injected] of Object.entries(faults)) {
  test(`${name}: the host holds its state with a Warning event naming the fault, and powers on by itself once the fault clears`, async (t) => {
    const r = await availableHost(t);
    for (const f of injected) r.bmc.state.inject({ ...f });
    await r.setOnline(true);
    for (let i = 0; i < 8; i++) await r.reconciler.reconcileOnce('f0');
    const during = await r.host();
    assert.equal(during.status.provisioning.state, 'available', 'the host stays where it was');
    assert.equal(during.status.poweredOn, false);
    const warning = (await r.events()).find((e) => e.startsWith('TransientFailure: ') || e.startsWith('PowerManagementError'));
    assert.ok(warning !== undefined, `a Warning event tells the operator: ${(await r.events()).join(' | ')}`);
    assert.match(warning, /BMC|Redfish|HTTP|timed out|reset|reach/i);
    assert.match(warning, /attempts in a row/);
    t.diagnostic(warning);
    r.bmc.state.clearFaults();
    const healed = await r.until('recovering', (h) => h.status.poweredOn && h.status.errorMessage === '' && h.status.operationalStatus === 'OK');
    assert.equal(healed.status.provisioning.state, 'available');
    assert.ok((await r.events()).some((e) => e.startsWith('Recovered: ')), 'recovery is recorded too');
  });
}

test('a flapping BMC (every other answer a reset or a 503): the host still gets powered on, with no error left behind', async (t) => {
  const r = await availableHost(t);
  await r.setOnline(true);
  for (let i = 0; i < 30; i++) {
    const h = await r.host();
    if (h.status.poweredOn) break;
    r.bmc.state.clearFaults();
    if (i % 2 === 0) r.bmc.state.inject(i % 4 === 0 ? { kind: 'reset', times: 1 } : { kind: 'status', status: 503, times: 1 });
    await r.reconciler.reconcileOnce('f0');
  }
  r.bmc.state.clearFaults();
  const healed = await r.until('settling', (h) => h.status.poweredOn && h.status.operationalStatus === 'OK');
  assert.equal(healed.status.errorMessage, '');
  assert.equal(healed.status.errorType, '');
  assert.equal(healed.status.provisioning.state, 'available');
});
