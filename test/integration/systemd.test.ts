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
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startAgent } from '../../agent/main.js';
import { removeDir, scratchDir, startAgentProcess } from '../helpers/agent-process.js';
import { requireTools } from '../helpers/integration.js';
import { freeUdpPort } from '../helpers/local-agent.js';

const run = promisify(execFile);
const UNIT = new URL('../../../systemd/rackside.service', import.meta.url).pathname;
const LISTENER = new URL('../helpers/notify-listener.js', import.meta.url).pathname;

test('the unit passes systemd-analyze verify and security ≤ 2.5', async (t) => {
  if (!requireTools(t, ['systemd-analyze'])) return;
  const verify = await run('systemd-analyze', ['verify', UNIT], { cwd: '/' }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: unknown) => ({ code: (e as { code?: number }).code ?? 1, stderr: String((e as { stderr?: string }).stderr ?? e) }),
  );
  assert.equal(verify.code, 0, `verify failed: ${verify.stderr}`);
  assert.equal(verify.stderr.trim(), '', `verify printed warnings: ${verify.stderr}`);
  const security = await run('systemd-analyze', ['security', '--offline=yes', UNIT]);
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

test('as the unit runs it — unprivileged, with only its capabilities — the agent serves TFTP and HTTP, and its filters allow every call', async (t) => {
  if (!requireTools(t, ['systemd-analyze', 'strace', 'curl', 'setpriv'], { root: true })) return;
  const unit = await readFile(UNIT, 'utf8');
  const allowed = await allowedSyscalls(unit);
  // The agent's scheduling choices (native/thread_priority.h, images/image-convert.ts) are let
  // through; the privileged calls stay out.
  for (const name of ['sched_setscheduler', 'setpriority']) assert.ok(allowed.has(name), `${name} allowed`);
  for (const name of ['reboot', 'mount', 'init_module', 'settimeofday', 'setrlimit', 'sched_setaffinity']) assert.ok(!allowed.has(name), `${name} denied`);

  const dir = await scratchDir('syscalls');
  t.after(() => removeDir(dir));
  const cacheDir = join(dir, 'cache');
  const initrd = Buffer.alloc(3 * 1024 * 1024, 0x5a);
  await mkdir(join(cacheDir, 'ramdisk'), { recursive: true });
  await writeFile(join(cacheDir, 'ramdisk', 'initrd'), initrd);
  const [httpPort, tftpPort] = [await freePrivilegedPort(), await freeUdpPort()];
  const tracePath = join(dir, 'strace.txt');
  // The unit's User= is a system user without a login; nobody stands in for it here. Its
  // capabilities are the unit's AmbientCapabilities=, and nothing else (bounding set included).
  const caps = (/^AmbientCapabilities=(.*)$/m.exec(unit)?.[1] ?? '').trim().split(/\s+/).map((c) => `+${c.replace(/^CAP_/, '').toLowerCase()}`).join(',');
  assert.match(caps, /\+net_bind_service/);
  const unprivileged = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', `--inh-caps=-all,${caps}`, `--ambient-caps=-all,${caps}`, `--bounding-set=-all,${caps}`];
  await run('chown', ['-R', '65534:65534', dir]);
  const agent = await startAgentProcess(dir, [
    'provisioner: local',
    'provisioning:', '  interface: lo', '  address: 127.0.0.1',
    'http:', `  listen: 127.0.0.1:${httpPort}`,
    'tftp:', `  listen: 127.0.0.1:${tftpPort}`,
    'images:', `  cacheDir: ${cacheDir}`,
  ].join('\n'), 60_000, ['strace', '-f', '-qq', '-o', tracePath, ...unprivileged]);
  // The launcher's child is setpriv, which became the agent (exec), so stop() reaches the agent.
  const agentPid = Number((await readFile(`/proc/${String(agent.child.pid)}/task/${String(agent.child.pid)}/children`, 'utf8')).trim());
  const status = await readFile(`/proc/${String(agentPid)}/status`, 'utf8');
  assert.match(status, /^Uid:\s+65534\s/m, 'the agent runs as an unprivileged user');
  assert.match(status, /^CapEff:\s+0000000000002400$/m, 'with CAP_NET_BIND_SERVICE (bit 10) and CAP_NET_RAW (bit 13) only');
  t.after(() => agent.kill());

  const http = await run('curl', ['-s', '--max-time', '30', '-o', '/dev/null', '-w', '%{size_download}', `http://127.0.0.1:${httpPort}/ramdisk/initrd`]);
  assert.equal(Number(http.stdout), initrd.length, 'HTTP sent the whole initrd (sender threads)');
  const tftp = await run('curl', ['-s', '--max-time', '30', '--tftp-blksize', '1468', '-o', '/dev/null', '-w', '%{size_download}', `tftp://127.0.0.1:${tftpPort}/ramdisk/initrd`]);
  assert.equal(Number(tftp.stdout), initrd.length, 'TFTP sent the whole initrd');

  assert.equal(await agent.stop(), 0, agent.output());
  const used = stracedCalls(await readFile(tracePath, 'utf8'), process.execPath);
  assert.ok(['sched_setscheduler', 'sendfile', 'epoll_wait'].every((name) => used.syscalls.has(name)), `the trace holds the agent's calls: ${[...used.syscalls].join(' ')}`);
  const denied = [...used.syscalls].filter((name) => !allowed.has(name));
  assert.deepEqual(denied, [], `calls the unit would deny with EPERM: ${denied.join(' ')}`);
  const families = new Set(/^RestrictAddressFamilies=(.*)$/m.exec(await readFile(UNIT, 'utf8'))?.[1]?.split(/\s+/) ?? []);
  assert.ok(used.families.has('AF_INET'), `sockets seen: ${[...used.families].join(' ')}`);
  const refused = [...used.families].filter((family) => !families.has(family));
  assert.deepEqual(refused, [], `socket families RestrictAddressFamilies= would refuse: ${refused.join(' ')}`);
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
