/**
 * The local provisioner through the real host state machine, a fake BMC and a simulated
 * ramdisk talking HTTP to the ramdisk endpoints: register → inspect (PXE boot, heartbeat,
 * inventory) → available; timeouts with a diagnosis; forged tokens refused; provision without
 * an OS image cache fails with a clear message (deploy and clean: local-provision.test.ts).
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { test } from 'node:test';
import express from 'express';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { FakeBmcPool } from '../../../drivers/fake/fake-driver.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { HostService } from '../../../agent/host/service.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests, TEST_IMAGE } from '../../helpers/host-harness.js';

interface Bench {
  service: HostService;
  reconciler: Reconciler;
  pool: FakeBmcPool;
  url: string;
  clock: { nowMs: number };
  nodes: NodeTable;
  events(host: string): Promise<string[]>;
  step(name: string, done: (h: BareMetalHost) => boolean, max?: number): Promise<BareMetalHost>;
  ramdisk(token: string, path: string, body: unknown): Promise<{ status: number; text: string }>;
}

async function bench(t: import('node:test').TestContext): Promise<Bench> {
  const store = createMemoryStore();
  const pool = new FakeBmcPool();
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers, { fakePool: pool });
  const clock = { nowMs: Date.parse('2026-11-30T10:00:00Z') };
  const nodes = new NodeTable(store.nodes, store.inventories);
  let ids = 0;
  const factory = new LocalFactory({ store, nodes, drivers, nowMs: () => clock.nowMs, newId: () => `id-${++ids}-0000000000`, timeouts: { inspectMs: 60_000 }, pollMs: 0 });
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const app = express();
  app.use(createRamdiskRouter({ store, nodes, nowMs: () => clock.nowMs }));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => {
      resolve(s);
    });
  });
  t.after(async () => {
    server.close();
    await factory.close();
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  return {
    service,
    reconciler,
    pool,
    url,
    clock,
    nodes,
    events: async (host) => (await store.listEvents({ host })).map((e) => `${e.reason}: ${e.message}`),
    async step(name, done, max = 30) {
      for (let i = 0; i < max; i += 1) {
        const host = await store.getHost(name);
        if (host === undefined) throw new Error(`${name} gone`);
        if (done(host)) return host;
        await reconciler.reconcileOnce(name);
      }
      const host = await store.getHost(name);
      throw new Error(`no progress: ${host?.status.provisioning.state} ${host?.status.errorMessage}`);
    },
    async ramdisk(token, path, body) {
      const res = await fetch(`${url}/ramdisk/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    },
  };
}

const INVENTORY = {
  cpu: { model_name: 'QEMU Virtual CPU', count: 2, architecture: 'x86_64', frequency: '2400', flags: ['sse2'] },
  memory: { physical_mb: 1024 },
  disks: [{ name: '/dev/vda', size: 10737418240, rotational: false, serial: 'D0' }],
  interfaces: [{ name: 'eth0', mac_address: '00:5c:52:31:3a:9c', ipv4_address: '192.0.2.50', pxe_enabled: true }],
  system_vendor: { manufacturer: 'QEMU', product_name: 'Standard PC', firmware: { vendor: 'EDK II' } },
  boot: { current_boot_mode: 'uefi', pxe_interface: '00:5c:52:31:3a:9c', secure_boot: true },
};

function fakeHost(name: string, spec: Record<string, unknown> = {}): unknown[] {
  const [secret, host] = hostManifests(name, spec) as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = `fake://${name}-bmc`;
  return [secret, host];
}

test('inspection network-boots the ramdisk, takes its inventory and makes the host available', async (t) => {
  const b = await bench(t);
  await b.service.apply(fakeHost('n0'));
  let host = await b.step('n0', (h) => h.status.provisioning.state === 'inspecting' && h.status.operationHistory.inspect.start !== '');
  host = await b.step('n0', (h) => h.status.provisioning.state === 'inspecting');
  await b.reconciler.reconcileOnce('n0'); // starts the inspection
  const bmc = b.pool.get('n0-bmc');
  assert.equal(bmc.power, 'on');
  assert.deepEqual(bmc.boots.at(-1), { device: 'pxe', mode: 'uefi', mediaUrl: undefined }, 'the host booted from the network in UEFI mode');
  const entry = await b.nodes.get(host.metadata.uid);
  assert.equal(entry.boot, 'ramdisk', 'the boot services now hand out the ramdisk');
  assert.match(entry.token ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.match(host.status.provisioning.ID, /^id-/);

  // The ramdisk boots: a forged token is refused and changes nothing.
  const forged = await b.ramdisk('x'.repeat(43), 'heartbeat', { version: '1', boot_mac: null, ip: '192.0.2.50', uptime_seconds: 3, last_command_id: null });
  assert.equal(forged.status, 401);
  const beat = await b.ramdisk(entry.token!, 'heartbeat', { version: '1', boot_mac: '00:5c:52:31:3a:9c', ip: '192.0.2.50', uptime_seconds: 3, last_command_id: null });
  assert.equal(beat.status, 200);
  const commandId = /command_id=(\S+)/.exec(beat.text)?.[1];
  assert.match(beat.text, /^command=inspect$/m);
  assert.ok(commandId !== undefined);
  const again = await b.ramdisk(entry.token!, 'heartbeat', { version: '1', boot_mac: null, ip: '192.0.2.50', uptime_seconds: 3, last_command_id: null });
  assert.match(again.text, /^command=inspect$/m, 'a ramdisk that restarted before running it gets the command again');
  // Naming the command as its last means the ramdisk finished it: its report never came, so it is asked for.
  const finished = await b.ramdisk(entry.token!, 'heartbeat', { version: '1', boot_mac: null, ip: '192.0.2.50', uptime_seconds: 9, last_command_id: commandId });
  assert.match(finished.text, /^command=report\ncommand_id=/m, 'the report is asked for, the command not sent again');
  await b.reconciler.reconcileOnce('n0');
  assert.equal((await b.service.getHost('n0')).status.provisioning.state, 'inspecting', 'still waiting for the inventory');
  assert.equal((await b.ramdisk(entry.token!, 'inventory', { command_id: commandId, inventory: INVENTORY })).status, 200);

  host = await b.step('n0', (h) => h.status.provisioning.state === 'available');
  assert.equal(host.status.hardware?.cpu.count, 2);
  assert.deepEqual((host.status.hardware.storage ?? []).map((d) => d.serialNumber), ['D0']);
  assert.equal((await b.nodes.get(host.metadata.uid)).boot, 'none');
  // The inventory lives beside the node record, not in it (the record is read on every boot lookup).
  assert.deepEqual(await b.nodes.inventory(host.metadata.uid), INVENTORY);
  assert.equal((await b.nodes.get(host.metadata.uid)).local?.inventory, undefined);
  const events = await b.events('n0');
  assert.ok(events.some((e) => e.startsWith('RamdiskHeartbeat')));
  assert.ok(events.some((e) => e.startsWith('RamdiskInventory') && e.includes('(UEFI, Secure Boot on)')), `the firmware facts metal3 has no field for are on the inventory event: ${JSON.stringify(events)}`);

  // Writing an image needs the OS image cache (local-provision.test.ts): without one, a clear error, not a silent success.
  await b.service.apply([fakeHost('n0', { image: TEST_IMAGE })[1]]);
  host = await b.step('n0', (h) => h.status.errorType === 'provisioning error');
  assert.match(host.status.errorMessage, /OS image cache/);
});

test('inspection: the LLDP neighbours sent with the inventory land on their NICs (switch, port, VLANs); a malformed lldp list is a 400 and nothing is stored', async (t) => {
  const b = await bench(t);
  await b.service.apply(fakeHost('n7'));
  await b.step('n7', (h) => h.status.provisioning.state === 'inspecting');
  await b.reconciler.reconcileOnce('n7');
  const uid = (await b.service.getHost('n7')).metadata.uid;
  const token = (await b.nodes.get(uid)).token ?? '';
  const beat = await b.ramdisk(token, 'heartbeat', { version: '1', boot_mac: null, ip: '192.0.2.50', uptime_seconds: 3, last_command_id: null });
  const commandId = /command_id=(\S+)/.exec(beat.text)?.[1] ?? '';
  const bad = await b.ramdisk(token, 'inventory', { command_id: commandId, inventory: INVENTORY, lldp: [{ interface: 'eth0', vlans: [5000] }] });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /lldp\[0\]\.vlans\[0\] must be a VLAN id 1\.\.4094/);
  assert.equal(await b.nodes.inventory(uid), undefined, 'nothing stored');
  const lldp = [{ interface: 'eth0', chassis_id: '00:1c:73:aa:bb:cc', port_id: 'Ethernet12', system_name: 'leaf-1', vlans: [42, 100] }];
  assert.equal((await b.ramdisk(token, 'inventory', { command_id: commandId, inventory: INVENTORY, lldp })).status, 200);
  const host = await b.step('n7', (h) => h.status.provisioning.state === 'available');
  const [nic] = host.status.hardware?.nics ?? [];
  assert.deepEqual(nic?.lldp, { switchID: '00:1c:73:aa:bb:cc', portID: 'Ethernet12', switchSystemName: 'leaf-1' });
  assert.deepEqual(nic.vlans, [{ id: 42 }, { id: 100 }]);
});

test('status.poweredOn follows the BMC while the host inspects (the provisioner powered it on)', async (t) => {
  const b = await bench(t);
  await b.service.apply(fakeHost('n5'));
  await b.step('n5', (h) => h.status.provisioning.state === 'inspecting');
  await b.reconciler.reconcileOnce('n5'); // starts the inspection: power on
  assert.equal(b.pool.get('n5-bmc').power, 'on');
  const host = await b.step('n5', (h) => h.status.poweredOn, 3);
  assert.equal(host.status.provisioning.state, 'inspecting', 'shown on while still inspecting');
});

test('an inspection that never hears from the ramdisk fails with a diagnosis, then retries', async (t) => {
  const b = await bench(t);
  await b.service.apply(fakeHost('n1'));
  await b.step('n1', (h) => h.status.provisioning.state === 'inspecting');
  await b.reconciler.reconcileOnce('n1');
  b.clock.nowMs += 61_000;
  const host = await b.step('n1', (h) => h.status.errorType === 'inspection error');
  assert.match(host.status.errorMessage, /never called back/);
  const netboots = (): number => b.pool.get('n1-bmc').boots.filter((boot) => boot.device === 'pxe').length;
  const before = netboots();
  await b.step('n1', () => netboots() > before);
  const after = await b.service.getHost('n1');
  assert.equal(after.status.provisioning.state, 'inspecting', 'restarted after the backoff, still inspecting');
});

test('registration fails clearly on a BMC that refuses the credentials', async (t) => {
  const b = await bench(t);
  b.pool.get('n2-bmc').knobs.authFails = true;
  await b.service.apply(fakeHost('n2'));
  const host = await b.step('n2', (h) => h.status.errorType === 'registration error');
  assert.match(host.status.errorMessage, /refused the credentials/);
  assert.doesNotMatch(host.status.errorMessage, /password/);
});

test('power follows spec.online in available; delete forgets the node and closes the BMC session', async (t) => {
  const b = await bench(t);
  await b.service.apply(fakeHost('n3', { automatedCleaningMode: 'disabled' }));
  await b.service.apply([{ ...(fakeHost('n3', { automatedCleaningMode: 'disabled' })[1] as object), metadata: { name: 'n3', namespace: 'metal3', annotations: { 'inspect.metal3.io': 'disabled' } } }]);
  let host = await b.step('n3', (h) => h.status.provisioning.state === 'available' && h.status.poweredOn);
  assert.equal(b.pool.get('n3-bmc').power, 'on');
  await b.service.hostAction('n3', { action: 'power-off' });
  host = await b.step('n3', (h) => !h.status.poweredOn);
  assert.equal(b.pool.get('n3-bmc').power, 'off');
  const uid = host.metadata.uid;
  await b.service.deleteHost('n3');
  for (let i = 0; i < 20 && (await b.service.listHosts()).length > 0; i += 1) await b.reconciler.reconcileOnce('n3');
  assert.equal((await b.service.listHosts()).length, 0);
  assert.equal((await b.nodes.get(uid)).local, undefined);
  assert.ok(b.pool.get('n3-bmc').closeCount >= 1);
});

test('an inspection whose power-on failed starts afresh on the retry instead of waiting for a ramdisk that never booted', async (t) => {
  const b = await bench(t);
  await b.service.apply(fakeHost('n6'));
  const host = await b.step('n6', (h) => h.status.provisioning.state === 'inspecting');
  const bmc = b.pool.get('n6-bmc');
  bmc.knobs.failPowerOn = true; // e.g. a reset of a host that powered itself off meanwhile
  await b.reconciler.reconcileOnce('n6').catch(() => undefined);
  assert.equal(bmc.power, 'off');
  assert.equal((await b.nodes.get(host.metadata.uid)).local?.op, undefined, 'no operation is left running');
  bmc.knobs.failPowerOn = false;
  await b.step('n6', () => bmc.power === 'on');
  assert.equal((await b.nodes.get(host.metadata.uid)).local?.op?.kind, 'inspect');
});
