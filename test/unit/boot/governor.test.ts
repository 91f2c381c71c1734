/**
 * The boot governor around the budget (agent/boot/governor.ts): what a boot costs (ramdisk
 * files, ISO, image), the `BootQueued`/`BootAdmitted` texts, the timer that wakes the next
 * host when its turn comes (and the one after when a called host stays away), stats; and the
 * boot HTTP byte pacer (bootsvc/http/send-pacer.ts). Time is mocked: no test waits.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { admitBoot, BootGovernor, ramdiskSizesIn, type RamdiskSizes } from '../../../agent/boot/governor.js';
import { BytePacer } from '../../../bootsvc/http/send-pacer.js';

const MIB = 2 ** 20;
const sizes: RamdiskSizes = { networkBytes: 30 * MIB, isoBytes: 40 * MIB };

function governor(t: TestContext, limits: ConstructorParameters<typeof BootGovernor>[0]['limits']): { g: BootGovernor; woken: string[]; clock: { now: number } } {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const clock = { now: 0 };
  const woken: string[] = [];
  const g = new BootGovernor({ limits, nowMs: () => clock.now, wake: (name) => woken.push(name), ramdiskSizes: () => Promise.resolve(sizes), claimGraceMs: 5000 });
  return { g, woken, clock };
}

test('cost: a network boot fetches kernel + initrd and takes two leases at once (firmware, iPXE); virtual media fetches the ISO and takes none; a fast track only its image', async (t) => {
  const { g } = governor(t, { dhcpPerSecond: 1 });
  assert.deepEqual(await g.costOf({ path: 'network', imageBytes: 0 }), { httpBytes: 30 * MIB, dhcpExchanges: 2, powerOns: 1 });
  assert.deepEqual(await g.costOf({ path: 'network', imageBytes: 2 * 1024 * MIB }), { httpBytes: 2078 * MIB, dhcpExchanges: 2, powerOns: 1 });
  assert.deepEqual(await g.costOf({ path: 'virtual-media', imageBytes: 0 }), { httpBytes: 40 * MIB, dhcpExchanges: 0, powerOns: 1 });
  assert.deepEqual(await g.costOf({ path: 'none', imageBytes: 5 * MIB }), { httpBytes: 5 * MIB, dhcpExchanges: 0, powerOns: 0 });
  g.close();
});

test('the second host waits with a reason, is woken when its turn comes, and is admitted with a note of its wait', async (t) => {
  const { g, woken, clock } = governor(t, { httpBytesPerSecond: 10 * MIB });
  const events: [string, string][] = [];
  const publish = (reason: string, message: string): void => { events.push([reason, message]); };
  assert.equal(await admitBoot(g, { uid: 'u1', name: 'node-1', path: 'network', imageBytes: 0 }, publish), true);
  assert.equal(await admitBoot(g, { uid: 'u2', name: 'node-2', path: 'network', imageBytes: 0 }, publish), false);
  assert.equal(await admitBoot(g, { uid: 'u2', name: 'node-2', path: 'network', imageBytes: 0 }, publish), false);
  assert.equal(events.length, 1, 'queued once, not at every ask');
  assert.equal(events[0]?.[0], 'BootQueued');
  assert.match(events[0][1], /^power-on held by the boot governor: first in line, paced by the boot HTTP budget 84 Mbit\/s \(this boot fetches ≈ 30\.0 MiB\); expected to start in ≈ 3\.0 s$/);
  assert.equal(g.stats().waiting, 1);
  clock.now = 2999;
  t.mock.timers.tick(2999);
  assert.deepEqual(woken, []);
  clock.now = 3000;
  t.mock.timers.tick(1);
  assert.deepEqual(woken, ['node-2']);
  assert.equal(await admitBoot(g, { uid: 'u2', name: 'node-2', path: 'network', imageBytes: 0 }, publish), true);
  assert.deepEqual(events[1], ['BootAdmitted', 'power-on admitted by the boot governor after 3.0 s in line']);
  const stats = g.stats();
  assert.deepEqual([stats.waiting, stats.admitted, stats.admittedAfterWait, stats.waitSecondsTotal, stats.drawn.httpBytes], [0, 2, 1, 3, 60 * MIB]);
  g.close();
});

test('a called host that stays away past the grace lets the next one go; without a governor everything goes', async (t) => {
  const { g, woken, clock } = governor(t, { powerOnsPerMinute: 60 });
  const ask = (uid: string): Promise<boolean> => admitBoot(g, { uid, name: `node-${uid}`, path: 'virtual-media', imageBytes: 0 }, () => undefined);
  assert.equal(await ask('a'), true);
  assert.equal(await ask('b'), false);
  assert.equal(await ask('c'), false);
  clock.now = 1000;
  t.mock.timers.tick(1000);
  assert.deepEqual(woken, ['node-b']);
  clock.now = 6001;
  t.mock.timers.tick(5001);
  assert.deepEqual(woken, ['node-b', 'node-c'], 'b is absent: c is called');
  assert.equal(await ask('c'), true);
  g.forget('b');
  assert.equal(g.stats().waiting, 0);
  g.close();
  assert.equal(await admitBoot(undefined, { uid: 'x', name: 'x', path: 'network', imageBytes: 0 }, () => assert.fail('nothing to publish')), true);
});

test('ramdisk sizes are read from the ramdisk directory, 0 for missing files, and cached', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'governor-sizes-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'vmlinuz'), Buffer.alloc(1000));
  await writeFile(join(dir, 'initrd'), Buffer.alloc(24));
  let now = 0;
  const read = ramdiskSizesIn(dir, () => now, 100);
  assert.deepEqual(await read(), { networkBytes: 1024, isoBytes: 0 });
  await writeFile(join(dir, 'rackside.iso'), Buffer.alloc(7));
  assert.deepEqual(await read(), { networkBytes: 1024, isoBytes: 0 }, 'cached');
  now = 100;
  assert.deepEqual(await read(), { networkBytes: 1024, isoBytes: 7 });
});

test('byte pacer: chunks asked for at once go out back to back at the rate; an idle pacer sends at once', () => {
  let now = 0;
  const pacer = new BytePacer(1_000_000, () => now);
  assert.equal(pacer.book(500_000), 0);
  assert.equal(pacer.book(500_000), 500);
  assert.equal(pacer.book(250_000), 1000);
  now = 5000;
  assert.equal(pacer.book(100), 0, 'the budget does not save up while idle');
  // Over any window, booked starts never carry more than rate × window + one chunk.
  now = 10_000;
  const starts: { at: number; bytes: number }[] = [];
  for (let i = 0; i < 100; i++) starts.push({ at: now + pacer.book(512 * 1024), bytes: 512 * 1024 });
  for (const s of starts) {
    const inWindow = starts.filter((x) => x.at >= s.at && x.at < s.at + 1000).reduce((n, x) => n + x.bytes, 0);
    assert.ok(inWindow <= 1_000_000 + 512 * 1024, `${String(inWindow)} bytes start within 1 s of ${String(s.at)}`);
  }
  assert.throws(() => new BytePacer(0), /bytes per second must be a number > 0/);
});
