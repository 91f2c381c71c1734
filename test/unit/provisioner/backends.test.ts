/**
 * Provisioner backends (agent/provisioner/backends.ts): one place opens the configured
 * provisioner, and a config section the chosen provisioner does not use is neither refused nor
 * silent — a warning at start and a `ConfigSectionUnused` event (documented in
 * docs/rackside.example.yaml).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { parseConfigYaml } from '../../../agent/config.js';
import { startAgent } from '../../../agent/main.js';
import { unusedConfigSections } from '../../../agent/provisioner/backends.js';
import { BusyHosts } from '../../../agent/provisioner/local/busy-hosts.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { DriverRegistry } from '../../../drivers/index.js';
import { hostData } from './host-data.js';

const defaults = { agentId: 'rack-t' };

test('the sections a provisioner ignores are named, in file order, with the reason', () => {
  const fixture = parseConfigYaml('provisioner: fixture\ndhcp: {mode: "off"}\nlog: {level: info}\ntftp: {maxTransfers: 8}\ngovernor: {bootsPerMinute: 5}\n', 'x.yaml', defaults);
  assert.deepEqual(unusedConfigSections(fixture).map((u) => u.section), ['dhcp', 'tftp', 'governor']);
  assert.match(unusedConfigSections(fixture)[0]?.message ?? '', /config section "dhcp" is ignored: the fixture provisioner runs no boot services/);
  const demo = parseConfigYaml('provisioner: demo\nhttp: {listen: "127.0.0.1:8081"}\nimages: {cacheDir: /srv/img}\nbmc: {concurrency: 2}\n', 'x.yaml', defaults);
  assert.deepEqual(unusedConfigSections(demo).map((u) => u.section), ['http', 'images', 'bmc']);
  const local = parseConfigYaml('provisioner: local\ndhcp: {mode: "off"}\ntftp: {maxTransfers: 8}\n', 'x.yaml', defaults);
  assert.deepEqual(unusedConfigSections(local), [], 'the local provisioner uses every section');
  assert.deepEqual(unusedConfigSections(parseConfigYaml('provisioner: fixture\n', 'x.yaml', defaults)), []);
});

test('provisioner: fixture with a dhcp section starts, warns in the log and records a ConfigSectionUnused event', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-backends-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, [
    `agent: {id: rack-t, stateDir: ${join(dir, 'state')}}`,
    'provisioner: fixture',
    'management: {listen: "127.0.0.1:0"}',
    'dhcp: {mode: proxy}',
    'provisioning: {interface: lo, address: 127.0.0.1}',
    '',
  ].join('\n'));
  const lines: { level: number; msg: string; section?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string; section?: string });
      done();
    },
  });
  const agent = await startAgent({ configPath }, pino({ level: 'info' }, sink));
  try {
    const warnings = lines.filter((l) => l.level === 40 && l.section !== undefined);
    assert.deepEqual(warnings.map((l) => l.section), ['dhcp', 'provisioning']);
    assert.match(warnings[0]?.msg ?? '', /config section "dhcp" is ignored: the fixture provisioner runs no boot services/);
    const events = (await agent.store.listEvents()).filter((e) => e.reason === 'ConfigSectionUnused');
    assert.deepEqual(events.map((e) => [e.type, (e.data as { section?: string } | undefined)?.section]), [['Warning', 'dhcp'], ['Warning', 'provisioning']]);
  } finally {
    await agent.stop();
  }
});

test('the busy-host counter: virtual-media hosts never count, a counted host keeps its place, a grant counts at once', () => {
  const busy = new BusyHosts(1);
  busy.note('vm', 'provisioning', true);
  assert.equal(busy.size, 0, 'a busy virtual-media host is not counted');
  assert.equal(busy.admit('a', false), true, 'below the limit');
  assert.equal(busy.admit('b', false), false, 'the grant to a counts');
  assert.equal(busy.admit('vm', true), true, 'virtual media is never limited');
  busy.note('b', 'inspecting', false);
  assert.equal(busy.admit('b', false), true, 'a host already busy keeps its place over the limit');
  busy.note('a', 'available', false);
  busy.forget('b');
  assert.equal(busy.size, 0, 'a host seen idle, or forgotten, stops counting');
  assert.equal(busy.admit('c', false), true);
});

test('after a restart, hosts already busy in the store hold their places from the first step on', async () => {
  const store = createMemoryStore();
  const factory = new LocalFactory({
    store, nodes: new NodeTable(store.nodes, store.inventories), drivers: new DriverRegistry(),
    nowMs: () => 0, newId: () => 'id', maxBusyHosts: 1,
  });
  try {
    const stored = (name: string, state: 'inspecting' | 'available', address: string): Parameters<typeof factory.countBusyHosts>[0][number] => ({
      apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost',
      metadata: { name, namespace: 'metal3', uid: `uid-${name}`, resourceVersion: '1', generation: 1, creationTimestamp: '' },
      spec: { online: true, bmc: { address, credentialsName: 's' } },
      status: { provisioning: { state, ID: '' } },
    } as unknown as Parameters<typeof factory.countBusyHosts>[0][number]);
    factory.countBusyHosts([
      stored('old', 'inspecting', 'ipmi://127.0.0.1:6230'),
      stored('vm', 'inspecting', 'redfish-virtualmedia+http://127.0.0.1/redfish/v1/Systems/1'),
      stored('idle', 'available', 'ipmi://127.0.0.1:6231'),
    ]);
    const publish = (): void => undefined;
    const fresh = await factory.newProvisioner(hostData('new', { bmcAddress: 'ipmi://127.0.0.1:6232' }), publish);
    assert.equal(await fresh.hasCapacity(), false, 'the host inspecting before the restart holds the only place');
    const old = await factory.newProvisioner(hostData('old', { bmcAddress: 'ipmi://127.0.0.1:6230' }), publish);
    assert.equal(await old.hasCapacity(), true, 'the busy host keeps its place');
  } finally {
    await factory.close();
  }
});
