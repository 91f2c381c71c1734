/**
 * rackside's router advertisements (`bootsvc/ra/`) with real peers in network namespaces (IPv6
 * on, DAD off): `rdisc6` (ndisc6) solicits and must see the Managed and Other flags, router
 * lifetime 0, and the provisioning prefix on-link and not autonomous, from the server's
 * link-local address; the peer's kernel installs the on-link prefix route from the periodic
 * advertisements; a malformed Router Solicitation (code 1, sent through the same native addon
 * from the peer) is dropped and counted. The server child and its advertiser are stopped in
 * the lab's teardown.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_UDP_BIND_ADDON_PATH } from '../../bootsvc/dhcp/bound-socket.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';
import { enableIpv6, startChild } from './dhcp6-peers.js';

interface RaStats { unsolicitedSent: number; solicitedSent: number; solicitationsReceived: number; dropped: { malformed: number } }

test('rdisc6 sees the Managed flag and the on-link prefix; the peer kernel takes the prefix; a malformed solicitation is counted', { timeout: 60_000 }, async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['rdisc6'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-ra-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const link = await lab.bridge('ra');
  const srv = await lab.namespace('rasrv');
  const peer = await lab.namespace('rapeer');
  await enableIpv6(lab, srv, []);
  await enableIpv6(lab, peer, []);
  await lab.attach(srv, link, { mac: '02:00:00:77:00:fe' });
  await lab.attach(peer, link, { mac: '02:00:00:77:00:01' });
  await enableIpv6(lab, srv, ['eth0']);
  await enableIpv6(lab, peer, ['eth0']);
  await lab.sysctl(peer, { 'net.ipv6.conf.eth0.accept_ra': '2' }); // accept them whatever the forwarding setting
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:77::1/64', 'dev', 'eth0', 'nodad']);
  const server = await startChild(lab, srv, {
    interface: 'eth0', serverAddress: 'fd00:77::1', ranges: [{ subnet: 'fd00:77::/64', first: 'fd00:77::100', last: 'fd00:77::1ff' }],
    stateDir: join(dir, 'state'), routerAdvertisements: {},
  });
  const rdisc = await lab.exec(peer, 'rdisc6', ['-1', '-w', '3000', '-m', 'eth0'], { timeoutMs: 20_000 });
  const field = (name: string): string | undefined => new RegExp(`^\\s*${name}\\s*:\\s*(.+?)\\s*$`, 'm').exec(rdisc.stdout)?.[1];
  assert.equal(field('Stateful address conf\\.'), 'Yes', rdisc.stdout);
  assert.equal(field('Stateful other conf\\.'), 'Yes');
  assert.match(field('Router lifetime') ?? '', /^0 /);
  assert.equal(field('Prefix'), 'fd00:77::/64');
  assert.equal(field('On-link'), 'Yes');
  assert.equal(field('Autonomous address conf\\.'), 'No');
  assert.equal(field('Source link-layer address'), '02:00:00:77:00:FE');
  assert.match(rdisc.stdout, /from fe80::ff:fe77:fe\b/, 'sent from the link-local address');
  // The peer's kernel accepted an advertisement (hop limit 255, valid) and routes the prefix on-link.
  const route = await waitFor(async () => {
    const r = await lab.exec(peer, 'ip', ['-6', 'route', 'show', 'fd00:77::/64']);
    return r.stdout.includes('expires') ? r.stdout : undefined;
  }, 'the peer kernel to install the advertised prefix', 20_000);
  assert.match(route, /^fd00:77::\/64 dev eth0 proto kernel .*expires 259\d{4}sec/m, 'the prefix with its 30-day valid lifetime');
  const rsBefore = ((await server.stats()).routerAdvertisements as RaStats).solicitationsReceived;
  assert.ok(rsBefore >= 1, 'rdisc6 solicited');
  const malformed = `const a=require(${JSON.stringify(DEFAULT_UDP_BIND_ADDON_PATH)});const h=a.openIcmp6({interface:'eth0',onMessage(){},onError(){}});a.sendIcmp6(h,Buffer.from([133,1,0,0,0,0,0,0]),'ff02::2');a.closeIcmp6(h);`;
  await lab.exec(peer, process.execPath, ['-e', malformed]);
  const ra = await waitFor(async () => {
    const s = (await server.stats()).routerAdvertisements as RaStats;
    return s.dropped.malformed > 0 ? s : undefined;
  }, 'the malformed solicitation to be counted');
  assert.equal(ra.dropped.malformed, 1);
  assert.equal(ra.solicitationsReceived, rsBefore, 'the malformed one is not counted as a solicitation');
  assert.ok(ra.solicitedSent >= 1 && ra.unsolicitedSent >= 1);
});
