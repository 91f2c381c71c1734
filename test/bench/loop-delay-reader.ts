/**
 * @module The bench side of the loop-delay probe (loop-delay-probe.ts, loaded into the process
 * under test): signals the process for a window and reads it back. Kept apart from the probe so
 * the process under test loads none of the test helpers used here.
 */
import { readFile, rm } from 'node:fs/promises';
import { waitFor } from '../helpers/netns.js';
import { armedFile, type LoopDelayWindow } from './loop-delay-probe.js';

/** Whether `value` is a window the probe wrote. */
function isWindow(value: unknown): value is LoopDelayWindow {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return ['p50Ms', 'p99Ms', 'maxMs', 'samples', 'waitP99Ms', 'stalledShare', 'windowMs'].every((k) => typeof record[k] === 'number');
}

/** The text of `path` once it exists; throws at once when process `pid` is gone (it never will). */
async function fileOfLiveProcess(pid: number, path: string): Promise<string | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text !== undefined) return text;
  try {
    process.kill(pid, 0); // signal 0: whether it exists, nothing sent
  } catch {
    throw new Error(`loop-delay probe: process ${String(pid)} exited before writing ${path}`);
  }
  return undefined;
}

/**
 * Ends the probe's current window in process `pid` (SIGUSR2) and returns it, read from `out` once
 * the process has written it (within `timeoutMs`; the write waits for the loop's next turn). A
 * process still starting is waited for until its probe is armed: SIGUSR2 before that would end it
 * (the signal's default action; CI once signalled a child 500 ms after spawning it, too early).
 */
export async function readLoopDelayWindow(pid: number, out: string, timeoutMs = 10_000): Promise<LoopDelayWindow> {
  const deadline = Date.now() + timeoutMs;
  await waitFor(() => fileOfLiveProcess(pid, armedFile(out)), `process ${String(pid)}'s loop-delay probe, which never armed (${armedFile(out)}; was it started with loopDelayProbeArg?)`, timeoutMs, 20);
  await rm(out, { force: true });
  process.kill(pid, 'SIGUSR2');
  const text = await waitFor(() => fileOfLiveProcess(pid, out), `process ${String(pid)}'s loop-delay window in ${out}`, Math.max(0, deadline - Date.now()), 20);
  const parsed: unknown = JSON.parse(text);
  if (!isWindow(parsed)) throw new Error(`loop-delay probe: unexpected ${text.trim()} in ${out}`);
  return parsed;
}
