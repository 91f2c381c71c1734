/**
 * @module Worker thread that hashes a file (workerData: `{ path, algorithms }`) and posts
 * `{ digests }` or `{ error }`, so hashing multi-GiB images never blocks the agent's event loop.
 * Started by hash-file.ts. The thread first lowers its own priority as qemu-img conversions run
 * (image-convert.ts `runAsBackground`): background work below the boot services.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { runAsBackground } from './image-convert.js';

runAsBackground(0);

interface Job {
  path: string;
  algorithms: string[];
  start?: number;
  end?: number;
}

const job = workerData as Job;
const hashes = job.algorithms.map((a) => createHash(a));
const stream = createReadStream(job.path, { highWaterMark: 1024 * 1024, ...(job.start === undefined ? {} : { start: job.start }), ...(job.end === undefined ? {} : { end: job.end }) });
stream.on('data', (chunk) => {
  for (const h of hashes) h.update(chunk);
});
stream.on('error', (err) => {
  parentPort?.postMessage({ error: err.message });
});
stream.on('end', () => {
  parentPort?.postMessage({ digests: Object.fromEntries(job.algorithms.map((a, i) => [a, hashes[i]?.digest('hex')])) });
});
