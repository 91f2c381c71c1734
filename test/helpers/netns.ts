/**
 * @module Network-namespace labs for integration tests with real peers (docs/test-peers.md,
 * "Network namespaces"). A {@link NetnsLab} creates namespaces named `<prefix>-<name>` under a prefix
 * unique to this process and lab (`rs<pid>n<counter>`), so parallel test runs cannot collide;
 * joins them through bridges that live in namespaces of their own (the root namespace is never
 * touched: veth pairs are created inside the bridge namespace with their peer moved straight
 * into the host namespace); brings loopback up and switches IPv6 off in each; runs commands
 * inside (`exec`, `spawn` — both through `ip netns exec`, which execs the command, so the PID
 * seen is the command's own); injects packet loss with an nft rule
 * (`numgen random mod 100 < N drop`, since `tc netem` is missing from this kernel); and tears
 * down exactly what it created — its processes by PID, then anything still running inside its
 * namespaces, then the namespaces (which takes their veths and bridges along) — even when the
 * test failed. {@link NetnsLab.create} registers that teardown with `t.after`; outside tests
 * (benchmarks) {@link NetnsLab.open} returns a lab the caller tears down. A process `exit`
 * hook removes whatever namespaces are still left as a last resort.
 *
 * Prerequisites: root and the tools a test names. Missing ones make the test skip with the
 * reason, or fail when `RACKSIDE_REQUIRE_INTEGRATION=1` (CI must not skip silently).
 *
 * ```ts
 * const lab = await NetnsLab.create(t, { tools: ['dhclient'] });
 * if (lab === undefined) return; // skipped
 * const br = await lab.bridge('lan');
 * const server = await lab.namespace('server');
 * await lab.attach(server, br, { address: '10.77.0.1/24' });
 * const out = await lab.exec(server, 'ip', ['-4', 'addr']);
 * ```
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'node:test';

/** True when CI demands real peers: a missing prerequisite fails instead of skipping. */
export const REQUIRE_INTEGRATION = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';

/** The result of a command run to completion. */
export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link NetnsLab.exec} and {@link runCommand}. */
export interface ExecOptions {
  /** Kill the command (SIGKILL) after this long (default 30 s). */
  timeoutMs?: number;
  /** Resolve with a non-zero exit instead of rejecting. */
  allowFailure?: boolean;
  /** Written to the command's stdin, which is then closed. */
  input?: string;
  env?: NodeJS.ProcessEnv;
}

/** A process started inside a namespace, with its output kept (the last 1 MiB of each stream). */
export interface LabProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Sends `signal` (default SIGTERM), then SIGKILL after `graceMs` (default 2 s); resolves on exit. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

/** A bridge: the namespace it lives in and its device name there. */
export interface Bridge {
  ns: string;
  device: string;
}

/** Options of {@link NetnsLab.attach}. */
export interface AttachOptions {
  /** Interface name inside the host namespace (default `eth0`). */
  ifname?: string;
  /** Address in CIDR form, e.g. `10.77.0.1/24`. */
  address?: string;
  /** MAC address of the interface (default: random, from the kernel). */
  mac?: string;
}

const MAX_KEPT_OUTPUT = 1 << 20;
let labCounter = 0;
const liveLabs = new Set<NetnsLab>();

