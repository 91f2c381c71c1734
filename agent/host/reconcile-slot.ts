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
 * The step's hold on its slot is an explicit value: {@link runInSlot} hands the step a
 * {@link BmcSlotGate}, the reconciler passes it to `Factory.newProvisioner`, and the provisioner
 * composes it into its drivers (agent/bmc/wrap-driver.ts `releaseSlot`). Code that runs outside
 * any step (the power sweep, tests stepping hosts directly) uses {@link NO_SLOT}.
 */
import type { BmcSlotGate } from '../provisioner/provisioner.js';

export type { BmcSlotGate } from '../provisioner/provisioner.js';

/** Where a step's slot comes from and goes back to. */
export interface SlotPool {
  /** Gives a held slot back (the next waiter gets it). */
  release(): void;
  /** Resolves once a slot is held again (ahead of steps not yet started). */
  resume(): Promise<void>;
}

/** The gate of code that holds no slot: requests just run. */
export const NO_SLOT: BmcSlotGate = { outside: (request) => request() };

/** One step's hold on its slot: lent while its BMC requests are out, taken back when they are in. */
class StepSlot implements BmcSlotGate {
  #held = true;
  /** Requests of this step out now. */
  #out = 0;
  /** A `resume` in progress. */
  #resuming: Promise<void> | undefined;
  #done = false;

  constructor(private readonly pool: SlotPool) {}

  /** Whether the step has settled (read through a call: it changes across awaits). */
  settled(): boolean {
    return this.#done;
  }

  /** The step settled: the slot goes back at once if held, or as soon as a pending resume gets it. */
  finish(): void {
    this.#done = true;
    if (this.#held) {
      this.#held = false;
      this.pool.release();
    }
  }

  /**
   * Runs `request` (BMC I/O) without holding the step's slot; once the step has settled it just
   * runs it. Results and errors pass through.
   */
  async outside<T>(request: () => Promise<T>): Promise<T> {
    if (this.settled()) return request();
    if (this.#resuming !== undefined) await this.#resuming;
    this.#out += 1;
    if (this.#held) {
      this.#held = false;
      this.pool.release();
    }
    try {
      return await request();
    } finally {
      this.#out -= 1;
      if (this.#out === 0 && !this.settled()) {
        const resuming = this.#resume();
        this.#resuming = resuming;
        await resuming;
        if (this.#resuming === resuming) this.#resuming = undefined;
      }
    }
  }

  /** Takes the slot back for a step whose requests are all in, unless it finished meanwhile. */
  async #resume(): Promise<void> {
    await this.pool.resume();
    if (this.settled() || this.#out > 0) this.pool.release();
    else this.#held = true;
  }
}

/**
 * Runs `step` holding a slot of `pool` (already acquired by the caller), giving it the gate its
 * BMC requests go through; when it settles, the slot is given back — at once if held, or as
 * soon as a pending resume gets it.
 */
export async function runInSlot<T>(pool: SlotPool, step: (slot: BmcSlotGate) => Promise<T>): Promise<T> {
  const slot = new StepSlot(pool);
  try {
    return await step(slot);
  } finally {
    slot.finish();
  }
}
