/**
 * @module The agent builds its own ramdisk (docs/getting-started.md, docs/provisioning.md): at
 * start, and again when its inputs change (a new kernel package version, other ramdisk
 * scripts, other configured kernel or ISO arguments: images/build-check.ts), the build on disk
 * in `<images.cacheDir>/ramdisk` is compared with what a build now would use; a missing or stale
 * one is rebuilt in the background by `rackside images build --progress json` in a child
 * process at background CPU priority (nice 10, like image conversion), into a scratch directory moved into place when
 * complete. The ISO is built only once a virtual-media host needs it (an ISO build also holds
 * the kernel and initrd). Hosts that need a ramdisk not ready yet wait (the local provisioner
 * asks {@link RamdiskBuilds.gate} before it boots one) and are woken when the build ends; a
 * failed build is retried every 10 minutes. Progress is a `RamdiskBuild` event per step, the
 * status page's boot-services panel, `/metrics` and a status file `rackside doctor` reads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Gauge, type Registry } from 'prom-client';
import {
  backgroundNice, decodeManifest, expectedBuildInputs, HEAD_NODE_ARCH, parseProgressLine, ramdiskSubdir, staleReasons,
  type BuildPhase, type BuildProgress, type DebianArch, type ExpectedBuildInputs, type KernelSource,
} from '../../../images/index.js';
import type { Logger } from '../../log.js';
import type { EventLog } from '../../store/types.js';
import {
  buildErrorLine, buildFailureFix, buildingMessage, failureMessage, waitMessage, type RamdiskBuildStatus, type RamdiskFormat, type RamdiskGate,
} from './ramdisk-build-status.js';

/** The status file beside the ramdisk directory that `rackside doctor` reads (agent/doctor/probes.ts). */
export const RAMDISK_BUILD_STATUS_FILE = 'ramdisk-build.json';

/** The status file of `arch`'s build: {@link RAMDISK_BUILD_STATUS_FILE} for the head node's, `ramdisk-build-<arch>.json` beside it for another. */
export function ramdiskStatusFile(arch: DebianArch): string {
  return arch === HEAD_NODE_ARCH ? RAMDISK_BUILD_STATUS_FILE : `ramdisk-build-${arch}.json`;
}

/** A finished build child: exit code (null: killed) and its stderr. */
export interface BuildRun {
  code: number | null;
  stderr: string;
}

/** Runs `rackside images build` with `args`, calling `onLine` for each stdout line; `started` gets the child to stop it. */
export type BuildRunner = (args: readonly string[], onLine: (line: string) => void, started: (child: ChildProcess) => void) => Promise<BuildRun>;

/** Options of {@link RamdiskBuilds}. */
export interface RamdiskBuildsOptions {
  /** `images.cacheDir`: the build goes to `ramdisk/` (another architecture's to `ramdisk/<arch>/`), Debian packages to `build/`, the status file beside them. */
  cacheDir: string;
  /** The Debian architecture built (default the head node's); another one is built with `--arch` from its own packages. */
  arch?: DebianArch;
  /** `images.ramdisk.kernel`/`.modules` as a source; a string: why the configured kernel cannot be used. */
  kernel: KernelSource | string;
  /** `images.ramdisk.kernelParams`, baked into the ISO's boot entries. */
  isoKernelArgs?: readonly string[];
  agentVersion: string;
  events: Pick<EventLog, 'appendEvents'>;
  logger: Logger;
  /** Reconciles a host soon (a waiting host, when the build ends). */
  wake: (name: string) => void;
  nowMs: () => number;
  /** The child process (tests inject a fake); default {@link spawnImagesBuild}. */
  run?: BuildRunner;
  /** What a build now would use (tests inject it); default images' `expectedBuildInputs` over the options above. */
  expectedInputs?: (format: RamdiskFormat) => Promise<ExpectedBuildInputs>;
  /** How often a current build is checked against its inputs again (default 1 h), and a failed one retried (10 min). */
  recheckMs?: number;
  retryMs?: number;
}

const CLI = fileURLToPath(new URL('../../cli.js', import.meta.url));

/**
 * Spawns `nice -n N node cli.js images build ARGS` at the niceness of the agent's other background
 * work (images/image-convert.ts `backgroundNice`: 10 steps below normal, so nice 10 under the
 * unit's Nice=-5; nice(1) adds to the current value). Not 19: beside CPU-bound processes at nice 0
 * a nice-19 build gets ≈ 1.5 % of a core (CFS weight 15 against 1024) and hosts waiting for it
 * wait without end; at nice 10 it gets ≈ 10 % and finishes.
 */
