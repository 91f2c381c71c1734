/**
 * The ramdisk agent in discovery mode under busybox sh against rackside's real discovery route
 * (memory store): it inspects, makes its BMC user in-band through a scripted ipmitool (LAN channel
 * found past a non-LAN one, the free slot after the anonymous user, a 16-byte password,
 * ADMINISTRATOR with IPMI messaging, suites 3 and 17 raised to ADMINISTRATOR), and posts one
 * report; the host is recorded with its BMC. A BMC that refuses the password is reported as an
 * error with the password removed; the password is in no agent log.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import express from 'express';
import { DiscoveryAdmissions } from '../../../agent/discovery/admissions.js';
import { DiscoveryService } from '../../../agent/discovery/discovery-service.js';
import { createDiscoveryRouter } from '../../../agent/discovery/discovery-routes.js';
import { DISCOVERY_DEFAULTS } from '../../../agent/config-discovery.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { fakeEnv, put, runAgent } from './agent-harness.js';

const PASSWORD = 'Q7mXr2Lp9sKd4Vn8';

/** A scripted ipmitool: channel 1 is serial, channel 2 LAN at 192.0.2.77; slots 1 (anonymous) and 2 (admin) used. */
function fakeIpmitool(root: string, refusePassword: boolean): string {
  const path = join(root, 'ipmitool');
  writeFileSync(path, `#!/bin/sh
echo "$*" >> "${join(root, 'ipmitool.calls')}"
shift 2
case "$*" in
  "channel info 1") printf 'Channel 0x1 info:\\n  Channel Medium Type   : Asynch. Serial/Modem (RS-232)\\n' ;;
  "channel info 2") printf 'Channel 0x2 info:\\n  Channel Medium Type   : 802.3 LAN\\n' ;;
  "channel info "*) echo "Invalid channel" >&2; exit 1 ;;
  "lan print 2") printf 'IP Address              : 192.0.2.77\\nMAC Address             : 52:54:00:12:34:99\\nRMCP+ Cipher Suites     : 0,1,2,3,17\\nCipher Suite Priv Max   : aaaXXaaaaaaaaaa\\n' ;;
  "lan6 print 2") printf 'IPv6 Static Address 0:\\n    Address: fe80::1/64\\n    Address: 2001:db8::77/64\\n' ;;
  "user list 2") printf 'ID  Name\\t     Callin  Link Auth\\tIPMI Msg   Channel Priv Limit\\n1                    true    false      false      NO ACCESS\\n2   admin            true    true       true       ADMINISTRATOR\\n3                    true    false      false      NO ACCESS\\n' ;;
  "user set password"*) ${refusePassword ? `echo "Set User Password command failed (user 3, password $5): Insufficient privilege level" >&2; exit 1` : 'exit 0'} ;;
  *) exit 0 ;;
esac
`);
  chmodSync(path, 0o755);
  return path;
}

/** A scripted rackside-lldp: records its arguments, prints a neighbour for rstest9 and a stray line. */
function fakeLldp(root: string): string {
  const path = join(root, 'rackside-lldp');
  writeFileSync(path, `#!/bin/sh
echo "$*" > "${join(root, 'lldp.args')}"
echo 'rackside-lldp: lo: socket error' >&2
echo '{"interface":"rstest9","chassis_id":"00:1c:73:aa:bb:cc","port_id":"Ethernet12","system_name":"leaf-1","vlans":[42,100]}'
echo 'not json'
`);
  chmodSync(path, 0o755);
  return path;
}

