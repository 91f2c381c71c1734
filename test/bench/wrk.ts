/**
 * @module wrk from Debian, driven from the benchmarks: a Lua `done()` that prints the summary as
 * one JSON line (requests, bytes, errors and latency percentiles in µs), and a runner that starts
 * wrk with a time bound and parses that line. wrk measures latency from the moment a request is
 * written to the moment its response is read, per connection; it does not correct for
 * coordinated omission, so paced runs (a Lua `delay()`) report the latency of what was sent.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** wrk's `done()` summary, as {@link WRK_DONE_LUA} prints it. */
export interface WrkSummary {
  requests: number;
  bytes: number;
  durationUs: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  /** Responses with a status ≥ 400. */
  statusErrors: number;
  timeouts: number;
  latencyP50Us: number;
  latencyP90Us: number;
  latencyP99Us: number;
  latencyMaxUs: number;
  /** What the script wrote to stderr (e.g. one line per failed response). */
  stderr: string;
}

/** A Lua `done()` printing {@link WrkSummary} as one JSON line; append it to a wrk script. */
export const WRK_DONE_LUA = `
done = function(s, latency, requests)
  io.write(string.format('{"requests":%.0f,"bytes":%.0f,"durationUs":%.0f,"connectErrors":%.0f,"readErrors":%.0f,"writeErrors":%.0f,"statusErrors":%.0f,"timeouts":%.0f,"latencyP50Us":%.0f,"latencyP90Us":%.0f,"latencyP99Us":%.0f,"latencyMaxUs":%.0f}\\n',
    s.requests, s.bytes, s.duration, s.errors.connect, s.errors.read, s.errors.write, s.errors.status, s.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

/** Options of {@link runWrk}. */
export interface WrkRun {
  url: string;
  seconds: number;
  connections: number;
  threads?: number;
  /** Path of the Lua script (which must include {@link WRK_DONE_LUA}). */
  script: string;
  scriptArgs?: string[];
  /** Run wrk through this prefix, e.g. `['ip', 'netns', 'exec', 'ns1']`. */
  prefix?: string[];
  /** wrk's per-request timeout (default 10 s). */
  timeoutSeconds?: number;
  /** Called with the child as soon as it is spawned (so the caller can kill it by PID on abort). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Runs wrk and returns its summary; fails naming wrk's output if it exits non-zero or prints no summary. Killed after `seconds + 40` s. */
export function runWrk(run: WrkRun): Promise<WrkSummary> {
  const args = [`-t${String(run.threads ?? 1)}`, `-c${String(run.connections)}`, `-d${String(run.seconds)}s`, '--timeout', `${String(run.timeoutSeconds ?? 10)}s`, '-s', run.script, run.url,
    ...((run.scriptArgs ?? []).length > 0 ? ['--', ...(run.scriptArgs ?? [])] : [])];
  const [cmd, ...rest] = [...(run.prefix ?? []), 'wrk', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd ?? 'wrk', rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    run.onSpawn?.(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (run.seconds + 40) * 1000);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').reverse().find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) reject(new Error(`wrk failed (${String(code)}): ${out}${err}`));
      else resolve({ ...(JSON.parse(line) as Omit<WrkSummary, 'stderr'>), stderr: err });
    });
  });
}

/** "no errors", or the error counts by kind. */
export function wrkErrors(s: WrkSummary): string {
  const total = s.connectErrors + s.readErrors + s.writeErrors + s.statusErrors + s.timeouts;
  return total === 0 ? 'no errors' : `errors connect ${String(s.connectErrors)} read ${String(s.readErrors)} write ${String(s.writeErrors)} status ${String(s.statusErrors)} timeout ${String(s.timeouts)}`;
}
