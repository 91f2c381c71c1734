/**
 * The local provisioner's provision and deprovision through the real host state machine: a fake
 * BMC, a loopback upstream image server (a small raw file, a checksum file, an ISO), the real OS
 * image cache and config drive builder, boot HTTP serving them, and a simulated ramdisk talking
 * to the callback endpoints. Covers the deploy command's parameters, the served bytes (with
 * Range), the disk boot after a good deploy, checksum and ramdisk failures, metadata cleaning,
 * cleaning disabled, live ISOs and custom deploy.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import pino from 'pino';
import { startBootHttpServer } from '../../../bootsvc/index.js';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { FakeBmcPool } from '../../../drivers/fake/fake-driver.js';
import { ImageCache } from '../../../images/index.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { HostService } from '../../../agent/host/service.js';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { configDriveContent, ImagePreparer, localBootMounts, localImageDirs } from '../../../agent/provisioner/local/image-prep.js';
import type { HostData } from '../../../agent/provisioner/provisioner.js';
import { LocalFactory } from '../../../agent/provisioner/local/local-provisioner.js';
import { NodeTable } from '../../../agent/provisioner/local/node-table.js';
import { createRamdiskRouter } from '../../../agent/provisioner/local/ramdisk-service.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests } from '../../helpers/host-harness.js';

const DISK = randomBytes(192 * 1024);
const DISK_SHA256 = createHash('sha256').update(DISK).digest('hex');
/** Enough of an ISO 9660 image for the cache to see one: the primary volume descriptor magic. */
const ISO = Buffer.alloc(64 * 1024);
ISO.write('\x01CD001', 0x8000, 'latin1');

