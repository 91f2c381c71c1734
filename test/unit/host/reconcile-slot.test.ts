/**
 * Reconcile slots that BMC requests do not hold (agent/host/reconcile-slot.ts): a step waiting
 * on its BMC lends its slot, gets it back before steps not yet started, never holds two, and a
 * request still out when its step ended takes no slot; outside a step requests just run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_SLOT, runInSlot, type SlotPool } from '../../../agent/host/reconcile-slot.js';

/** A slot pool like the reconciler's: a limit, hand-over to waiters, resuming steps first. */
function pool(limit: number): SlotPool & { acquire(): Promise<void>; held(): number; maxHeld: number; log: string[] } {
  let running = 0;
  const waiting: (() => void)[] = [];
  const resuming: (() => void)[] = [];
  const p = {
    maxHeld: 0,
    log: [] as string[],
    held: () => running,
    acquire: (queue = waiting): Promise<void> => {
      if (running < limit) {
        running += 1;
        p.maxHeld = Math.max(p.maxHeld, running);
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => queue.push(resolve));
    },
    release: (): void => {
      const next = resuming.shift() ?? waiting.shift();
      if (next === undefined) running -= 1;
      else next();
    },
    resume: (): Promise<void> => p.acquire(resuming),
  };
  return p;
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a step waiting on its BMC lends its slot: another step runs meanwhile', async () => {
  const slots = pool(1);
  const bmc = deferred<string>();
  await slots.acquire();
  const a = runInSlot(slots, async (slot) => {
    slots.log.push('a starts');
    const answer = await slot.outside(() => bmc.promise);
    slots.log.push(`a got ${answer}`);
    return 'a';
  });
  await tick();
  await slots.acquire(); // b gets the slot a lent out
  const b = runInSlot(slots, () => {
    slots.log.push('b runs');
    return Promise.resolve('b');
  });
  assert.equal(await b, 'b');
  bmc.resolve('on');
  assert.equal(await a, 'a');
  assert.deepEqual(slots.log, ['a starts', 'b runs', 'a got on']);
  assert.equal(slots.maxHeld, 1);
  assert.equal(slots.held(), 0, 'every slot given back');
});

test('a step whose answer is in gets a slot before steps not yet started', async () => {
  const slots = pool(1);
  const bmc = deferred();
  const bWork = deferred();
  await slots.acquire();
  const a = runInSlot(slots, async (slot) => {
    await slot.outside(() => bmc.promise);
    slots.log.push('a resumes');
  });
  await tick();
  await slots.acquire();
  const b = runInSlot(slots, async () => {
    await bWork.promise; // working, not waiting on a BMC: b keeps the slot
    slots.log.push('b done');
  });
  const cStarted = slots.acquire().then(() => runInSlot(slots, () => {
    slots.log.push('c runs');
    return Promise.resolve();
  }));
  bmc.resolve();
  await tick();
  assert.deepEqual(slots.log, [], 'a waits for b to finish');
  bWork.resolve();
  await Promise.all([a, b, cStarted]);
  assert.deepEqual(slots.log, ['b done', 'a resumes', 'c runs']);
  assert.equal(slots.maxHeld, 1);
  assert.equal(slots.held(), 0);
});

test('requests at once in one step lend and take back the slot once; a request left out after its step takes none', async () => {
  const slots = pool(2);
  const first = deferred();
  const second = deferred();
  const late = deferred();
  await slots.acquire();
  let orphan: Promise<void> | undefined;
  await runInSlot(slots, async (slot) => {
    const both = Promise.all([slot.outside(() => first.promise), slot.outside(() => second.promise)]);
    await tick();
    assert.equal(slots.held(), 0, 'the slot is lent while both are out');
    first.resolve();
    await tick();
    assert.equal(slots.held(), 0, 'still lent: one request is out');
    second.resolve();
    await both;
    assert.equal(slots.held(), 1, 'held again once both are in');
    orphan = slot.outside(() => late.promise); // not awaited: outlives the step
  });
  assert.equal(slots.held(), 0, 'the step gave its slot back');
  late.resolve();
  await orphan;
  await tick();
  assert.equal(slots.held(), 0, 'the late answer took no slot');
});

test('outside a step a request just runs', async () => {
  assert.equal(await NO_SLOT.outside(() => Promise.resolve(42)), 42);
  await assert.rejects(NO_SLOT.outside(() => Promise.reject(new Error('BMC unreachable'))), /BMC unreachable/);
});

test('a failing request gives the error to the step, which still gets its slot back', async () => {
  const slots = pool(1);
  await slots.acquire();
  const outcome = await runInSlot(slots, async (slot) => {
    try {
      await slot.outside(() => Promise.reject(new Error('timeout')));
      return 'no error';
    } catch (error) {
      return `${String(slots.held())} slot, ${(error as Error).message}`;
    }
  });
  assert.equal(outcome, '1 slot, timeout');
  assert.equal(slots.held(), 0);
});
