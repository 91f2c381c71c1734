/**
 * Running as a systemd service: the unit passes `systemd-analyze verify` and rates ≤ 2.5 in
 * `systemd-analyze security --offline=yes`; the agent runs as the unit runs it — an unprivileged
 * user holding only the unit's AmbientCapabilities= (setpriv), HTTP on a port below 1024 — and
 * the unit's system-call filter lets through every system call it made under strace while
 * serving TFTP and HTTP, and its address-family list every
 * socket it opened (a denied call fails with EPERM, and a failure the agent treats as best effort
 * — SCHED_BATCH for its bulk threads, nice for qemu-img — would otherwise go unnoticed: it did,
 * until this test); the agent sends READY=1 and WATCHDOG=1 to
 * NOTIFY_SOCKET and stops pinging while its event loop is blocked; /metrics is Prometheus
 * text with the expected families; the log level changes at run time.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startAgent } from '../../agent/main.js';
import { childrenOf, removeDir, scratchDir, startAgentProcess } from '../helpers/agent-process.js';
import { requireTools } from '../helpers/integration.js';
import { freeUdpPort } from '../helpers/local-agent.js';
import { SCHED_BATCH, threadsOf } from '../helpers/threads.js';
import { UNIT_PATH, unitNice } from '../helpers/unit-nice.js';

const run = promisify(execFile);
const LISTENER = new URL('../helpers/notify-listener.js', import.meta.url).pathname;
const TOOLS_CHILD = new URL('../helpers/agent-tools-child.js', import.meta.url).pathname;
const SECCOMP_DENY_SOURCE = new URL('../../../test/helpers/seccomp-deny.c', import.meta.url).pathname;

test('the unit passes systemd-analyze verify and security ≤ 2.5', async (t) => {
  if (!requireTools(t, ['systemd-analyze'])) return;
  const verify = await run('systemd-analyze', ['verify', UNIT_PATH], { cwd: '/' }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: unknown) => ({ code: (e as { code?: number }).code ?? 1, stderr: String((e as { stderr?: string }).stderr ?? e) }),
  );
  assert.equal(verify.code, 0, `verify failed: ${verify.stderr}`);
  assert.equal(verify.stderr.trim(), '', `verify printed warnings: ${verify.stderr}`);
  const security = await run('systemd-analyze', ['security', '--offline=yes', UNIT_PATH]);
  const match = /Overall exposure level for rackside\.service: ([0-9.]+)/.exec(security.stdout + security.stderr);
  assert.ok(match?.[1] !== undefined, security.stdout);
  assert.ok(Number(match[1]) <= 2.5, `exposure ${match[1]} > 2.5`);
});

/** Members of a `systemd-analyze syscall-filter` group, nested groups expanded. */
async function syscallGroup(group: string, seen = new Map<string, Set<string>>()): Promise<Set<string>> {
  const known = seen.get(group);
  if (known !== undefined) return known;
  const members = new Set<string>();
  seen.set(group, members);
  const { stdout } = await run('systemd-analyze', ['syscall-filter', '--no-pager', group]);
  for (const line of stdout.split('\n').slice(1)) {
    const entry = line.trim();
    if (entry === '' || entry.startsWith('#')) continue;
    if (entry.startsWith('@')) for (const name of await syscallGroup(entry, seen)) members.add(name);
    else members.add(entry);
  }
  return members;
}

/**
 * The system calls a unit's `SystemCallFilter=` lines allow, by systemd.exec(5): the first line
 * is an allow list here (asserted), each later `~` line takes its calls out, each later plain line
 * puts its calls back.
 */
async function allowedSyscalls(unitText: string): Promise<Set<string>> {
  const lines = [...unitText.matchAll(/^SystemCallFilter=(.*)$/gm)].map((m) => m[1]!.trim());
  assert.ok(lines.length > 0 && !lines[0]!.startsWith('~'), 'the first SystemCallFilter= line is an allow list');
  const allowed = new Set<string>();
  for (const line of lines) {
    const deny = line.startsWith('~');
    for (const item of line.replace(/^~/, '').split(/\s+/).filter((x) => x !== '')) {
      const names = item.startsWith('@') ? await syscallGroup(item) : new Set([item]);
      for (const name of names) if (deny) allowed.delete(name); else allowed.add(name);
    }
  }
  return allowed;
}

/** What a process tree did, read from `strace -f` output: the system calls and the socket families. */
interface StracedCalls {
  readonly syscalls: Set<string>;
  readonly families: Set<string>;
}

