/**
 * Proxy mode beside the site's own DHCP server (dnsmasq, addresses only, in another namespace
 * on the same bridge): a PXE client gets its address from dnsmasq and its boot file from
 * rackside — the proxy OFFER (yiaddr 0, option 60 PXEClient) and the port-4011 boot-server ACK —
 * while rackside never hands out an address and leaves the REQUEST meant for dnsmasq alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DHCP_TEST_CLIENT } from '../helpers/dhcp-peers.js';
import { RAMDISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';

const MAC = '52:54:00:78:00:01';

interface Offer {
  type?: string;
  yiaddr: string;
  siaddr: string;
  file: string;
  serverId?: string;
  vendorClass?: string;
  from: string;
}

test('a PXE client gets its address from dnsmasq and its boot file from rackside, including the port-4011 step', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dnsmasq'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp-proxy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lan = await lab.bridge('lan');
  const srv = await lab.namespace('srv');
  const site = await lab.namespace('site');
  const client = await lab.namespace('client');
  await lab.attach(srv, lan, { address: '10.78.0.1/24' });
  await lab.attach(site, lan, { address: '10.78.0.2/24' });
  await lab.attach(client, lan, { mac: MAC });
  // An unaddressed client needs a route for its limited broadcasts (a firmware's UDP stack needs none).
  await lab.exec(client, 'ip', ['route', 'add', '255.255.255.255/32', 'dev', 'eth0']);
  const leases = join(dir, 'dnsmasq.leases');
  const dnsmasq = lab.spawn(site, 'dnsmasq', [
    '--no-daemon', '--conf-file=/dev/null', '--port=0', '--bind-interfaces', '--interface=eth0', '--user=root', '--group=root',
    '--dhcp-range=10.78.0.100,10.78.0.150,255.255.255.0,10m', '--no-ping', `--dhcp-leasefile=${leases}`, `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--log-dhcp', '--log-facility=-',
  ]);
  await waitFor(() => dnsmasq.stderr().includes('DHCP, IP range') || dnsmasq.child.exitCode !== null, 'dnsmasq to start');
  assert.equal(dnsmasq.child.exitCode, null, `dnsmasq failed: ${dnsmasq.stderr()}`);
  const server = await startDhcpServerProcess(lab, srv, {
    mode: 'proxy',
    interface: 'eth0',
    serverAddress: '10.78.0.1',
    targets: { [MAC]: RAMDISK_BOOT },
  });

  const run = await lab.exec(client, process.execPath, [DHCP_TEST_CLIENT, 'pxe-proxy', JSON.stringify({ ifname: 'eth0', mac: MAC, bootServer: '10.78.0.1' })], { timeoutMs: 30_000 });
  const result = JSON.parse(run.stdout) as { error?: string; addressOffer?: Offer; proxyOffer?: Offer; ack?: Offer; bootAck?: Offer };
  assert.equal(result.error, undefined, run.stdout);
  const { addressOffer, proxyOffer, ack, bootAck } = result;
  assert.ok(addressOffer && proxyOffer && ack && bootAck, run.stdout);
  // The address comes from dnsmasq only.
  assert.equal(addressOffer.serverId, '10.78.0.2');
  assert.match(ack.yiaddr, /^10\.78\.0\.1\d\d$/);
  assert.equal(ack.serverId, '10.78.0.2');
  // rackside's proxy OFFER: boot information, no address.
  assert.equal(proxyOffer.serverId, '10.78.0.1');
  assert.equal(proxyOffer.yiaddr, '0.0.0.0');
  assert.equal(proxyOffer.vendorClass, 'PXEClient');
  assert.equal(proxyOffer.file, 'ipxe.efi');
  assert.equal(proxyOffer.siaddr, '10.78.0.1');
  // The boot-server exchange on 4011, answered to the client's new address.
  assert.equal(bootAck.from, '10.78.0.1:4011');
  assert.equal(bootAck.file, 'ipxe.efi');
  assert.equal(bootAck.yiaddr, '0.0.0.0');
  assert.equal(bootAck.vendorClass, 'PXEClient');
  assert.match(await readFile(leases, 'utf8'), new RegExp(`${MAC} ${ack.yiaddr}`));
  const stats = await server.stop();
  assert.equal(stats.replies.offer, 1);
  assert.equal(stats.replies.ack, 1, 'only the 4011 ACK');
  assert.equal(stats.ignored['other-server'], 1, 'the REQUEST for dnsmasq is left alone');
  assert.equal(stats.received['4011'], 1);
});
