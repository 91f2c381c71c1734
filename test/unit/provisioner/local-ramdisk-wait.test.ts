/**
 * The local provisioner asks the ramdisk build before it boots a host into the ramdisk
 * (agent/provisioner/local/local-provisioner.ts `ramdiskReady`): while the build runs the host
 * stays in inspecting, powered off, with one WaitingForRamdisk event per new message — no
 * network boot into a 404 loop — and boots once it is built (RamdiskReady); a failed build is
 * an inspection error carrying the build's reason and fix.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { FakeBmcPool } from '../../../drivers/fake/fake-driver.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { HostService } from '../../../agent/host/service.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import type { RamdiskGate } from '../../../agent/provisioner/local/ramdisk-build-status.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests } from '../../helpers/host-harness.js';

const WAIT = 'waiting for the amd64 ramdisk build (step 3/5, composing the initramfs, 40 %)';

/** A ramdisk build the test moves by hand; like the real one, `changed` says whether the host was told something else before. */
class FakeBuild {
  state: { kind: 'wait' | 'failed'; message: string } | { kind: 'ready' } = { kind: 'wait', message: WAIT };
  /** Per-architecture states that override `state` (a mixed rack: amd64 built, arm64 not). */
  readonly byArch = new Map<string, FakeBuild['state']>();
  readonly asked: string[] = [];
  /** The architecture of each ask. */
  readonly arches: string[] = [];
  readonly #told = new Map<string, string>();
  gate(name: string, format: 'initrd' | 'iso', arch?: string): RamdiskGate {
    this.asked.push(`${name}:${format}`);
    this.arches.push(arch ?? 'none');
    const state = this.byArch.get(arch ?? '') ?? this.state;
    if (state.kind === 'ready') return { kind: 'ready', waited: this.#told.delete(name) };
    const changed = this.#told.get(name) !== state.message;
    this.#told.set(name, state.message);
    return { kind: state.kind, message: state.message, changed };
  }
  forget(name: string): void {
    this.#told.delete(name);
  }
}

function bench(t: TestContext) {
  const store = createMemoryStore();
  const pool = new FakeBmcPool();
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers, { fakePool: pool });
  const nodes = new NodeTable(store.nodes, store.inventories);
  const build = new FakeBuild();
  /** What each host's firmware told DHCP (metal3 spelling), as the boot lookup records it. */
  const dhcpArch = new Map<string, string>();
  let ids = 0;
  const factory = new LocalFactory({ store, nodes, drivers, nowMs: Date.now, newId: () => `id-${++ids}-0000000000`, pollMs: 0, ramdisk: build,
    hostArchitecture: async (name) => {
      const host = await store.getHost(name);
      return host?.spec.architecture ?? dhcpArch.get(name) ?? host?.status.hardware?.cpu.arch ?? '';
    },
  });
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  t.after(() => factory.close());
  const step = async (name: string, done: (h: BareMetalHost) => boolean): Promise<BareMetalHost> => {
    for (let i = 0; i < 30; i += 1) {
      const host = await store.getHost(name);
      if (host !== undefined && done(host)) return host;
      await reconciler.reconcileOnce(name);
    }
    throw new Error(`no progress for ${name}`);
  };
  const events = async (name: string): Promise<string[]> => (await store.listEvents({ host: name })).map((e) => `${e.reason}: ${e.message}`);
  return { store, pool, build, dhcpArch, service, reconciler, step, events };
}

function fakeHost(name: string, spec: Record<string, unknown> = {}): unknown[] {
  const [secret, host] = hostManifests(name, spec) as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = `fake://${name}-bmc`;
  return [secret, host];
}

test('a host waits in inspecting, powered off, while the ramdisk builds; it boots once the ramdisk is built', async (t) => {
  const b = bench(t);
  await b.service.apply(fakeHost('n0'));
  await b.step('n0', (h) => h.status.provisioning.state === 'inspecting');
  for (let i = 0; i < 3; i += 1) await b.reconciler.reconcileOnce('n0');
  const bmc = b.pool.get('n0-bmc');
  const power = (): string => bmc.power;
  assert.equal(power(), 'off', 'not powered on into a network boot');
  const boots = (): unknown[] => [...bmc.boots];
  assert.deepEqual(boots(), [], 'no boot device set');
  assert.ok(b.build.asked.length >= 3 && b.build.asked.every((a) => a === 'n0:initrd'), `a network-booted host asks for the initrd: ${b.build.asked.join(', ')}`);
  let events = await b.events('n0');
  assert.deepEqual(events.filter((e) => e.startsWith('WaitingForRamdisk')), [`WaitingForRamdisk: ${WAIT}`], 'one event per new message');
  assert.equal((await b.service.getHost('n0')).status.provisioning.state, 'inspecting');

  b.build.state = { kind: 'ready' };
  await b.reconciler.reconcileOnce('n0');
  assert.equal(power(), 'on');
  assert.deepEqual(boots().at(-1), { device: 'pxe', mode: 'uefi', mediaUrl: undefined });
  events = await b.events('n0');
  assert.ok(events.includes('RamdiskReady: the amd64 ramdisk is built: booting it to inspect'), events.join('\n'));
  assert.ok(!events.some((e) => e.startsWith('HTTPRequest')), 'no 404 loop');
});

