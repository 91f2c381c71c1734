/**
 * @module Reconcile slots that BMC requests do not hold. The reconciler lets
 * `reconcile.concurrency` host steps work at once; a step that waits on its BMC does no work,
 * so while a request is out its slot goes to another step and the step queues to get one back
 * (before new steps) when the answer is in. So the limit bounds the steps using the event loop
 * and the store at once, not the BMCs talked to: with 1000 BMCs answering in 300 ms, every host
 * can have its request out while 4 steps do the rest (docs/PERFORMANCE.md, "1000 hosts per agent" →
 * registration). Each BMC still sees one request at a time: a host's steps never overlap, and
 * the drivers keep one connection (Redfish) or one serialized session (IPMI) per BMC.
 *
 * The step a request belongs to is found through `AsyncLocalStorage`: {@link runInSlot} runs a
 * step with its slot, {@link outsideSlot} runs a BMC request outside it. Code that runs outside
 * any step (the power sweep, tests stepping hosts directly) is unaffected.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Where a step's slot comes from and goes back to. */
export interface SlotPool {
  /** Gives a held slot back (the next waiter gets it). */
  release(): void;
  /** Resolves once a slot is held again (ahead of steps not yet started). */
  resume(): Promise<void>;
}

/** One step's hold on its slot. */
interface StepSlot {
  pool: SlotPool;
  held: boolean;
  /** Requests of this step out now. */
  out: number;
  /** A `resume` in progress. */
  resuming?: Promise<void>;
  done: boolean;
}

const steps = new AsyncLocalStorage<StepSlot>();

/** Whether the step has settled (read through a call: it changes across awaits). */
function settled(slot: StepSlot): boolean {
  return slot.done;
}

/**
 * Runs `step` holding a slot of `pool` (already acquired by the caller); when it settles, the
 * slot is given back — at once if held, or as soon as a pending resume gets it.
 */
export async function runInSlot<T>(pool: SlotPool, step: () => Promise<T>): Promise<T> {
  const slot: StepSlot = { pool, held: true, out: 0, done: false };
  try {
    return await steps.run(slot, step);
  } finally {
    slot.done = true;
    if (slot.held) {
      slot.held = false;
      pool.release();
    }
  }
}

/** Takes the slot back for a step whose requests are all in, unless it finished meanwhile. */
async function resume(slot: StepSlot): Promise<void> {
  await slot.pool.resume();
  if (settled(slot) || slot.out > 0) slot.pool.release();
  else slot.held = true;
}

/**
 * Runs `request` (BMC I/O) without holding the current step's slot (see the module comment);
 * outside a step it just runs it. Results and errors pass through.
 */
export async function outsideSlot<T>(request: () => Promise<T>): Promise<T> {
  const slot = steps.getStore();
  if (slot === undefined || slot.done) return request();
  if (slot.resuming !== undefined) await slot.resuming;
  slot.out += 1;
  if (slot.held) {
    slot.held = false;
    slot.pool.release();
  }
  try {
    return await request();
  } finally {
    slot.out -= 1;
    if (slot.out === 0 && !settled(slot)) {
      const resuming = resume(slot);
      slot.resuming = resuming;
      await resuming;
      if (slot.resuming === resuming) delete slot.resuming;
    }
  }
}
