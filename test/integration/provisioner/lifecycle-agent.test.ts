/**
 * Lifecycle paths of the metal3 acceptance list that need no guest boot, through a real agent
 * (in-process, local provisioner, real config) with the real Redfish driver talking to virtual
 * Redfish BMCs (test/lab/redfish, plain HTTP on loopback, in-memory hosts), and the real CLI
 * (`node dist/agent/cli.js`) against its management API:
 *   - an externally provisioned host whose OS is running is adopted (`externally provisioned`,
 *     then `provisioned` with its image once the flag is cleared) without a power or boot
 *     override request at the BMC; `rackside detach` and `rackside attach` then change nothing at
 *     the BMC either (its request log has no write); `rackside delete host --wait` removes the
 *     record and powers the host off;
 *   - an image whose checksum does not match fails provisioning (`provisioning error`, shown by
 *     `rackside describe host`) before the host is powered, and removing the image deprovisions
 *     it back to available.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { test, type TestContext } from 'node:test';
import type { BareMetalHost } from '../../../agent/host/types.js';
import { removeDir, runCli, scratchDir } from '../../helpers/agent-process.js';
import { hostManifests } from '../../helpers/host-harness.js';
import { startLocalAgent, waitFor } from '../../helpers/local-agent.js';
import type { MemoryHostBackend } from '../../lab/redfish/backend.js';
import { startVirtualRedfishBmc, type VirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';

interface Bmc {
  bmc: VirtualRedfishBmc;
  backend: MemoryHostBackend;
  address: string;
  /** Requests that change something at the BMC (not GETs, not the session login/logout), as `METHOD path`. */
  writes(): string[];
}

async function startBmc(t: TestContext): Promise<Bmc> {
  const bmc = await startVirtualRedfishBmc({ https: false });
  t.after(() => bmc.stop());
  const backend = bmc.backends.get('1') as MemoryHostBackend | undefined;
  assert.ok(backend !== undefined);
  return {
    bmc,
    backend,
    address: `redfish+http://${bmc.host}/redfish/v1/Systems/1`,
    writes: () => bmc.state.requests.filter((r) => r.method !== 'GET' && !r.path.includes('/SessionService/Sessions')).map((r) => `${r.method} ${r.path}`),
  };
}

function manifests(name: string, bmc: Bmc, mac: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): unknown[] {
  const [secret, host] = hostManifests(name, { bootMACAddress: mac, ...spec }, annotations) as [unknown, { spec: { bmc: { address: string } } }];
  host.spec.bmc.address = bmc.address;
  return [secret, host];
}

interface Api {
  apply(docs: unknown[]): Promise<void>;
  host(name: string): Promise<BareMetalHost>;
  waitHost(name: string, what: string, done: (h: BareMetalHost) => boolean): Promise<BareMetalHost>;
}

