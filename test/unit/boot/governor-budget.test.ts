/**
 * The boot governor's admission decision (agent/boot/governor-budget.ts): pacing per budget,
 * the FIFO line with absent and stale hosts, free requests, estimates; and a seeded simulation
 * checking the two promises — admissions never closer than cost / rate, and first come first
 * served — over random arrivals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BootBudget, isFree, pacingMs, type BootCost, type BudgetLimits } from '../../../agent/boot/governor-budget.js';
import { prng } from '../../helpers/prng.js';

const MB = 1_000_000;
const boot = (httpBytes: number, dhcpExchanges = 2, powerOns = 1): BootCost => ({ httpBytes, dhcpExchanges, powerOns });
const options = { claimGraceMs: 1000, staleMs: 60_000 };

test('without budgets every request goes at once and nobody joins a line', () => {
  const budget = new BootBudget({}, options);
  for (let i = 0; i < 50; i++) assert.deepEqual(budget.request(`h${String(i)}`, boot(100 * MB), 0), { admitted: true, waitedMs: 0 });
  assert.equal(budget.line().length, 0);
  assert.equal(budget.next(0), undefined);
});

const pacingCases: Record<string, { limits: BudgetLimits; cost: BootCost; ms: number; free: boolean }> = {
  'http: 10 MB at 10 MB/s': { limits: { httpBytesPerSecond: 10 * MB }, cost: boot(10 * MB), ms: 1000, free: false },
  'dhcp: 2 exchanges at 4/s': { limits: { dhcpPerSecond: 4 }, cost: boot(0), ms: 500, free: false },
  'power-ons: 1 at 30/min': { limits: { powerOnsPerMinute: 30 }, cost: boot(0, 0, 1), ms: 2000, free: false },
  'fast track under a DHCP budget draws nothing': { limits: { dhcpPerSecond: 4 }, cost: boot(5 * MB, 0, 0), ms: 0, free: true },
  'no ramdisk on disk yet under an HTTP budget': { limits: { httpBytesPerSecond: MB }, cost: boot(0), ms: 0, free: true },
};
for (const [name, c] of Object.entries(pacingCases)) {
  test(`pacing: ${name}`, () => {
    const resource = c.limits.httpBytesPerSecond !== undefined ? 'http' : c.limits.dhcpPerSecond !== undefined ? 'dhcp' : 'powerOns';
    assert.equal(pacingMs(c.limits, resource, c.cost), c.ms);
    assert.equal(isFree(c.limits, c.cost), c.free);
  });
}

test('boots are spaced by what they fetch over the HTTP budget, in arrival order', () => {
  const budget = new BootBudget({ httpBytesPerSecond: 10 * MB }, options);
  assert.deepEqual(budget.request('a', boot(10 * MB), 0), { admitted: true, waitedMs: 0 });
  const b = budget.request('b', boot(10 * MB), 0);
  const c = budget.request('c', boot(20 * MB), 0);
  assert.ok(!b.admitted && !c.admitted);
  assert.deepEqual([b.position, b.waiting, b.readyAtMs, b.limitedBy, b.joined], [1, 1, 1000, 'http', true]);
  assert.deepEqual([c.position, c.waiting, c.readyAtMs, c.limitedBy], [2, 2, 2000, 'line']);
  const again = budget.request('b', boot(10 * MB), 500);
  assert.ok(!again.admitted);
  assert.equal(again.joined, false, 'asking again keeps the place');
  assert.deepEqual(budget.next(500), { key: 'b', atMs: 1000, called: false });
  assert.deepEqual(budget.request('b', boot(10 * MB), 1000), { admitted: true, waitedMs: 1000 });
  // c's 20 MB start only once b's 10 MB have had their second.
  assert.equal(budget.request('c', boot(20 * MB), 1500).admitted, false);
  assert.deepEqual(budget.request('c', boot(20 * MB), 2000), { admitted: true, waitedMs: 2000 });
  const d = budget.request('d', boot(10 * MB), 2000);
  assert.ok(!d.admitted);
  assert.equal(d.readyAtMs, 4000, 'c occupies the budget for 2 s');
});

test('the budget that decides is the tightest: DHCP pacing holds a small boot, HTTP a large one', () => {
  const budget = new BootBudget({ httpBytesPerSecond: 10 * MB, dhcpPerSecond: 2 }, options);
  assert.equal(budget.request('a', boot(1 * MB), 0).admitted, true);
  const small = budget.request('b', boot(1 * MB), 0);
  assert.ok(!small.admitted);
  assert.deepEqual([small.readyAtMs, small.limitedBy], [1000, 'dhcp']);
  assert.equal(budget.request('b', boot(1 * MB), 1000).admitted, true);
  assert.equal(budget.request('c', boot(50 * MB), 2000).admitted, true);
  const big = budget.request('d', boot(1 * MB), 2000);
  assert.ok(!big.admitted);
  assert.deepEqual([big.readyAtMs, big.limitedBy], [7000, 'http']);
});

test('a host behind one whose turn has not been claimed waits; once the first is absent it goes, and the absent one keeps its place', () => {
  const budget = new BootBudget({ powerOnsPerMinute: 60 }, options);
  assert.equal(budget.request('a', boot(0, 0, 1), 0).admitted, true);
  assert.equal(budget.request('b', boot(0, 0, 1), 0).admitted, false);
  assert.equal(budget.request('c', boot(0, 0, 1), 0).admitted, false);
  budget.markCalled('b', 1000);
  assert.deepEqual(budget.next(1000), { key: 'b', atMs: 1000, called: true });
  assert.equal(budget.nextAbsenceMs(1000), 2000);
  // c may not jump b while b may still come.
  const early = budget.request('c', boot(0, 0, 1), 1500);
  assert.ok(!early.admitted);
  assert.equal(early.limitedBy, 'line');
  // b stayed away past the grace: c goes.
  assert.deepEqual(budget.next(2001), { key: 'c', atMs: 2001, called: false });
  assert.equal(budget.request('c', boot(0, 0, 1), 2001).admitted, true);
  // b comes back: still first in line, it takes the next slot.
  const late = budget.request('b', boot(0, 0, 1), 2500);
  assert.ok(!late.admitted);
  assert.deepEqual([late.position, late.readyAtMs], [1, 3001]);
  assert.equal(budget.request('d', boot(0, 0, 1), 2600).admitted, false);
  assert.equal(budget.request('b', boot(0, 0, 1), 3001).admitted, true);
  assert.deepEqual(budget.line().map((t) => t.key), ['d']);
});

test('free requests go at once even with a line; forget and stale expiry take hosts out', () => {
  const budget = new BootBudget({ dhcpPerSecond: 1 }, options);
  assert.equal(budget.request('a', boot(0), 0).admitted, true);
  assert.equal(budget.request('b', boot(0), 0).admitted, false);
  assert.equal(budget.request('c', boot(0), 0).admitted, false);
  assert.deepEqual(budget.request('fast', boot(9 * MB, 0, 0), 0), { admitted: true, waitedMs: 0 });
  // b's operation no longer needs a boot (asks again as a fast track): it leaves the line.
  assert.deepEqual(budget.request('b', boot(0, 0, 0), 100), { admitted: true, waitedMs: 100 });
  assert.equal(budget.forget('c'), true);
  assert.equal(budget.forget('c'), false);
  assert.equal(budget.request('d', boot(0), 200).admitted, false);
  assert.deepEqual(budget.expire(200 + options.staleMs), [], 'not silent for longer than staleMs yet');
  assert.deepEqual(budget.expire(201 + options.staleMs), ['d']);
  assert.equal(budget.line().length, 0);
});

test('simulation: random arrivals, hosts coming back when called — never closer than cost / rate, first come first served', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const random = prng(seed);
    const limits: BudgetLimits = { httpBytesPerSecond: 100 * MB, dhcpPerSecond: 10, powerOnsPerMinute: 600 };
    const budget = new BootBudget(limits, { claimGraceMs: 500, staleMs: 600_000 });
    const hosts = Array.from({ length: 40 }, (_, i) => ({
      key: `h${String(i).padStart(2, '0')}`,
      arriveMs: 10 * Math.floor(random() * 500),
      cost: boot(Math.floor(random() * 60 * MB), random() < 0.8 ? 2 : 0, 1),
    }));
    const order = [...hosts].sort((a, b) => a.arriveMs - b.arriveMs || a.key.localeCompare(b.key));
    const admitted: { key: string; atMs: number; cost: BootCost }[] = [];
    const pending = new Set<string>();
    for (let now = 0; now <= 120_000 && admitted.length < hosts.length; now += 10) {
      for (const h of order) {
        const arriving = h.arriveMs === now;
        const next = budget.next(now);
        const called = next?.key === h.key && next.atMs <= now;
        if (!arriving && !(pending.has(h.key) && called)) continue;
        const answer = budget.request(h.key, h.cost, now);
        if (answer.admitted) {
          pending.delete(h.key);
          admitted.push({ key: h.key, atMs: now, cost: h.cost });
        } else pending.add(h.key);
      }
    }
    assert.equal(admitted.length, hosts.length, `seed ${String(seed)}: everyone admitted`);
    assert.deepEqual(admitted.map((a) => a.key), order.map((h) => h.key), `seed ${String(seed)}: first come first served`);
    for (let i = 1; i < admitted.length; i++) {
      const cur = admitted[i]!;
      assert.ok(cur.atMs >= admitted[i - 1]!.atMs);
      for (const resource of ['http', 'dhcp', 'powerOns'] as const) {
        if (pacingMs(limits, resource, cur.cost) === 0) continue;
        assert.ok(pacedAfterIdle(admitted.slice(0, i), limits, resource, cur.atMs), `seed ${String(seed)}: ${cur.key} at ${String(cur.atMs)} ms came before ${resource} was free`);
      }
    }
    // Hence, in any second, no more starts than the DHCP rate and no more bytes than the HTTP rate plus one boot's.
    const maxBytes = Math.max(...hosts.map((h) => h.cost.httpBytes));
    for (let t = 0; t <= 120_000; t += 100) {
      const within = admitted.filter((a) => a.atMs >= t && a.atMs < t + 1000);
      assert.ok(within.reduce((n, a) => n + a.cost.dhcpExchanges, 0) <= limits.dhcpPerSecond!, `seed ${String(seed)}: DHCP in [${String(t)}, +1 s)`);
      assert.ok(within.reduce((n, a) => n + a.cost.httpBytes, 0) <= limits.httpBytesPerSecond! + maxBytes, `seed ${String(seed)}: bytes in [${String(t)}, +1 s)`);
    }
  }
});

/** Whether the resource's cumulative pacing up to `atMs` allows an admission then (the budget caught up while idle). */
function pacedAfterIdle(before: { atMs: number; cost: BootCost }[], limits: BudgetLimits, resource: 'http' | 'dhcp' | 'powerOns', atMs: number): boolean {
  let freeAt = -Infinity;
  for (const a of before) {
    const ms = pacingMs(limits, resource, a.cost);
    if (ms > 0) freeAt = Math.max(freeAt, a.atMs) + ms;
  }
  return atMs >= freeAt - 1e-6;
}
