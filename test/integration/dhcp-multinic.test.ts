/**
 * Multi-NIC: the server namespace has two interfaces on two segments and serves DHCP on one.
 * A client on the other segment gets nothing — its DISCOVERs do reach the server namespace (a
 * plain, unbound socket on port 67 there hears them) but never rackside's interface-bound
 * socket — and the client on the provisioning segment gets a lease, whose broadcast replies
 * leave only by the provisioning interface (a listener on the other segment hears none).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DHCP_TEST_CLIENT, runUdhcpc } from '../helpers/dhcp-peers.js';
import { RAMDISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab, waitFor, type LabProcess } from '../helpers/netns.js';

const GOOD_MAC = '52:54:00:81:00:01';
const STRAY_MAC = '52:54:00:82:00:01';

interface Heard {
  replies: { op: number; type?: string; mac: string; from: string }[];
}

async function heard(p: LabProcess): Promise<Heard> {
  await p.exited;
  return JSON.parse(p.stdout()) as Heard;
}

test('DHCP on one of two interfaces: the other segment gets nothing, the provisioning segment gets a lease', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['udhcpc'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp-multinic-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const prov = await lab.bridge('prov');
  const other = await lab.bridge('other');
  const srv = await lab.namespace('srv');
  const good = await lab.namespace('good');
  const watch = await lab.namespace('watch');
  const stray = await lab.namespace('stray');
  await lab.attach(srv, prov, { ifname: 'eth0', address: '10.81.0.1/24' });
  await lab.attach(srv, other, { ifname: 'eth1', address: '10.82.0.1/24' });
  await lab.attach(good, prov, { mac: GOOD_MAC });
  await lab.attach(watch, prov, { address: '10.81.0.9/24' });
  await lab.attach(stray, other, { mac: STRAY_MAC });
  const server = await startDhcpServerProcess(lab, srv, {
    mode: 'full',
    interface: 'eth0',
    serverAddress: '10.81.0.1',
    // A range on each segment: were the other segment's DISCOVER heard, it would be answered.
    ranges: [
      { subnet: '10.81.0.0/24', first: '10.81.0.100', last: '10.81.0.150' },
      { subnet: '10.82.0.0/24', first: '10.82.0.100', last: '10.82.0.150' },
    ],
    stateDir: join(dir, 'state'),
    defaultTarget: RAMDISK_BOOT,
  });
  const unbound67 = lab.spawn(srv, process.execPath, [DHCP_TEST_CLIENT, 'listen', JSON.stringify({ port: 67, ms: 6000 })]);
  await waitFor(() => unbound67.stderr().includes('listening'), 'the port-67 listener to bind');
  const strayLease = await runUdhcpc(lab, stray, join(dir), { tries: 2, timeoutSeconds: 1 });
  assert.equal(strayLease, undefined, 'the client on the other segment got no lease');

  const strayEars = lab.spawn(stray, process.execPath, [DHCP_TEST_CLIENT, 'listen', JSON.stringify({ port: 68, ms: 3000 })]);
  const watchEars = lab.spawn(watch, process.execPath, [DHCP_TEST_CLIENT, 'listen', JSON.stringify({ port: 68, ms: 3000 })]);
  await Promise.all([unbound67, strayEars, watchEars].map((p) => waitFor(() => p.stderr().includes('listening') || p.child.exitCode !== null, 'a listener to bind')));
  const lease = await runUdhcpc(lab, good, dir, { broadcast: true, vendorClass: 'PXEClient:Arch:00000:UNDI:002001' });
  assert.ok(lease, 'the client on the provisioning segment got a lease');
  assert.match(lease.ip ?? '', /^10\.81\.0\.1\d\d$/);

  const [atServer, onStray, onWatch] = await Promise.all([heard(unbound67), heard(strayEars), heard(watchEars)]);
  assert.ok(
    atServer.replies.some((r) => r.op === 1 && r.mac === STRAY_MAC),
    'the stray DISCOVERs did reach the server namespace (an unbound socket hears them)',
  );
  assert.deepEqual(onStray.replies, [], 'no reply left by the other interface');
  assert.deepEqual(
    onWatch.replies.filter((r) => r.op === 2).map((r) => `${r.type ?? '?'} ${r.mac}`),
    [`offer ${GOOD_MAC}`, `ack ${GOOD_MAC}`],
    `the broadcast replies went out on the provisioning segment; server saw: ${server.events().map((e) => `${e.message} ${e.detail ?? ''}`).join(' / ')}`,
  );
  const stats = await server.stop();
  assert.equal(stats.received['67'], 2, 'rackside heard only DISCOVER and REQUEST of the provisioning client');
  assert.deepEqual(server.events().map((e) => e.mac).filter((m) => m !== GOOD_MAC), []);
});
