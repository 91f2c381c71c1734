/**
 * @module Command-line entry of the PXE-storm simulator, to run inside the client network
 * namespace: `ip netns exec NS node dist/test/lab/pxe-sim/cli.js --clients 50 --json` (flags in
 * storm-args.ts). Prints the summary text, or with `--json` the whole {@link StormResult} as one
 * JSON line; `--out FILE` writes that JSON to FILE instead. Exits 0 when every client booted,
 * 1 when some failed, 2 on bad flags or a crash.
 */
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { runStorm } from './storm.js';
import { parseStormArgs } from './storm-args.js';
import { formatStormSummary, summarizeStorm } from './storm-summary.js';
import type { StormResult } from './types.js';

/** Runs the CLI with `args`; resolves with the exit code. */
export async function runStormCli(args: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseStormArgs(args);
  } catch (err) {
    process.stderr.write(`pxe-sim: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const { options, output } = parsed;
  let done = 0;
  if (output.progress) {
    options.onClientDone = (r) => {
      done++;
      process.stderr.write(`pxe-sim: ${done}/${options.clients} ${r.mac} ${r.failure === undefined ? 'ok' : `FAILED in ${r.failure.phase}: ${r.failure.reason}`}\n`);
    };
  }
  const result: StormResult = await runStorm(options);
  if (output.out !== undefined) await writeFile(output.out, JSON.stringify(result));
  else if (output.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  if (!output.json || output.out !== undefined) process.stdout.write(`${formatStormSummary(summarizeStorm(result))}\n`);
  return result.clients.every((c) => c.failure === undefined) ? 0 : 1;
}

const invoked = process.argv[1];
if (invoked !== undefined && import.meta.url === pathToFileURL(invoked).href) {
  runStormCli(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err: unknown) => {
    process.stderr.write(`pxe-sim: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 2;
  });
}
