/**
 * The local provisioner through the native IPMI driver against OpenIPMI's ipmi_sim (issue 27):
 * a power-on is one chassis request, and the provisioner's observed power follows within 1 s of
 * the BMC showing it (the host is woken then); the soft-off sequence soft off → power on → wait
 * past the (shortened) soft-off timeout → power off sends a new ACPI soft-off and reports no
 * stale "did not finish". Needs ipmi_sim and ipmitool: skipped without them.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import type { Provisioner } from '../../../agent/provisioner/index.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { startIpmiSim, type IpmiSim } from '../../lab/ipmi/ipmi-sim.js';
import { requireIpmiTools } from '../../lab/ipmi/ipmitool.js';
import { accessData, hostData } from '../../unit/provisioner/host-data.js';

interface Rig { sim: IpmiSim; p: Provisioner; woken: number[]; clock: { offsetMs: number } }

async function rig(t: TestContext): Promise<Rig | undefined> {
  if (!requireIpmiTools(t)) return undefined;
  const sim = await startIpmiSim();
  t.after(() => sim.stop());
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  const store = createMemoryStore();
  const clock = { offsetMs: 0 };
  const woken: number[] = [];
  const factory = new LocalFactory({
    store, nodes: new NodeTable(store.nodes, store.inventories), drivers, nowMs: () => Date.now() + clock.offsetMs, newId: () => 'id-ipmi-0000000000',
    pollMs: 0, wake: () => woken.push(Date.now()), power: { softOffTimeoutMs: 2_000 },
  });
  t.after(() => factory.close());
  const data = hostData('sim0', { bmcAddress: `ipmi://${sim.host}:${sim.port}`, bmcCredentials: { username: sim.username, password: sim.password } });
  const p = await factory.newProvisioner(data, () => undefined);
  assert.equal((await p.validateManagementAccess(accessData(), false, false)).result.errorMessage, '');
  return { sim, p, woken, clock };
}

const count = async (sim: IpmiSim, call: string): Promise<number> => (await sim.readChassis()).calls.filter((c) => c === call).length;

test('ipmi_sim: one chassis request per power-on, and the observed power follows within 1 s', async (t) => {
  const r = await rig(t);
  if (r === undefined) return;
  const before = await count(r.sim, 'set power 1');
  const started = Date.now();
  assert.equal((await r.p.powerOn(false)).dirty, true);
  let shownAfterMs: number | undefined;
  for (let i = 0; i < 40 && shownAfterMs === undefined; i += 1) {
    if ((await r.p.updateHardwareState()).poweredOn === true) shownAfterMs = Date.now() - started;
    else await sleep(50);
  }
  assert.ok(shownAfterMs !== undefined && shownAfterMs < 1_000, `poweredOn followed after ${String(shownAfterMs)} ms`);
  assert.equal((await r.p.powerOn(false)).dirty, false);
  assert.equal(await count(r.sim, 'set power 1') - before, 1, 'one request for one power-on');
  t.diagnostic(`ipmi_sim: poweredOn shown ${String(shownAfterMs)} ms after the request; woken ${r.woken.length} time(s)`);
});

test('ipmi_sim: soft off, power on, past the soft-off timeout power off: a new ACPI soft-off, no stale error', async (t) => {
  const r = await rig(t);
  if (r === undefined) return;
  await r.p.powerOn(false);
  for (let i = 0; i < 40 && (await r.p.powerOn(false)).dirty; i += 1) await sleep(100);
  assert.equal((await r.p.powerOff('soft', false, 'metadata')).errorMessage, '');
  for (let i = 0; i < 40 && (await r.p.powerOff('soft', false, 'metadata')).dirty; i += 1) await sleep(100);
  assert.equal(await count(r.sim, 'set shutdown 1'), 1);
  assert.equal((await r.p.powerOn(false)).errorMessage, '');
  for (let i = 0; i < 40 && (await r.p.powerOn(false)).dirty; i += 1) await sleep(100);
  r.clock.offsetMs += 5_000; // past the shortened soft-off timeout
  const again = await r.p.powerOff('soft', false, 'metadata');
  assert.equal(again.errorMessage, '', 'no immediate "soft power off did not finish"');
  assert.equal(await count(r.sim, 'set shutdown 1'), 2, 'an ACPI soft-off request is sent again');
});
