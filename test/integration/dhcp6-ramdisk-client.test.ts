/**
 * The ramdisk's DHCPv6 client, `rackside-dhcp6` (images/helpers/rackside-dhcp6.c, compiled by the
 * ramdisk builder's own `buildHelpers`), against real servers in network namespaces: rackside's
 * DHCPv6 server (Rapid Commit: Solicit → Reply; without it: Solicit → Advertise → Request →
 * Reply), dnsmasq (Advertise/Request) and ISC Kea's kea-dhcp6 with Rapid Commit and a Boot File
 * URL (option 59) as reference servers. Then the ramdisk's
 * `network_up6` (images/ramdisk/lib-net6.sh) under busybox sh configures the NIC from that lease
 * with busybox `ip`, with DAD on, and falls back to a SLAAC address from rackside's router
 * advertisements (autonomous flag) when no DHCPv6 server answers.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { buildHelpers, defaultHelperSourceDir } from '../../images/helpers.js';
import type { BootTarget } from '../../bootsvc/ipxe/boot-plan.js';
import { NetnsLab, runCommand, waitFor } from '../helpers/netns.js';
import { enableIpv6, startChild } from './dhcp6-peers.js';

const CLIENT_MAC = '52:54:00:63:00:01';
const TARGET: BootTarget = { plan: { kind: 'local-disk' } };
const RANGE = { subnet: 'fd00:63::/64', first: 'fd00:63::100', last: 'fd00:63::13f' };
const AGENT_SCRIPTS = join(defaultHelperSourceDir(), '..', 'ramdisk');

/** Compiles rackside-dhcp6 into `dir` with the ramdisk builder's helper build. */
async function buildClient(dir: string): Promise<string> {
  const built = await buildHelpers(['rackside-dhcp6'], defaultHelperSourceDir());
  const entry = built.entries[0];
  assert.ok(entry !== undefined && entry.type === 'file', `rackside-dhcp6 did not build: ${JSON.stringify(built.missing)}`);
  const path = join(dir, 'rackside-dhcp6');
  await writeFile(path, entry.data);
  await chmod(path, 0o755);
  return path;
}

/** Server (eth0 fd00:63::1) and client (CLIENT_MAC) on one bridge; `dad` keeps DAD on in the client. */
async function linkLab(lab: NetnsLab, suffix: string, dad = false): Promise<{ srv: string; client: string }> {
  const prov = await lab.bridge(`prov63${suffix}`);
  const srv = await lab.namespace(`srv63${suffix}`);
  const client = await lab.namespace(`cli63${suffix}`);
  await enableIpv6(lab, srv, []);
  if (!dad) await enableIpv6(lab, client, []);
  else await lab.sysctl(client, { 'net.ipv6.conf.all.disable_ipv6': '0', 'net.ipv6.conf.default.disable_ipv6': '0' });
  await lab.attach(srv, prov, { mac: '02:00:00:63:00:fe' });
  await lab.attach(client, prov, { mac: CLIENT_MAC });
  await enableIpv6(lab, srv, ['eth0']);
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:63::1/64', 'dev', 'eth0', 'nodad']);
  if (!dad) await enableIpv6(lab, client, ['eth0']);
  await lab.exec(client, 'ip', ['link', 'set', 'eth0', 'up']);
  return { srv, client };
}

