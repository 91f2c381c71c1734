import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBootHttpServer } from '../../../bootsvc/http/boot-http-server.js';
import { RawConnection } from './http/raw-http.js';
import { TurnBudget } from '../../../bootsvc/turn-budget.js';

/** Runs `count` handlers, each from its own callback of one loop phase (as a burst of datagrams or connections arrives), each spending 1 ms of the fake clock. */
async function burst(budget: TurnBudget, clock: { t: number }, count: number, log: (number | string)[]): Promise<void> {
  const done: Promise<void>[] = [];
  await new Promise<void>((resolve) => {
    for (let i = 0; i < count; i++) {
      setImmediate(() => {
        done.push((async () => {
          await budget.enter();
          clock.t += 1;
          log.push(i);
        })());
        if (i === count - 1) resolve();
      });
    }
  });
  await Promise.all(done);
}

test('a burst is let in about one budget per turn, in order of arrival, and timers that fell due run between the turns', async () => {
  const clock = { t: 1000 };
  const budget = new TurnBudget({ budgetMs: 4, now: () => clock.t });
  const log: (number | string)[] = [];
  setTimeout(() => log.push('timer'), 0);
  await burst(budget, clock, 10, log);
  // 4 handlers fit the first turn's 4 ms; the rest wait — behind the timer that was already due.
  assert.deepEqual(log, [0, 1, 2, 3, 'timer', 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(budget.stats(), { admitted: 10, deferred: 6, waiting: 0 });
});

test('without the budget spent, a handler goes on at once (no new promise, nothing deferred)', async () => {
  const budget = new TurnBudget({ budgetMs: 4, now: () => 0 });
  const first = budget.enter();
  assert.equal(budget.enter(), first, 'the same settled promise');
  await first;
  assert.deepEqual(budget.stats(), { admitted: 2, deferred: 0, waiting: 0 });
});

test('a new turn has its own budget: a burst spread over turns waits for nothing', async () => {
  const clock = { t: 0 };
  const budget = new TurnBudget({ budgetMs: 4, now: () => clock.t });
  for (let i = 0; i < 5; i++) {
    await budget.enter();
    clock.t += 3;
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(budget.stats().deferred, 0);
});

test('the budget must be a positive number of milliseconds', () => {
  for (const budgetMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => new TurnBudget({ budgetMs }), RangeError);
});

test('boot HTTP under a spent budget: a burst of 20 requests waits for later turns and every one is answered', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rackside-turn-budget-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  writeFileSync(join(dir, 'stage1.efi'), Buffer.alloc(4096, 3));
  // Every clock read is 5 ms after the last: a turn lets in one request, the rest of it waits.
  let clock = 0;
  const budget = new TurnBudget({ budgetMs: 4, now: () => (clock += 5) });
  const server = await startBootHttpServer({ host: '127.0.0.1', port: 0, root: dir, plans: { target: () => Promise.resolve(undefined) }, turnBudget: budget });
  t.after(() => server.stop());
  // 20 kept-alive connections, each answered once (so the server has accepted and reads them
  // all); then a request on every one written in one go and the loop held for 50 ms, so the server
  // reads all 20 in one poll phase, as when a rack powers on together.
  const connections = await Promise.all(Array.from({ length: 20 }, () => RawConnection.open(server.port)));
  t.after(() => { for (const connection of connections) connection.close(); });
  for (const [warm] of await Promise.all(connections.map((c) => c.sequential([{ path: '/stage1.efi' }])))) assert.equal(warm?.status, 200);
  const before = budget.stats();
  for (const connection of connections) connection.write({ path: '/stage1.efi' });
  const replies = Promise.all(connections.map((c) => c.read()));
  const until = performance.now() + 50;
  while (performance.now() < until) { /* hold the loop: the requests queue in the kernel */ }
  for (const reply of await replies) {
    assert.equal(reply.status, 200);
    assert.equal(reply.body.length, 4096, 'the whole body');
  }
  const stats = budget.stats();
  assert.ok(stats.deferred > before.deferred, `some requests of the burst waited (before ${JSON.stringify(before)}, after ${JSON.stringify(stats)})`);
  assert.equal(stats.admitted, 40);
  assert.equal(stats.waiting, 0);
});