interface Bench {
  service: HostService;
  /** Added to the wall clock of the provisioner and the ramdisk endpoints (fast-track windows). */
  clock: { offsetMs: number };
  pool: FakeBmcPool;
  nodes: NodeTable;
  imageUrl: string;
  bootUrl: string;
  events(host: string): Promise<{ reason: string; type: string; message: string; data?: Record<string, unknown> }[]>;
  until(name: string, done: (h: BareMetalHost) => boolean | Promise<boolean>, what: string): Promise<BareMetalHost>;
  /** The kind and id of host `name`'s ramdisk operation. */
  op(name: string): Promise<{ kind?: string; commandId?: string }>;
  heartbeat(name: string, last: string | null): Promise<Map<string, string>>;
  result(name: string, body: Record<string, unknown>): Promise<number>;
  /**
   * Answers the automated cleaning a manageable host gets before its first deploy (clean ok),
   * waits for the deploy to be handed to the same ramdisk; resolves with the clean's command id.
   */
  cleanFirst(name: string): Promise<string>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

async function bench(t: TestContext, timeouts: { deployMs?: number } = {}): Promise<Bench> {
  const clock = { offsetMs: 0 };
  const nowMs = (): number => Date.now() + clock.offsetMs;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-local-provision-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = createMemoryStore();
  const pool = new FakeBmcPool();
  const drivers = new DriverRegistry();
  registerBuiltinDrivers(drivers, { fakePool: pool });
  const nodes = new NodeTable(store.nodes, store.inventories);

  const upstream = createServer((req, res) => {
    const files: Record<string, Buffer | string> = {
      '/disk.raw': DISK,
      '/SHA256SUMS': `${DISK_SHA256}  disk.raw\n`,
      '/live.iso': ISO,
    };
    const body = files[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': Buffer.byteLength(body) }).end(body);
  });
  const imageUrl = await listen(upstream);
  t.after(() => {
    upstream.closeAllConnections();
    upstream.close();
  });

  const dirs = localImageDirs(dir);
  await mkdir(dirs.configDriveDir, { recursive: true }); // boot-services.ts makes the mount directories in the agent
  const cache = await ImageCache.open({ dir: dirs.osCacheDir, maxBytes: 64 * 1024 * 1024, retryDelayMs: 1, maxAttempts: 2 });
  const boot = await startBootHttpServer({
    host: '127.0.0.1',
    port: 0,
    mounts: localBootMounts(dir),
    plans: { target: () => Promise.resolve(undefined) },
    extraRoutes: (app) => {
      app.use(createRamdiskRouter({ store, nodes, nowMs }));
    },
  });
  t.after(() => boot.stop());
  let ids = 0;
  const factory = new LocalFactory({
    store,
    nodes,
    drivers,
    nowMs,
    newId: () => `id-${++ids}-0000000000`,
    pollMs: 0,
    timeouts,
    images: { source: cache, httpBaseUrl: boot.url, configDriveDir: dirs.configDriveDir },
  });
  const reconciler = new Reconciler({ store, factory, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  t.after(() => factory.close());
  const token = async (name: string): Promise<string> => {
    const host = await store.getHost(name);
    return (await nodes.get(host?.metadata.uid ?? '')).token ?? '';
  };
  const post = async (name: string, path: string, body: unknown): Promise<Response> =>
    fetch(`${boot.url}/ramdisk/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token(name)}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const bench: Bench = {
    clock,
    service: new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'local', startedAt: '' } }),
    pool,
    nodes,
    imageUrl,
    bootUrl: boot.url,
    events: async (host) => await store.listEvents({ host }),
    async cleanFirst(name) {
      await bench.until(name, async (h) => provisioning(h) && (await bench.op(name)).kind === 'clean', 'the clean before the deploy');
      const clean = await bench.heartbeat(name, null);
      assert.equal(clean.get('command'), 'clean');
      assert.equal(clean.get('clean_mode'), 'metadata');
      assert.equal(clean.get('clean_keep_raid'), '1', 'automated cleaning keeps software RAID');
      const id = clean.get('command_id') ?? '';
      assert.equal(await bench.result(name, { command_id: id, command: 'clean', status: 'ok', message: null, details: CLEAN_DETAILS, log: [] }), 200);
      await bench.until(name, async () => (await bench.op(name)).kind === 'deploy', 'the deploy after the clean');
      return id;
    },
    async until(name, done, what) {
      // The image is fetched in the background: reconcile, then give it a moment, until done.
      for (let i = 0; i < 2000; i += 1) {
        const host = await store.getHost(name);
        if (host === undefined) throw new Error(`${name} gone`);
        if (await done(host)) return host;
        await reconciler.reconcileOnce(name);
        await new Promise((r) => setTimeout(r, 2));
      }
      const host = await store.getHost(name);
      throw new Error(`no ${what}: ${host?.status.provisioning.state} ${host?.status.errorMessage}`);
    },
    async heartbeat(name, last) {
      const res = await post(name, 'heartbeat', { version: 't', boot_mac: '00:5c:52:31:3a:9c', ip: '192.0.2.50', uptime_seconds: 3, last_command_id: last });
      assert.equal(res.status, 200);
      const lines = (await res.text()).trim().split('\n');
      return new Map(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    },
    async op(name) {
      const host = await store.getHost(name);
      const op = (await nodes.get(host?.metadata.uid ?? '')).local?.op;
      return { ...(op === undefined ? {} : { kind: op.kind, commandId: op.commandId }) };
    },
    async result(name, body) {
      return (await post(name, 'result', body)).status;
    },
  };
  return bench;
}

/** A host that skips inspection and goes straight to provisioning `spec`. */
function host(name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): unknown[] {
  const [secret, bmh] = hostManifests(name, spec, { 'inspect.metal3.io': 'disabled', ...annotations }) as [unknown, { spec: { bmc: { address: string } } }];
  bmh.spec.bmc.address = `fake://${name}-bmc`;
  return [secret, bmh];
}

function userDataSecret(name: string, text: string): unknown {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'metal3' }, type: 'Opaque', data: { userData: Buffer.from(text).toString('base64') } };
}

const DEPLOY_DETAILS = {
  root_device: { name: '/dev/vda', size: 10737418240, rotational: false, serial: 'D0' },
  image: { url: 'x', bytes: DISK.length, checksum_type: 'sha256', checksum: DISK_SHA256, attempts: 1 },
  config_drive: { offset_bytes: 10737352704, size_bytes: 65536 },
  duration_seconds: 2,
};
const CLEAN_DETAILS = { mode: 'metadata', disks: [{ name: '/dev/vda', serial: 'D0', size: 10737418240, method: 'metadata', bytes_wiped: 2097152, duration_seconds: 1, status: 'ok', message: null }] };

const provisioning = (h: BareMetalHost): boolean => h.status.provisioning.state === 'provisioning';

test('provision: the image is cached and served, the ramdisk gets deploy with it, then the host boots its disk; deprovision cleans', async (t) => {
  const b = await bench(t);
  const image = { url: `${b.imageUrl}/disk.raw`, checksum: `${b.imageUrl}/SHA256SUMS`, checksumType: 'sha256', format: 'raw' };
  await b.service.apply([
    ...host('p0', { image, rootDeviceHints: { serialNumber: 'D0', minSizeGigabytes: 4 }, userData: { name: 'p0-user' } }),
    userDataSecret('p0-user', '#cloud-config\nhostname: p0-from-user-data\n'),
  ]);
  // A registered (manageable) node is cleaned before its first deploy, like Ironic's `provide`.
  const cleanId = await b.cleanFirst('p0');
  let bmh = await b.until('p0', (h) => provisioning(h), 'provisioning');
  const uid = bmh.metadata.uid;
  const entry = await b.nodes.get(uid);
  assert.equal(entry.boot, 'ramdisk');
  assert.equal(entry.local?.op?.kind, 'deploy');
  assert.deepEqual(b.pool.get('p0-bmc').boots, [{ device: 'pxe', mode: 'uefi', mediaUrl: undefined }], 'one ramdisk boot: the deploy went to the ramdisk that cleaned (fast track)');
  assert.ok((await b.events('p0')).some((e) => e.reason === 'DeployStarted' && /fast track/.test(e.message)));

  const command = await b.heartbeat('p0', cleanId);
  assert.equal(command.get('command'), 'deploy');
  assert.equal(command.get('image_url'), `${b.bootUrl}/images/${DISK_SHA256}`);
  assert.equal(command.get('image_checksum'), DISK_SHA256, 'the checksum of the served (raw) file');
  assert.equal(command.get('image_checksum_type'), 'sha256');
  assert.equal(command.get('image_size_bytes'), String(DISK.length));
  assert.equal(command.get('hint_serial'), 'D0');
  assert.equal(command.get('hint_size'), '4');
  const commandId = command.get('command_id') ?? '';

  // The served image is the exact upstream bytes, and Range works (the ramdisk resumes with it).
  const served = Buffer.from(await (await fetch(command.get('image_url')!)).arrayBuffer());
  assert.ok(served.equals(DISK));
  const part = await fetch(command.get('image_url')!, { headers: { range: 'bytes=1000-1999' } });
  assert.equal(part.status, 206);
  assert.ok(Buffer.from(await part.arrayBuffer()).equals(DISK.subarray(1000, 2000)));

  // The config drive: an ISO labelled config-2 with metal3's meta_data and the user data verbatim.
  const driveUrl = command.get('configdrive_url') ?? '';
  assert.match(driveUrl, new RegExp(`^${b.bootUrl}/configdrive/${uid}-[0-9a-f]{24}\\.img$`));
  const drive = Buffer.from(await (await fetch(driveUrl)).arrayBuffer());
  assert.equal(createHash('sha256').update(drive).digest('hex'), command.get('configdrive_sha256'));
  assert.equal(drive.subarray(0x8001, 0x8006).toString('latin1'), 'CD001');
  assert.match(drive.subarray(0x8028, 0x8030).toString('latin1'), /^config-2/);
  assert.ok(drive.includes(`"uuid":"${uid}"`), 'meta_data.json carries the host UID');
  assert.ok(drive.includes('"metal3-name":"p0"'));
  assert.ok(drive.includes('hostname: p0-from-user-data'), 'user_data verbatim');

  assert.equal((await b.heartbeat('p0', commandId)).get('command'), 'report', 'sent once: a ramdisk naming it as done is asked for its report, not sent the deploy again');
  assert.equal(await b.result('p0', { command_id: commandId, command: 'deploy', status: 'ok', message: null, details: DEPLOY_DETAILS, log: ['deploy: done'] }), 200);
  bmh = await b.until('p0', (h) => h.status.provisioning.state === 'provisioned', 'provisioned');
  assert.equal(bmh.status.provisioning.image.url, image.url);
  const bmc = b.pool.get('p0-bmc');
  assert.deepEqual(bmc.bootOverride, { device: 'disk', persistent: true, mode: 'uefi' });
  assert.equal(bmc.boots.at(-1)?.device, 'disk', 'reset into the written disk');
  const after = await b.nodes.get(uid);
  assert.equal(after.boot, 'local-disk');
  assert.equal(after.local?.state, 'active');
  const reasons = (await b.events('p0')).map((e) => e.reason);
  for (const r of ['ProvisioningStarted', 'ImageProgress', 'ImageReady', 'CleaningStarted', 'CleanDone', 'CleaningComplete', 'DeployStarted', 'DeployDone', 'ProvisioningComplete']) {
    assert.ok(reasons.includes(r), `${r} in ${reasons.join(',')}`);
  }
  const done = (await b.events('p0')).find((e) => e.reason === 'DeployDone');
  assert.match(done?.message ?? '', /written to \/dev\/vda/);

  // Deprovision with metadata cleaning: the ramdisk cleans, the host is available and off.
  await b.service.apply([host('p0', { userData: { name: 'p0-user' } })[1]]);
  await b.until('p0', async (h) => h.status.provisioning.state === 'deprovisioning' && (await b.op('p0')).kind === 'clean', 'clean');
  assert.equal(b.pool.get('p0-bmc').boots.at(-1)?.device, 'pxe', 'the clean boots the ramdisk once more');
  const clean = await b.heartbeat('p0', commandId);
  assert.equal(clean.get('command'), 'clean');
  assert.equal(clean.get('clean_mode'), 'metadata');
  assert.equal(await b.result('p0', { command_id: clean.get('command_id'), command: 'clean', status: 'ok', message: null, details: CLEAN_DETAILS, log: [] }), 200);
  bmh = await b.until('p0', (h) => h.status.provisioning.state === 'available', 'available');
  assert.equal(bmh.status.provisioning.image.url, '');
  assert.equal((await b.nodes.get(uid)).boot, 'none');
  assert.equal((await b.nodes.get(uid)).local?.state, 'available');
  assert.ok((await b.events('p0')).some((e) => e.reason === 'CleanDone' && /metadata clean of 1 disk/.test(e.message)));
  assert.equal(await fetch(driveUrl).then((r) => r.status), 404, 'the config drive is gone once the host has it');
});

test('fast track: a deploy handed to the cleaning ramdisk that then goes quiet boots the host after the window', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('f0', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256' } }));
  const cleanId = await b.cleanFirst('f0');
  const pxeBoots = (): number => b.pool.get('f0-bmc').boots.filter((x) => x.device === 'pxe').length;
  assert.equal(pxeBoots(), 1, 'the deploy went to the running ramdisk');
  let rounds = 0;
  await b.until('f0', () => ++rounds > 5, 'five reconciles within the window');
  assert.equal(pxeBoots(), 1, 'no reboot while the window lasts');
  b.clock.offsetMs += 31_000; // no heartbeat took the deploy: the ramdisk is gone (crashed, powered off)
  await b.until('f0', () => pxeBoots() === 2, 'the fallback boot');
  assert.ok((await b.events('f0')).some((e) => e.reason === 'FastTrackFallback' && /no heartbeat took deploy within 30 s/.test(e.message)));
  const deploy = await b.heartbeat('f0', cleanId);
  assert.equal(deploy.get('command'), 'deploy', 'the freshly booted ramdisk gets the same deploy');
});

test('fast track needs a live ramdisk: a deploy after the ramdisk went quiet boots the host at once', async (t) => {
  const b = await bench(t);
  // The image is prepared only after the clean: the deploy starts later than the clean ends.
  await b.service.apply(host('f1', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256' } }));
  await b.until('f1', async (h) => provisioning(h) && (await b.op('f1')).kind === 'clean', 'the clean');
  const clean = await b.heartbeat('f1', null);
  b.clock.offsetMs += 31_000; // the clean's answer comes long after the ramdisk's last heartbeat
  assert.equal(await b.result('f1', { command_id: clean.get('command_id'), command: 'clean', status: 'ok', message: null, details: CLEAN_DETAILS, log: [] }), 200);
  await b.until('f1', async () => (await b.op('f1')).kind === 'deploy', 'the deploy');
  assert.equal(b.pool.get('f1-bmc').boots.filter((x) => x.device === 'pxe').length, 2, 'booted again for the deploy');
  const reasons = (await b.events('f1')).filter((e) => e.reason === 'DeployStarted').map((e) => e.message);
  assert.deepEqual(reasons, ['network-booting the rackside ramdisk to deploy']);
});

test('automatedCleaningMode disabled deploys a manageable host without cleaning it first', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('f2', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256' }, automatedCleaningMode: 'disabled' }));
  await b.until('f2', async (h) => provisioning(h) && (await b.op('f2')).kind === 'deploy', 'the deploy');
  assert.equal((await b.heartbeat('f2', null)).get('command'), 'deploy', 'deploy is the first command');
  assert.ok(!(await b.events('f2')).some((e) => e.reason === 'CleaningStarted'));
});

test('a checksum mismatch is a provisioning error naming it; nothing is deployed', async (t) => {
  const b = await bench(t);
  const wrong = 'ab'.repeat(32);
  await b.service.apply(host('p1', { image: { url: `${b.imageUrl}/disk.raw`, checksum: wrong, checksumType: 'sha256' }, automatedCleaningMode: 'disabled' }));
  const bmh = await b.until('p1', (h) => h.status.errorType === 'provisioning error', 'provisioning error');
  assert.match(bmh.status.errorMessage, /checksum mismatch/);
  assert.match(bmh.status.errorMessage, new RegExp(wrong));
  assert.equal(b.pool.get('p1-bmc').boots.filter((x) => x.device === 'pxe').length, 0, 'no ramdisk boot for a bad image');
  assert.ok((await b.events('p1')).some((e) => e.reason === 'ImageFailed' && e.type === 'Warning'));
});

test('an unreachable image URL is a provisioning error with the URL and status', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('p2', { image: { url: `${b.imageUrl}/missing.raw`, checksum: DISK_SHA256 }, automatedCleaningMode: 'disabled' }));
  const bmh = await b.until('p2', (h) => h.status.errorType === 'provisioning error', 'provisioning error');
  assert.match(bmh.status.errorMessage, /missing\.raw/);
  assert.match(bmh.status.errorMessage, /404/);
});

test('a deploy failing in the ramdisk is a provisioning error with its message, then the host is cleaned and available', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('p3', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256', format: 'raw' } }));
  const cleanId = await b.cleanFirst('p3');
  const command = await b.heartbeat('p3', cleanId);
  assert.equal(command.get('command'), 'deploy');
  assert.equal(command.get('hint_serial'), undefined, 'no hints given, none sent');
  const failure = { command_id: command.get('command_id'), command: 'deploy', status: 'error', message: 'no disk matches the root device hints', details: null, log: ['disks: vda 10 GiB', 'deploy: no disk matches'] };
  assert.equal(await b.result('p3', failure), 200);
  const failed = await b.until('p3', (h) => h.status.errorType === 'provisioning error', 'provisioning error');
  assert.match(failed.status.errorMessage, /no disk matches the root device hints/);
  const warning = (await b.events('p3')).find((e) => e.reason === 'DeployFailed');
  assert.ok(warning !== undefined);
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message, /deploy: no disk matches/, 'the log tail is in the event');

  await b.until('p3', async (h) => h.status.provisioning.state === 'deprovisioning' && (await b.op('p3')).kind === 'clean', 'clean');
  const clean = await b.heartbeat('p3', command.get('command_id') ?? null);
  assert.equal(clean.get('command'), 'clean');
  assert.equal(await b.result('p3', { command_id: clean.get('command_id'), command: 'clean', status: 'ok', message: null, details: CLEAN_DETAILS, log: [] }), 200);
  await b.until('p3', (h) => h.status.provisioning.state === 'available', 'available');
  assert.equal(b.pool.get('p3-bmc').power, 'off');
});

test('a clean failing in the ramdisk is reported with the disk that failed, and restarted', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('p4', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256 } }));
  const cleanId = await b.cleanFirst('p4');
  const deploy = await b.heartbeat('p4', cleanId);
  await b.result('p4', { command_id: deploy.get('command_id'), command: 'deploy', status: 'error', message: 'write failed', details: null, log: [] });
  await b.until('p4', async (h) => h.status.provisioning.state === 'deprovisioning' && (await b.op('p4')).kind === 'clean', 'clean');
  const clean = await b.heartbeat('p4', deploy.get('command_id') ?? null);
  assert.equal(clean.get('command'), 'clean');
  const disks = [{ ...CLEAN_DETAILS.disks[0], status: 'error', message: 'I/O error at sector 0' }];
  await b.result('p4', { command_id: clean.get('command_id'), command: 'clean', status: 'error', message: '1 disk failed', details: { mode: 'metadata', disks }, log: ['clean: vda I/O error'] });
  const bmh = await b.until('p4', (h) => /Cleaning failed/.test(h.status.errorMessage), 'cleaning error');
  assert.match(bmh.status.errorMessage, /1 disk failed/);
  assert.ok((await b.events('p4')).some((e) => e.reason === 'CleanFailed' && /\/dev\/vda: I\/O error at sector 0/.test(e.message)));
  // restartOnFailure: the next deprovision call starts a new clean.
  await b.until('p4', async () => (await b.op('p4')).commandId !== clean.get('command_id'), 'a new clean');
  assert.equal((await b.op('p4')).kind, 'clean');
  const retry = await b.heartbeat('p4', clean.get('command_id') ?? null);
  assert.equal(retry.get('command'), 'clean');
  assert.notEqual(retry.get('command_id'), clean.get('command_id'));
});

