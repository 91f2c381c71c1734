/**
 * Relay mode through ISC dhcrelay from a second segment: giaddr selects the second range, the
 * reply is unicast to the relay on port 67, and option 82 comes back unchanged — dhcrelay runs
 * with `-a -D`, so it adds its agent option and drops any reply whose option 82 does not match.
 * A crafted relay packet then checks the echo byte for byte.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DHCP_TEST_CLIENT, runUdhcpc } from '../helpers/dhcp-peers.js';
import { RAMDISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';

const CLIENT_MAC = '52:54:00:80:00:01';

test('a client behind dhcrelay gets an address from the relayed range, with option 82 echoed', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhcrelay', 'udhcpc'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp-relay-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const prov = await lab.bridge('prov');
  const remote = await lab.bridge('remote');
  const srv = await lab.namespace('srv');
  const relay = await lab.namespace('relay');
  const client = await lab.namespace('client');
  await lab.attach(srv, prov, { address: '10.79.0.1/24' });
  await lab.attach(relay, prov, { ifname: 'eth0', address: '10.79.0.2/24' });
  await lab.attach(relay, remote, { ifname: 'eth1', address: '10.80.0.1/24' });
  await lab.attach(client, remote, { mac: CLIENT_MAC });
  await lab.addRoute(srv, '10.80.0.0/24', '10.79.0.2');
  const server = await startDhcpServerProcess(lab, srv, {
    mode: 'full',
    interface: 'eth0',
    serverAddress: '10.79.0.1',
    ranges: [
      { subnet: '10.79.0.0/24', first: '10.79.0.100', last: '10.79.0.150' },
      { subnet: '10.80.0.0/24', first: '10.80.0.100', last: '10.80.0.150', router: '10.80.0.1' },
    ],
    stateDir: join(dir, 'state'),
    defaultTarget: RAMDISK_BOOT,
  });
  const dhcrelay = lab.spawn(relay, 'dhcrelay', ['-4', '-d', '-a', '-D', '-pf', join(dir, 'dhcrelay.pid'), '-iu', 'eth0', '-id', 'eth1', '10.79.0.1']);
  await waitFor(() => dhcrelay.stderr().includes('Sending on') || dhcrelay.child.exitCode !== null, 'dhcrelay to start');
  assert.equal(dhcrelay.child.exitCode, null, `dhcrelay failed: ${dhcrelay.stderr()}`);

  const lease = await runUdhcpc(lab, client, dir, { vendorClass: 'PXEClient:Arch:00000:UNDI:002001' });
  assert.ok(lease, `udhcpc got no lease through the relay; dhcrelay said:\n${dhcrelay.stderr()}`);
  assert.match(lease.ip ?? '', /^10\.80\.0\.1\d\d$/, 'the giaddr range');
  assert.equal(lease.router, '10.80.0.1');
  assert.equal(lease.boot_file, 'undionly.kpxe');
  assert.equal(lease.serverid, '10.79.0.1');
  // Events arrive through the child's stdout, possibly after the client has its lease.
  const offer = await server.waitForEvent((e) => e.message === 'offer', 'the relayed OFFER', 5000);
  assert.equal(offer.giaddr, '10.80.0.1');
  assert.match(offer.detail ?? '', /sent relay/);
  await dhcrelay.stop();

  // The same exchange by hand: a relayed DISCOVER with option 82 from the relay's namespace.
  const relayInfoHex = '0104' + Buffer.from('eth1').toString('hex') + '0206020000000001';
  const run = await lab.exec(relay, process.execPath, [DHCP_TEST_CLIENT, 'relay', JSON.stringify({ giaddr: '10.80.0.1', server: '10.79.0.1', mac: '52:54:00:80:00:02', relayInfoHex })]);
  const crafted = JSON.parse(run.stdout) as { offer?: { type: string; from: string; yiaddr: string; giaddr: string; relayInfoHex?: string } };
  assert.equal(crafted.offer?.type, 'offer');
  assert.equal(crafted.offer.from, '10.79.0.1:67', 'unicast from the server port');
  assert.equal(crafted.offer.giaddr, '10.80.0.1');
  assert.match(crafted.offer.yiaddr, /^10\.80\.0\.1\d\d$/);
  assert.equal(crafted.offer.relayInfoHex, relayInfoHex, 'option 82 echoed unchanged');
  const stats = await server.stop();
  assert.equal(stats.dropped['send-error'], undefined);
});
