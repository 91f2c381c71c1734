/**
 * @module Runs the real agent as a child process (`node dist/agent/cli.js agent --config …`)
 * on a scratch state dir and a free loopback port, and the real CLI against it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentChildEnv } from './integration.js';

/** The compiled CLI (`bin.rackside`). */
export const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../agent/cli.js');

/** A running agent child process. */
export interface AgentProcess {
  url: string;
  dir: string;
  child: ChildProcess;
  /** Everything the agent printed so far. */
  output(): string;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/** Makes a scratch directory; the caller removes it with {@link removeDir}. */
export function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `rackside-${prefix}-`));
}

export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

/**
 * Starts an agent with the given extra config (YAML text appended; its `provisioner:`,
 * `reconcile:`, `management:` and `log:` sections, if any, replace the defaults) and waits until
 * it is ready. `launcher` (e.g. `['strace', '-f', …]`) runs in front of node; `child` is then the
 * launcher, and stop() and kill() signal the agent it started (strace holds SIGTERM while it
 * traces) and wait for the launcher. An agent not ready in time is killed.
 */
export async function startAgentProcess(dir: string, extraConfig = '', timeoutMs = 20_000, launcher: readonly string[] = []): Promise<AgentProcess> {
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(
    configPath,
    [
      'agent:',
      '  id: test-rack',
      `  stateDir: ${join(dir, 'state')}`,
      ...(/^provisioner:/m.test(extraConfig) ? [] : ['provisioner: fixture']),
      ...(/^management:/m.test(extraConfig) ? [] : ['management:', '  listen: 127.0.0.1:0']),
      // A `reconcile:` section in extraConfig replaces this default (YAML keys must not repeat).
      ...(/^reconcile:/m.test(extraConfig) ? [] : ['reconcile:', '  timeScale: 0.001']),
      ...(/^log:/m.test(extraConfig) ? [] : ['log:', '  level: info']),
      extraConfig,
    ].join('\n'),
  );
  // RACKSIDE_AGENT_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to the agent's node, for profiling benches.
  const nodeArgs = (process.env.RACKSIDE_AGENT_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const command = [...launcher, process.execPath, ...nodeArgs, CLI, 'agent', '--config', configPath];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: agentChildEnv() });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => { resolveExit(code); }));
  const signal = (name: NodeJS.Signals): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const launched = launcher.length === 0 || child.pid === undefined ? [] : childrenOf(child.pid);
    if (launched.length === 0) child.kill(name);
    for (const pid of launched) {
      try { process.kill(pid, name); } catch { /* exited meanwhile */ }
    }
  };
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      signal('SIGKILL');
      reject(new Error(`agent not ready after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (): void => {
      const match = /"managementUrl":"([^"]+)"/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`agent exited with ${code} before it was ready:\n${output}`));
    });
  });
  return {
    url,
    dir,
    child,
    output: () => output,
    async stop() {
      signal('SIGTERM');
      return exited;
    },
    async kill() {
      signal('SIGKILL');
      await exited;
    },
  };
}

/** PIDs of a process's children (Linux /proc; empty once it has exited). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((x) => x !== '').map(Number);
  } catch {
    return [];
  }
}

/** Result of one CLI run. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `rackside ARGS…` against `server`. */
export function runCli(server: string, args: string[], stdin?: string, timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, RACKSIDE_SERVER: server },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rackside ${args.join(' ')} timed out`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}
