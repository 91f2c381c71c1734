/**
 * @module Worker thread that hashes a file (workerData: `{ path, algorithms }`) and posts
 * `{ digests }` or `{ error }`, so hashing multi-GiB images never blocks the agent's event loop.
 * Started by hash-file.ts. The thread first lowers its own priority by {@link HASH_NICE_STEPS},
 * as qemu-img conversions run (image-convert.ts): background work below the boot services.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { CONVERT_NICE_STEPS } from './image-convert.js';

/** Nice levels below its creator at which the hashing thread runs. */
const HASH_NICE_STEPS = CONVERT_NICE_STEPS;

// Linux keeps the nice value per thread and `who` 0 is the calling thread (setpriority(2),
// "BUGS"): this lowers the worker alone, never the event loop. Best effort.
try {
  setPriority(0, Math.min(19, getPriority(0) + HASH_NICE_STEPS));
} catch {
  // Not permitted: hash at the agent's priority.
}

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