/** Finds `tool` on PATH (plus the sbin directories, which root's PATH may lack under test runners). */
export function findTool(tool: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return join(dir, tool);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Why the prerequisites are not met (root, and each of `tools` on PATH), or `undefined` when they are. */
export function missingPrerequisites(tools: readonly string[] = [], needsRoot = true): string | undefined {
  if (needsRoot && process.getuid?.() !== 0) return 'needs root (network namespaces, privileged ports)';
  const missing = ['ip', ...tools].filter((tool) => findTool(tool) === undefined);
  if (missing.length > 0) return `missing tools: ${missing.join(', ')} (install with scripts/install-test-deps.sh)`;
  return undefined;
}

/**
 * Checks prerequisites for test `t`: true when met; otherwise fails the test under
 * `RACKSIDE_REQUIRE_INTEGRATION=1` (throws) or marks it skipped with the reason and returns false.
 */
export function requirePrerequisites(t: TestContext, tools: readonly string[] = [], needsRoot = true): boolean {
  const reason = missingPrerequisites(tools, needsRoot);
  if (reason === undefined) return true;
  if (REQUIRE_INTEGRATION) throw new Error(`integration prerequisites missing under RACKSIDE_REQUIRE_INTEGRATION=1: ${reason}`);
  t.skip(reason);
  return false;
}

/** Runs `command args` to completion (no shell). Rejects on a non-zero exit unless `allowFailure`. */
export function runCommand(command: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const result = { code, signal, stdout, stderr };
      if (code === 0 || options.allowFailure === true) resolve(result);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}: ${stderr.trim() || stdout.trim()}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

function keepTail(text: string): string {
  return text.length > MAX_KEPT_OUTPUT ? text.slice(text.length - MAX_KEPT_OUTPUT) : text;
}

/** Wraps a started child process as a {@link LabProcess}. */
export function trackProcess(child: ChildProcess): LabProcess {
  if (child.pid === undefined) throw new Error('process did not start');
  const pid = child.pid;
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out = keepTail(out + c.toString())));
  child.stderr?.on('data', (c: Buffer) => (err = keepTail(err + c.toString())));
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => { resolve(code); });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    child, pid, exited,
    stdout: () => out,
    stderr: () => err,
    async stop(signal = 'SIGTERM', graceMs = 2000) {
      const signalIfRunning = (s: NodeJS.Signals): void => {
        try {
          if (running()) process.kill(pid, s);
        } catch {
          // exited meanwhile
        }
      };
      if (running()) {
        signalIfRunning(signal);
        const timer = setTimeout(() => { signalIfRunning('SIGKILL'); }, graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined/false; rejects after `timeoutMs`. */
export async function waitFor<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 15_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A set of namespaces, bridges and processes owned by one test. */
export class NetnsLab {
  /** Unique per process and lab, e.g. `rs12345n1`. */
  readonly prefix: string;
  readonly #namespaces: string[] = [];
  readonly #processes: LabProcess[] = [];
  #vethCounter = 0;
  #tornDown: Promise<void> | undefined;

  private constructor(prefix: string) {
    this.prefix = prefix;
  }

  /**
   * Checks prerequisites (root, `ip`, `options.tools`), creates a lab and registers its teardown
   * with `t.after`. Returns `undefined` when the test was skipped for a missing prerequisite.
   */
  static async create(t: TestContext, options: { tools?: readonly string[] } = {}): Promise<NetnsLab | undefined> {
    if (!requirePrerequisites(t, options.tools ?? [])) return undefined;
    let lab: NetnsLab;
    try {
      lab = await NetnsLab.open({ tools: [] });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (REQUIRE_INTEGRATION) throw new Error(`integration prerequisites missing under RACKSIDE_REQUIRE_INTEGRATION=1: ${reason}`);
      t.skip(reason);
      return undefined;
    }
    t.after(() => lab.teardown());
    return lab;
  }

  /**
   * Creates a lab outside a test (benchmarks, the virtual rack): throws with the reason when a
   * prerequisite is missing or namespaces cannot be created. The caller must `teardown()`;
   * process exit removes what is left as a last resort.
   */
  static async open(options: { tools?: readonly string[] } = {}): Promise<NetnsLab> {
    const reason = missingPrerequisites(options.tools ?? []);
    if (reason !== undefined) throw new Error(reason);
    const lab = new NetnsLab(`rs${process.pid}n${++labCounter}`);
    // Namespaces need CAP_SYS_ADMIN as well as uid 0 (a container may have one without the other).
    const probe = `${lab.prefix}-probe`;
    const added = await runCommand('ip', ['netns', 'add', probe], { allowFailure: true });
    if (added.code !== 0) throw new Error(`cannot create network namespaces: ${added.stderr.trim()}`);
    await runCommand('ip', ['netns', 'del', probe]);
    liveLabs.add(lab);
    return lab;
  }

  /** Namespaces created so far, in creation order. */
  get namespaces(): readonly string[] {
    return this.#namespaces;
  }

  /** Creates namespace `<prefix>-<name>` with loopback up and IPv6 off; returns its full name. */
  async namespace(name: string): Promise<string> {
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(name)) throw new Error(`namespace name "${name}" must be 1-32 letters, digits, - or _`);
    const ns = `${this.prefix}-${name}`;
    await runCommand('ip', ['netns', 'add', ns]);
    this.#namespaces.push(ns);
    await this.sysctl(ns, { 'net.ipv6.conf.all.disable_ipv6': '1', 'net.ipv6.conf.default.disable_ipv6': '1' });
    await runCommand('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    return ns;
  }

  /** Creates a namespace holding one bridge device (`br0`, up, no STP: ports forward at once). */
  async bridge(name: string): Promise<Bridge> {
    const ns = await this.namespace(name);
    await runCommand('ip', ['-n', ns, 'link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0']);
    await runCommand('ip', ['-n', ns, 'link', 'set', 'br0', 'up']);
    return { ns, device: 'br0' };
  }

  /** Joins namespace `ns` to `bridge` with a veth pair: `ifname` (up, optionally addressed) in `ns`, the peer enslaved to the bridge. */
  async attach(ns: string, bridge: Bridge, options: AttachOptions = {}): Promise<void> {
    const ifname = options.ifname ?? 'eth0';
    const port = `v${++this.#vethCounter}`;
    await runCommand('ip', ['-n', bridge.ns, 'link', 'add', port, 'type', 'veth', 'peer', 'name', ifname, 'netns', ns]);
    await runCommand('ip', ['-n', bridge.ns, 'link', 'set', port, 'master', bridge.device, 'up']);
    if (options.mac !== undefined) await runCommand('ip', ['-n', ns, 'link', 'set', ifname, 'address', options.mac]);
    await runCommand('ip', ['-n', ns, 'link', 'set', ifname, 'up']);
    if (options.address !== undefined) await this.addAddress(ns, ifname, options.address);
  }

  /** Joins two namespaces directly with a veth pair (`ifA` in `nsA`, `ifB` in `nsB`), both up. */
  async link(nsA: string, ifA: string, nsB: string, ifB: string, addresses: { a?: string; b?: string } = {}): Promise<void> {
    await runCommand('ip', ['-n', nsA, 'link', 'add', ifA, 'type', 'veth', 'peer', 'name', ifB, 'netns', nsB]);
    await runCommand('ip', ['-n', nsA, 'link', 'set', ifA, 'up']);
    await runCommand('ip', ['-n', nsB, 'link', 'set', ifB, 'up']);
    if (addresses.a !== undefined) await this.addAddress(nsA, ifA, addresses.a);
    if (addresses.b !== undefined) await this.addAddress(nsB, ifB, addresses.b);
  }

  /** Adds `cidr` (e.g. `10.77.0.1/24`) to `ifname` in `ns`. */
  async addAddress(ns: string, ifname: string, cidr: string): Promise<void> {
    await runCommand('ip', ['-n', ns, 'addr', 'add', cidr, 'dev', ifname]);
  }

  /** Adds a route in `ns`: `destination` (CIDR or `default`) via `gateway`. */
  async addRoute(ns: string, destination: string, gateway: string): Promise<void> {
    await runCommand('ip', ['-n', ns, 'route', 'add', destination, 'via', gateway]);
  }

  /** Sets sysctls inside `ns` (written under /proc/sys, which shows the namespace's own values). */
  async sysctl(ns: string, values: Record<string, string>): Promise<void> {
    const script = Object.entries(values)
      .map(([key, value]) => `echo ${value} > /proc/sys/${key.replaceAll('.', '/')}`)
      .join(' && ');
    await this.exec(ns, 'sh', ['-c', script]);
  }

  /** Runs `command args` inside `ns` to completion. */
  async exec(ns: string, command: string, args: readonly string[] = [], options: ExecOptions = {}): Promise<ExecResult> {
    this.#checkOwn(ns);
    return await runCommand('ip', ['netns', 'exec', ns, command, ...args], options);
  }

  /** Starts `command args` inside `ns`; the lab stops it at teardown if the test has not. */
  spawn(ns: string, command: string, args: readonly string[] = [], options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions } = {}): LabProcess {
    this.#checkOwn(ns);
    const child = spawn('ip', ['netns', 'exec', ns, command, ...args], { stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
    const p = trackProcess(child);
    this.#processes.push(p);
    return p;
  }

  /**
   * Drops `percent` % of packets inside `ns` with nft (`numgen random mod 100 < N drop`), on
   * input, output or both, optionally only on one interface. Removed with the namespace.
   */
  async dropPercent(ns: string, percent: number, options: { direction?: 'input' | 'output' | 'both'; ifname?: string } = {}): Promise<void> {
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) throw new RangeError(`drop percent must be an integer 0-100, got ${percent}`);
    const direction = options.direction ?? 'both';
    const chains = direction === 'both' ? (['input', 'output'] as const) : [direction];
    const lines = ['table inet rackside_loss {'];
    for (const chain of chains) {
      const match = options.ifname === undefined ? '' : `${chain === 'input' ? 'iifname' : 'oifname'} "${options.ifname}" `;
      lines.push(`  chain ${chain} { type filter hook ${chain} priority 0; policy accept; ${match}numgen random mod 100 < ${percent} drop; }`);
    }
    lines.push('}');
    await this.exec(ns, 'nft', ['-f', '-'], { input: `${lines.join('\n')}\n` });
  }

  /**
   * Stops the lab's processes (SIGTERM, then SIGKILL), kills whatever else still runs inside its
   * namespaces (daemons they forked), and deletes its namespaces. Idempotent; collects every
   * failure and throws them together at the end so nothing is left half-removed.
   */
  teardown(): Promise<void> {
    this.#tornDown ??= this.#teardown();
    return this.#tornDown;
  }

  async #teardown(): Promise<void> {
    const problems: string[] = [];
    await Promise.all(this.#processes.map((p) => p.stop('SIGTERM', 2000).catch((err: unknown) => problems.push(`stop ${p.pid}: ${String(err)}`))));
    for (const ns of [...this.#namespaces].reverse()) {
      try {
        const pids = (await runCommand('ip', ['netns', 'pids', ns], { allowFailure: true })).stdout.split(/\s+/).filter((s) => /^\d+$/.test(s));
        for (const pid of pids) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // already gone
          }
        }
        await runCommand('ip', ['netns', 'del', ns]);
      } catch (err) {
        problems.push(`${ns}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.#namespaces.length = 0;
    liveLabs.delete(this);
    if (problems.length > 0) throw new Error(`netns lab ${this.prefix} teardown: ${problems.join('; ')}`);
  }

  /** Synchronous last-resort cleanup for process exit (namespaces only). */
  cleanupSync(): void {
    for (const p of this.#processes) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }
    for (const ns of this.#namespaces) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    this.#namespaces.length = 0;
  }

  #checkOwn(ns: string): void {
    if (!this.#namespaces.includes(ns)) throw new Error(`namespace ${ns} does not belong to lab ${this.prefix}`);
  }
}

// If the test process dies before t.after ran (uncaught error, process.exit), still remove the namespaces.
process.once('exit', () => {
  for (const lab of liveLabs) lab.cleanupSync();
});
