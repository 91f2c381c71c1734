/**
 * @module Real processes for the controller tests: controller processes
 * (`node dist/agent/cli.js controller --config FILE`, on a fixed loopback port so they can be
 * killed and restarted at the same address) and rack agents (rack-child.ts). Every process is
 * killed after the test, also on failure; waits are bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../agent/cli.js', import.meta.url));
const RACK_CHILD = fileURLToPath(new URL('./rack-child.js', import.meta.url));

/** A free loopback TCP port (released again at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  return port;
}

/** A child process with its output lines, a wait for a line, and SIGKILL. */
export class Proc {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  stderr = '';
  readonly #waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stderr?.on('data', (c: Buffer) => { this.stderr = (this.stderr + c.toString()).slice(-20_000); });
    createInterface({ input: this.child.stdout ?? process.stdin }).on('line', (line) => {
      this.lines.push(line);
      if (this.lines.length > 5000) this.lines.splice(0, 1000);
      for (const w of this.#waiters.splice(0)) {
        if (w.pattern.test(line)) w.resolve(line);
        else this.#waiters.push(w);
      }
    });
    this.exited = new Promise((resolve) => { this.child.on('close', (code, signal) => { resolve({ code, signal }); }); });
  }

  /** Resolves with the first line (already seen or to come) matching `pattern`. @throws after `ms` or when the process ends first */
  async waitFor(pattern: RegExp, ms: number, what: string): Promise<string> {
    const seen = this.lines.find((l) => pattern.test(l));
    if (seen !== undefined) return seen;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<string>((resolve) => { this.#waiters.push({ pattern, resolve }); }),
        new Promise<string>((_, reject) => { timer = setTimeout(() => { reject(new Error(`${what}: no ${String(pattern)} within ${ms} ms; stderr: ${this.stderr.slice(-3000)}`)); }, ms); }),
        this.exited.then((e) => { throw new Error(`${what}: exited (${String(e.code)} ${String(e.signal)}) before ${String(pattern)}; stderr: ${this.stderr.slice(-3000)}`); }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill9(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Writes a controller config for `databaseUrl` on `port` in a temp folder (removed after `t`); resolves its path. */
export async function controllerConfigFile(t: TestContext, databaseUrl: string, port: number, extra = ''): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-controller-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'controller.yaml');
  await writeFile(path, `listen: 127.0.0.1:${port}\ndatabase:\n  url: ${JSON.stringify(databaseUrl)}\n  poolSize: 8\nofflineAfterSeconds: 30\n${extra}`);
  return path;
}

/** Starts a controller process and waits until it listens (killed after `t`). */
export async function startControllerProcess(t: TestContext, configPath: string): Promise<Proc> {
  const proc = new Proc([CLI, 'controller', '--config', configPath]);
  t.after(async () => {
    proc.kill9();
    await proc.exited;
  });
  await proc.waitFor(/controller listening/, 60_000, 'controller process');
  return proc;
}

/** Options of {@link startRack}. */
export interface RackOptions {
  stateDir: string;
  rack: string;
  token: string;
  urls: string[];
  mode: 'write' | 'drain';
  hosts: number;
  rounds: number;
  /** The child waits this long without a new command before it reports DONE. */
  alsoWaitMs: number;
}

/** Starts a rack agent child (killed after `t`). */
export function startRack(t: TestContext, o: RackOptions): Proc {
  const proc = new Proc([RACK_CHILD, o.stateDir, o.rack, o.token, o.urls.join(','), o.mode, String(o.hosts), String(o.rounds), String(o.alsoWaitMs)]);
  t.after(async () => {
    proc.kill9();
    await proc.exited;
  });
  return proc;
}

/** The `DONE {…}` report of a rack child. */
export async function rackDone(proc: Proc, ms: number, what: string): Promise<{ rv: Record<string, string> }> {
  const line = await proc.waitFor(/^DONE /, ms, what);
  return JSON.parse(line.slice(5)) as { rv: Record<string, string> };
}