test('automatedCleaningMode disabled releases a provisioned host without a clean', async (t) => {
  const b = await bench(t);
  const image = { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256' };
  await b.service.apply(host('p5', { image, automatedCleaningMode: 'disabled' }));
  await b.until('p5', (h) => provisioning(h) && b.pool.get('p5-bmc').boots.length > 0, 'deploy boot');
  const deploy = await b.heartbeat('p5', null);
  await b.result('p5', { command_id: deploy.get('command_id'), command: 'deploy', status: 'ok', message: null, details: DEPLOY_DETAILS, log: [] });
  const bmh = await b.until('p5', (h) => h.status.provisioning.state === 'provisioned', 'provisioned');
  const netboots = b.pool.get('p5-bmc').boots.filter((x) => x.device === 'pxe').length;
  await b.service.apply([host('p5', { automatedCleaningMode: 'disabled' })[1]]);
  await b.until('p5', (h) => h.status.provisioning.state === 'available', 'available');
  assert.equal(b.pool.get('p5-bmc').boots.filter((x) => x.device === 'pxe').length, netboots, 'no ramdisk boot to clean');
  const entry = await b.nodes.get(bmh.metadata.uid);
  assert.equal(entry.local?.op, undefined);
  assert.equal(entry.boot, 'none');
  assert.ok(!(await b.events('p5')).some((e) => e.reason === 'CleaningStarted'));
});

test('bootMode UEFISecureBoot: the deploy switches Secure Boot on through the BMC before booting; deprovisioning switches it back off', async (t) => {
  const b = await bench(t);
  const image = { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256' };
  const bmc = b.pool.get('p8-bmc');
  assert.equal(bmc.secureBoot, false, 'the premise: Secure Boot is off');
  await b.service.apply(host('p8', { image, bootMode: 'UEFISecureBoot', automatedCleaningMode: 'disabled' }));
  await b.until('p8', (h) => provisioning(h) && bmc.boots.length > 0, 'deploy boot');
  assert.equal(bmc.secureBoot, true, 'on before the ramdisk booted');
  const setCalls = (): unknown[] => bmc.calls.filter((c) => c.operation === 'setSecureBoot').map((c) => c.args[0]);
  assert.deepEqual(setCalls(), [true]);
  const deploy = await b.heartbeat('p8', null);
  await b.result('p8', { command_id: deploy.get('command_id'), command: 'deploy', status: 'ok', message: null, details: DEPLOY_DETAILS, log: [] });
  await b.until('p8', (h) => h.status.provisioning.state === 'provisioned', 'provisioned');
  assert.deepEqual(setCalls(), [true], 'switched on once for the whole deploy');
  await b.service.apply([host('p8', { bootMode: 'UEFISecureBoot', automatedCleaningMode: 'disabled' })[1]]);
  await b.until('p8', (h) => h.status.provisioning.state === 'available', 'available');
  assert.equal(bmc.secureBoot, false, 'restored: the deploy had switched it on');
  const reasons = (await b.events('p8')).map((e) => e.reason);
  assert.ok(reasons.includes('SecureBootEnabled') && reasons.includes('SecureBootRestored'), reasons.join(','));
});

test('bootMode UEFISecureBoot on a BMC that cannot switch Secure Boot is a provisioning error; nothing boots insecurely', async (t) => {
  const b = await bench(t);
  const image = { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256, checksumType: 'sha256' };
  const bmc = b.pool.get('p9-bmc');
  bmc.knobs.omit = ['secureBoot'];
  await b.service.apply(host('p9', { image, bootMode: 'UEFISecureBoot', automatedCleaningMode: 'disabled' }));
  const bmh = await b.until('p9', (h) => h.status.errorMessage !== '', 'an error');
  assert.equal(bmh.status.errorType, 'provisioning error');
  assert.match(bmh.status.errorMessage, /bootMode UEFISecureBoot: this BMC cannot switch Secure Boot on .*use a Redfish BMC with a SecureBoot resource, or bootMode UEFI/);
  assert.ok(!bmc.boots.some((x) => x.device === 'pxe'), 'no ramdisk boot');
});

test('a live ISO is cached and network-booted without the ramdisk', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('p6', { image: { url: `${b.imageUrl}/live.iso`, format: 'live-iso' }, automatedCleaningMode: 'disabled' }));
  const bmh = await b.until('p6', (h) => h.status.provisioning.state === 'provisioned', 'provisioned');
  const entry = await b.nodes.get(bmh.metadata.uid);
  const isoSha = createHash('sha256').update(ISO).digest('hex');
  assert.equal(entry.boot, 'live-iso');
  assert.equal(entry.isoUrl, `${b.bootUrl}/images/${isoSha}`);
  assert.equal(entry.local?.op, undefined, 'no ramdisk operation');
  assert.deepEqual(b.pool.get('p6-bmc').bootOverride, { device: 'pxe', persistent: true, mode: 'uefi' });
  assert.ok(Buffer.from(await (await fetch(entry.isoUrl)).arrayBuffer()).equals(ISO), 'assert.equal above narrowed isoUrl to the served URL');
});