/** Reads the calls from the exec of `program` on: what the launcher did before (setpriv's setresuid, capset …) systemd does before it applies the filter. */
function stracedCalls(trace: string, program: string): StracedCalls {
  const syscalls = new Set<string>();
  const families = new Set<string>();
  const lines = trace.split('\n');
  const exec = lines.findIndex((line) => line.includes(`execve("${program}"`) && / = 0$/.test(line));
  assert.ok(exec >= 0, `the trace shows the exec of ${program}`);
  for (const line of lines.slice(exec)) {
    // "PID name(args…) = ret", "PID name(args… <unfinished …>", "PID <... name resumed>…"
    const call = /^\d+\s+(?:<\.\.\. )?([a-z_][a-z0-9_]*)(?:\(| resumed>)/.exec(line);
    if (call?.[1] !== undefined) syscalls.add(call[1]);
    const socket = /^\d+\s+socket\((AF_[A-Z0-9]+)/.exec(line);
    if (socket?.[1] !== undefined) families.add(socket[1]);
  }
  return { syscalls, families };
}

/** A TCP port below 1024 free on 127.0.0.1 (only CAP_NET_BIND_SERVICE lets a non-root process bind it). */
async function freePrivilegedPort(): Promise<number> {
  for (let port = 900 + Math.floor(Math.random() * 50); port < 1024; port++) {
    const server = createNetServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => { resolve(false); });
      server.listen(port, '127.0.0.1', () => { resolve(true); });
    });
    if (bound) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
  throw new Error('no free TCP port in 900–1023 on 127.0.0.1');
}

/** The unit as the tests need it: the filter it applies and the launcher that stands in for it. */
interface UnitSandbox {
  readonly allowed: Set<string>;
  readonly families: Set<string>;
  /**
   * `nice` and `setpriv` as the unit's process starts: at the unit's Nice=; the unit's User= is a
   * system user without a login, nobody stands in for it here; its capabilities are the unit's
   * AmbientCapabilities= and nothing else (bounding set included). What it runs must be readable
   * by nobody.
   */
  readonly unprivileged: readonly string[];
}

