/**
 * @module Hashing files off the event loop: {@link hashFile} runs hash-worker.ts in a worker
 * thread and resolves with hex digests, one per algorithm, in a single read of the file.
 */
import { Worker } from 'node:worker_threads';

/** Resolves with the hex digest of `path` (optionally the byte range `[start, end]`) for each algorithm (`md5`, `sha256`, `sha512`). */
export function hashFile(path: string, algorithms: readonly string[], range?: { start: number; end: number }): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./hash-worker.js', import.meta.url), { workerData: { path, algorithms: [...algorithms], ...range } });
    let settled = false;
    worker.once('message', (m: { digests?: Record<string, string>; error?: string }) => {
      settled = true;
      if (m.digests !== undefined) resolve(m.digests);
      else reject(new Error(`hashing ${path} failed: ${m.error ?? 'unknown error'}`));
      void worker.terminate();
    });
    worker.once('error', (err) => {
      if (!settled) reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`hash worker for ${path} exited with code ${code}`));
    });
  });
}
