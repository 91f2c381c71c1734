/**
 * The DHCPv6 server with real peers in network namespaces (IPv6 switched on for them, DAD off
 * so link-local and static addresses are usable at once): ISC `dhclient -6` gets an address of
 * the range with its DUID-LLT and again with a DUID-LL — the same address, since the host is
 * its MAC —, releases it and renews it; through ISC `dhcrelay -6` on another segment a relayed
 * client gets an address of its own link's range (its MAC read from the EUI-64 link-local
 * peer-address); behind dnsmasq as the relay, a client with a random link-local address is
 * known by the relay's option 79. The lease table is read from the
 * server. (busybox `udhcpc6` is not built into Debian 12's busybox packages; its request
 * layout is covered by the codec's golden tests.)
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';
import { dhclient6, dhclient6Release, enableIpv6, startChild } from './dhcp6-peers.js';

const CLIENT_MAC = '52:54:00:61:00:01';
const RELAYED_MAC = '52:54:00:62:00:01';
const TARGET: BootTarget = { plan: { kind: 'local-disk' } };

/** Server (eth0 fd00:61::1) and client (CLIENT_MAC) on one bridge, IPv6 on; `suffix` names the namespaces. */
async function linkLab(lab: NetnsLab, suffix: string): Promise<{ srv: string; client: string }> {
  const prov = await lab.bridge(`prov6${suffix}`);
  const srv = await lab.namespace(`srv6${suffix}`);
  const client = await lab.namespace(`cli6${suffix}`);
  for (const ns of [srv, client]) await enableIpv6(lab, ns, []);
  await lab.attach(srv, prov, { mac: '02:00:00:61:00:fe' });
  await lab.attach(client, prov, { mac: CLIENT_MAC });
  await enableIpv6(lab, srv, ['eth0']);
  await enableIpv6(lab, client, ['eth0']);
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:61::1/64', 'dev', 'eth0', 'nodad']);
  return { srv, client };
}

test('dhclient -6 (DUID-LLT, then DUID-LL) binds one address of the range, kept by MAC in the lease table', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhclient'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { srv, client } = await linkLab(lab, '');
  const server = await startChild(lab, srv, {
    interface: 'eth0', serverAddress: 'fd00:61::1', ranges: [{ subnet: 'fd00:61::/64', first: 'fd00:61::100', last: 'fd00:61::13f' }],
    stateDir: join(dir, 'state'), targets: { [CLIENT_MAC]: TARGET },
  });
  const first = await dhclient6(lab, client, dir, 'LLT');
  assert.match(first.new_ip6_address ?? '', /^fd00:61::1[0-3][0-9a-f]$/);
  const second = await dhclient6(lab, client, dir, 'LL');
  assert.equal(second.new_ip6_address, first.new_ip6_address, 'a new DUID, the same host, the same address');
  const leases = await server.leases();
  assert.deepEqual(leases.map((l) => [l.mac, l.address, l.state]), [[CLIENT_MAC, first.new_ip6_address, 'bound']]);
  const events = server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: { message: string; detail: string } }).event.detail);
  assert.ok(events.includes('dhcpv6 solicit (MAC by link-local-eui64)') && events.includes('dhcpv6 advertise') && events.includes('dhcpv6 request (MAC by link-local-eui64)'), events.join(', '));
  await dhclient6Release(lab, client, dir, 'LL');
  await waitFor(async () => (await server.leases()).length === 0, 'the Release to free the lease');
  // A malformed datagram (a Solicit whose option runs past the end) is dropped and counted.
  await lab.exec(client, process.execPath, ['-e', "const s=require('node:dgram').createSocket('udp6');s.send(Buffer.from('01000001000100ff00','hex'),547,'ff02::1:2%eth0',()=>s.close());"]);
  const dropped = await waitFor(async () => ((await server.stats()).dropped as Record<string, number> | undefined)?.malformed, 'the malformed datagram to be counted');
  assert.equal(dropped, 1);
});

test('dhclient -6 renews its binding at T1 and keeps its address', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhclient'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-renew-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { srv, client } = await linkLab(lab, 'n');
  // A 4-second binding: T1 = 2 s, so dhclient renews within the test.
  const server = await startChild(lab, srv, {
    interface: 'eth0', serverAddress: 'fd00:61::1', ranges: [{ subnet: 'fd00:61::/64', first: 'fd00:61::100', last: 'fd00:61::13f' }],
    stateDir: join(dir, 'state'), targets: { [CLIENT_MAC]: TARGET }, leaseSeconds: 4,
  });
  const renewed = await dhclient6(lab, client, dir, 'LLT', 'RENEW6');
  assert.match(renewed.new_ip6_address ?? '', /^fd00:61::1[0-3][0-9a-f]$/);
  assert.equal(renewed.old_ip6_address, renewed.new_ip6_address, 'the same address after the Renew');
  const details = server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: { detail: string } }).event.detail);
  assert.ok(details.some((d) => d.startsWith('dhcpv6 renew')), details.join(', '));
});

/** The namespaces of a relayed DHCPv6 lab: the server's, the relay's and the client's. */
interface RelayLab {
  srv: string;
  relay: string;
  client: string;
}

/**
 * Server and relay on a provisioning bridge (relay eth0 fd00:61::2), the relay and the client on a
 * remote bridge (relay eth1 fd00:62::1, the relay's link-address); `suffix` names the namespaces.
 * `randomClientIds`: the client's link-local address holds no MAC (addr_gen_mode 3).
 */
