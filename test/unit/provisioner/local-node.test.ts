/**
 * The local provisioner's node record (agent/provisioner/local/node.ts): the provisioning fields
 * (automated cleaning, fast track, clean parameters) survive a store round trip and mistyped ones
 * are dropped; the timeout diagnosis names the boot path to check; and the fast-track decision of
 * ramdisk-boot.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeNodeEntry, timeoutDiagnosis, type NodeEntry, type NodeOperation } from '../../../agent/provisioner/local/node.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createMemoryStore, type KeyValue } from '../../../agent/store/index.js';
import { bootsByVirtualMedia, FAST_TRACK_WINDOW_MS, ramdiskIsUp } from '../../../agent/provisioner/local/ramdisk-boot.js';

const OP: NodeOperation = { kind: 'deploy', commandId: 'deploy-1', startedAtMs: 1_000, deadlineMs: 61_000, phase: 'booting' };

test('automatedClean, fastTrack and keepSoftwareRaid survive a round trip; mistyped values are dropped', () => {
  const stored = { local: { provID: 'p', state: 'cleaning', automatedClean: false, op: { ...OP, kind: 'clean', fastTrack: true, clean: { mode: 'metadata', keepSoftwareRaid: true } } } };
  const entry = decodeNodeEntry(JSON.parse(JSON.stringify(stored)));
  const local = entry.local;
  assert.ok(local?.op !== undefined);
  assert.equal(local.automatedClean, false);
  assert.equal(local.op.fastTrack, true);
  assert.deepEqual(local.op.clean, { mode: 'metadata', keepSoftwareRaid: true });
  const odd = decodeNodeEntry({ local: { provID: 'p', state: 'cleaning', automatedClean: 'yes', op: { ...OP, fastTrack: 'true', clean: { mode: 'metadata', keepSoftwareRaid: 1 } } } });
  assert.equal(odd.local?.automatedClean, undefined, 'absent means metal3\'s default: clean');
  assert.equal(odd.local?.op?.fastTrack, undefined);
  assert.deepEqual(odd.local?.op?.clean, { mode: 'metadata' });
});

const diagnoses: Record<string, { bootPath?: 'network' | 'virtual-media'; heartbeatMs?: number; match: RegExp }> = {
  'network boot, never called back': { match: /deploy timed out after 1 min: the ramdisk never called back — check that the host network-boots \(DHCP\/TFTP\/HTTP timeline\)/ },
  'virtual media, never called back': { bootPath: 'virtual-media', match: /never called back — check that the host boots the rackside ISO from virtual media \(VirtualMediaFetched/ },
  'called back, then stuck': { bootPath: 'virtual-media', heartbeatMs: 5_000, match: /the ramdisk \(last heartbeat from 192\.0\.2\.9\) did not finish the command/ },
};
for (const [name, c] of Object.entries(diagnoses)) {
  test(`timeout diagnosis: ${name}`, () => {
    const ramdisk = c.heartbeatMs === undefined ? undefined : { lastHeartbeatMs: c.heartbeatMs, ip: '192.0.2.9' };
    assert.match(timeoutDiagnosis(OP, ramdisk, 61_000, c.bootPath), c.match);
  });
}

test('fast track only to a ramdisk booted for us and heard from within the window', () => {
  const entry = (boot: NodeEntry['boot'], heartbeatMs?: number): NodeEntry => ({
    boot, local: { provID: 'p', name: 'h', bootMACAddress: '', state: 'available', ...(heartbeatMs === undefined ? {} : { ramdisk: { lastHeartbeatMs: heartbeatMs } }) },
  });
  const now = 100_000;
  assert.equal(ramdiskIsUp(entry('ramdisk', now - 1_000), now), true);
  assert.equal(ramdiskIsUp(entry('ramdisk', now - FAST_TRACK_WINDOW_MS), now), false, 'quiet for the whole window');
  assert.equal(ramdiskIsUp(entry('none', now - 1_000), now), false, 'powered off after its operation');
  assert.equal(ramdiskIsUp(entry('ramdisk'), now), false, 'never heard from');
});

test('the boot path follows the BMC scheme: virtual-media schemes boot the ISO, others PXE', () => {
  assert.equal(bootsByVirtualMedia('redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/1'), true);
  assert.equal(bootsByVirtualMedia('idrac-virtualmedia://192.0.2.1/redfish/v1/Systems/System.Embedded.1'), true);
  for (let i = 0; i < 2; i++) {
    // Answers are remembered per address (the capacity check asks for every busy host): the same the second time.
    assert.equal(bootsByVirtualMedia('redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/1'), true);
    assert.equal(bootsByVirtualMedia('redfish+http://127.0.0.1:8000/redfish/v1/Systems/1'), false);
    assert.equal(bootsByVirtualMedia('not a bmc address'), false);
  }
  assert.equal(bootsByVirtualMedia('redfish://192.0.2.1/redfish/v1/Systems/1'), false);
  assert.equal(bootsByVirtualMedia('ipmi://192.0.2.1'), false);
  assert.equal(bootsByVirtualMedia('fake://h'), false, 'the fake driver lists PXE first');
  assert.equal(bootsByVirtualMedia('::not an address'), false);
});

test('inventories: kept in their own sublevel; a record from before keeps its copy readable until the next inventory moves it; remove forgets both', async () => {
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  const old = { cpu: { count: 2 }, disks: [{ name: '/dev/sda' }] };
  // A node record written by an older version, its inventory inside.
  await store.nodes.put('u1', { boot: 'none', local: { provID: 'p', name: 'h', bootMACAddress: '52:54:00:00:00:01', state: 'manageable', inventory: old } });
  assert.deepEqual(await nodes.inventory('u1'), old);
  const fresh = { cpu: { count: 4 }, disks: [] };
  await nodes.putInventory('u1', fresh);
  assert.deepEqual(await nodes.inventory('u1'), fresh);
  assert.deepEqual(await store.inventories.get('u1'), fresh);
  const record = (await store.nodes.get('u1')) as { local: Record<string, unknown> };
  assert.equal(record.local.inventory, undefined, 'the old copy left the node record');
  assert.equal(record.local.provID, 'p', 'the rest of the record stays');
  assert.equal(await nodes.inventory('u2'), undefined, 'a host never inspected has none');
  await nodes.remove('u1');
  assert.equal(await store.nodes.get('u1'), undefined);
  assert.equal(await store.inventories.get('u1'), undefined);
  assert.equal(await nodes.inventory('u1'), undefined);
});

test('findByToken: one scan builds the token index; after it every answer is a map read — tokens written through the table, rotated, removed and forged ones alike', async () => {
  const store = createMemoryStore();
  let scans = 0;
  const counted: KeyValue<unknown> = {
    get: (key) => store.nodes.get(key),
    put: (key, value) => store.nodes.put(key, value),
    del: (key) => store.nodes.del(key),
    batch: (operations) => store.nodes.batch(operations),
    entries: () => {
      scans += 1;
      return store.nodes.entries();
    },
  };
  const nodes = new NodeTable(counted, store.inventories);
  const setToken = (uid: string, token: string): Promise<void> => nodes.update(uid, (entry) => ({ entry: { ...entry, token, boot: 'ramdisk' }, write: true, value: undefined }));
  // Stored before this table existed (an agent restart): the scan finds them.
  for (let i = 0; i < 10; i++) await store.nodes.put(`u${String(i)}`, { boot: 'ramdisk', token: `token-${String(i)}` });
  for (let i = 10; i < 20; i++) await setToken(`u${String(i)}`, `token-${String(i)}`);
  assert.equal((await nodes.findByToken('token-7'))?.uid, 'u7');
  assert.equal(scans, 1, 'the first lookup scans');
  assert.equal((await nodes.findByToken('token-13'))?.uid, 'u13');
  assert.equal((await nodes.findByToken('token-7'))?.entry.token, 'token-7');
  // Rotated through the table: the new token is found, the old one no longer.
  await setToken('u7', 'token-7b');
  assert.equal((await nodes.findByToken('token-7b'))?.uid, 'u7');
  assert.equal(await nodes.findByToken('token-7'), undefined, 'a rotated token is refused');
  // Created through the table (the boot lookup's path).
  const created = await nodes.ensureToken('u20');
  assert.equal((await nodes.findByToken(created))?.uid, 'u20');
  // Removed hosts drop out of the index.
  await nodes.remove('u3');
  assert.equal(await nodes.findByToken('token-3'), undefined);
  for (let i = 0; i < 100; i++) assert.equal(await nodes.findByToken(`forged-${String(i)}`), undefined);
  assert.equal(await nodes.findByToken(''), undefined);
  assert.equal(scans, 1, 'no lookup after the first scanned: a forged token costs a map read');
  // An entry the index names that no longer holds the token (a write past the table) is checked, not trusted, and the index rebuilt.
  await store.nodes.put('u13', { boot: 'none' });
  await store.nodes.put('u12', { boot: 'ramdisk', token: 'token-12b' });
  assert.equal(await nodes.findByToken('token-12'), undefined);
  assert.equal(scans, 2);
  assert.equal((await nodes.findByToken('token-12b'))?.uid, 'u12', 'the rebuilt index holds what the scan saw');
  assert.equal(await nodes.findByToken('token-13'), undefined);
  assert.equal(scans, 2);
});

test('ensureToken: creates one token per host under concurrent callers, keeps the entry\'s other fields, and returns the stored one afterwards', async () => {
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  await store.nodes.put('u1', { boot: 'ramdisk', local: { provID: 'p', name: 'h', bootMACAddress: '52:54:00:00:00:01', state: 'inspecting' } });
  const tokens = await Promise.all(Array.from({ length: 8 }, () => nodes.ensureToken('u1')));
  assert.equal(new Set(tokens).size, 1, `one token for all callers, got ${tokens.join(', ')}`);
  assert.match(tokens[0] ?? '', /^[A-Za-z0-9_-]{43}$/);
  const stored = (await store.nodes.get('u1')) as Record<string, unknown>;
  assert.equal(stored.token, tokens[0]);
  assert.equal(stored.boot, 'ramdisk');
  assert.equal((stored.local as Record<string, unknown>).provID, 'p');
  assert.equal(await nodes.ensureToken('u1'), tokens[0]);
  const fixed = await nodes.ensureToken('u2', (n) => new Uint8Array(n).fill(1));
  assert.equal(fixed, Buffer.alloc(32, 1).toString('base64url'), 'the random source is used');
});
