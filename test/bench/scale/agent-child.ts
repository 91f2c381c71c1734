/**
 * @module The agent under test as a child process for scale.bench.ts: writes a `local`
 * provisioner config (management and boot HTTP on loopback, no provisioning interface, so no
 * DHCP or TFTP), spawns `node [NODE_ARGS] dist/agent/cli.js agent --config …`, times spawn →
 * the "rackside agent ready" log line, keeps only the last lines of its output, and reads its
 * CPU time and memory from /proc (Linux).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI } from '../../helpers/agent-process.js';
import { freePort } from '../../helpers/local-agent.js';
import { atUnitNice } from '../../helpers/unit-nice.js';
import { agentChildEnv } from '../../helpers/integration.js';

/** Settings of the agent under test. */
export interface ScaleAgentConfig {
  /** Scratch directory: config, state and image cache go under it. */
  dir: string;
  /** `bmc.powerPollSeconds`. */
  powerPollSeconds: number;
  /** `bmc.concurrency`; absent: the agent's default. */
  bmcConcurrency?: number;
  /** `reconcile.concurrency`; absent: the agent's default. */
  reconcileConcurrency?: number;
}

/** A running agent child. */
export interface ScaleAgent {
  readonly pid: number;
  readonly url: string;
  /** Milliseconds from `spawn` to the ready log line. */
  readonly readyMs: number;
  /** The last lines the agent printed. */
  tail(): string;
  /** SIGTERM; resolves with the exit code and how long the shutdown took. */
  stop(timeoutMs?: number): Promise<{ code: number | null; ms: number }>;
}

/** CPU time (user + system) and memory of a process, from /proc. */
export interface ProcessSample {
  cpuMs: number;
  /** Of `cpuMs`, the time in the kernel (stime: syscalls, and the loopback TCP work they do). */
  systemCpuMs: number;
  /** CPU of the main thread (the event loop) alone. */
  mainThreadCpuMs: number;
  rssBytes: number;
  /** Peak RSS (VmHWM). */
  peakRssBytes: number;
}

/** Reads `/proc/<pid>/stat` and the main thread's `task/<pid>/stat` (utime and stime at 100 ticks/s) and `/proc/<pid>/status` (VmRSS, VmHWM). */
export function sampleProcess(pid: number): ProcessSample {
  // Fields after "(comm) ": state is [0], utime [11], stime [12] (proc(5) fields 14 and 15).
  const ticks = (path: string): [user: number, system: number] => {
    const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return [Number(fields[11] ?? 0) * 10, Number(fields[12] ?? 0) * 10];
  };
  const status = readFileSync(`/proc/${String(pid)}/status`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+([0-9]+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  const [user, system] = ticks(`/proc/${String(pid)}/stat`);
  const [mainUser, mainSystem] = ticks(`/proc/${String(pid)}/task/${String(pid)}/stat`);
  return { cpuMs: user + system, systemCpuMs: system, mainThreadCpuMs: mainUser + mainSystem, rssBytes: kib('VmRSS'), peakRssBytes: kib('VmHWM') };
}

/** Writes the config file once; returns its path. */
export async function writeScaleConfig(c: ScaleAgentConfig): Promise<string> {
  const path = join(c.dir, 'rackside.yaml');
  const httpPort = await freePort();
  await writeFile(path, [
    'agent:', '  id: scale-bench', `  stateDir: ${join(c.dir, 'state')}`,
    'provisioner: local',
    'management:', '  listen: 127.0.0.1:0',
    'http:', `  listen: 127.0.0.1:${String(httpPort)}`,
    'images:', `  cacheDir: ${join(c.dir, 'cache')}`,
    'bmc:', ...(c.bmcConcurrency === undefined ? [] : [`  concurrency: ${String(c.bmcConcurrency)}`]), `  powerPollSeconds: ${String(c.powerPollSeconds)}`,
    ...(c.reconcileConcurrency === undefined ? [] : ['reconcile:', `  concurrency: ${String(c.reconcileConcurrency)}`]),
    'log:', '  level: info',
    '',
  ].join('\n'));
  return path;
}

/** Spawns the agent on `configPath` with extra node flags (e.g. `--cpu-prof`) and waits for it to be ready. */
export async function spawnScaleAgent(configPath: string, nodeArgs: readonly string[] = [], timeoutMs = 120_000): Promise<ScaleAgent> {
  const started = performance.now();
  // At the shipped unit's Nice= (its event loop five levels up), as a head node runs it.
  const child: ChildProcess = spawn(...atUnitNice(process.execPath, [...nodeArgs, CLI, 'agent', '--config', configPath]), { stdio: ['ignore', 'pipe', 'pipe'], env: agentChildEnv() });
  const lines: string[] = [];
  let partial = '';
  let readyMs: number | undefined;
  let url: string | undefined;
  let onReady: (() => void) | undefined;
  const take = (chunk: Buffer): void => {
    const text = partial + chunk.toString();
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (readyMs === undefined && line.includes('rackside agent ready')) {
        readyMs = performance.now() - started;
        url = /"managementUrl":"([^"]+)"/.exec(line)?.[1];
        onReady?.();
      }
      lines.push(line);
      if (lines.length > 200) lines.shift();
    }
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code); }));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent not ready after ${String(timeoutMs)} ms:\n${lines.join('\n')}`));
    }, timeoutMs);
    onReady = () => { clearTimeout(timer); resolve(); };
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`agent exited with ${String(code)} before it was ready:\n${lines.join('\n')}`)); });
  });
  const pid = child.pid;
  if (pid === undefined || url === undefined || readyMs === undefined) throw new Error('agent ready line without a managementUrl');
  return {
    pid, url, readyMs,
    tail: () => lines.join('\n'),
    async stop(stopTimeoutMs = 30_000) {
      const t0 = performance.now();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => { child.kill('SIGKILL'); }, stopTimeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return { code, ms: performance.now() - t0 };
    },
  };
}
