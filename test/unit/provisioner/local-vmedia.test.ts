/**
 * Virtual-media hosts of the local provisioner (vmedia-iso.ts and the boot path of
 * local-provisioner.ts) through the real host state machine, the real Redfish driver and the
 * lab's virtual Redfish BMC over an in-memory host: the per-host ISO is inserted through
 * InsertMedia and booted once from CD (never PXE); boot HTTP serves it with the host overlay
 * spliced into the slot (whole and by Range), only while the host boots a ramdisk, under a
 * name that does not reveal the token; without a built ISO the host fails with how to build one.
 * Also: the inventory that finishes an operation wakes the host's reconcile (onOperationFinished);
 * a soft power-off the OS ignores fails after Ironic's 180 s and is retried hard.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import express from 'express';
import pino from 'pino';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { buildHostOverlay } from '../../../images/index.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { HostService } from '../../../agent/host/service.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { decodeRamdiskIntent } from '../../../agent/provisioner/local/node.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import { HostIsoSource, hostIsoName } from '../../../agent/provisioner/local/vmedia-iso.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests } from '../../helpers/host-harness.js';
import { MemoryHostBackend } from '../../lab/redfish/backend.js';
import { startVirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';
import { FAKE_BASE_ISO, FAKE_ISO_SLOT, hostIsoFiles, writeFakeRamdiskIso } from '../../helpers/fake-ramdisk-iso.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const SLOT = FAKE_ISO_SLOT;
const BASE_ISO = FAKE_BASE_ISO;

interface Bench {
  service: HostService;
  /** Boot.HttpBootUri on the virtual BMC (it stays after the one-time override is consumed). */
  bmcHttpBootUri(): string | null | undefined;
  backend: MemoryHostBackend;
  url: string;
  nodes: NodeTable;
  ramdiskDir: string;
  /** Hosts the ramdisk endpoints asked to wake (onOperationFinished). */
  woken: string[];
  /** Added to the provisioner's clock. */
  clock: { offsetMs: number };
  /** Applies host v0 again with `spec`. */
  apply(spec: Record<string, unknown>): Promise<unknown>;
  events(host: string): Promise<{ reason: string; message: string }[]>;
  step(name: string, done: (h: BareMetalHost) => boolean | Promise<boolean>): Promise<BareMetalHost>;
  token(name: string): Promise<string>;
  ramdisk(token: string, path: string, body: unknown): Promise<number>;
}