test('custom deploy fails clearly: no custom deploy methods in this build', async (t) => {
  const b = await bench(t);
  await b.service.apply(host('p7', { customDeploy: { method: 'install_coreos' }, automatedCleaningMode: 'disabled' }));
  const bmh = await b.until('p7', (h) => h.status.errorType === 'provisioning error', 'provisioning error');
  assert.match(bmh.status.errorMessage, /custom deploy method "install_coreos" is not available/);
});

test('a forced reboot restarts a running deploy with a new command id', async (t) => {
  const b = await bench(t);
  const spec = { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256 }, automatedCleaningMode: 'disabled' };
  await b.service.apply(host('p8', spec));
  await b.until('p8', (h) => provisioning(h) && b.pool.get('p8-bmc').boots.length > 0, 'deploy boot');
  const first = await b.heartbeat('p8', null);
  assert.equal(first.get('command'), 'deploy');
  await b.service.apply([host('p8', spec, { 'reboot.metal3.io': '{"force": true}' })[1]]);
  const bmh = await b.until('p8', async () => (await b.op('p8')).commandId !== first.get('command_id'), 'a new deploy');
  assert.equal((await b.op('p8')).kind, 'deploy');
  assert.equal(b.pool.get('p8-bmc').boots.filter((x) => x.device === 'pxe').length, 2, 'the host network-booted again');
  const again = await b.heartbeat('p8', first.get('command_id') ?? null);
  assert.equal(again.get('command'), 'deploy', 'the restarted deploy is sent again');
  assert.equal(again.get('image_url'), first.get('image_url'));
  assert.ok(bmh.status.provisioning.state === 'provisioning');
});

