/**
 * The DHCP server under bad input and scarcity, with real sockets in a namespace: malformed
 * datagrams (unicast and broadcast) are dropped and counted and the server keeps serving a
 * real client; more clients than addresses get exactly one OFFER per address, the rest
 * silence, and everything (clients, server stop, final stats) finishes cleanly.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DHCP_TEST_CLIENT, runUdhcpc } from '../helpers/dhcp-peers.js';
import { RAMDISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab } from '../helpers/netns.js';

/** A server namespace and an addressed client namespace on one bridge, the server on `range`. */
async function startLab(t: Parameters<typeof NetnsLab.create>[0], tools: string[], range: { first: string; last: string }) {
  const lab = await NetnsLab.create(t, { tools });
  if (lab === undefined) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp-robust-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lan = await lab.bridge('lan');
  const srv = await lab.namespace('srv');
  const client = await lab.namespace('client');
  await lab.attach(srv, lan, { address: '10.83.0.1/24' });
  await lab.attach(client, lan, { address: '10.83.0.9/24' });
  // Without a default route, limited broadcast needs a route of its own.
  await lab.exec(client, 'ip', ['route', 'add', '255.255.255.255/32', 'dev', 'eth0']);
  const server = await startDhcpServerProcess(lab, srv, {
    mode: 'full',
    interface: 'eth0',
    serverAddress: '10.83.0.1',
    ranges: [{ subnet: '10.83.0.0/24', ...range }],
    stateDir: join(dir, 'state'),
    defaultTarget: RAMDISK_BOOT,
  });
  return { lab, dir, lan, srv, client, server };
}

test('malformed datagrams are dropped and counted; a real client still gets a lease', async (t) => {
  const env = await startLab(t, ['udhcpc'], { first: '10.83.0.100', last: '10.83.0.150' });
  if (env === undefined) return;
  const { lab, dir, lan, client, server } = env;
  for (const to of ['10.83.0.1', '255.255.255.255']) {
    const run = await lab.exec(client, process.execPath, [DHCP_TEST_CLIENT, 'garbage', JSON.stringify({ to, port: 67, count: 50 })]);
    assert.deepEqual(JSON.parse(run.stdout), { sent: 50 });
  }
  const fresh = await lab.namespace('fresh');
  await lab.attach(fresh, lan, { mac: '52:54:00:83:00:01' });
  const lease = await runUdhcpc(lab, fresh, dir, { vendorClass: 'PXEClient:Arch:00000:UNDI:002001' });
  assert.match(lease?.ip ?? '', /^10\.83\.0\.1\d\d$/);
  const stats = await server.stop();
  assert.equal(stats.received['67'], 102, '100 garbage datagrams, then DISCOVER and REQUEST');
  // Of each five: empty, 10 bytes, 300 x 0xff (bad op), a cut option, a bare header: all malformed.
  assert.equal(stats.dropped.malformed, 100);
  assert.deepEqual(stats.replies, { offer: 1, ack: 1 });
});

test('pool exhaustion: 12 clients for 4 addresses get 4 offers and silence, and all ends cleanly', async (t) => {
  const env = await startLab(t, [], { first: '10.83.0.100', last: '10.83.0.103' });
  if (env === undefined) return;
  const { lab, client, server } = env;
  const run = await lab.exec(client, process.execPath, [DHCP_TEST_CLIENT, 'storm', JSON.stringify({ count: 12, macPrefix: '52:54:00:83:01', ms: 1500 })], { timeoutMs: 20_000 });
  const { offers } = JSON.parse(run.stdout) as { offers: { yiaddr: string; mac: string }[] };
  assert.deepEqual(offers.map((o) => o.yiaddr).sort(), ['10.83.0.100', '10.83.0.101', '10.83.0.102', '10.83.0.103']);
  assert.equal(new Set(offers.map((o) => o.mac)).size, 4);
  // A second storm while the offers are still held: nothing new is offered, nothing loops.
  const again = await lab.exec(client, process.execPath, [DHCP_TEST_CLIENT, 'storm', JSON.stringify({ count: 12, macPrefix: '52:54:00:83:02', ms: 1000 })], { timeoutMs: 20_000 });
  assert.deepEqual((JSON.parse(again.stdout) as { offers: unknown[] }).offers, []);
  const stats = await server.stop();
  assert.equal(stats.received['67'], 24);
  assert.equal(stats.replies.offer, 4);
  assert.equal(stats.ignored['pool-exhausted'], 20);
  assert.equal(stats.inFlight, 0);
  assert.ok(server.logs().filter((l) => l.includes('pool exhausted')).length <= 1, 'the exhaustion warning is rate-limited');
});