test('a failed build is an inspection error with its reason and fix; nothing is powered on', async (t) => {
  const b = bench(t);
  const message = 'the amd64 ramdisk build failed: kernel image /nonexistent/vmlinuz does not exist — fix: point images.ramdisk.kernel at an existing /boot/vmlinuz-*';
  b.build.state = { kind: 'failed', message };
  await b.service.apply(fakeHost('n1'));
  const host = await b.step('n1', (h) => h.status.errorType === 'inspection error');
  assert.equal(host.status.errorMessage, `starting inspection: ${message}`);
  assert.equal(b.pool.get('n1-bmc').power, 'off');
});

test('an aarch64 host waits for the arm64 ramdisk build, powered off, and boots once it is built', async (t) => {
  const b = bench(t);
  const wait = 'waiting for the arm64 ramdisk build (step 1/5, fetching the kernel, 0 %)';
  b.build.state = { kind: 'wait', message: wait };
  await b.service.apply(fakeHost('n2', { architecture: 'aarch64' }));
  await b.step('n2', (h) => h.status.provisioning.state === 'inspecting');
  for (let i = 0; i < 2; i += 1) await b.reconciler.reconcileOnce('n2');
  assert.equal(b.pool.get('n2-bmc').power, 'off');
  assert.ok(b.build.arches.length > 0 && b.build.arches.every((a) => a === 'arm64'), `asks for the arm64 build: ${b.build.arches.join(', ')}`);
  assert.ok((await b.events('n2')).includes(`WaitingForRamdisk: ${wait}`));
  b.build.state = { kind: 'ready' };
  await b.reconciler.reconcileOnce('n2');
  assert.equal(b.pool.get('n2-bmc').power, 'on');
  assert.ok((await b.events('n2')).includes('RamdiskReady: the arm64 ramdisk is built: booting it to inspect'));
});

test('a host of an architecture no ramdisk is built for (ppc64le) gets an inspection error naming it; nothing is powered on', async (t) => {
  const b = bench(t);
  b.build.state = { kind: 'ready' };
  await b.service.apply(fakeHost('n3', { architecture: 'ppc64le' }));
  const host = await b.step('n3', (h) => h.status.errorType === 'inspection error');
  assert.match(host.status.errorMessage, /^starting inspection: no ppc64le ramdisk: the agent builds ramdisks for amd64 and arm64 \(x86_64 and aarch64\) only/);
  assert.equal(b.pool.get('n3-bmc').power, 'off');
  assert.deepEqual(b.pool.get('n3-bmc').boots, []);
});

test('a host of no declared architecture whose firmware then asks DHCP as arm64, the arm64 ramdisk not built: the boot fails at once, powered off, and the retry waits for the build', async (t) => {
  const b = bench(t);
  const wait = 'waiting for the arm64 ramdisk build (step 1/5, fetching the kernel, 0 %)';
  b.build.byArch.set('amd64', { kind: 'ready' });
  b.build.byArch.set('arm64', { kind: 'wait', message: wait });
  await b.service.apply(fakeHost('n4'));
  await b.step('n4', (h) => h.status.provisioning.state === 'inspecting');
  await b.reconciler.reconcileOnce('n4');
  const bmc = b.pool.get('n4-bmc');
  assert.equal(bmc.power, 'on', 'powered on for the amd64 (head node) ramdisk: nothing said otherwise');
  // Its firmware's DHCP request names arm64 (option 93 = 11): the boot lookup sends it to /ramdisk/arm64/, not built.
  b.dhcpArch.set('n4', 'aarch64');
  const failed = await b.step('n4', (h) => h.status.errorType === 'inspection error');
  assert.match(failed.status.errorMessage, /network-booted as arm64 .* the arm64 ramdisk is not built: waiting for the arm64 ramdisk build/);
  assert.equal(bmc.power, 'off', 'not left in a boot that cannot load');
  const asked = b.build.arches.length;
  for (let i = 0; i < 3; i += 1) await b.reconciler.reconcileOnce('n4');
  assert.equal(bmc.power, 'off', 'the retry waits powered off');
  assert.ok(b.build.arches.slice(asked).includes('arm64'), `the retry asks for the arm64 build: ${b.build.arches.join(', ')}`);
  assert.ok((await b.events('n4')).includes(`WaitingForRamdisk: ${wait}`));
  b.build.byArch.set('arm64', { kind: 'ready' });
  for (let i = 0; i < 3 && bmc.power !== 'on'; i += 1) await b.reconciler.reconcileOnce('n4');
  assert.equal(bmc.power, 'on', 'booted once the arm64 ramdisk is built');
});