test('a BMC that cannot be reached when the written disk is to be booted is retried: the deploy is kept, not done again', async (t) => {
  // Found by test/integration/secret-scan.test.ts (one connection reset there): the step was a
  // provisioning error, so the host was deprovisioned and the image written a second time.
  const b = await bench(t);
  await b.service.apply(host('p8', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256 }, automatedCleaningMode: 'disabled' }));
  await b.until('p8', async (h) => h.status.provisioning.state === 'provisioning' && (await b.op('p8')).kind === 'deploy', 'deploy');
  const command = await b.heartbeat('p8', null);
  assert.equal(command.get('command'), 'deploy');
  const bmc = b.pool.get('p8-bmc');
  bmc.knobs.unreachable = true;
  assert.equal(await b.result('p8', { command_id: command.get('command_id'), command: 'deploy', status: 'ok', message: null, details: DEPLOY_DETAILS, log: ['deploy: done'] }), 200);
  await b.until('p8', async () => (await b.events('p8')).some((e) => e.reason === 'TransientFailure' && /booting the written disk/.test(e.message)), 'a transient failure naming the step');
  const during = await b.until('p8', () => true, 'the host');
  assert.equal(during.status.provisioning.state, 'provisioning', 'still provisioning, no error recorded');
  assert.equal(during.status.errorType, '');
  bmc.knobs.unreachable = false;
  await b.until('p8', (h) => h.status.provisioning.state === 'provisioned', 'provisioned');
  const reasons = (await b.events('p8')).map((e) => e.reason);
  assert.equal(reasons.filter((r) => r === 'DeployStarted').length, 1, `one deploy: ${reasons.join(',')}`);
  assert.ok(!reasons.includes('ProvisioningError'), reasons.join(','));
  assert.equal(bmc.boots.filter((x) => x.device === 'pxe').length, 1, 'one ramdisk boot');
});

