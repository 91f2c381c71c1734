/**
 * @module Wake-ups for host reconciles, made before the reconciler: parts built ahead of it (the
 * provisioner backend's ramdisk callbacks and boot governor) wake hosts through a
 * {@link HostWakeups}, and the reconciler delivers them while it runs (`ReconcilerOptions.wakeups`).
 * A wake-up while no reconciler runs is dropped: a starting reconciler runs every host anyway.
 */

/** Where wake-ups for hosts go (see the module comment). */
export class HostWakeups {
  #deliver: ((name: string) => void) | undefined;

  /** Asks for a reconcile of host `name` soon. */
  readonly wake = (name: string): void => {
    this.#deliver?.(name);
  };

  /** Delivers wake-ups to `deliver` (one receiver); returns the function that stops it. */
  attach(deliver: (name: string) => void): () => void {
    this.#deliver = deliver;
    return () => {
      if (this.#deliver === deliver) this.#deliver = undefined;
    };
  }
}
