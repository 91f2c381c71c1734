/**
 * BMCs at IPv6 literals (issue #30; metal3 spells them `ipmi://[fd00::5]:623`,
 * `redfish+https://[fd00::5]/redfish/v1/Systems/1`): rackside's IPMI driver opens an RMCP+
 * session with OpenIPMI's ipmi_sim answering on ::1 and drives its chassis, and its Redfish driver
 * talks to the lab's Redfish BMC listening on ::1 — with the address spelled as an operator would.
 * Needs ipmi_sim and ipmitool: skipped without them, failed under RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DriverRegistry, parseBmcAddress, registerBuiltinDrivers } from '../../drivers/index.js';
import { createIpmiDriver } from '../../drivers/ipmi/ipmi-driver.js';
import { startIpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool, requireIpmiTools } from '../lab/ipmi/ipmitool.js';
import { MemoryHostBackend } from '../lab/redfish/backend.js';
import { startVirtualRedfishBmc } from '../lab/redfish/virtual-bmc.js';

test('ipmi://[::1]:PORT: an RMCP+ session over IPv6 powers the chassis on and off; ipmitool over IPv6 sees it', { timeout: 60_000 }, async (t) => {
  if (!requireIpmiTools(t)) return;
  const sim = await startIpmiSim({ host: '::1' });
  t.after(() => sim.stop());
  const address = parseBmcAddress(`ipmi://[::1]:${sim.port}`);
  assert.equal(address.hostname, '::1');
  const driver = createIpmiDriver(address, { username: sim.username, password: sim.password }, { keepaliveMs: 0 });
  t.after(() => driver.close());
  assert.equal(await driver.power.getPowerState(), 'off');
  await driver.power.setPower('on');
  assert.equal((await sim.readChassis()).power, '1');
  assert.match(await ipmitool({ host: '::1', port: sim.port, username: sim.username, password: sim.password }, ['chassis', 'power', 'status']), /Chassis Power is on/);
  await driver.power.setPower('off');
  assert.equal((await sim.readChassis()).power, '0');
});

test('redfish+http://[::1]:PORT/redfish/v1/Systems/1: the Redfish driver powers and boots a system over IPv6', async (t) => {
  const backend = new MemoryHostBackend();
  const bmc = await startVirtualRedfishBmc({ https: false, host: '::1', port: 0, backend: () => backend });
  t.after(() => bmc.stop());
  assert.match(bmc.host, /^\[::1\]:\d+$/);
  const registry = new DriverRegistry();
  registerBuiltinDrivers(registry);
  const driver = registry.create(`redfish+http://${bmc.host}/redfish/v1/Systems/1`, { username: 'admin', password: 'password' }, { timeoutMs: 3000 });
  t.after(() => driver.close());
  await driver.bootDevice.setBootDevice('pxe', { mode: 'uefi' });
  await driver.power.setPower('on');
  assert.deepEqual(backend.boots, [{ target: 'Pxe', media: undefined }]);
  assert.equal(await driver.power.getPowerState(), 'on');
});