/** A lab with `tools`, a scratch directory (removed after), the compiled client and one link (linkLab); undefined when skipped. */
async function clientLab(t: TestContext, tools: string[], suffix: string, dad = false): Promise<{ lab: NetnsLab; dir: string; client6: string; srv: string; client: string } | undefined> {
  const lab = await NetnsLab.create(t, { tools: ['cc', ...tools] });
  if (lab === undefined) return undefined;
  const dir = await mkdtemp(join(tmpdir(), `rackside-dhcp6-client${suffix}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const client6 = await buildClient(dir);
  return { lab, dir, client6, ...(await linkLab(lab, suffix, dad)) };
}

/** The helper's KEY=VALUE lines. */
function parseLease(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

test('rackside-dhcp6 gets its address from rackside\'s DHCPv6 server, with and without Rapid Commit, the lease kept by MAC', async (t) => {
  const opened = await clientLab(t, [], '');
  if (opened === undefined) return;
  const { lab, dir, client6, srv, client } = opened;
  assert.equal((await runCommand(client6, ['--version'])).stdout, 'rackside-dhcp6 1\n');
  for (const rapidCommit of [true, false]) {
    const server = await startChild(lab, srv, {
      interface: 'eth0', serverAddress: 'fd00:63::1', ranges: [RANGE], rapidCommit, dns: ['fd00:63::53'],
      stateDir: join(dir, 'state'), targets: { [CLIENT_MAC]: TARGET },
    });
    const run = await lab.exec(client, client6, ['eth0', '15']);
    const lease = parseLease(run.stdout);
    assert.match(lease.ADDRESS ?? '', /^fd00:63::1[0-3][0-9a-f]$/, run.stdout);
    assert.equal(lease.PREFIXLEN, '64');
    assert.equal(lease.DNS, 'fd00:63::53');
    assert.match(lease.SERVER ?? '', /^fe80::/);
    assert.deepEqual((await server.leases()).map((l) => [l.mac, l.address, l.state]), [[CLIENT_MAC, lease.ADDRESS, 'bound']]);
    const details = server.lines.filter((l) => l.type === 'event').map((l) => (l as unknown as { event: { detail: string } }).event.detail);
    // DUID-LL: the MAC comes from the client's EUI-64 link-local address first.
    assert.ok(details.includes('dhcpv6 solicit (MAC by link-local-eui64)'), details.join(', '));
    assert.equal(details.includes('dhcpv6 request (MAC by link-local-eui64)'), !rapidCommit, `Rapid Commit ${rapidCommit}: ${details.join(', ')}`);
    server.p.child.stdin?.write('stop\n');
    await waitFor(() => server.p.child.exitCode !== null, 'the server to stop');
  }
});

test('rackside-dhcp6 against dnsmasq (Advertise, Request, Reply), then no server: exit 1', async (t) => {
  const opened = await clientLab(t, ['dnsmasq'], 'd');
  if (opened === undefined) return;
  const { lab, dir, client6, srv, client } = opened;
  const dnsmasq = lab.spawn(srv, 'dnsmasq', ['--no-daemon', '--conf-file=/dev/null', '--port=0', '--user=root', '--group=root', '--log-facility=-', '--log-dhcp',
    `--pid-file=${join(dir, 'dnsmasq.pid')}`, `--dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`, '--interface=eth0', '--dhcp-range=fd00:63::200,fd00:63::2ff,64', '--dhcp-option=option6:dns-server,[fd00:63::54]']);
  await waitFor(() => dnsmasq.stderr().includes('DHCPv6') || dnsmasq.child.exitCode !== null, 'dnsmasq to serve DHCPv6');
  assert.equal(dnsmasq.child.exitCode, null, `dnsmasq failed: ${dnsmasq.stderr()}`);
  const run = await lab.exec(client, client6, ['eth0', '15']);
  const lease = parseLease(run.stdout);
  assert.match(lease.ADDRESS ?? '', /^fd00:63::2[0-9a-f]{2}$/, run.stdout);
  assert.equal(lease.DNS, 'fd00:63::54');
  await waitFor(async () => (await readFile(join(dir, 'dnsmasq.leases'), 'utf8').catch(() => '')).includes(lease.ADDRESS ?? '-'), 'dnsmasq to record the lease');
  assert.match(dnsmasq.stderr(), /DHCPREPLY\(eth0\)/);
  await dnsmasq.stop();
  const none = await lab.exec(client, client6, ['eth0', '2'], { allowFailure: true });
  assert.equal(none.code, 1, none.stderr);
  assert.match(none.stderr, /no DHCPv6 lease on eth0 in 2 s/);
});

test('rackside-dhcp6 against kea-dhcp6 (Rapid Commit): the address, DNS and Boot File URL lines', async (t) => {
  const opened = await clientLab(t, ['kea-dhcp6'], 'k');
  if (opened === undefined) return;
  const { lab, dir, client6, srv, client } = opened;
  const config = join(dir, 'kea-dhcp6.json');
  await writeFile(config, JSON.stringify({
    Dhcp6: {
      'interfaces-config': { interfaces: ['eth0'] },
      'lease-database': { type: 'memfile', persist: true, name: join(dir, 'kea-leases6.csv'), 'lfc-interval': 0 },
      'valid-lifetime': 1800, 'preferred-lifetime': 1800, 'server-id': { type: 'LL', persist: false },
      'option-data': [{ name: 'dns-servers', data: 'fd00:63::55' }, { name: 'bootfile-url', data: 'http://[fd00:63::1]:8081/boot/ipxe.efi' }],
      subnet6: [{ id: 1, subnet: 'fd00:63::/64', interface: 'eth0', 'rapid-commit': true, pools: [{ pool: 'fd00:63::300 - fd00:63::3ff' }] }],
      loggers: [{ name: 'kea-dhcp6', output_options: [{ output: 'stdout' }], severity: 'INFO' }],
    },
  }));
  const kea = lab.spawn(srv, 'kea-dhcp6', ['-c', config], { env: { ...process.env, KEA_PIDFILE_DIR: dir, KEA_LOCKFILE_DIR: dir } });
  await waitFor(() => /DHCP6_STARTED|server version .* started/.test(kea.stdout() + kea.stderr()) || kea.child.exitCode !== null, 'kea-dhcp6 to start');
  assert.equal(kea.child.exitCode, null, `kea-dhcp6 failed: ${kea.stdout()}${kea.stderr()}`);
  const run = await lab.exec(client, client6, ['eth0', '15']);
  const lease = parseLease(run.stdout);
  assert.match(lease.ADDRESS ?? '', /^fd00:63::3[0-9a-f]{2}$/, run.stdout);
  assert.equal(lease.VALID, '1800');
  assert.equal(lease.DNS, 'fd00:63::55');
  assert.equal(lease.BOOT_URL, 'http://[fd00:63::1]:8081/boot/ipxe.efi');
  // Kea's lease file names the address; the exchange was Solicit → Reply (Rapid Commit).
  assert.match(await readFile(join(dir, 'kea-leases6.csv'), 'utf8'), new RegExp(`^${(lease.ADDRESS ?? '-').replaceAll('.', '\\.')},`, 'm'));
  assert.match(kea.stdout(), new RegExp(`DHCP6_LEASE_ALLOC duid=\\[00:03:00:01:52:54:00:63:00:01\\].* lease for address ${lease.ADDRESS ?? '-'} and iaid=\\d+ has been allocated`));
  // An Advertise would have been logged as DHCP6_LEASE_ADVERT first.
  assert.doesNotMatch(kea.stdout(), /DHCP6_LEASE_ADVERT/);
  await kea.stop();
});

/** Runs lib-net6.sh's network_up6 under busybox sh in `ns`, with the agent's helpers stubbed; returns its output and LEASE_IP. */
async function networkUp6(lab: NetnsLab, ns: string, dir: string, client6: string | undefined): Promise<{ out: string; ip: string }> {
  const sys = join(dir, `sys-${ns}`);
  await mkdir(join(sys, 'class/net/eth0/device'), { recursive: true });
  await writeFile(join(sys, 'class/net/eth0/address'), `${CLIENT_MAC}\n`);
  await mkdir(join(dir, `run-${ns}`), { recursive: true });
  const script = [
    'say() { echo "rackside-ramdisk: $*"; }',
    'read_file() { read -r v < "$1" && printf %s "$v"; }',
    `boot_mac() { printf %s ${CLIENT_MAC}; }`,
    'host_tool() { return 1; }',
    `. ${join(AGENT_SCRIPTS, 'lib-nics.sh')}`,
    `. ${join(AGENT_SCRIPTS, 'lib-net6.sh')}`,
    'network_up6 && echo "LEASE_IP=${LEASE_IP}"',
  ].join('\n');
  const env = { ...process.env, SYSFS: sys, RUN: join(dir, `run-${ns}`), PROCFS: '/proc', NET6_WAIT_SECONDS: '8', RACKSIDE_RESOLV_CONF: join(dir, 'resolv.conf'), ...(client6 === undefined ? { RACKSIDE_DHCP6: '/bin/false' } : { RACKSIDE_DHCP6: client6 }) };
  const run = await lab.exec(ns, 'busybox', ['sh', '-c', `SYSFS=${sys} RUN=${env.RUN}; ${script}`], { env, allowFailure: true, timeoutMs: 60_000 });
  return { out: run.stdout + run.stderr, ip: /LEASE_IP=(\S+)/.exec(run.stdout)?.[1] ?? '' };
}

test('the ramdisk\'s network_up6 (busybox sh and ip) adds the DHCPv6 address after DAD, or takes a SLAAC one', async (t) => {
  const opened = await clientLab(t, ['busybox'], 's', true);
  if (opened === undefined) return;
  const { lab, dir, client6, srv, client } = opened;
  const server = await startChild(lab, srv, {
    interface: 'eth0', serverAddress: 'fd00:63::1', ranges: [RANGE], stateDir: join(dir, 'state'), targets: { [CLIENT_MAC]: TARGET },
    routerAdvertisements: { autonomous: true },
  });
  const dhcp = await networkUp6(lab, client, dir, client6);
  assert.match(dhcp.ip, /^fd00:63::1[0-3][0-9a-f]$/, dhcp.out);
  assert.match(dhcp.out, /DHCPv6 gave eth0 fd00:63::1/);
  const shown = (await lab.exec(client, 'ip', ['-6', '-o', 'addr', 'show', 'dev', 'eth0'])).stdout;
  assert.match(shown, new RegExp(`inet6 ${dhcp.ip}/64 scope global`));
  assert.doesNotMatch(shown.split('\n').find((l) => l.includes(`${dhcp.ip}/`)) ?? '', /tentative/);
  assert.deepEqual((await server.leases()).map((l) => [l.mac, l.address]), [[CLIENT_MAC, dhcp.ip]]);
  // No DHCPv6 answer (the helper fails): the address the kernel made from the advertised prefix.
  await lab.exec(client, 'ip', ['-6', 'addr', 'del', `${dhcp.ip}/64`, 'dev', 'eth0']);
  const slaac = await networkUp6(lab, client, dir, undefined);
  assert.match(slaac.out, /SLAAC gave eth0 fd00:63::5054:ff:fe63:1/, slaac.out);
  assert.equal(slaac.ip, 'fd00:63::5054:ff:fe63:1');
});
