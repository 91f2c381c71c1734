/**
 * Discovery over a memory store and the real report route on loopback: a report with a live
 * token records the host the metal3 way (once), a forged or expired token is a 401 that records
 * nothing, an in-band BMC user becomes a Secret + spec.bmc in one commit (approve: auto) or a
 * proposal until enroll (approve: manual), a refusing BMC and a 0.0.0.0 address leave the host
 * unmanaged with a Warning saying why, maxHosts bites, and the password appears in no event or
 * answer.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import express from 'express';
import { DiscoveryAdmissions } from '../../../agent/discovery/admissions.js';
import { DiscoveryService } from '../../../agent/discovery/discovery-service.js';
import { createDiscoveryRouter, DISCOVERY_REPORT_PATH, type DiscoveryRouteStats } from '../../../agent/discovery/discovery-routes.js';
import { decodeEnrollBody, mountEnrollRoute } from '../../../agent/discovery/enroll-route.js';
import { DISCOVERY_DEFAULTS, type DiscoveryConfig } from '../../../agent/config-discovery.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import type { Store } from '../../../agent/store/types.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const PASSWORD = 'Zq8-pW3n!vK7tR2xY5cB';
const INVENTORY = {
  cpu: { count: 2, model_name: 'QEMU Virtual CPU', architecture: 'x86_64' },
  memory: { physical_mb: 2048 },
  disks: [{ name: '/dev/vda', size: 8589934592 }],
  interfaces: [{ name: 'eth0', mac_address: '52:54:00:ab:cd:ef', pxe_enabled: true }],
  system_vendor: { manufacturer: 'QEMU', product_name: 'Standard PC', serial_number: 'SN-77' },
  boot: { current_boot_mode: 'bios', pxe_interface: '52:54:00:ab:cd:ef' },
};
const MAC = '52:54:00:ab:cd:ef';

interface Rig {
  store: Store;
  url: string;
  admissions: DiscoveryAdmissions;
  service: DiscoveryService;
  stats: DiscoveryRouteStats;
  clock: { now: number };
}

async function rig(t: TestContext, config: Partial<DiscoveryConfig> = {}): Promise<Rig> {
  const store = createMemoryStore();
  const full = { ...DISCOVERY_DEFAULTS, ...config };
  const clock = { now: 0 };
  let n = 0;
  const admissions = new DiscoveryAdmissions({ maxPending: full.maxPending, maxHosts: full.maxHosts, tokenTtlMs: full.tokenTtlSeconds * 1000 }, () => `discovery-token-${String(++n).padStart(8, '0')}`);
  const service = new DiscoveryService({ store, config: full });
  const stats: DiscoveryRouteStats = { rejected: { token: 0, invalid: 0, full: 0 } };
  const app = express();
  app.use(createDiscoveryRouter({ admissions, service, store, nowMs: () => clock.now, stats }));
  const api = express.Router();
  mountEnrollRoute(api, service);
  app.use('/api/v1', api);
  app.use((err: { status?: number; message?: string; field?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(err.status ?? 500).json({ error: { message: err.message, field: err.field } });
  });
  return { store, url: await listenOnLoopback(t, app), admissions, service, stats, clock };
}

async function post(url: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${DISCOVERY_REPORT_PATH}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

function tokenFor(r: Rig, mac = MAC): string {
  const outcome = r.admissions.admit(mac, r.clock.now, 0);
  assert.ok(outcome.admitted);
  return outcome.admission.token;
}

async function allText(store: Store): Promise<string> {
  return JSON.stringify({ events: await store.listEvents(), hosts: await store.listHosts() });
}

test('a report with a live token records the host once, unmanaged and discovered, with hardware and LLDP', async (t) => {
  const r = await rig(t);
  const token = tokenFor(r);
  const lldp = [{ interface: 'eth0', chassis_id: 'aa:bb:cc:00:00:01', port_id: 'swp7', system_name: 'leaf-1', vlans: [100] }];
  const answer = await post(r.url, token, { inventory: INVENTORY, lldp });
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.text, /^ok=1\nname=sn-77\ncommand=poweroff\n$/);
  const host = await r.store.getHost('sn-77');
  assert.ok(host);
  assert.equal(host.spec.bootMACAddress, MAC);
  assert.equal(host.spec.bmc, undefined);
  assert.equal(host.status.provisioning.state, 'unmanaged');
  assert.equal(host.status.operationalStatus, 'discovered');
  assert.equal(host.status.hardware?.cpu.count, 2);
  assert.deepEqual(host.status.hardware.nics?.[0]?.lldp, { switchID: 'aa:bb:cc:00:00:01', portID: 'swp7', switchSystemName: 'leaf-1' });
  assert.match(host.metadata.annotations?.['rackside.io/discovered-at'] ?? '', /^\d{4}-\d\d-\d\dT/);
  const events = await r.store.listEvents();
  assert.equal(events.filter((e) => e.reason === 'Discovered' && e.host === 'sn-77').length, 1);
  // The used token is spent; a second boot of the same MAC is a known host and not recorded again.
  assert.equal((await post(r.url, token, { inventory: INVENTORY })).status, 401);
  const again = await post(r.url, tokenFor(r), { inventory: INVENTORY });
  assert.equal(again.status, 200);
  assert.match(again.text, /name=sn-77/);
  assert.equal((await r.store.listHosts()).length, 1);
  assert.equal(r.service.stats().alreadyKnown, 1);
});

test('a forged or expired token is a 401 and records nothing', async (t) => {
  const r = await rig(t, { tokenTtlSeconds: 60 });
  assert.equal((await post(r.url, 'forged-token-000000000000', { inventory: INVENTORY })).status, 401);
  const token = tokenFor(r);
  r.clock.now = 60_000;
  assert.equal((await post(r.url, token, { inventory: INVENTORY })).status, 401);
  assert.equal((await r.store.listHosts()).length, 0);
  assert.equal(r.stats.rejected.token, 2);
  assert.equal((await r.store.listEvents()).filter((e) => e.reason === 'DiscoveryTokenRejected').length, 2);
});

test('bad reports are a 400 naming the field; an inventory for another MAC is refused', async (t) => {
  const r = await rig(t);
  const token = tokenFor(r);
  const bad = await post(r.url, token, { inventory: INVENTORY, bmc: { status: 'ok', channel: 1, address: '192.0.2.5', username: 'rackside', password: 'short' } });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /field=bmc\.password/);
  const other = await post(r.url, token, { inventory: { ...INVENTORY, boot: { pxe_interface: '52:54:00:00:00:99' } } });
  assert.equal(other.status, 400);
  assert.match(other.text, /field=inventory\.boot\.pxe_interface/);
  const empty = await post(r.url, token, { inventory: { hostname: 'x' } });
  assert.equal(empty.status, 400);
  assert.match(empty.text, /field=inventory/);
  assert.equal((await r.store.listHosts()).length, 0);
});

test('approve auto: the in-band user becomes a Secret and spec.bmc in one commit; the password is in no event, host or answer', async (t) => {
  const r = await rig(t, { enrollBMC: true });
  const answer = await post(r.url, tokenFor(r), { inventory: INVENTORY, bmc: { status: 'ok', channel: 1, address: '192.0.2.50', username: 'rackside', password: PASSWORD } });
  assert.equal(answer.status, 200);
  const host = await r.store.getHost('sn-77');
  assert.deepEqual(host?.spec.bmc, { address: 'ipmi://192.0.2.50', credentialsName: 'sn-77-bmc-secret' });
  assert.equal(host.status.provisioning.state, '', 'the reconciler registers it next');
  const secret = await r.store.getSecret('default', 'sn-77-bmc-secret');
  assert.equal(Buffer.from(secret?.data.password ?? '', 'base64').toString(), PASSWORD);
  assert.ok(!answer.text.includes(PASSWORD));
  assert.ok(!(await allText(r.store)).includes(PASSWORD));
});

test('approve manual: the BMC is proposed; enroll applies it; enroll input errors name the field', async (t) => {
  const r = await rig(t, { enrollBMC: true, approve: 'manual' });
  await post(r.url, tokenFor(r), { inventory: INVENTORY, bmc: { status: 'ok', channel: 2, address: '192.0.2.51', username: 'rackside', password: PASSWORD } });
  const waiting = await r.store.getHost('sn-77');
  assert.equal(waiting?.spec.bmc, undefined);
  assert.equal(waiting?.status.provisioning.state, 'unmanaged');
  assert.equal(waiting.metadata.annotations?.['rackside.io/proposed-bmc-address'], 'ipmi://192.0.2.51');
  const enrolled = await fetch(`${r.url}/api/v1/hosts/sn-77/enroll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(enrolled.status, 202);
  const body = await enrolled.text();
  assert.ok(!body.includes(PASSWORD));
  const host = await r.store.getHost('sn-77');
  assert.deepEqual(host?.spec.bmc, { address: 'ipmi://192.0.2.51', credentialsName: 'sn-77-bmc-secret' });
  assert.equal(host.metadata.annotations?.['rackside.io/proposed-bmc-address'], undefined);
  const twice = await fetch(`${r.url}/api/v1/hosts/sn-77/enroll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(twice.status, 409);
  const missing = await fetch(`${r.url}/api/v1/hosts/nope/enroll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(missing.status, 404);
  assert.throws(() => decodeEnrollBody({ bmcAddress: '192.0.2.1', colour: 'x' }), /colour/);
  assert.throws(() => decodeEnrollBody({ username: 'u' }), /bmcAddress/);
  assert.deepEqual(decodeEnrollBody({ bmcAddress: ' 192.0.2.1 ', username: 'u', password: ' p ' }), { address: '192.0.2.1', username: 'u', password: ' p ' });
});

test('a BMC that refuses user creation, or has address 0.0.0.0, leaves the host unmanaged with a Warning saying why', async (t) => {
  const r = await rig(t, { enrollBMC: true });
  await post(r.url, tokenFor(r), { inventory: INVENTORY, bmc: { status: 'error', channel: 1, message: 'Set User Access command failed: Insufficient privilege level' } });
  const refused = await r.store.getHost('sn-77');
  assert.equal(refused?.spec.bmc, undefined);
  assert.equal(refused?.status.provisioning.state, 'unmanaged');
  const failed = (await r.store.listEvents()).find((e) => e.reason === 'BMCEnrollmentFailed');
  assert.match(failed?.message ?? '', /Insufficient privilege level/);
  const zeroMac = '52:54:00:00:00:02';
  const answer = await post(r.url, tokenFor(r, zeroMac), {
    inventory: { ...INVENTORY, system_vendor: { serial_number: 'SN-78' }, boot: { pxe_interface: zeroMac } },
    bmc: { status: 'ok', channel: 1, address: '0.0.0.0', username: 'rackside', password: PASSWORD },
  });
  assert.equal(answer.status, 200);
  const zero = await r.store.getHost('sn-78');
  assert.equal(zero?.spec.bmc, undefined);
  const unusable = (await r.store.listEvents()).find((e) => e.reason === 'BMCAddressUnusable');
  assert.match(unusable?.message ?? '', /0\.0\.0\.0/);
  assert.equal(r.service.stats().bmcFailed, 2);
});

test('discovery.maxHosts: a report past the bound is a 429 and a DiscoveryRefused Warning', async (t) => {
  const r = await rig(t, { maxHosts: 1 });
  assert.equal((await post(r.url, tokenFor(r), { inventory: INVENTORY })).status, 200);
  const second = '52:54:00:00:00:03';
  const answer = await post(r.url, tokenFor(r, second), { inventory: { ...INVENTORY, boot: { pxe_interface: second }, system_vendor: {} } });
  assert.equal(answer.status, 429);
  assert.equal((await r.store.listHosts()).length, 1);
  assert.ok((await r.store.listEvents()).some((e) => e.reason === 'DiscoveryRefused'));
  assert.equal(await r.service.discoveredCount(), 1);
});