test('a deploy the ramdisk never answers times out with a diagnosis', async (t) => {
  const b = await bench(t, { deployMs: 1 });
  await b.service.apply(host('p9', { image: { url: `${b.imageUrl}/disk.raw`, checksum: DISK_SHA256 }, automatedCleaningMode: 'disabled' }));
  const bmh = await b.until('p9', (h) => h.status.errorType === 'provisioning error', 'provisioning error');
  assert.match(bmh.status.errorMessage, /deploy timed out .*never called back/);
  assert.match(bmh.status.errorMessage, /Image provisioning failed \(url: http:\/\/127\.0\.0\.1:\d+\/disk\.raw\)/);
});

const HOST_DATA: HostData = {
  objectMeta: { name: 'q0', namespace: 'metal3', uid: 'uid-q0', annotations: {}, labels: {} },
  bmcAddress: 'fake://q0',
  bmcCredentials: { username: 'u', password: 'p' },
  disableCertificateVerification: false,
  bootMACAddress: '00:5c:52:31:3a:9c',
  provisionerID: '',
};

test('progress events are rate-limited per phase; a second prepare of the same image starts nothing', async () => {
  const store = createMemoryStore();
  const clock = { nowMs: 0 };
  let gets = 0;
  let finish: () => void = () => undefined;
  const preparer = new ImagePreparer({
    source: {
      get: (_image, options) => {
        gets += 1;
        for (let i = 1; i <= 50; i += 1) options?.onProgress?.({ phase: 'download', bytes: i * 1024 * 1024, totalBytes: 50 * 1024 * 1024 });
        clock.nowMs += 30_000;
        options?.onProgress?.({ phase: 'download', bytes: 50 * 1024 * 1024, totalBytes: 50 * 1024 * 1024 });
        options?.onProgress?.({ phase: 'convert', bytes: 0, totalBytes: null });
        return new Promise((resolve) => {
          finish = () => {
            resolve({ sha256: 'ab'.repeat(32), path: '/x', sizeBytes: 1, format: 'iso', source: { url: 'http://u/x.iso', format: 'iso', bytes: 1, checksum: null }, lastUsedMs: 0 });
          };
        });
      },
    },
    httpBaseUrl: 'http://192.0.2.1:8081/',
    configDriveDir: '/nonexistent',
    store,
    nowMs: () => clock.nowMs,
  });
  const config = { userData: () => Promise.resolve(''), networkData: () => Promise.resolve(''), metaData: () => Promise.resolve('') };
  const image = { url: 'http://u/x.iso', format: 'live-iso' as const };
  assert.deepEqual(preparer.prepare(HOST_DATA, image, config), { started: true, status: { state: 'running', progress: { phase: 'convert', bytes: 0, totalBytes: null } } });
  assert.equal(preparer.prepare(HOST_DATA, image, config).started, false);
  finish();
  await new Promise((r) => setTimeout(r, 10));
  const status = preparer.prepare(HOST_DATA, image, config).status;
  assert.ok(status.state === 'ready');
  assert.equal(status.prepared.imageUrl, `http://192.0.2.1:8081/images/${'ab'.repeat(32)}`);
  assert.equal(gets, 1);
  const progress = (await store.listEvents({ host: 'q0' })).filter((e) => e.reason === 'ImageProgress').map((e) => e.message);
  assert.deepEqual(progress, ['download http://u/x.iso: 1.0 MiB of 50.0 MiB (2%)', 'download http://u/x.iso: 50.0 MiB of 50.0 MiB (100%)', 'convert http://u/x.iso: 0.0 MiB']);
});

