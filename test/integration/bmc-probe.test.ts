/**
 * `rackside bmc probe`'s engine (drivers/probe.ts) against OpenIPMI's ipmi_sim on 127.0.0.1:
 * lanplus answers, the cipher suite list is read (3 listed, no 17), and the recommendation is
 * `ipmi://` with a note that suite 17 is missing — within the 10 s budget.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { probeBmc } from '../../drivers/probe.js';
import { startIpmiSim, type IpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { missingIpmiTools, requireIpmiTools } from '../lab/ipmi/ipmitool.js';

let sim: IpmiSim | undefined;

before(async () => {
  if (missingIpmiTools().length === 0) sim = await startIpmiSim();
});

after(async () => {
  await sim?.stop();
});

test('probe of ipmi_sim: ipmi:// recommended, suites listed, within 10 s', async (t) => {
  if (!requireIpmiTools(t)) return;
  assert.ok(sim !== undefined, 'the simulator started');
  const started = Date.now();
  const report = await probeBmc({ address: `ipmi://${sim.host}:${sim.port}`, timeoutMs: 10_000, requestTimeoutMs: 1000 });
  assert.ok(Date.now() - started < 10_000);
  assert.equal(report.recommendedAddress, `ipmi://${sim.host}:${sim.port}`);
  assert.equal(report.ipmi?.capabilities?.supportsIpmi20, true);
  assert.ok(report.ipmi.cipherSuites?.includes(3) === true && !report.ipmi.cipherSuites.includes(17), JSON.stringify(report.ipmi.cipherSuites));
  assert.ok(report.notes.some((n) => /cipher suite 17 is not listed/.test(n)), report.notes.join('\n'));
});
