/**
 * Fault injection: the DHCP server's wall clock jumps forward (1 h, then 1 day) while two real
 * clients (busybox udhcpc, each in its own namespace) hold the only two addresses of a one-hour
 * pool. The server runs in a namespace under libfaketime (its monotonic clock runs on; the
 * machine's clock is never touched).
 *
 * Defined behaviour: a lease lasts its `leaseSeconds` on the steady clock, so a jump frees no
 * address — a third client still gets no offer (the pool stays exhausted, counted as
 * `pool-exhausted`) instead of an address its holder still uses — and the holders renew their
 * own addresses. (With the wall clock, the day's jump expired both leases and offered a held
 * address to the newcomer.)
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DHCP_TEST_CLIENT, runUdhcpc } from '../helpers/dhcp-peers.js';
import { RAMDISK_BOOT, startDhcpServerProcess } from '../helpers/dhcp-server-process.js';
import { NetnsLab } from '../helpers/netns.js';
import { fakeClock } from './faketime.js';

const HOUR = 3_600_000;

test('DHCP: wall-clock jumps of +1 h and +1 day free no held lease; a newcomer still finds the pool exhausted, holders renew', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['udhcpc'] });
  if (lab === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-fault-dhcp-clock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const clock = await fakeClock(t, dir);
  if (clock === undefined) return;
  const lan = await lab.bridge('lan');
  const srv = await lab.namespace('srv');
  const probe = await lab.namespace('probe');
  await lab.attach(srv, lan, { address: '10.84.0.1/24' });
  await lab.attach(probe, lan, { address: '10.84.0.9/24' });
  await lab.exec(probe, 'ip', ['route', 'add', '255.255.255.255/32', 'dev', 'eth0']);
  const server = await startDhcpServerProcess(lab, srv, {
    mode: 'full', interface: 'eth0', serverAddress: '10.84.0.1',
    ranges: [{ subnet: '10.84.0.0/24', first: '10.84.0.100', last: '10.84.0.101' }],
    leaseSeconds: 3600, stateDir: join(dir, 'state'),
    defaultTarget: RAMDISK_BOOT,
  }, { env: clock.env });
  t.after(() => server.stop().then(() => undefined, () => undefined));

  const holders: { ns: string; ip: string }[] = [];
  for (const [i, mac] of ['52:54:00:84:00:01', '52:54:00:84:00:02'].entries()) {
    const ns = await lab.namespace(`holder${i}`);
    await lab.attach(ns, lan, { mac });
    const lease = await runUdhcpc(lab, ns, dir, { vendorClass: 'PXEClient:Arch:00000:UNDI:002001' });
    assert.ok(lease?.ip !== undefined, `holder ${i} got a lease`);
    holders.push({ ns, ip: lease.ip });
  }
  assert.deepEqual(holders.map((h) => h.ip).sort(), ['10.84.0.100', '10.84.0.101']);

  const offersTo = async (macPrefix: string): Promise<string[]> => {
    const run = await lab.exec(probe, process.execPath, [DHCP_TEST_CLIENT, 'storm', JSON.stringify({ count: 1, macPrefix, ms: 1500 })], { timeoutMs: 20_000 });
    return (JSON.parse(run.stdout) as { offers: { yiaddr: string }[] }).offers.map((o) => o.yiaddr);
  };
  assert.deepEqual(await offersTo('52:54:00:84:01'), [], 'before any jump the pool is exhausted');

  for (const [offsetMs, prefix] of [[HOUR + 60_000, '52:54:00:84:02'], [24 * HOUR, '52:54:00:84:03']] as const) {
    await clock.set(offsetMs);
    assert.deepEqual(await offersTo(prefix), [], `after +${offsetMs / HOUR} h no held address is offered to a newcomer`);
  }
  const stats = await server.stats();
  assert.equal(stats.ignored['pool-exhausted'], 3, 'each newcomer counted as pool-exhausted');

  for (const h of holders) {
    const again = await runUdhcpc(lab, h.ns, dir, { vendorClass: 'PXEClient:Arch:00000:UNDI:002001' });
    assert.equal(again?.ip, h.ip, 'a holder keeps its address');
  }
  await clock.set(0);
});
