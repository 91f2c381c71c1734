import assert from 'node:assert/strict';
import test from 'node:test';
import { machineCpu, machineCpuShares, threadSwitches } from '../../lab/pxe-sim/index.js';

test('machineCpuShares: busy, idle and steal as shares of the ticks between two readings', () => {
  const shares = machineCpuShares({ busy: 100, softirq: 10, idle: 50, steal: 10 }, { busy: 160, softirq: 40, idle: 70, steal: 30 });
  assert.deepEqual(shares, { busy: 0.6, softirq: 0.3, idle: 0.2, steal: 0.2 });
  const still = { busy: 5, softirq: 1, idle: 5, steal: 0 };
  assert.deepEqual(machineCpuShares(still, still), { busy: 0, softirq: 0, idle: 0, steal: 0 });
  // idle + iowait may go backwards (the kernel's iowait accounting): no negative idle share.
  assert.deepEqual(machineCpuShares({ busy: 100, softirq: 0, idle: 50, steal: 0 }, { busy: 110, softirq: 0, idle: 49, steal: 0 }), { busy: 1, softirq: 0, idle: 0, steal: 0 });
});

test('machineCpu reads /proc/stat: busy, softirq and steal only grow (idle + iowait may dip: proc.rst, iowait)', () => {
  const before = machineCpu();
  let spin = 0;
  for (let i = 0; i < 2e7; i++) spin += i;
  assert.ok(spin > 0);
  const after = machineCpu();
  assert.ok(before.busy + before.idle > 0, 'read something');
  assert.ok(after.busy >= before.busy && after.softirq >= before.softirq && before.softirq <= before.busy && after.steal >= before.steal);
  assert.ok(Number.isFinite(after.idle) && after.idle >= 0);
});

test('threadSwitches: this thread waits when it sleeps; a gone process reads undefined', async () => {
  const before = threadSwitches(process.pid);
  assert.ok(before !== undefined && Number.isInteger(before.voluntary) && Number.isInteger(before.involuntary));
  await new Promise((resolve) => setTimeout(resolve, 20));
  const after = threadSwitches(process.pid);
  assert.ok(after !== undefined && after.voluntary > before.voluntary, 'sleeping in epoll is a voluntary switch');
  assert.equal(threadSwitches(2 ** 22 + 1), undefined);
});
