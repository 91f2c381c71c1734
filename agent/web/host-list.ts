/**
 * @module The body of `GET /api/v1/hosts`, built once for all the requests waiting together:
 * at 1000 hosts one listing costs ≈ 14 ms of CPU (JSON decode and encode of 1.3 MB;
 * test/bench/scale.bench.ts) and runs without yielding, so eight clients polling at once each
 * waited for the seven listings before theirs. A listing starts one event-loop turn after the
 * request that asks for it (every request already read from a socket by then joins it) or,
 * while another listing runs, right after that one; requests join a listing that has not
 * started yet, never one in progress, so a client still reads its own acknowledged writes.
 */

/** Runs a callback soon, after the I/O already waiting (default `setImmediate`). */
export type Defer = (callback: () => void) => void;

/**
 * Wraps `build` so calls share runs that have not started yet: a call joins the scheduled run
 * if there is one, else schedules one — after `defer` when nothing runs, else after the running
 * one settles (and `defer`). Every caller therefore gets the result (or the rejection) of a run
 * that started after its call.
 */
export function coalesceAfterArrival<T>(build: () => Promise<T>, defer: Defer = (callback) => { setImmediate(callback); }): () => Promise<T> {
  let running: Promise<unknown> = Promise.resolve();
  let scheduled: Promise<T> | undefined;
  return () => {
    scheduled ??= running
      .then(() => new Promise<void>((resolve) => { defer(resolve); }))
      .then(() => {
        scheduled = undefined;
        const run = build();
        running = run.then(() => undefined, () => undefined);
        return run;
      });
    return scheduled;
  };
}
