/**
 * @module A minimal in-process async mutex: callers queue in arrival order and run one at a
 * time. The store serializes commits through it so precondition checks and the revision counter
 * see every earlier commit.
 * @pure
 */

/** Runs async critical sections one at a time, in the order {@link Mutex.run} was called. */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Runs `fn` after every previously queued section has settled; resolves or rejects with its outcome. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    // The next section waits for this one whatever its outcome.
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