async function bench(t: TestContext, withIso: boolean, annotations: Record<string, string> = {}, scheme = 'redfish-virtualmedia', arch?: string): Promise<Bench> {
  const ramdiskDir = await mkdtemp(join(tmpdir(), 'rackside-vmedia-'));
  t.after(() => rm(ramdiskDir, { recursive: true, force: true }));
  // Another architecture's ISO lies in ramdisk/<arch>/ (the builder's layout).
  if (withIso) await writeFakeRamdiskIso(arch === undefined ? ramdiskDir : join(ramdiskDir, arch));
  const store = createMemoryStore();
  const nodes = new NodeTable(store.nodes, store.inventories);
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers);
  const backend = new MemoryHostBackend();
  const bmc = await startVirtualRedfishBmc({ https: false, host: '127.0.0.1', port: 0, backend: () => backend });
  t.after(() => bmc.stop());

  const app = express();
  const url = await listenOnLoopback(t, app);
  const hostIso = new HostIsoSource({ ramdiskDir, httpBaseUrl: url });
  const woken: string[] = [];
  app.use(createRamdiskRouter({ store, nodes, nowMs: Date.now, hostIso, onOperationFinished: (name) => woken.push(name) }));

  let ids = 0;
  const clock = { offsetMs: 0 };
  const factory = new LocalFactory({
    store, nodes, drivers, nowMs: () => Date.now() + clock.offsetMs, newId: () => `id-${++ids}-0000000000`, pollMs: 0, hostIso,
    ...(arch === undefined ? {} : { hostArchitecture: () => Promise.resolve(arch) }),
  });
  t.after(() => factory.close());
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } });
  const bmcAddress = `${scheme}+http://${bmc.host}/redfish/v1/Systems/1`;
  await service.apply(withBmc(hostManifests('v0', {}, annotations), bmcAddress));
  const token = async (name: string): Promise<string> => (await nodes.get((await store.getHost(name))?.metadata.uid ?? '')).token ?? '';
  return {
    service, backend, url, nodes, ramdiskDir, token, woken, clock,
    bmcHttpBootUri: () => bmc.state.systems.get('1')?.httpBootUri,
    apply: (spec) => service.apply(withBmc(hostManifests('v0', spec, annotations), bmcAddress)),
    events: async (host) => (await store.listEvents({ host })).map((e) => ({ reason: e.reason, message: e.message })),
    async step(name, done) {
      for (let i = 0; i < 40; i += 1) {
        const host = await store.getHost(name);
        if (host === undefined) throw new Error(`${name} gone`);
        if (await done(host)) return host;
        await reconciler.reconcileOnce(name);
      }
      const host = await store.getHost(name);
      throw new Error(`no progress: ${host?.status.provisioning.state} ${host?.status.errorMessage}`);
    },
    async ramdisk(tokenValue, path, body) {
      const res = await fetch(`${url}/ramdisk/v1/${path}`, {
        method: 'POST', headers: { authorization: `Bearer ${tokenValue}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res.status;
    },
  };
}

function withBmc(docs: unknown[], address: string): unknown[] {
  const [secret, host] = docs as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = address;
  return [secret, host];
}

const INVENTORY = {
  cpu: { model_name: 'QEMU Virtual CPU', count: 1, architecture: 'x86_64', frequency: '2400', flags: [] },
  memory: { physical_mb: 512 },
  disks: [{ name: '/dev/vda', size: 10737418240, rotational: false, serial: 'V0' }],
  interfaces: [{ name: 'eth0', mac_address: '00:5c:52:31:3a:9c', ipv4_address: '192.0.2.60', pxe_enabled: true }],
  system_vendor: { manufacturer: 'QEMU', product_name: 'Standard PC', firmware: { vendor: 'SeaBIOS' } },
};

test('a virtual-media host boots its per-host ISO from CD; boot HTTP serves it with the overlay, by Range, only while it boots', async (t) => {
  const b = await bench(t, true);
  await b.step('v0', () => b.backend.boots.length > 0);
  const token = await b.token('v0');
  const isoUrl = `${b.url}/ramdisk/v1/vmedia/${hostIsoName(token)}.iso`;
  assert.deepEqual(b.backend.boots, [{ target: 'Cd', media: isoUrl }], 'one CD boot with the per-host ISO inserted; no PXE');
  assert.ok(!isoUrl.includes(token), 'the media URL does not carry the token');
  assert.match(isoUrl, /\/ramdisk\/v1\/vmedia\/[0-9a-f]{32}\.iso$/);
  assert.ok((await b.events('v0')).some((e) => e.reason === 'InspectionStarted' && /virtual media/.test(e.message)));

  const whole = await fetch(isoUrl);
  assert.equal(whole.status, 200);
  assert.equal(whole.headers.get('accept-ranges'), 'bytes');
  const served = Buffer.from(await whole.arrayBuffer());
  const overlay = buildHostOverlay({ agentUrl: b.url, token });
  const expected = Buffer.from(BASE_ISO);
  expected.set(overlay, SLOT.offsetBytes);
  assert.ok(served.equals(expected), 'the base ISO with the host overlay in the slot, zero-padded');
  const files = hostIsoFiles(served);
  const text = (path: string): string => files.get(path) ?? '';
  assert.equal(text('etc/rackside/url'), `${b.url}\n`);
  assert.equal(text('etc/rackside/token'), `${token}\n`);

  const start = SLOT.offsetBytes - 100;
  const part = await fetch(isoUrl, { headers: { range: `bytes=${start}-${start + 299}` } });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes ${start}-${start + 299}/${BASE_ISO.length}`);
  assert.ok(Buffer.from(await part.arrayBuffer()).equals(expected.subarray(start, start + 300)), 'a range across the slot edge is patched too');
  assert.equal((await fetch(isoUrl, { headers: { range: `bytes=${BASE_ISO.length}-` } })).status, 416);
  assert.equal((await fetch(`${b.url}/ramdisk/v1/vmedia/${'0'.repeat(32)}.iso`)).status, 404, 'an unknown name');
  assert.equal((await b.events('v0')).filter((e) => e.reason === 'VirtualMediaFetched').length, 1, 'one event per whole fetch, not per range');
  // A BMC that hangs up the moment it has the last byte (curl does) still fetched the ISO: the
  // close may reach the server before its response was ended (a race: 20 tries hit it).
  const HANG_UPS = 20;
  for (let round = 0; round < HANG_UPS; round++) assert.ok((await fetchAndHangUp(isoUrl)).equals(expected), 'the whole ISO, then a hang-up');
  const fetchedEvents = async (): Promise<number> => (await b.events('v0')).filter((e) => e.reason === 'VirtualMediaFetched').length;
  for (let waited = 0; (await fetchedEvents()) < HANG_UPS + 1 && waited < 2000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await fetchedEvents(), HANG_UPS + 1, 'each hung-up fetch is recorded');

  // The ramdisk inspects; once the host is available its media URL no longer answers.
  assert.equal(await b.ramdisk(token, 'heartbeat', { version: 't', boot_mac: null, ip: '192.0.2.60', uptime_seconds: 5, last_command_id: null }), 200);
  const commandId = (await b.nodes.findByToken(token))?.entry.local?.op?.commandId ?? '';
  assert.deepEqual(b.woken, [], 'a heartbeat finishes nothing');
  assert.equal(await b.ramdisk(token, 'inventory', { command_id: commandId, inventory: INVENTORY }), 200);
  assert.deepEqual(b.woken, ['v0'], 'the inventory that finished the inspection wakes the host');
  await b.step('v0', (h) => h.status.provisioning.state === 'available');
  assert.equal((await fetch(isoUrl)).status, 404, 'served only while the host boots a ramdisk');
});

test('a redfish-uefihttp host boots its per-host ISO by UefiHttp with HttpBootUri (no PXE, no virtual media), and is inspected', async (t) => {
  const b = await bench(t, true, {}, 'redfish-uefihttp');
  await b.step('v0', () => b.backend.boots.length > 0);
  const token = await b.token('v0');
  const isoUrl = `${b.url}/ramdisk/v1/vmedia/${hostIsoName(token)}.iso`;
  assert.deepEqual(b.backend.boots, [{ target: 'UefiHttp', media: undefined, httpBootUri: isoUrl }], 'one UEFI HTTP boot of the per-host ISO; no PXE, nothing inserted as virtual media');
  assert.equal(b.bmcHttpBootUri(), isoUrl, 'the BMC was given the per-host ISO as HttpBootUri');
  const entry = (await b.nodes.findByToken(token))?.entry;
  assert.equal(entry?.httpBootUri, isoUrl, 'the URI read back from the BMC is recorded for this boot');
  assert.deepEqual(decodeRamdiskIntent(entry).boot, 'none', 'so DHCP names no boot file to this host (the firmware boots the BMC\'s URI)');
  assert.equal((await fetch(isoUrl)).status, 200, 'boot HTTP serves it while the host boots');
  assert.ok((await b.events('v0')).some((e) => e.reason === 'InspectionStarted' && /UEFI HTTP boot/.test(e.message)));
  assert.equal(await b.ramdisk(token, 'heartbeat', { version: 't', boot_mac: null, ip: '192.0.2.60', uptime_seconds: 5, last_command_id: null }), 200);
  const commandId = (await b.nodes.findByToken(token))?.entry.local?.op?.commandId ?? '';
  assert.equal(await b.ramdisk(token, 'inventory', { command_id: commandId, inventory: INVENTORY }), 200);
  await b.step('v0', (h) => h.status.provisioning.state === 'available');
});

test('an arm64 virtual-media host is given the arm64 ISO (ramdisk/arm64/, UEFI only) at …/vmedia/arm64/<name>.iso', async (t) => {
  const other = process.arch === 'arm64' ? 'amd64' : 'arm64';
  const b = await bench(t, true, {}, 'redfish-virtualmedia', other);
  await b.step('v0', () => b.backend.boots.length > 0);
  const token = await b.token('v0');
  const isoUrl = `${b.url}/ramdisk/v1/vmedia/${other}/${hostIsoName(token)}.iso`;
  assert.deepEqual(b.backend.boots, [{ target: 'Cd', media: isoUrl }], `the ${other} ISO inserted and booted from CD`);
  const served = Buffer.from(await (await fetch(isoUrl)).arrayBuffer());
  assert.equal(served.length, BASE_ISO.length);
  assert.equal(hostIsoFiles(served).get('etc/rackside/token'), `${token}\n`, 'with the host overlay in its slot');
  assert.equal((await fetch(`${b.url}/ramdisk/v1/vmedia/${hostIsoName(token)}.iso`)).status, 503, 'the head node\'s ISO is not built here: the same name without the architecture says so');
  assert.equal((await fetch(`${b.url}/ramdisk/v1/vmedia/ppc64el/${hostIsoName(token)}.iso`)).status, 404, 'an architecture rackside builds none for');
});

test('an arm64 virtual-media host without the arm64 ISO fails inspection naming the --arch build, and is not booted', async (t) => {
  const other = process.arch === 'arm64' ? 'amd64' : 'arm64';
  const b = await bench(t, false, {}, 'redfish-virtualmedia', other);
  const bmh = await b.step('v0', (h) => h.status.errorMessage !== '');
  assert.match(bmh.status.errorMessage, new RegExp(`rackside images build --arch ${other} --format iso`));
  assert.deepEqual(b.backend.boots, [], 'never powered on');
});

test('a virtual-media host without a built ISO fails inspection saying how to build one, and is not booted', async (t) => {
  const b = await bench(t, false);
  const bmh = await b.step('v0', (h) => h.status.errorMessage !== '');
  assert.equal(bmh.status.errorType, 'inspection error');
  assert.match(bmh.status.errorMessage, /virtual media boot needs the rackside ISO/);
  assert.match(bmh.status.errorMessage, /rackside images build --format iso/);
  assert.deepEqual(b.backend.boots, [], 'never powered on');
  assert.equal(b.backend.media, undefined, 'nothing inserted');
});

test('a soft power-off the OS ignores fails after 180 s, and the controller then powers off hard', async (t) => {
  const b = await bench(t, true, { 'inspect.metal3.io': 'disabled' });
  await b.step('v0', (h) => h.status.provisioning.state === 'available' && h.status.poweredOn);
  assert.equal(b.backend.power, 'On');
  b.backend.ignoreShutdown = true; // a hung OS: the ACPI power button does nothing
  await b.apply({ online: false });
  let rounds = 0;
  await b.step('v0', () => ++rounds > 5);
  assert.equal(b.backend.power, 'On', 'still on: only soft power-off was asked so far');
  assert.equal((await b.step('v0', () => true)).status.errorMessage, '', 'no error within the timeout');
  b.clock.offsetMs += 181_000;
  const failed = await b.step('v0', (h) => h.status.errorType === 'power management error');
  assert.match(failed.status.errorMessage, /soft poweroff fails.*soft power off did not finish within 180 s/);
  const off = await b.step('v0', (h) => !h.status.poweredOn && h.status.errorMessage === '');
  assert.equal(b.backend.power, 'Off', 'powered off hard');
  assert.equal(off.status.errorType ?? '', '');
});

/** GETs `url` over a raw connection and destroys it as soon as the Content-Length bytes are in; resolves with the body. */
function fetchAndHangUp(url: string): Promise<Buffer> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    socket.on('connect', () => { socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`); });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(received.subarray(0, headEnd).toString('latin1'))?.[1] ?? Number.NaN);
      if (received.length - headEnd - 4 >= length) {
        socket.destroy();
        resolve(received.subarray(headEnd + 4, headEnd + 4 + length));
      }
    });
    socket.on('error', reject);
  });
}