async function discover(t: TestContext, refusePassword: boolean, extra: { cmdline?: string; lldp?: boolean } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'rackside-discovery-'));
  t.after(() => { rmSync(root, { recursive: true, force: true }); });
  const store = createMemoryStore();
  const admissions = new DiscoveryAdmissions({ maxPending: 4, maxHosts: 4, tokenTtlMs: 600_000 }, () => 'discovery-token-0123456789');
  const admitted = admissions.admit('52:54:00:ab:cd:ef', 0, 0);
  assert.ok(admitted.admitted);
  const service = new DiscoveryService({ store, config: { ...DISCOVERY_DEFAULTS, enrollBMC: true } });
  const app = express();
  app.use(createDiscoveryRouter({ admissions, service, store, nowMs: () => 1, stats: { rejected: { token: 0, invalid: 0, full: 0 } } }));
  const url = await listenOnLoopback(t, app);
  const env = fakeEnv(root);
  put(env.RACKSIDE_PROCFS ?? '', 'cmdline', `console=ttyS0 BOOTIF=01-52-54-00-ab-cd-ef rackside.url=${url} rackside.token=discovery-token-0123456789 rackside.mode=discovery rackside.enroll_bmc=1${extra.cmdline ?? ''}\n`);
  const run = await runAgent(['once'], {
    ...env, ...(extra.lldp === true ? { RACKSIDE_LLDP: fakeLldp(root) } : {}), RACKSIDE_IPMITOOL: fakeIpmitool(root, refusePassword), RACKSIDE_IPMI_PASSWORD: PASSWORD, RACKSIDE_DISCOVERY_ACTION: 'none', RACKSIDE_REPORT_ATTEMPTS: '2', RACKSIDE_REPORT_RETRY_SECONDS: '0', RACKSIDE_DISCOVERY_RETRY_SECONDS: '0',
  });
  const calls = readFileSync(join(root, 'ipmitool.calls'), 'utf8');
  const log = readFileSync(join(env.RACKSIDE_RUN ?? '', 'agent.log'), 'utf8');
  const lldpArgs = extra.lldp === true ? readFileSync(join(root, 'lldp.args'), 'utf8') : '';
  return { store, run, calls, log, lldpArgs };
}

test('discovery mode: in-band BMC user made, one report, host recorded with its BMC', async (t) => {
  const { store, run, calls, log } = await discover(t, false);
  assert.equal(run.code, 0, run.stdout);
  assert.match(log, /recorded as sn-42/, run.stdout);
  assert.match(calls, /-I open user set name 3 rackside\n/);
  assert.match(calls, /-I open user set password 3 \S+ 16\n/);
  assert.match(calls, /-I open channel setaccess 2 3 callin=on ipmi=on link=on privilege=4\n/);
  assert.match(calls, /-I open user enable 3\n/);
  // Privilege levels follow the listed suites (IPMI 2.0 §23.2 parameters 23, 24): 3 and 17 are the 4th and 5th.
  assert.match(calls, /-I open lan set 2 cipher_privs aaaaaaaaaaaaaaa\n/, 'suites 3 and 17 raised to ADMINISTRATOR');
  const host = await store.getHost('sn-42');
  assert.deepEqual(host?.spec.bmc, { address: 'ipmi://192.0.2.77', credentialsName: 'sn-42-bmc-secret' });
  const secret = await store.getSecret('default', 'sn-42-bmc-secret');
  assert.equal(Buffer.from(secret?.data.password ?? '', 'base64').toString(), PASSWORD);
  assert.ok(!log.includes(PASSWORD) && !run.stdout.includes(PASSWORD), 'the password is not logged');
  assert.match(log, /recorded as sn-42/);
});

test('discovery mode: a BMC refusing the password leaves the host unmanaged; the password is removed from the message', async (t) => {
  const { store, run, log } = await discover(t, true);
  assert.equal(run.code, 0, run.stdout);
  const host = await store.getHost('sn-42');
  assert.equal(host?.spec.bmc, undefined);
  assert.equal(host?.status.provisioning.state, 'unmanaged');
  const events = await store.listEvents();
  const failed = events.find((e) => e.reason === 'BMCEnrollmentFailed');
  assert.match(failed?.message ?? '', /Insufficient privilege level/);
  assert.ok(!JSON.stringify(events).includes(PASSWORD));
  assert.ok(!log.includes(PASSWORD));
});

test('discovery mode: the LLDP neighbours rackside-lldp heard go into the report and onto the NIC', async (t) => {
  const { store, run, lldpArgs } = await discover(t, false, { cmdline: ' rackside.lldp_seconds=7', lldp: true });
  assert.equal(run.code, 0, run.stdout);
  assert.equal(lldpArgs, '7 rstest9\n', 'the bound from the kernel command line, every NIC (not lo)');
  const nic = (await store.getHost('sn-42'))?.status.hardware?.nics?.find((n) => n.name === 'rstest9');
  assert.deepEqual(nic?.lldp, { switchID: '00:1c:73:aa:bb:cc', portID: 'Ethernet12', switchSystemName: 'leaf-1' });
  assert.deepEqual(nic.vlans, [{ id: 42 }, { id: 100 }]);
});

test('discovery mode: rackside.lldp_seconds=0 does not listen for LLDP', async (t) => {
  const root = await discover(t, false, { cmdline: ' rackside.lldp_seconds=0' });
  assert.equal(root.run.code, 0, root.run.stdout);
  assert.doesNotMatch(root.log, /listening for LLDP/);
  const nic = (await root.store.getHost('sn-42'))?.status.hardware?.nics?.find((n) => n.name === 'rstest9');
  assert.equal(nic?.lldp, undefined);
});
