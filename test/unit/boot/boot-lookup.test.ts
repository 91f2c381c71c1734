import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreBootLookup } from '../../../agent/boot/boot-lookup.js';
import { generateRamdiskToken } from '../../../agent/boot/ramdisk-token.js';
import type { BareMetalHost, ProvisioningState } from '../../../agent/host/types.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { NodeBootIntents } from '../../../agent/provisioner/local/node-intents.js';
import { createMemoryStore } from '../../../agent/store/memory-store.js';
import type { Store } from '../../../agent/store/types.js';
import type { BootQuery } from '../../../bootsvc/boot-lookup.js';
import { decideBoot } from '../../../bootsvc/ipxe/boot-files.js';
import { sampleHost } from '../../helpers/fake-backend.js';

const BASE = 'http://10.0.0.1:8081';
const MAC = '52:54:00:aa:bb:01';

function host(name: string, mac: string, state: ProvisioningState, bootMode?: 'UEFISecureBoot'): BareMetalHost {
  return sampleHost(name, { spec: { bootMACAddress: mac, ...(bootMode === undefined ? {} : { bootMode }) }, status: { provisioning: { state, ID: '', image: { url: '' } } } });
}

async function setup(hosts: BareMetalHost[]): Promise<Store> {
  let n = 0;
  const store = createMemoryStore({ newUid: () => `uid-${++n}` });
  await store.commit(hosts.map((object) => ({ kind: 'host' as const, op: 'put' as const, object })));
  return store;
}

function q(extra: Partial<BootQuery>): BootQuery {
  return { mac: MAC, arch: 'x86_64', firmware: 'uefi', transport: 'tftp', isIpxe: false, ...extra };
}

