/**
 * Full-mode DHCP against real clients in network namespaces: ISC dhclient and busybox udhcpc
 * get leases from rackside (running as a child process in the server namespace, leases in a
 * LevelDB store) with the boot file in the BOOTP `file` field (and option 67 for udhcpc, which
 * asks for it), and keep the same addresses after the server restarts on the same store.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { DhcpChildConfig } from '../helpers/dhcp-server-child.js';
import { runDhclient, runUdhcpc } from '../helpers/dhcp-peers.js';
import { RAMDISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab } from '../helpers/netns.js';

const BIOS_PXE = 'PXEClient:Arch:00000:UNDI:002001';
const DHCLIENT_MAC = '52:54:00:77:00:01';
const UDHCPC_MAC = '52:54:00:77:00:02';

test('dhclient and udhcpc get leases with the boot file and keep their addresses across a server restart', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhclient', 'udhcpc'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-dhcp-full-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lan = await lab.bridge('lan');
  const srv = await lab.namespace('srv');
  const c1 = await lab.namespace('c1');
  const c2 = await lab.namespace('c2');
  await lab.attach(srv, lan, { address: '10.77.0.1/24' });
  await lab.attach(c1, lan, { mac: DHCLIENT_MAC });
  await lab.attach(c2, lan, { mac: UDHCPC_MAC });
  const config: DhcpChildConfig = {
    mode: 'full',
    interface: 'eth0',
    serverAddress: '10.77.0.1',
    ranges: [{ subnet: '10.77.0.0/24', first: '10.77.0.100', last: '10.77.0.150', router: '10.77.0.1', dns: ['10.77.0.1'] }],
    leaseSeconds: 600,
    stateDir: join(dir, 'state'),
    targets: {
      [DHCLIENT_MAC]: RAMDISK_BOOT,
      [UDHCPC_MAC]: RAMDISK_BOOT,
    },
  };

  let server = await startDhcpServerProcess(lab, srv, config);
  const first = await runDhclient(lab, c1, dir, { vendorClass: BIOS_PXE });
  assert.match(first.new_ip_address ?? '', /^10\.77\.0\.(1[0-4]\d|150)$/);
  assert.equal(first.new_filename, 'undionly.kpxe');
  assert.equal(first.new_dhcp_server_identifier, '10.77.0.1');
  assert.equal(first.new_routers, '10.77.0.1');
  const u1 = await runUdhcpc(lab, c2, dir, { vendorClass: BIOS_PXE });
  assert.ok(u1, 'udhcpc got a lease');
  assert.notEqual(u1.ip, first.new_ip_address);
  assert.equal(u1.boot_file, 'undionly.kpxe', 'BOOTP file field');
  assert.equal(u1.bootfile, 'undionly.kpxe', 'option 67 (asked for with -O bootfile)');
  assert.equal(u1.siaddr, '10.77.0.1');
  // Events reach the test through the child's stdout, after the client may already have its
  // lease: wait for the last one (the pipe keeps their order, so the earlier ones are in too).
  await server.waitForEvent((e) => e.message === 'ack' && e.mac === UDHCPC_MAC, 'the ACK to udhcpc', 5000);
  const acks = server.events().filter((e) => e.message === 'ack').map((e) => `${e.mac} ${e.address ?? ''}`);
  assert.deepEqual(acks.sort(), [`${DHCLIENT_MAC} ${first.new_ip_address ?? ''}`, `${UDHCPC_MAC} ${u1.ip ?? ''}`].sort());
  const offer = server.events().find((e) => e.message === 'offer' && e.mac === DHCLIENT_MAC);
  assert.match(offer?.detail ?? '', /hardware-unicast/, 'the OFFER went as a link-layer frame to the client MAC');
  t.diagnostic(server.events().map((e) => `${e.message} ${e.mac} ${e.address ?? ''} ${e.detail ?? ''}`).join(' | '));
  const before = await server.stop();
  assert.equal(before.leases.writeErrors, 0);
  assert.deepEqual(before.dropped, {});

  // Restart on the same LevelDB store: both clients start from scratch (DISCOVER) and get their addresses back.
  server = await startDhcpServerProcess(lab, srv, config);
  const second = await runDhclient(lab, c1, dir, { vendorClass: BIOS_PXE });
  assert.equal(second.new_ip_address, first.new_ip_address);
  const u2 = await runUdhcpc(lab, c2, dir, { vendorClass: BIOS_PXE });
  assert.equal(u2?.ip, u1.ip);
  // dhclient with its lease file kept does INIT-REBOOT (REQUEST without server id) and is ACKed too.
  const rebooted = await runDhclient(lab, c1, dir, { vendorClass: BIOS_PXE, fresh: false });
  assert.equal(rebooted.new_ip_address, first.new_ip_address);
  // (CI once read the events before the INIT-REBOOT ACK's line had arrived: wait for it.)
  await server.waitForEvent((e) => e.message === 'ack' && e.mac === DHCLIENT_MAC && (e.detail ?? '').startsWith('init-reboot'), 'the ACK to the INIT-REBOOT REQUEST', 5000);
  await server.stop();
});