function api(base: string): Api {
  const self: Api = {
    async apply(docs) {
      const res = await fetch(`${base}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
      assert.equal(res.status, 200, await res.text());
    },
    async host(name) {
      const res = await fetch(`${base}/api/v1/hosts/${name}`);
      assert.equal(res.status, 200, `GET host ${name}: ${res.status}`);
      return (await res.json()) as BareMetalHost;
    },
    async waitHost(name, what, done) {
      let last: BareMetalHost | undefined;
      try {
        return await waitFor(`${name}: ${what}`, async () => {
          last = await self.host(name);
          return done(last) ? last : undefined;
        }, 60_000);
      } catch (error) {
        const s = last?.status;
        throw new Error(`${String(error)}; last: ${s?.provisioning.state ?? '?'}/${s?.operationalStatus ?? '?'} ${s?.errorType ?? ''} ${s?.errorMessage ?? ''}`);
      }
    },
  };
  return self;
}

test('an externally provisioned host is adopted, detached, attached and deleted with no BMC write until the delete', async (t) => {
  const dir = await scratchDir('lifecycle-ext');
  t.after(() => removeDir(dir));
  const b = await startBmc(t);
  b.backend.power = 'On'; // its OS runs
  const { api: base } = await startLocalAgent(t, dir);
  const a = api(base);
  const image = { url: 'http://192.0.2.10/os.qcow2', checksum: 'a'.repeat(64), checksumType: 'sha256', format: 'qcow2' };

  await a.apply(manifests('ext-1', b, '52:54:00:cd:00:01', { externallyProvisioned: true, online: true, image, automatedCleaningMode: 'disabled' }));
  let h = await a.waitHost('ext-1', 'externally provisioned and powered on', (x) => x.status.provisioning.state === 'externally provisioned' && x.status.poweredOn && x.status.operationalStatus === 'OK');
  assert.equal(h.status.errorMessage, '');

  // Cleared: adopted as a normally provisioned host carrying its image.
  await a.apply(manifests('ext-1', b, '52:54:00:cd:00:01', { externallyProvisioned: false, online: true, image, automatedCleaningMode: 'disabled' }));
  h = await a.waitHost('ext-1', 'provisioned', (x) => x.status.provisioning.state === 'provisioned');
  assert.equal(h.status.errorMessage, '');
  assert.deepEqual(h.status.provisioning.image, image, 'status.provisioning.image is the spec image');
  assert.deepEqual(b.writes(), [], 'no power, boot override or any other write at the BMC while adopting');
  assert.equal(b.backend.power, 'On', 'the guest still runs');
  assert.deepEqual(b.backend.boots, [], 'the guest was never booted');

  // Detach and attach with the real CLI: the BMC sees no write at all.
  const writesBefore = b.writes();
  const requestsBefore = b.bmc.state.requests.length;
  const detach = await runCli(base, ['detach', 'ext-1']);
  assert.equal(detach.code, 0, detach.stderr);
  h = await a.waitHost('ext-1', 'detached', (x) => x.status.operationalStatus === 'detached');
  assert.equal(h.status.provisioning.state, 'provisioned');
  const requestsWhileDetached = b.bmc.state.requests.length;
  const attach = await runCli(base, ['attach', 'ext-1']);
  assert.equal(attach.code, 0, attach.stderr);
  h = await a.waitHost('ext-1', 'attached again', (x) => x.status.operationalStatus === 'OK');
  assert.equal(h.status.provisioning.state, 'provisioned');
  assert.equal(h.status.errorMessage, '');
  assert.deepEqual(b.writes(), writesBefore, 'detach and attach wrote nothing to the BMC');
  assert.ok(requestsWhileDetached >= requestsBefore, 'the request log only grows');
  assert.equal(b.backend.power, 'On');
  assert.deepEqual(b.backend.boots, []);

  // Delete: the record disappears and the host is powered off.
  const del = await runCli(base, ['delete', 'host', 'ext-1', '--wait', '--timeout', '60s'], undefined, 90_000);
  assert.equal(del.code, 0, `${del.stdout}\n${del.stderr}`);
  assert.equal((await fetch(`${base}/api/v1/hosts/ext-1`)).status, 404, 'the host record is gone');
  assert.equal(b.backend.power, 'Off', 'powered off before the delete');
  assert.ok(b.writes().some((w) => w.endsWith('/ComputerSystem.Reset')), 'the power-off went through the BMC');
});

test('a wrong image checksum: provisioning error shown by describe, then deprovisioned to available without a boot', async (t) => {
  const dir = await scratchDir('lifecycle-sum');
  t.after(() => removeDir(dir));
  const disk = randomBytes(64 * 1024);
  const wrong = createHash('sha256').update('not the image').digest('hex');
  const upstream = createServer((req, res) => {
    if (req.url === '/os.raw') res.writeHead(200, { 'content-length': disk.length }).end(disk);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    upstream.closeAllConnections();
    upstream.close();
  });
  const address = upstream.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/os.raw`;
  const b = await startBmc(t);
  const { api: base } = await startLocalAgent(t, dir);
  const a = api(base);
  const spec = { online: false, automatedCleaningMode: 'disabled', rootDeviceHints: { deviceName: '/dev/vda' } };
  const noInspect = { 'inspect.metal3.io': 'disabled' };

  await a.apply(manifests('bad-sum', b, '52:54:00:cd:00:02', spec, noInspect));
  await a.waitHost('bad-sum', 'available', (x) => x.status.provisioning.state === 'available');
  await a.apply(manifests('bad-sum', b, '52:54:00:cd:00:02', { ...spec, online: true, image: { url, checksum: wrong, checksumType: 'sha256', format: 'raw' } }, noInspect));
  const failed = await a.waitHost('bad-sum', 'a provisioning error', (x) => x.status.errorType === 'provisioning error');
  assert.equal(failed.status.provisioning.state, 'provisioning');
  assert.match(failed.status.errorMessage, /checksum/i);
  t.diagnostic(`boots after the failure: ${JSON.stringify(b.backend.boots)}; writes: ${JSON.stringify(b.writes())}`);
  assert.ok(!b.backend.boots.some((x) => x.target === 'Pxe' || x.target === 'Cd'), `no ramdisk boot for an image that failed its checksum: ${JSON.stringify(b.backend.boots)}`);

  // The host retries (upstream: provisioning error → deprovisioning → available → provisioning,
  // up to MaxProvisioningRetries), so the error is in status only between retries: describe until
  // it shows it.
  let described = await runCli(base, ['describe', 'host', 'bad-sum']);
  for (let i = 0; i < 40 && !/provisioning error/.test(described.stdout); i++) {
    await new Promise((r) => setTimeout(r, 100));
    described = await runCli(base, ['describe', 'host', 'bad-sum']);
  }
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /provisioning error/);
  assert.ok(described.stdout.includes(wrong), `describe shows the error naming the expected checksum:\n${described.stdout}`);

  // Removing the image deprovisions the host (cleaning disabled) back to available.
  await a.apply(manifests('bad-sum', b, '52:54:00:cd:00:02', spec, noInspect));
  const seen = new Set<string>();
  const back = await a.waitHost('bad-sum', 'available again', (x) => {
    seen.add(x.status.provisioning.state);
    return x.status.provisioning.state === 'available';
  });
  assert.equal(back.status.errorMessage, '');
  const timeline = (await (await fetch(`${base}/api/v1/hosts/bad-sum/timeline?limit=500`)).json()) as { items: { reason: string; message: string }[] };
  assert.ok(
    timeline.items.some((e) => e.reason === 'ProvisioningStateChanged' && e.message.includes('provisioning → deprovisioning')),
    `provisioning → deprovisioning in the timeline (polled states: ${[...seen].join(', ')})`,
  );
  assert.ok(!b.backend.boots.some((x) => x.target === 'Pxe' || x.target === 'Cd'), `no ramdisk boot: ${JSON.stringify(b.backend.boots)}`);
});