let counter = 0;
const random = (size: number): Uint8Array => new Uint8Array(size).fill(++counter);
const lookupOptions = { httpBaseUrl: BASE, ramdisk: { kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'] } };

/** The lookup over the store's hosts and the local provisioner's intents (its node table over `store.nodes`). */
function lookupOver(store: Store, extra: { nodes?: NodeTable } = {}): ReturnType<typeof createStoreBootLookup> {
  const nodes = extra.nodes ?? new NodeTable(store.nodes, store.inventories);
  return createStoreBootLookup({ hosts: store, intents: new NodeBootIntents(nodes, random), ...lookupOptions });
}

test('an inspecting host boots the ramdisk with a stored, stable token', async () => {
  const store = await setup([host('node-0', '52:54:00:AA:BB:01', 'inspecting')]);
  const lookup = lookupOver(store);
  const target = await lookup.target({ mac: '52:54:00:aa:bb:01' });
  assert.equal(target?.host, 'node-0');
  assert.ok(target.plan.kind === 'ramdisk');
  const token = target.plan.token;
  assert.ok(token !== undefined && /^[A-Za-z0-9_-]{43}$/.test(token), `token ${token}`);
  assert.deepEqual(await store.nodes.get('uid-1'), { token });
  const again = await lookup.target({ mac: MAC });
  assert.equal(again?.plan.kind === 'ramdisk' ? again.plan.token : undefined, token);
  assert.equal(target.plan.agentUrl, BASE);
});

test('concurrent lookups create one token', async () => {
  const store = await setup([host('node-0', MAC, 'provisioning')]);
  const lookup = lookupOver(store);
  const targets = await Promise.all(Array.from({ length: 8 }, () => lookup.target({ mac: MAC })));
  const tokens = new Set(targets.map((t) => (t?.plan.kind === 'ramdisk' ? t.plan.token : undefined)));
  assert.equal(tokens.size, 1);
});

test('with the provisioner\'s NodeTable as its token source, a ramdisk boot\'s token is made through the table, so the ramdisk API\'s index knows it', async () => {
  const store = await setup([host('node-0', MAC, 'inspecting'), host('node-1', '52:54:00:aa:bb:02', 'inspecting')]);
  const nodes = new NodeTable(store.nodes, store.inventories);
  assert.equal(await nodes.findByToken('not-yet'), undefined, '(the index is built, over no tokens)');
  const lookup = lookupOver(store, { nodes });
  const targets = await Promise.all([MAC, MAC, '52:54:00:aa:bb:02'].map((mac) => lookup.target({ mac })));
  const tokens = targets.map((t) => (t?.plan.kind === 'ramdisk' ? t.plan.token : undefined));
  assert.equal(tokens[0], tokens[1], 'concurrent lookups of one host share its token');
  assert.notEqual(tokens[0], tokens[2]);
  assert.equal((await nodes.findByToken(tokens[0] ?? ''))?.uid, 'uid-1');
  assert.equal((await nodes.findByToken(tokens[2] ?? ''))?.uid, 'uid-2');
  assert.deepEqual(await store.nodes.get('uid-1'), { token: tokens[0] });
});

test('the provisioner\'s nodes entry steers the boot and keeps its own fields', async () => {
  const store = await setup([host('node-0', MAC, 'provisioned')]);
  await store.nodes.put('uid-1', { boot: 'ramdisk', kernelUrl: 'http://mirror/k', token: 'provisioner-token-0001', private: { step: 3 } });
  const lookup = lookupOver(store);
  const target = await lookup.target({ mac: MAC });
  assert.deepEqual(target?.plan.kind === 'ramdisk' ? [target.plan.kernel, target.plan.token] : [], ['http://mirror/k', 'provisioner-token-0001']);
  assert.deepEqual(await store.nodes.get('uid-1'), { boot: 'ramdisk', kernelUrl: 'http://mirror/k', token: 'provisioner-token-0001', private: { step: 3 } });
});

test('DHCP decisions follow the matrix: iPXE for UEFI, shim for Secure Boot, local disk when provisioned, unknown MAC undefined', async () => {
  const store = await setup([host('a', MAC, 'inspecting'), host('b', '52:54:00:aa:bb:02', 'inspecting', 'UEFISecureBoot'), host('c', '52:54:00:aa:bb:03', 'provisioned')]);
  const lookup = lookupOver(store);
  // As bootsvc's DHCP server derives its decision from the target (bootsvc/dhcp/dhcp-server.ts).
  const decide = async (query: BootQuery): Promise<ReturnType<typeof decideBoot>> => decideBoot(await lookup.target(query), query, { httpBaseUrl: BASE, uefiLoader: 'snponly.efi' });
  assert.deepEqual(await decide(q({})), { kind: 'ipxe-script', loader: 'snponly.efi', scriptUrl: `${BASE}/boot/52-54-00-aa-bb-01.ipxe` });
  assert.deepEqual(await decide(q({ mac: '52:54:00:aa:bb:02' })), { kind: 'boot-file', bootFile: 'shimx64.efi' });
  assert.deepEqual(await decide(q({ mac: '52:54:00:aa:bb:03' })), { kind: 'local-disk' });
  assert.equal(await decide(q({ mac: '52:54:00:aa:bb:99' })), undefined);
});

test('host changes are seen on the next lookup', async () => {
  const store = await setup([host('node-0', MAC, 'available')]);
  const lookup = lookupOver(store);
  assert.equal((await lookup.target({ mac: MAC }))?.plan.kind, 'none');
  const current = await store.getHost('node-0');
  assert.ok(current);
  await store.commit([{ kind: 'host', op: 'put', object: { ...current, status: { ...current.status, provisioning: { ...current.status.provisioning, state: 'inspecting' } } } }]);
  assert.equal((await lookup.target({ mac: MAC }))?.plan.kind, 'ramdisk');
  await store.commit([{ kind: 'host', op: 'delete', name: 'node-0' }]);
  assert.equal(await lookup.target({ mac: MAC }), undefined);
});

test('tokens are 32 random bytes in base64url', () => {
  assert.equal(generateRamdiskToken(() => new Uint8Array(32)), 'A'.repeat(43));
  assert.equal(generateRamdiskToken().length, 43);
  assert.notEqual(generateRamdiskToken(), generateRamdiskToken());
});

test('an arm64 DHCP client (option 93 = 11) of a host of no known architecture gets the arm64 ramdisk, in the DHCP answer and in the GRUB/iPXE lookups after it that carry no architecture', async () => {
  const store = await setup([host('node-a', MAC, 'inspecting'), host('node-x', '52:54:00:aa:bb:02', 'inspecting')]);
  const ramdisk = { kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], byArch: { arm64: { kernel: '/ramdisk/arm64/vmlinuz', initrds: ['/ramdisk/arm64/initrd'] } } };
  const nodes = new NodeTable(store.nodes, store.inventories);
  const lookup = createStoreBootLookup({ hosts: store, intents: new NodeBootIntents(nodes, random), httpBaseUrl: BASE, ramdisk });
  const kernelOf = async (query: Parameters<typeof lookup.target>[0]): Promise<string> => {
    const plan = (await lookup.target(query))?.plan;
    return plan?.kind === 'ramdisk' ? plan.kernel : `no ramdisk: ${plan?.kind ?? 'no target'}`;
  };
  assert.equal(await kernelOf({ mac: MAC }), '/ramdisk/vmlinuz', 'before any DHCP: the head node\'s');
  assert.equal(await kernelOf(q({ arch: 'arm64' })), '/ramdisk/arm64/vmlinuz');
  assert.equal(await kernelOf({ mac: MAC }), '/ramdisk/arm64/vmlinuz', 'the GRUB config lookup (no arch) names the same ramdisk');
  assert.equal(await kernelOf({ mac: '52:54:00:aa:bb:02' }), '/ramdisk/vmlinuz', 'another host is not affected');
  assert.equal(await kernelOf(q({ arch: 'unknown' })), '/ramdisk/arm64/vmlinuz', 'an unknown architecture does not overwrite what DHCP said');
});

test('the local provisioner\'s intents remember the client architecture each host\'s firmware last told, by uid (its ramdisk wait follows it)', async () => {
  const store = await setup([host('node-a', MAC, 'inspecting')]);
  const nodes = new NodeTable(store.nodes, store.inventories);
  const intents = new NodeBootIntents(nodes, random);
  const lookup = createStoreBootLookup({ hosts: store, intents, ...lookupOptions });
  assert.equal(intents.clientArch('uid-1'), undefined);
  await lookup.target(q({ arch: 'arm64' }));
  assert.equal(intents.clientArch('uid-1'), 'arm64');
  await lookup.target(q({ arch: 'unknown' }));
  await lookup.target({ mac: MAC });
  assert.equal(intents.clientArch('uid-1'), 'arm64', 'questions without an architecture keep it');
  await lookup.target(q({ arch: 'x86_64' }));
  assert.equal(intents.clientArch('uid-1'), 'x86_64');
});
