/**
 * @module A listener set for the store's in-process notifications: a throwing listener is
 * reported and skipped, never allowed to fail the commit or append that notified it.
 */

/** Subscribers to one kind of notification. */
export class Listeners<T> {
  readonly #set = new Set<(value: T) => void>();
  readonly #report: (err: unknown) => void;

  /** `report` receives whatever a listener throws. */
  constructor(report: (err: unknown) => void) {
    this.#report = report;
  }

  /** Adds `listener`; returns the function that removes it (idempotent). */
  add(listener: (value: T) => void): () => void {
    const wrapped = (value: T): void => {
      listener(value);
    };
    this.#set.add(wrapped);
    return () => {
      this.#set.delete(wrapped);
    };
  }

  /** Calls every listener with each value, in order; exceptions go to the reporter. */
  emit(values: readonly T[]): void {
    for (const value of values) {
      for (const listener of [...this.#set]) {
        try {
          listener(value);
        } catch (err) {
          this.#report(err);
        }
      }
    }
  }
}

/** Reports a listener exception as a process warning (the stores' default reporter). */
export function warnListenerError(err: unknown): void {
  process.emitWarning(`rackside store listener threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
