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

/** One host listing's bytes: the JSON, its entity tag and (made once, on demand) its gzip form. */
export interface HostListBody {
  /** The whole `BareMetalHostList` document, UTF-8. */
  json: Buffer;
  /** A strong entity tag (RFC 9110 §8.8.3), unique to this text within this process's run. */
  etag: string;
  /** The document gzipped; computed off the event loop the first time it is asked for, then kept. */
  gzip(): Promise<Buffer>;
}

/**
 * Returns a function that turns the listing's items text into its {@link HostListBody}, reusing
 * the last body while the text is unchanged (the store hands out the same string until the next
 * commit): encoding 1.3 MB, tagging it and compressing it happen once per change, not per request.
 * Entity tags are `"<runId>-<generation>"`, so a tag from before a restart never matches.
 */
export function hostListBodies(runId: string, compress: (json: Buffer) => Promise<Buffer>): (items: string) => HostListBody {
  let last: { items: string; body: HostListBody } | undefined;
  let generation = 0;
  return (items) => {
    if (last?.items === items) return last.body;
    generation += 1;
    const json = Buffer.from(`{"apiVersion":"metal3.io/v1alpha1","kind":"BareMetalHostList","items":${items}}`);
    let gzipped: Promise<Buffer> | undefined;
    const body: HostListBody = {
      json,
      etag: `"${runId}-${String(generation)}"`,
      gzip: () => {
        gzipped ??= compress(json);
        gzipped.catch(() => { gzipped = undefined; }); // a failed compression is tried again next time
        return gzipped;
      },
    };
    last = { items, body };
    return body;
  };
}
