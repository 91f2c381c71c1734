/**
 * @module The body of `GET /api/v1/hosts`, built once for all the requests waiting together:
 * at 1000 hosts one listing costs ≈ 20 ms of CPU (LevelDB iteration, JSON decode, JSON encode
 * of 1.3 MB; test/bench/scale.bench.ts), so eight clients polling at once each waited for the
 * seven listings before theirs. Requests that arrive while a listing is being built share the
 * *next* one, which starts after they arrived, so a client still reads its own acknowledged
 * writes (a listing that had already started might predate them).
 */

/**
 * Wraps `build` so concurrent calls share runs: a call when nothing runs starts a run; calls
 * made while a run is in progress all get the one run started right after it settles. Every
 * caller therefore gets the result (or the rejection) of a run that started after its call.
 */
export function coalesceAfterArrival<T>(build: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const run = build();
    running = run;
    const done = (): void => {
      if (running === run) running = undefined;
    };
    run.then(done, done);
    return run;
  };
  return () => {
    if (running === undefined) return start();
    next ??= running.then(() => undefined, () => undefined).then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}