async function relayLab(lab: NetnsLab, suffix: string, randomClientIds = false): Promise<RelayLab> {
  const prov = await lab.bridge(`prov6${suffix}`);
  const remote = await lab.bridge(`rem6${suffix}`);
  const srv = await lab.namespace(`srv6${suffix}`);
  const relay = await lab.namespace(`rel6${suffix}`);
  const client = await lab.namespace(`cli6${suffix}`);
  for (const ns of [srv, relay, client]) await enableIpv6(lab, ns, []);
  if (randomClientIds) await lab.sysctl(client, { 'net.ipv6.conf.default.addr_gen_mode': '3' });
  await lab.attach(srv, prov, { mac: '02:00:00:61:00:fe' });
  await lab.attach(relay, prov, { ifname: 'eth0' });
  await lab.attach(relay, remote, { ifname: 'eth1' });
  await lab.attach(client, remote, { mac: RELAYED_MAC });
  await enableIpv6(lab, srv, ['eth0']);
  await enableIpv6(lab, relay, ['eth0', 'eth1']);
  if (randomClientIds) await lab.sysctl(client, { 'net.ipv6.conf.eth0.addr_gen_mode': '3' });
  await enableIpv6(lab, client, ['eth0']);
  await lab.exec(relay, 'ip', ['addr', 'add', 'fd00:61::2/64', 'dev', 'eth0', 'nodad']);
  await lab.exec(relay, 'ip', ['addr', 'add', 'fd00:62::1/64', 'dev', 'eth1', 'nodad']);
  return { srv, relay, client };
}

test('a client behind dhcrelay -6 gets an address of its own link, the reply going back through the relay', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhclient', 'dhcrelay'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-relay-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { srv, relay, client } = await relayLab(lab, 'r');
  // The server starts before its address exists (as at boot, during DAD): it warns, and opens the relay socket once the address is there.
  const server = await startChild(lab, srv, {
    interface: 'eth0', serverAddress: 'fd00:61::1', ranges: [{ subnet: 'fd00:61::/64', first: 'fd00:61::100', last: 'fd00:61::13f' }, { subnet: 'fd00:62::/64', first: 'fd00:62::100', last: 'fd00:62::13f' }],
    stateDir: join(dir, 'state'), targets: { [RELAYED_MAC]: TARGET },
  });
  assert.ok(server.lines.some((l) => l.type === 'log' && /not usable on eth0 yet/.test(l.message ?? '')), 'the missing address is reported');
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:61::1/64', 'dev', 'eth0', 'nodad']);
  await waitFor(() => server.lines.some((l) => l.type === 'log' && /now receives relayed requests/.test(l.message ?? '')), 'the relay socket to open');
  const dhcrelay = lab.spawn(relay, 'dhcrelay', ['-6', '-d', '-pf', join(dir, 'dhcrelay.pid'), '-l', 'eth1', '-u', 'fd00:61::1%eth0']);
  await waitFor(() => dhcrelay.stderr().includes('Sending on') || dhcrelay.child.exitCode !== null, 'dhcrelay -6 to start');
  assert.equal(dhcrelay.child.exitCode, null, `dhcrelay -6 failed: ${dhcrelay.stderr()}`);
  let lease: Record<string, string>;
  try {
    lease = await dhclient6(lab, client, dir, 'LLT');
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\ndhcrelay said:\n${dhcrelay.stderr()}`);
  }
  assert.match(lease.new_ip6_address ?? '', /^fd00:62::1[0-3][0-9a-f]$/, "the relay link's range (its link-address fd00:62::1)");
  const leases = await server.leases();
  assert.deepEqual(leases.map((l) => [l.mac, l.address]), [[RELAYED_MAC, lease.new_ip6_address]]);
  const relayed = server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: { detail: string; giaddr?: string } }).event);
  assert.ok(relayed.some((e) => e.detail === 'dhcpv6 request (MAC by link-local-eui64)' && e.giaddr === 'fd00:62::1'), 'the Request arrived through the relay, link-address fd00:62::1, the MAC read from its peer-address');
  await dhcrelay.stop();
});

test('behind dnsmasq as a DHCPv6 relay, the MAC comes from the relay\'s option 79 (RFC 6939); the client\'s link-local address is random', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhclient', 'dnsmasq'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp6-dnsmasq-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // Random interface identifiers (addr_gen_mode 3): the client's link-local address holds no MAC.
  const { srv, relay, client } = await relayLab(lab, 'd', true);
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:61::1/64', 'dev', 'eth0', 'nodad']);
  const server = await startChild(lab, srv, {
    interface: 'eth0', serverAddress: 'fd00:61::1', ranges: [{ subnet: 'fd00:62::/64', first: 'fd00:62::100', last: 'fd00:62::13f' }],
    stateDir: join(dir, 'state'), targets: { [RELAYED_MAC]: TARGET },
  });
  const dnsmasq = lab.spawn(relay, 'dnsmasq', ['--no-daemon', '--conf-file=/dev/null', '--port=0', '--user=root', '--group=root', '--log-facility=-', `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--dhcp-relay=fd00:62::1,fd00:61::1']);
  await waitFor(() => dnsmasq.stderr().includes('DHCP relay from') || dnsmasq.child.exitCode !== null, 'dnsmasq to relay');
  assert.equal(dnsmasq.child.exitCode, null, `dnsmasq failed: ${dnsmasq.stderr()}`);
  const lease = await dhclient6(lab, client, dir, 'LLT');
  assert.match(lease.new_ip6_address ?? '', /^fd00:62::1[0-3][0-9a-f]$/);
  assert.deepEqual((await server.leases()).map((l) => [l.mac, l.address]), [[RELAYED_MAC, lease.new_ip6_address]]);
  const details = server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: { detail: string } }).event.detail);
  assert.ok(details.includes('dhcpv6 request (MAC by relay-option-79)'), details.join(', '));
  await dnsmasq.stop();
});
