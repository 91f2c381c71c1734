/**
 * @module Runs a storm in the background from another process: {@link startStorm} starts
 * `workers` copies of cli.ts inside a namespace of a {@link NetnsLab} (`ip netns exec NS node
 * cli.js … --out FILE`), each with its slice of the clients (consecutive indexes, so MACs never
 * overlap), and merges their results. Use it from a test or bench that needs "N firmware
 * clients booting" while it measures something else; the lab stops the processes at teardown
 * if the caller has not, and `stop()` kills them by PID at once.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LabProcess, NetnsLab } from '../../helpers/netns.js';
import { formatStormArgs } from './storm-args.js';
import { mergeStormResults } from './storm-summary.js';
import type { StormOptions, StormResult } from './types.js';

/** The compiled CLI. */
export const STORM_CLI = resolve(dirname(fileURLToPath(import.meta.url)), 'cli.js');

/** Options of {@link startStorm}. */
export interface StartStormOptions extends Omit<StormOptions, 'onClientDone'> {
  lab: NetnsLab;
  /** The client namespace (it needs the routes of storm-lab.ts). */
  ns: string;
  /** A directory for the result files (removed again once read). */
  dir: string;
  /** Client processes to split the clients over; default 1. */
  workers?: number;
  /** Kill the workers when they have not finished after this long; default 15 minutes. */
  timeoutMs?: number;
  /**
   * Run the workers at this nice(1) level (default 0). On one box the simulated clients compete
   * with the server for the same cores; in a rack they are other machines.
   */
  nice?: number;
}

/** A storm running in the background. */
export interface RunningStorm {
  /** PIDs of the worker processes. */
  readonly pids: readonly number[];
  /** Resolves with the merged result once every worker exited; rejects when one crashed or timed out. */
  readonly result: Promise<StormResult>;
  /** Kills the workers (SIGTERM, then SIGKILL) and waits for them. */
  stop(): Promise<void>;
}

/** Splits `clients` into `workers` consecutive slices: [first index, count] each. */
export function sliceClients(firstIndex: number, clients: number, workers: number): [number, number][] {
  const k = Math.max(1, Math.min(workers, clients));
  return Array.from({ length: k }, (_, w) => {
    const from = Math.floor((w * clients) / k);
    const to = Math.floor(((w + 1) * clients) / k);
    return [firstIndex + from, to - from];
  });
}

/** Starts the storm (see the module comment). */
export function startStorm(o: StartStormOptions): RunningStorm {
  const { lab, ns, dir, workers = 1, timeoutMs = 15 * 60_000, nice = 0, ...storm } = o;
  const slices = sliceClients(storm.firstIndex ?? 0, storm.clients, workers);
  const runs: { process: LabProcess; out: string }[] = slices.map(([firstIndex, clients], w) => {
    const out = join(dir, `pxe-sim-${process.pid}-${firstIndex}-w${w}.json`);
    const args = [STORM_CLI, ...formatStormArgs({ ...storm, firstIndex, clients }, { out })];
    // nice(1) execs node in place, so the PID the lab stops is the worker's.
    return { process: nice === 0 ? lab.spawn(ns, process.execPath, args) : lab.spawn(ns, 'nice', ['-n', String(nice), process.execPath, ...args]), out };
  });
  const stop = async (): Promise<void> => {
    await Promise.all(runs.map((r) => r.process.stop('SIGTERM', 2000)));
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void stop().then(() => { reject(new Error(`storm workers still running after ${timeoutMs} ms; killed`)); });
    }, timeoutMs);
  });
  const finished = (async (): Promise<StormResult> => {
    const parts = await Promise.all(runs.map(async (r): Promise<StormResult> => {
      const code = await r.process.exited;
      try {
        if (code !== 0 && code !== 1) throw new Error(`storm worker ${r.process.pid} exited with ${String(code)}: ${r.process.stderr().slice(-2000)}`);
        return JSON.parse(await readFile(r.out, 'utf8')) as StormResult;
      } finally {
        await rm(r.out, { force: true });
      }
    }));
    return mergeStormResults(parts);
  })();
  const result = Promise.race([finished, timedOut]).finally(() => { clearTimeout(timer); });
  result.catch(() => undefined); // the caller may only call stop(); an unobserved rejection must not crash it
  return { pids: runs.map((r) => r.process.pid), result, stop };
}