const driveCases: Record<string, { data: [string, string, string]; want?: Record<string, unknown>; error?: RegExp }> = {
  'defaults only': { data: ['', '', ''], want: { uuid: 'uid-q0', name: 'q0', namespace: 'metal3' } },
  'YAML network data and metadata over the defaults': {
    data: ['#cloud-config\n', 'links:\n  - id: eth0\n', '{"local-hostname": "custom"}'],
    want: { uuid: 'uid-q0', name: 'q0', namespace: 'metal3', userData: '#cloud-config\n', networkData: { links: [{ id: 'eth0' }] }, metaData: { 'local-hostname': 'custom' } },
  },
  'metadata that is not a mapping': { data: ['', '', '- a\n- b\n'], error: /metaData secret must hold a mapping/ },
  'network data that does not parse': { data: ['', '{"links": [', ''], error: /networkData secret is neither YAML nor JSON/ },
};
for (const [name, c] of Object.entries(driveCases)) {
  test(`config drive content: ${name}`, async () => {
    const [userData, networkData, metaData] = c.data;
    const got = configDriveContent(HOST_DATA, { userData: () => Promise.resolve(userData), networkData: () => Promise.resolve(networkData), metaData: () => Promise.resolve(metaData) });
    if (c.error !== undefined) await assert.rejects(got, c.error);
    else assert.deepEqual(await got, c.want);
  });
}

test('config drive content: without a networkData secret, the IPv6 network\'s default network data of the boot MAC; a secret wins', async () => {
  const macs: string[] = [];
  const fallback = (mac: string): unknown => { macs.push(mac); return { links: [{ id: 'boot0', ethernet_mac_address: mac }] }; };
  const secrets = (networkData: string): Parameters<typeof configDriveContent>[1] => ({ userData: () => Promise.resolve(''), networkData: () => Promise.resolve(networkData), metaData: () => Promise.resolve('') });
  const got = await configDriveContent({ ...HOST_DATA, bootMACAddress: '52:54:00:00:06:01' }, secrets(''), fallback);
  assert.deepEqual(got.networkData, { links: [{ id: 'boot0', ethernet_mac_address: '52:54:00:00:06:01' }] });
  const own = await configDriveContent({ ...HOST_DATA, bootMACAddress: '52:54:00:00:06:01' }, secrets('links: []\n'), fallback);
  assert.deepEqual(own.networkData, { links: [] });
  assert.deepEqual(macs, ['52:54:00:00:06:01']);
  assert.equal((await configDriveContent(HOST_DATA, secrets(''), () => undefined)).networkData, undefined);
});
