/**
 * In-band BMC enlistment against a real BMC: the ramdisk agent in discovery mode (busybox sh,
 * images/ramdisk/lib-ipmi.sh) drives real ipmitool against OpenIPMI's ipmi_sim, and rackside's
 * discovery route records the host. The system interface is stood in for by lanplus as the
 * simulator's admin (the ramdisk's `ipmitool -I open …` runs as `ipmitool -I lanplus … admin …`):
 * every command the ramdisk sends is the one it sends over /dev/ipmi0. The BMC's LAN address is
 * configured first, as a site's BMC has one. Then rackside's own IPMI driver opens a lanplus
 * session with the created user from the stored Secret and powers the chassis on; the password
 * appears in no agent log line, event, host or answer (byte search). Needs ipmi_sim and
 * ipmitool: skipped without them, failed under RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import express from 'express';
import { parseBmcAddress } from '../../drivers/bmc-address.js';
import { createIpmiDriver } from '../../drivers/ipmi/ipmi-driver.js';
import { DiscoveryAdmissions } from '../../agent/discovery/admissions.js';
import { DiscoveryService } from '../../agent/discovery/discovery-service.js';
import { createDiscoveryRouter } from '../../agent/discovery/discovery-routes.js';
import { DISCOVERY_DEFAULTS } from '../../agent/config-discovery.js';
import { createMemoryStore } from '../../agent/store/index.js';
import { listenOnLoopback } from '../helpers/listen.js';
import { startIpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool, requireIpmiTools } from '../lab/ipmi/ipmitool.js';
import { fakeEnv, put, runAgent } from '../unit/images/agent-harness.js';

test('the discovery ramdisk makes its BMC user on ipmi_sim; rackside stores it and powers the chassis with it over lanplus', { timeout: 120_000 }, async (t) => {
  if (!requireIpmiTools(t)) return;
  const sim = await startIpmiSim();
  t.after(() => sim.stop());
  const admin = { host: sim.host, port: sim.port, username: sim.username, password: sim.password };
  await ipmitool(admin, ['lan', 'set', '1', 'ipaddr', '127.0.0.1']);

  const root = mkdtempSync(join(tmpdir(), 'rackside-discovery-ipmi-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const wrapper = join(root, 'ipmitool');
  writeFileSync(wrapper, `#!/bin/sh\n# "-I open" becomes lanplus as the simulator's admin\nshift 2\nexec /usr/bin/ipmitool -I lanplus -H ${sim.host} -p ${sim.port} -U ${sim.username} -P ${sim.password} -C 3 "$@"\n`);
  chmodSync(wrapper, 0o755);

  const store = createMemoryStore();
  const admissions = new DiscoveryAdmissions({ maxPending: 4, maxHosts: 4, tokenTtlMs: 600_000 }, () => 'discovery-token-ipmi-0123456789');
  assert.ok(admissions.admit('52:54:00:ab:cd:ef', 0, 0).admitted);
  const service = new DiscoveryService({ store, config: { ...DISCOVERY_DEFAULTS, enrollBMC: true } });
  const app = express();
  app.use(createDiscoveryRouter({ admissions, service, store, nowMs: () => 1, stats: { rejected: { token: 0, invalid: 0, full: 0 } } }));
  const url = await listenOnLoopback(t, app);
  const env = fakeEnv(root);
  put(env.RACKSIDE_PROCFS ?? '', 'cmdline', `BOOTIF=01-52-54-00-ab-cd-ef rackside.url=${url} rackside.token=discovery-token-ipmi-0123456789 rackside.mode=discovery rackside.enroll_bmc=1\n`);
  const run = await runAgent(['once'], { ...env, RACKSIDE_IPMITOOL: wrapper, RACKSIDE_DISCOVERY_ACTION: 'none', RACKSIDE_REPORT_ATTEMPTS: '2', RACKSIDE_REPORT_RETRY_SECONDS: '0', RACKSIDE_DISCOVERY_RETRY_SECONDS: '0' });
  const log = readFileSync(join(env.RACKSIDE_RUN ?? '', 'agent.log'), 'utf8');
  assert.equal(run.code, 0, run.stdout);
  assert.match(log, /BMC user rackside \(slot 3\) made on LAN channel 1, BMC at 127\.0\.0\.1/, JSON.stringify(await store.listEvents()));

  const host = await store.getHost('sn-42');
  assert.deepEqual(host?.spec.bmc, { address: 'ipmi://127.0.0.1', credentialsName: 'sn-42-bmc-secret' });
  const secret = await store.getSecret('default', 'sn-42-bmc-secret');
  const username = Buffer.from(secret?.data.username ?? '', 'base64').toString();
  const password = Buffer.from(secret?.data.password ?? '', 'base64').toString();
  assert.equal(username, 'rackside');
  assert.match(password, /^[A-Za-z0-9]{16}$/);
  const listed = await ipmitool(admin, ['user', 'list', '1']);
  assert.match(listed, /^3\s+rackside\s+true\s+true\s+true\s+ADMINISTRATOR/m, 'slot 3: IPMI messaging on, ADMINISTRATOR on channel 1');

  // rackside's own driver, with what rackside stored (the simulator listens on its own port, not 623).
  const driver = createIpmiDriver(parseBmcAddress(`ipmi://127.0.0.1:${sim.port}`), { username, password }, { keepaliveMs: 0 });
  t.after(() => driver.close());
  await driver.power.setPower('on');
  assert.equal(await driver.power.getPowerState(), 'on');

  const everything = JSON.stringify({ events: await store.listEvents(), hosts: await store.listHosts() }) + log + run.stdout;
  assert.ok(!everything.includes(password), 'the password is in no log line, event or host');
});
