// A node:test reporter that prints nothing while the run goes and, at its end, every failed test
// again: file, name and error. CI keeps only the tail of a long log, so a failure that happened
// early in the run must be repeated where the tail can see it.
// Used by scripts/run-tests.mjs next to the TAP reporter.
import { inspect } from 'node:util';

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* failureSummary(source) {
  /** @type {string[]} */
  const failures = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    const error = details?.error;
    // A suite fails when a test inside it fails; its own entry only repeats the child's.
    if (error?.failureType === 'subtestsFailed') continue;
    const cause = error?.cause ?? error;
    const message = cause instanceof Error ? (cause.stack ?? cause.message) : inspect(cause, { depth: 4 });
    failures.push(`✖ ${name}${file ? `\n  file: ${file}` : ''}\n  ${String(message).split('\n').slice(0, 30).join('\n  ')}`);
  }
  if (failures.length === 0) return;
  yield `\n# ${failures.length} failed test${failures.length === 1 ? '' : 's'} (repeated from above):\n${failures.join('\n\n')}\n`;
}