export const spawnImagesBuild: BuildRunner = (args, onLine, started) => new Promise((resolve) => {
  const own = getPriority(0);
  const adjustment = Math.max(0, backgroundNice(own) - own);
  const child = spawn('nice', ['-n', String(adjustment), process.execPath, CLI, 'images', 'build', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  started(child);
  let stderr = '';
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-16_384); });
  child.on('error', (error) => { stderr += `\nerror: cannot start the build: ${error.message}`; });
  child.on('close', (code) => { resolve({ code, stderr }); });
});

/** The background ramdisk build (see the module comment). */
export class RamdiskBuilds {
  readonly #ramdiskDir: string;
  readonly #arch: DebianArch;
  #started = false;
  /** What is on disk and current: the format served, or none. */
  #servable: RamdiskFormat | undefined;
  #status: RamdiskBuildStatus;
  /** The format the hosts need: `iso` once a virtual-media host asked. */
  #target: RamdiskFormat = 'initrd';
  /** Hosts that waited (or failed) on the build, with the message they were last told. */
  readonly #waiting = new Map<string, { message: string; format: RamdiskFormat }>();
  #running: Promise<void> | undefined;
  #again = false;
  #child: ChildProcess | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(private readonly options: RamdiskBuildsOptions) {
    this.#arch = options.arch ?? HEAD_NODE_ARCH;
    this.#ramdiskDir = join(options.cacheDir, ramdiskSubdir(this.#arch, HEAD_NODE_ARCH));
    this.#status = { state: 'checking', format: 'initrd', arch: this.#arch, message: 'checking the build on disk against its inputs', since: new Date(options.nowMs()).toISOString() };
  }

  /** Starts the first check (and build) in the background; `needIso`: a virtual-media host is known already. */
  start(needIso: boolean): void {
    this.#started = true;
    if (needIso) this.#target = 'iso';
    this.#kick();
  }

  /** The status as reported (status page, metrics, status file). */
  status(): RamdiskBuildStatus {
    return { ...this.#status };
  }

  /**
   * Whether host `name` may boot a ramdisk of `format` now: `ready`, `wait` (the build runs;
   * the host is woken when it ends) or `failed` (the reason and fix; it is woken when a retry
   * succeeds). Asking for `iso` starts an ISO build when there is none; the first ask of a
   * build never started (another architecture's, built only once a host needs it) starts it.
   */
  gate(name: string, format: RamdiskFormat): RamdiskGate {
    if (!this.#started) this.start(false);
    if (format === 'iso' && this.#target !== 'iso') {
      this.#target = 'iso';
      this.#kick();
    }
    if (servable(this.#servable, format)) {
      return { kind: 'ready', waited: this.#waiting.delete(name) };
    }
    const status = this.#status;
    const message = status.state === 'failed' ? failureMessage(status) : waitMessage(status);
    const changed = this.#waiting.get(name)?.message !== message;
    this.#waiting.set(name, { message, format });
    return status.state === 'failed' ? { kind: 'failed', message, changed } : { kind: 'wait', message, changed };
  }

  /** Forgets host `name` (deleted or detached). */
  forget(name: string): void {
    this.#waiting.delete(name);
  }

  /** Stops the timer and the build child (by its PID); resolves when the current run has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#child?.kill('SIGTERM');
    await this.#running;
  }

  /** Runs {@link #ensure} unless it runs; then once more after it. */
  #kick(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.#ensure().catch((error: unknown) => { this.#fail(error instanceof Error ? error.message : String(error), undefined); });
      } while (this.#repeat());
    })().finally(() => {
      this.#running = undefined;
      this.#schedule();
    });
  }

  /** Whether a kick arrived during the run that just ended (read through a call: it changes across awaits). */
  #repeat(): boolean {
    return this.#again && !this.#stopped;
  }

  /** Whether {@link stop} was called (read through a call: it changes across awaits). */
  #isStopped(): boolean {
    return this.#stopped;
  }

  #schedule(): void {
    if (this.#stopped) return;
    const ms = this.#status.state === 'failed' ? this.options.retryMs ?? 10 * 60_000 : this.options.recheckMs ?? 60 * 60_000;
    this.#timer = setTimeout(() => { this.#kick(); }, ms);
    this.#timer.unref();
  }

  async #setStatus(status: Omit<RamdiskBuildStatus, 'since' | 'lastBuildSeconds'>, event?: { type: 'Normal' | 'Warning'; reason: string }): Promise<void> {
    const lastBuildSeconds = this.#status.lastBuildSeconds;
    this.#status = { ...status, arch: this.#arch, ...(lastBuildSeconds === undefined ? {} : { lastBuildSeconds }), since: new Date(this.options.nowMs()).toISOString() };
    await writeFile(join(this.options.cacheDir, ramdiskStatusFile(this.#arch)), `${JSON.stringify(this.#status, null, 2)}\n`).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'writing the ramdisk build status file failed');
    });
    if (event === undefined) return;
    await this.options.events.appendEvents([{
      time: this.#status.since, type: event.type, reason: event.reason, message: event.type === 'Warning' ? failureMessage(this.#status) : this.#status.message,
      source: 'ramdisk-build', data: { ...this.#status },
    }]).catch((error: unknown) => { this.options.logger.warn({ err: error }, 'recording a ramdisk build event failed'); });
  }

  /** Checks the build on disk; builds when it is missing or stale. */
  async #ensure(): Promise<void> {
    const format = this.#target;
    // images.ramdisk.kernel is a kernel of the head node's architecture: another one takes Debian's.
    const kernel = this.#arch === HEAD_NODE_ARCH ? this.options.kernel : { kind: 'debian' as const };
    await mkdir(this.options.cacheDir, { recursive: true });
    if (typeof kernel === 'string') {
      this.#fail(kernel, format);
      return;
    }
    const why = await this.#staleness(format, kernel);
    if (why.length === 0) return;
    const reason = why.join('; ');
    this.options.logger.info({ format, reason }, 'building the ramdisk in the background');
    await this.#build(format, kernel, reason);
  }

  /** Reasons to (re)build for `format` (empty: the build on disk is current, and now served). */
  async #staleness(format: RamdiskFormat, kernel: KernelSource): Promise<string[]> {
    const text = await readFile(join(this.#ramdiskDir, 'manifest.json'), 'utf8').catch(() => undefined);
    if (text === undefined) return ['no ramdisk has been built on this head node yet'];
    let manifest;
    try {
      manifest = decodeManifest(text);
    } catch (error) {
      return [`the build on disk is unreadable (${error instanceof Error ? error.message : String(error)})`];
    }
    const expected = this.options.expectedInputs !== undefined
      ? await this.options.expectedInputs(format)
      : await expectedBuildInputs({ format, arch: this.#arch, cacheDir: join(this.options.cacheDir, 'build'), agentVersion: this.options.agentVersion, kernel, ...(this.options.isoKernelArgs === undefined ? {} : { isoKernelArgs: this.options.isoKernelArgs }) });
    const reasons = staleReasons(manifest, expected);
    // What is on disk still serves the formats it covers until a rebuild replaces it.
    const onDisk = manifest.format;
    if (staleReasons(manifest, { ...expected, format: onDisk }).length === 0) this.#servable = onDisk;
    if (reasons.length === 0) {
      if (this.#status.state !== 'ready' || this.#status.format !== onDisk) {
        await this.#setStatus({ state: 'ready', format: onDisk, message: `the ${this.#arch} ramdisk${onDisk === 'iso' ? ' and ISO' : ''} on disk is current (kernel ${manifest.inputs.kernel.release})` }, { type: 'Normal', reason: 'RamdiskBuild' });
        this.#wakeWaiting();
      }
    }
    return reasons;
  }

  async #build(format: RamdiskFormat, kernel: KernelSource, reason: string): Promise<void> {
    if (this.#stopped) return;
    // Beside the served directory, never inside one boot HTTP serves (another architecture's lies in ramdisk/).
    const scratch = join(this.options.cacheDir, `${ramdiskSubdir(this.#arch, HEAD_NODE_ARCH).replace('/', '-')}.building`);
    await rm(scratch, { recursive: true, force: true });
    const startedMs = this.options.nowMs();
    await this.#setStatus({ state: 'building', format, message: `building the ${this.#arch} ${format} ramdisk: ${reason}` }, { type: 'Normal', reason: 'RamdiskBuild' });
    const args = [
      '--output', scratch, '--cache-dir', join(this.options.cacheDir, 'build'), ...(this.#arch === HEAD_NODE_ARCH ? [] : ['--arch', this.#arch]), '--format', format, '--agent-version', this.options.agentVersion, '--progress', 'json',
      ...(kernel.kind === 'tree' ? ['--kernel', kernel.vmlinuzPath, '--modules', kernel.modulesDir] : []),
      ...(this.options.isoKernelArgs === undefined ? [] : ['--kernel-args', this.options.isoKernelArgs.join(' ')]),
    ];
    let progressChain = Promise.resolve();
    const run = await (this.options.run ?? spawnImagesBuild)(args, (line) => {
      const progress = parseProgressLine(line);
      if (progress !== undefined) progressChain = progressChain.then(() => this.#progress(format, progress));
    }, (child) => { this.#child = child; });
    this.#child = undefined;
    await progressChain;
    if (this.#isStopped()) return;
    if (run.code !== 0) {
      this.#fail(buildErrorLine(run.stderr, run.code === null ? 'killed' : `exit ${run.code}`), format);
      return;
    }
    await this.#install(scratch);
    this.#servable = format;
    const seconds = Math.round((this.options.nowMs() - startedMs) / 100) / 10;
    this.#status.lastBuildSeconds = seconds;
    await this.#setStatus({ state: 'ready', format, message: `built the ${this.#arch} ${format} ramdisk in ${seconds} s` }, { type: 'Normal', reason: 'RamdiskBuild' });
    this.options.logger.info({ format, seconds }, 'ramdisk built');
    this.#wakeWaiting();
  }

  async #progress(format: RamdiskFormat, progress: BuildProgress): Promise<void> {
    const phase: BuildPhase = progress.phase;
    const status = { state: 'building' as const, format, arch: this.#arch, phase, step: progress.step, total: progress.total, percent: progress.percent, message: '', since: '' };
    await this.#setStatus({ ...status, message: buildingMessage(status) }, { type: 'Normal', reason: 'RamdiskBuild' });
  }

  /** Moves a complete build from `scratch` into the served directory: the manifest goes last (its presence marks a complete build). */
  async #install(scratch: string): Promise<void> {
    await mkdir(this.#ramdiskDir, { recursive: true });
    await rm(join(this.#ramdiskDir, 'manifest.json'), { force: true });
    for (const name of ['vmlinuz', 'initrd', 'rackside.iso']) {
      await rename(join(scratch, name), join(this.#ramdiskDir, name)).catch(async (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || name !== 'rackside.iso') throw error;
        await rm(join(this.#ramdiskDir, name), { force: true }); // an initrd build: no ISO of an older build stays beside it
      });
    }
    await rename(join(scratch, 'manifest.json'), join(this.#ramdiskDir, 'manifest.json'));
    await rm(scratch, { recursive: true, force: true });
  }

  #fail(reason: string, format: RamdiskFormat | undefined): void {
    const fix = buildFailureFix(reason, this.options.cacheDir, this.#arch);
    this.options.logger.error({ reason, fix }, `the ${this.#arch} ramdisk build failed`);
    void this.#setStatus({ state: 'failed', format: format ?? this.#target, message: reason, fix }, { type: 'Warning', reason: 'RamdiskBuildFailed' }).then(() => { this.#wakeWaiting(); });
  }

  /**
   * Wakes the waiting hosts: after a failure all of them (to record it), after a build only
   * those whose format is now served — a host waiting for the ISO is not woken by the initrd.
   */
  #wakeWaiting(): void {
    const failed = this.#status.state === 'failed';
    for (const [name, { format }] of this.#waiting) {
      if (failed || servable(this.#servable, format)) this.options.wake(name);
    }
  }
}

/** Whether a host asking for `format` can boot from the build `served` (the ISO build carries the initrd too). */
function servable(served: RamdiskFormat | undefined, format: RamdiskFormat): boolean {
  return served === 'iso' || (served === 'initrd' && format === 'initrd');
}

const BUILD_PHASES = ['checking', 'kernel', 'busybox', 'initramfs', 'compress', 'write', 'iso', 'ready', 'failed'] as const;

/** The labels of one build's series: the head node's carry none (as before other architectures existed), another's `arch`. */
function archLabel(status: RamdiskBuildStatus): { arch?: string } {
  return status.arch === undefined || status.arch === HEAD_NODE_ARCH ? {} : { arch: status.arch };
}

/**
 * Adds `rackside_ramdisk_build_*` to `registry` (docs/metrics.md) for every build `statuses`
 * returns: the head node's series without an `arch` label, each other architecture's with one.
 */
export function registerRamdiskBuildMetrics(registry: Registry, statuses: () => readonly RamdiskBuildStatus[]): void {
  new Gauge({
    name: 'rackside_ramdisk_build_phase', help: 'The background ramdisk build: 1 for the phase it is in (a build step, checking, ready or failed), 0 for the others; arch labels another architecture\'s build.',
    labelNames: ['phase', 'arch'], registers: [registry],
    collect() {
      for (const s of statuses()) {
        const current = s.state === 'building' ? s.phase ?? 'kernel' : s.state;
        for (const p of BUILD_PHASES) this.set({ phase: p, ...archLabel(s) }, p === current ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'rackside_ramdisk_build_percent', help: 'How far the background ramdisk build is, 0-100 (100 when a current build is served); arch labels another architecture\'s build.',
    labelNames: ['arch'], registers: [registry],
    collect() {
      for (const s of statuses()) this.set(archLabel(s), s.state === 'ready' ? 100 : s.percent ?? 0);
    },
  });
  new Gauge({
    name: 'rackside_ramdisk_build_duration_seconds', help: 'Seconds the last finished background ramdisk build took (0 before the first); arch labels another architecture\'s build.',
    labelNames: ['arch'], registers: [registry],
    collect() {
      for (const s of statuses()) this.set(archLabel(s), s.lastBuildSeconds ?? 0);
    },
  });
}