async function unitSandbox(): Promise<UnitSandbox> {
  const unit = await readFile(UNIT_PATH, 'utf8');
  const caps = (/^AmbientCapabilities=(.*)$/m.exec(unit)?.[1] ?? '').trim().split(/\s+/).map((c) => `+${c.replace(/^CAP_/, '').toLowerCase()}`).join(',');
  assert.match(caps, /\+net_bind_service/);
  return {
    allowed: await allowedSyscalls(unit),
    families: new Set(/^RestrictAddressFamilies=(.*)$/m.exec(unit)?.[1]?.split(/\s+/) ?? []),
    unprivileged: ['nice', '-n', String(unitNice(unit)), 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', `--inh-caps=-all,${caps}`, `--ambient-caps=-all,${caps}`, `--bounding-set=-all,${caps}`],
  };
}

/**
 * Calls the unit denies (with EPERM) that the programs the agent starts make anyway, each with
 * why that is harmless; the tools test runs those programs with these calls denied for real
 * (test/helpers/seccomp-deny.c) and they still do their work. The agent itself makes none.
 */
const TOLERATED_DENIALS: ReadonlyMap<string, string> = new Map([
  ['setuid', 'mtools (mmd, mcopy) drops set-user-ID privileges it was not given: setuid(getuid()); it ignores the EPERM'],
  ['set_mempolicy', 'qemu-img probes NUMA policies (MPOL_PREFERRED_MANY, then MPOL_DEFAULT); it ignores the EPERM'],
]);

/**
 * Holds a trace's calls (from node's exec on) against the unit: every system call allowed but
 * the `tolerated` ones, every socket family permitted. Resolves with the tolerated calls seen.
 */
async function assertWithinUnit(sandbox: UnitSandbox, tracePath: string, expected: readonly string[], tolerated: ReadonlyMap<string, string> = new Map()): Promise<string[]> {
  const used = stracedCalls(await readFile(tracePath, 'utf8'), process.execPath);
  assert.ok(expected.every((name) => used.syscalls.has(name)), `the trace holds ${expected.join(', ')}: ${[...used.syscalls].join(' ')}`);
  const denied = [...used.syscalls].filter((name) => !sandbox.allowed.has(name));
  const unexpected = denied.filter((name) => !tolerated.has(name));
  assert.deepEqual(unexpected, [], `calls the unit would deny with EPERM: ${unexpected.join(' ')}`);
  const refused = [...used.families].filter((family) => !sandbox.families.has(family));
  assert.deepEqual(refused, [], `socket families RestrictAddressFamilies= would refuse: ${refused.join(' ')}`);
  return denied;
}

/** This architecture's numbers of the named system calls, from the C library's headers. */
async function syscallNumbers(names: readonly string[]): Promise<number[]> {
  const { stdout } = await run('sh', ['-c', 'echo "#include <sys/syscall.h>" | cc -E -dM -']);
  return names.map((name) => {
    const match = new RegExp(`^#define __NR_${name} (\\d+)$`, 'm').exec(stdout);
    assert.ok(match?.[1] !== undefined, `no __NR_${name} in <sys/syscall.h>`);
    return Number(match[1]);
  });
}

test('as the unit runs it — unprivileged, with only its capabilities — the agent serves TFTP and HTTP, and its filters allow every call', async (t) => {
  if (!requireTools(t, ['systemd-analyze', 'strace', 'curl', 'setpriv'], { root: true })) return;
  const sandbox = await unitSandbox();
  // The agent's scheduling choices (native/thread_priority.h, images/image-convert.ts) are let
  // through; the privileged calls stay out.
  for (const name of ['sched_setscheduler', 'setpriority']) assert.ok(sandbox.allowed.has(name), `${name} allowed`);
  for (const name of ['reboot', 'mount', 'init_module', 'settimeofday', 'setrlimit', 'sched_setaffinity']) assert.ok(!sandbox.allowed.has(name), `${name} denied`);

  const dir = await scratchDir('syscalls');
  t.after(() => removeDir(dir));
  const cacheDir = join(dir, 'cache');
  const initrd = Buffer.alloc(3 * 1024 * 1024, 0x5a);
  await mkdir(join(cacheDir, 'ramdisk'), { recursive: true });
  await writeFile(join(cacheDir, 'ramdisk', 'initrd'), initrd);
  const [httpPort, tftpPort] = [await freePrivilegedPort(), await freeUdpPort()];
  const tracePath = join(dir, 'strace.txt');
  await run('chown', ['-R', '65534:65534', dir]);
  const agent = await startAgentProcess(dir, [
    'provisioner: local',
    'provisioning:', '  interface: lo', '  address: 127.0.0.1',
    'http:', `  listen: 127.0.0.1:${httpPort}`,
    'tftp:', `  listen: 127.0.0.1:${tftpPort}`,
    'images:', `  cacheDir: ${cacheDir}`,
  ].join('\n'), 60_000, ['strace', '-f', '-qq', '-o', tracePath, ...sandbox.unprivileged]);
  // The launcher's child is nice, which became setpriv, which became the agent (exec), so stop() reaches the agent.
  const [agentPid] = childrenOf(agent.child.pid ?? 0);
  assert.ok(agentPid !== undefined, 'the agent runs under the launcher');
  const status = await readFile(`/proc/${String(agentPid)}/status`, 'utf8');
  assert.match(status, /^Uid:\s+65534\s/m, 'the agent runs as an unprivileged user');
  assert.match(status, /^CapEff:\s+0000000000002400$/m, 'with CAP_NET_BIND_SERVICE (bit 10) and CAP_NET_RAW (bit 13) only');
  t.after(() => agent.kill());

  const http = await run('curl', ['-s', '--max-time', '30', '-o', '/dev/null', '-w', '%{size_download}', `http://127.0.0.1:${httpPort}/ramdisk/initrd`]);
  assert.equal(Number(http.stdout), initrd.length, 'HTTP sent the whole initrd (sender threads)');
  const tftp = await run('curl', ['-s', '--max-time', '30', '--tftp-blksize', '1468', '-o', '/dev/null', '-w', '%{size_download}', `tftp://127.0.0.1:${tftpPort}/ramdisk/initrd`]);
  assert.equal(Number(tftp.stdout), initrd.length, 'TFTP sent the whole initrd');
  // The event loop at the unit's Nice=-5; the bulk threads moved themselves back to normal
  // priority, under SCHED_BATCH (native/thread_priority.h), without any privilege.
  const threads = threadsOf(agentPid);
  assert.equal(threads.find((thread) => thread.tid === agentPid)?.nice, unitNice());
  assert.ok(unitNice() < 0, 'the unit raises the event loop');
  for (const name of ['rackside-send', 'rackside-tftp']) {
    const bulk = threads.filter((thread) => thread.name === name);
    assert.ok(bulk.length > 0, `${name} threads run`);
    for (const thread of bulk) assert.deepEqual([thread.name, thread.nice, thread.policy], [name, 0, SCHED_BATCH]);
  }

  assert.equal(await agent.stop(), 0, agent.output());
  await assertWithinUnit(sandbox, tracePath, ['sched_setscheduler', 'sendfile', 'epoll_wait', 'socket']);
});

test('as the unit runs it, the programs and threads the agent starts — xorriso, mkfs.vfat, mtools, qemu-img, the hashing worker — stay within its filters', async (t) => {
  if (!requireTools(t, ['systemd-analyze', 'strace', 'setpriv', 'cc', 'qemu-img', 'xorriso', 'mkfs.vfat', 'mcopy'], { root: true })) return;
  const sandbox = await unitSandbox();
  const dir = await scratchDir('tool-syscalls');
  t.after(() => removeDir(dir));
  const [traced, denied] = [join(dir, 'traced'), join(dir, 'denied')];
  for (const work of [traced, denied]) {
    await mkdir(work);
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', join(work, 'image.qcow2'), '8M']);
  }
  await run('chown', ['-R', '65534:65534', dir]);
  const tracePath = join(dir, 'strace.txt');
  const { stdout } = await run('strace', ['-f', '-qq', '-o', tracePath, ...sandbox.unprivileged, process.execPath, TOOLS_CHILD, traced], { timeout: 120_000 });
  assert.equal(stdout.trim(), 'done');
  // setpriority: qemu-img reniced; execve and wait4: the tools.
  const seen = await assertWithinUnit(sandbox, tracePath, ['setpriority', 'execve', 'wait4'], TOLERATED_DENIALS);

  // The tolerated calls denied for real, as the unit denies them: the same work still succeeds.
  const wrapper = join(dir, 'seccomp-deny');
  await run('cc', ['-O2', '-Wall', '-Werror', '-o', wrapper, SECCOMP_DENY_SOURCE]);
  const numbers = await syscallNumbers([...TOLERATED_DENIALS.keys()]);
  const result = await run(sandbox.unprivileged[0]!, [...sandbox.unprivileged.slice(1), wrapper, numbers.join(','), process.execPath, TOOLS_CHILD, denied], { timeout: 120_000 });
  assert.equal(result.stdout.trim(), 'done', `with ${seen.join(', ')} denied: ${result.stderr}`);
  assert.equal((await stat(join(denied, 'image.raw'))).size, 8 * 1024 * 1024);
  for (const name of ['config-drive.iso', 'config-drive.img']) assert.ok((await stat(join(denied, name))).size > 0, name);
});

test('READY=1, WATCHDOG=1 from the event loop (none while it is blocked), STOPPING=1', async (t) => {
  const dir = await scratchDir('notify');
  t.after(() => removeDir(dir));
  const socketPath = join(dir, 'notify.sock');
  const listener = spawn(process.execPath, [LISTENER, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => listener.kill('SIGKILL'));
  let lines = '';
  listener.stdout.on('data', (c: Buffer) => (lines += c.toString()));
  await waitUntil(() => lines.includes('LISTENING'), 5000);
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, `agent:\n  stateDir: ${join(dir, 'state')}\nprovisioner: fixture\nmanagement:\n  listen: 127.0.0.1:0\nlog:\n  level: silent\n`);
  const agent = await startAgent({ configPath, notifyEnv: { NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '200000' } });
  t.after(() => agent.stop());
  await waitUntil(() => /READY=1\|STATUS=serving/.test(lines) && count(lines, 'WATCHDOG=1') >= 3, 5000, () => lines);

  // Block the event loop for 1.5 s: no pings may arrive in the middle of that window.
  const blockedFrom = Date.now();
  while (Date.now() - blockedFrom < 1500) {
    // busy: the agent's timers cannot run
  }
  const blockedTo = Date.now();
  await new Promise((r) => setTimeout(r, 500));
  const pings = arrivals(lines, 'WATCHDOG=1');
  const during = pings.filter((ms) => ms > blockedFrom + 300 && ms < blockedTo - 50);
  assert.deepEqual(during, [], 'watchdog pings arrived while the loop was blocked');
  assert.ok(pings.some((ms) => ms > blockedTo), 'pings resume after the loop unblocks');

  // Metrics and runtime log level through the real listener.
  const metrics = await (await fetch(`${agent.managementUrl}/metrics`)).text();
  for (const family of ['rackside_hosts', 'rackside_reconcile_duration_seconds', 'rackside_sync_backlog', 'nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes']) {
    assert.match(metrics, new RegExp(`^# TYPE ${family} `, 'm'), `missing family ${family}`);
  }
  assert.ok(metrics.split('\n').every((line) => line === '' || line.startsWith('#') || /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eE]+|NaN|[+-]Inf$/.test(line)), 'Prometheus text format');
  const put = await fetch(`${agent.managementUrl}/api/v1/log-level`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"level":"debug"}' });
  assert.equal(put.status, 200);
  assert.deepEqual(await (await fetch(`${agent.managementUrl}/api/v1/log-level`)).json(), { level: 'debug' });
  const bad = await fetch(`${agent.managementUrl}/api/v1/log-level`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"level":"loud"}' });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { field: string } }).error.field, 'level');

  await agent.stop();
  await waitUntil(() => lines.includes('STOPPING=1'), 5000);
});

function count(text: string, needle: string): number {
  return text.split('\n').filter((l) => l.includes(needle)).length;
}

function arrivals(text: string, needle: string): number[] {
  return text.split('\n').filter((l) => l.includes(needle)).map((l) => Number(l.split(' ')[0]));
}

async function waitUntil(check: () => boolean, timeoutMs: number, describe: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met in time ${describe()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
