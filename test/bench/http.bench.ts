/**
 * @module Boot HTTP throughput of rackside against nginx, side by side in one run (issues 3 and
 * 5; not a test: no assertions on time). Both serve the same directory on 127.0.0.1: rackside's
 * boot HTTP server (`startBootHttpServer`, mount `images`) in a child process
 * (http-server-child.ts) so the clients never share its event loop, and nginx with its own
 * config (`-c CONF -p PREFIX -g 'daemon off;'`, one worker unless RACKSIDE_BENCH_NGINX_WORKERS
 * says otherwise, sendfile on, access log off,
 * unlimited keep-alive requests), killed by PID at the end. The files are real data (a
 * pseudo-random 16 MiB pattern, each MiB stamped with its index, no holes), fsynced before the
 * first measurement so writeback does not run during it, and deleted at the end.
 *
 * Usage: node dist/test/bench/http.bench.js [SECONDS=10] [ROUNDS=2] [BIG_MIB=2048] [CLIENTS=8]
 *          [CONNECTIONS=4] [RANGE_CONNECTIONS=16]
 * Per round, each server in turn (the order alternates between rounds):
 * (a) wrk, CONNECTIONS connections, SECONDS s of whole-file GETs of a 256 MiB image → MiB/s;
 * (b) wrk with a Lua script, RANGE_CONNECTIONS connections, SECONDS s of random aligned 64 KiB
 *     `Range` GETs of the same image → requests/s (bytes per answer must be 64 KiB + headers);
 * (c) CLIENTS concurrent curl processes each streaming the BIG_MIB image to /dev/null (like
 *     ramdisks fetching an OS image) → aggregate MiB/s and wall time.
 * Also per phase: server CPU seconds (rackside: the whole child process; nginx: master and
 * worker from /proc; also per request or per GiB), rackside's event-loop lag (p50/p99/max) and
 * its main thread's CPU (a saturated event loop shows as main-thread CPU ≈ wall time) and the
 * files it opened (misses of its open-file cache: 0 or 1 per phase when the cache works). Then the
 * best round per server, the rackside/nginx ratio of each round (both servers measured back to
 * back) and their median against the goal (≥ 0.8×). Needs nginx, wrk and curl
 * (Debian: nginx-light, wrk, curl). Everything is bounded: each tool has a timeout and the whole
 * run stops itself after 30 minutes. Env RACKSIDE_BENCH_PROFILE_DIR: write a CPU profile of the
 * rackside child there; RACKSIDE_BENCH_NGINX_WORKERS: nginx's worker_processes (default 1);
 * RACKSIDE_BENCH_SENDFILE=0: rackside without sendfile (native/sendfile) for small bodies.
 * On a shared machine the numbers move with its load (printed per round): read the ratios.
 */
import { spawn, fork, type ChildProcess } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ChildCommand, ChildReading, ChildReply } from './http-server-child.js';
import { runWrk, wrkErrors, WRK_DONE_LUA, type WrkSummary } from './wrk.js';

const SECONDS = Number(process.argv[2] ?? 10);
const ROUNDS = Number(process.argv[3] ?? 2);
const BIG_MIB = Number(process.argv[4] ?? 2048);
const CLIENTS = Number(process.argv[5] ?? 8);
const CONNECTIONS = Number(process.argv[6] ?? 4);
const RANGE_CONNECTIONS = Number(process.argv[7] ?? 16);
/** nginx's `worker_processes` (`auto` = one per core, its stock config); default 1, like rackside's one process. */
const NGINX_WORKERS = process.env.RACKSIDE_BENCH_NGINX_WORKERS ?? '1';
/** Write a CPU profile of the rackside server child here. */
const PROFILE_DIR = process.env.RACKSIDE_BENCH_PROFILE_DIR;
const SMALL_MIB = 256;
const RANGE_BYTES = 64 * 1024;
const GOAL = 0.8;
const MiB = 1024 * 1024;
const RUN_LIMIT_MS = 30 * 60_000;
const SMALL = 'image-256m.raw';
const BIG = `image-${String(BIG_MIB)}m.raw`;

/** Random 64 KiB-aligned ranges of a file whose size comes as the first script argument. */
const RANGE_LUA = `
local size, span, seeds = 0, ${String(RANGE_BYTES)}, 0
setup = function(thread) seeds = seeds + 1; thread:set("seed", seeds) end
init = function(args)
  size = tonumber(args[1])
  math.randomseed(7919 * (seed or 1))
end
request = function()
  local off = math.random(0, math.floor(size / span) - 1) * span
  return wrk.format(nil, nil, { ["Range"] = string.format("bytes=%.0f-%.0f", off, off + span - 1) })
end
` + WRK_DONE_LUA;

/** What one server did in one phase. */
interface PhaseResult {
  value: number;
  detail: string;
  /** Work done, for CPU per unit: requests (ranges) or GiB (whole files). */
  work: number;
  cpuS: number;
  lag?: ChildReading;
}

/** A server under test: its base URL and how to read its CPU (and lag) around a phase. */
interface Target {
  name: 'rackside' | 'nginx';
  url: string;
  mark(): Promise<void>;
  read(): Promise<{ cpuS: number; lag?: ChildReading }>;
  stop(): Promise<void>;
}

const spawned = new Set<ChildProcess>();

/** Runs `cmd` to completion (killed after `timeoutMs`), returning stdout. */
function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    spawned.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      spawned.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => { resolve(port); });
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => { resolve(false); });
    });
    if (ok) return;
    if (performance.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${String(port)} after ${String(timeoutMs)} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Writes `mib` MiB of real (non-zero, non-repeating per MiB) data to `path` and fsyncs it. */
async function writeDataFile(path: string, mib: number, deadlineMs: number): Promise<void> {
  const chunkMib = 16;
  const pattern = randomFillSync(Buffer.alloc(chunkMib * MiB));
  const chunk = Buffer.alloc(chunkMib * MiB);
  const handle = await open(path, 'w', 0o644);
  try {
    for (let done = 0; done < mib; done += chunkMib) {
      if (performance.now() > deadlineMs) throw new Error(`writing ${path} took too long (${String(done)} of ${String(mib)} MiB)`);
      pattern.copy(chunk);
      const n = Math.min(chunkMib, mib - done);
      for (let i = 0; i < n; i++) chunk.writeBigUInt64LE(BigInt(done + i), i * MiB);
      await handle.write(chunk, 0, n * MiB);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** CPU seconds (user + system) of `pid` and its children (nginx's master and worker). */
function procTreeCpuS(pid: number): number {
  const ticks = (p: number): number => {
    try {
      const fields = readFileSync(`/proc/${String(p)}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    } catch {
      return 0;
    }
  };
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${String(pid)}/task/${String(pid)}/children`, 'utf8').trim().split(/\s+/).filter((s) => s !== '').map(Number);
  } catch {
    children = [];
  }
  return [pid, ...children].reduce((sum, p) => sum + ticks(p), 0) / 100;
}

async function startNginx(prefix: string, dir: string): Promise<Target> {
  const port = await freePort();
  await mkdir(join(prefix, 'tmp'), { recursive: true });
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(prefix, 'tmp', t)};`).join('\n');
  const conf = join(prefix, 'nginx.conf');
  await writeFile(conf, `worker_processes ${NGINX_WORKERS};
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  default_type application/octet-stream;
${temp}
  server {
    listen 127.0.0.1:${String(port)};
    location /images/ { alias ${dir}/; }
  }
}
`);
  const child = spawn('nginx', ['-c', conf, '-p', prefix, '-g', 'daemon off;'], { stdio: ['ignore', 'inherit', 'inherit'] });
  spawned.add(child);
  const exited = new Promise<void>((resolve) => child.on('close', () => { resolve(); }));
  child.on('close', () => spawned.delete(child));
  await waitForPort(port, 5000);
  const pid = child.pid ?? 0;
  let cpuMark = 0;
  return {
    name: 'nginx',
    url: `http://127.0.0.1:${String(port)}`,
    mark: () => {
      cpuMark = procTreeCpuS(pid);
      return Promise.resolve();
    },
    read: () => Promise.resolve({ cpuS: procTreeCpuS(pid) - cpuMark }),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startRackside(dir: string): Promise<Target> {
  const child = fork(fileURLToPath(new URL('./http-server-child.js', import.meta.url)), [dir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: PROFILE_DIR === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR],
  });
  spawned.add(child);
  child.on('exit', () => spawned.delete(child));
  const waiting = new Map<number, (reply: ChildReply) => void>();
  let nextId = 1;
  child.on('message', (reply: ChildReply) => {
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  const ask = (cmd: ChildCommand['cmd']): Promise<ChildReply> => new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    child.send({ id, cmd } satisfies ChildCommand);
  });
  const started = await new Promise<ChildReply>((resolve, reject) => {
    waiting.set(0, resolve);
    child.once('exit', (code) => { reject(new Error(`rackside server child exited ${String(code)}`)); });
  });
  return {
    name: 'rackside',
    url: `http://127.0.0.1:${String(started.port ?? 0)}`,
    mark: async () => {
      await ask('mark');
    },
    read: async () => {
      const reading = (await ask('read')).reading;
      if (reading === undefined) throw new Error('rackside child sent no reading');
      return { cpuS: reading.cpuMs / 1000, lag: reading };
    },
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
      await ask('stop');
      await exited;
    },
  };
}

/** Checks that `target` answers a HEAD and a 64 KiB range of `name` with the right bytes. */
async function verify(target: Target, dir: string, name: string, size: number): Promise<void> {
  const head = await fetch(`${target.url}/images/${name}`, { method: 'HEAD' });
  if (head.status !== 200 || head.headers.get('content-length') !== String(size)) throw new Error(`${target.name}: HEAD ${name} → ${String(head.status)}, length ${String(head.headers.get('content-length'))}`);
  const start = 3 * RANGE_BYTES;
  const res = await fetch(`${target.url}/images/${name}`, { headers: { Range: `bytes=${String(start)}-${String(start + RANGE_BYTES - 1)}` } });
  const body = Buffer.from(await res.arrayBuffer());
  const handle = await open(join(dir, name), 'r');
  const expected = Buffer.alloc(RANGE_BYTES);
  await handle.read(expected, 0, RANGE_BYTES, start);
  await handle.close();
  if (res.status !== 206 || !body.equals(expected)) throw new Error(`${target.name}: range of ${name} → ${String(res.status)}, ${String(body.length)} bytes, equal ${String(body.equals(expected))}`);
}

/** wrk through the shared runner (wrk.ts), its child registered for the clean-up at exit. */
function wrk(url: string, seconds: number, connections: number, script: string, scriptArgs: string[]): Promise<WrkSummary> {
  return runWrk({
    url, seconds, connections, script, scriptArgs, timeoutSeconds: 30,
    onSpawn: (child) => {
      spawned.add(child);
      child.on('close', () => spawned.delete(child));
    },
  });
}

type PhaseBody = () => Promise<{ value: number; detail: string; work: number }>;

async function phase(target: Target, body: PhaseBody): Promise<PhaseResult> {
  await target.mark();
  const r = await body();
  const after = await target.read();
  const out: PhaseResult = { ...r, cpuS: after.cpuS };
  if (after.lag !== undefined) out.lag = after.lag;
  return out;
}

async function fullGets(target: Target, scripts: string, seconds: number): Promise<{ value: number; detail: string; work: number }> {
  const s = await wrk(`${target.url}/images/${SMALL}`, seconds, CONNECTIONS, join(scripts, 'done.lua'), []);
  const mibS = s.bytes / MiB / (s.durationUs / 1e6);
  return { value: mibS, work: s.bytes / 1024 / MiB, detail: `${String(s.requests)} whole files, p99 ${(s.latencyP99Us / 1000).toFixed(0)} ms, ${wrkErrors(s)}` };
}

async function rangeGets(target: Target, scripts: string): Promise<{ value: number; detail: string; work: number }> {
  const s = await wrk(`${target.url}/images/${SMALL}`, SECONDS, RANGE_CONNECTIONS, join(scripts, 'range.lua'), [String(SMALL_MIB * MiB)]);
  const perS = s.requests / (s.durationUs / 1e6);
  const mibS = s.bytes / MiB / (s.durationUs / 1e6);
  // No per-response Lua hook (it would slow wrk): a 64 KiB body plus headers per answer shows
  // that every answer was a 206 of the requested span.
  const perRequest = s.bytes / Math.max(1, s.requests);
  if (perRequest < RANGE_BYTES || perRequest > RANGE_BYTES + 1024) throw new Error(`${target.name}: ${perRequest.toFixed(0)} bytes per range answer`);
  return { value: perS, work: s.requests, detail: `${mibS.toFixed(0)} MiB/s incl. headers, p99 ${(s.latencyP99Us / 1000).toFixed(1)} ms, ${wrkErrors(s)}` };
}

async function ramdiskClients(target: Target): Promise<{ value: number; detail: string; work: number }> {
  const size = BIG_MIB * MiB;
  const maxS = 300;
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: CLIENTS }, () =>
    run('curl', ['-sS', '--noproxy', '*', '--max-time', String(maxS), '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', `${target.url}/images/${BIG}`], (maxS + 10) * 1000)));
  const wallS = (performance.now() - started) / 1000;
  let bytes = 0;
  const times: number[] = [];
  for (const r of results) {
    const [status, got, time] = r.stdout.trim().split(' ');
    if (status !== '200' || Number(got) !== size) throw new Error(`${target.name}: a client got ${String(status)} with ${String(got)} of ${String(size)} bytes: ${r.stderr}`);
    bytes += Number(got);
    times.push(Number(time));
  }
  return { value: bytes / MiB / wallS, work: bytes / 1024 / MiB, detail: `wall ${wallS.toFixed(1)} s, clients ${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)} s` };
}

type PhaseName = 'full' | 'range' | 'clients';
const PHASES: Record<PhaseName, { label: string; unit: string; goal: string; perWork: (cpuS: number, work: number) => string }> = {
  full: { label: `(a) whole ${String(SMALL_MIB)} MiB GETs, ${String(CONNECTIONS)} conns, ${String(SECONDS)} s`, unit: 'MiB/s', goal: 'issue 3', perWork: (c, w) => `${(c / w).toFixed(2)} CPU s/GiB` },
  range: { label: `(b) random 64 KiB ranges, ${String(RANGE_CONNECTIONS)} conns, ${String(SECONDS)} s`, unit: 'req/s', goal: 'issue 3', perWork: (c, w) => `${((c * 1e6) / w).toFixed(0)} CPU µs/req` },
  clients: { label: `(c) ${String(CLIENTS)} clients × ${String(BIG_MIB)} MiB`, unit: 'MiB/s', goal: 'issue 5', perWork: (c, w) => `${(c / w).toFixed(2)} CPU s/GiB` },
};

function describe(name: string, r: PhaseResult, p: PhaseName): string {
  const lag = r.lag === undefined ? '' : `; event loop: ready work waited > ${r.lag.lagWaitP99Ms.toFixed(1)} ms for 1 % of the time, per timer run lag p50 ${r.lag.lagP50Ms.toFixed(1)} / p99 ${r.lag.lagP99Ms.toFixed(1)} / max ${r.lag.lagMaxMs.toFixed(1)} ms, main thread CPU ${(r.lag.mainThreadCpuMs / 1000).toFixed(1)} s, files opened ${String(r.lag.fileOpens)}, by sendfile ${String(r.lag.sendfileAnswers)} (${String(r.lag.sendfileCold)} not cached)`;
  return `    ${name.padEnd(9)} ${r.value.toFixed(0).padStart(7)} ${PHASES[p].unit}  (${r.detail}; server CPU ${r.cpuS.toFixed(1)} s = ${PHASES[p].perWork(r.cpuS, Math.max(r.work, 1e-9))}${lag})`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const limit = setTimeout(() => {
    console.error(`http.bench: stopped after ${String(RUN_LIMIT_MS / 60_000)} minutes`);
    for (const child of spawned) child.kill('SIGKILL');
    process.exit(1);
  }, RUN_LIMIT_MS);
  limit.unref();
  const work = await mkdtemp(join(tmpdir(), 'rackside-http-bench-'));
  const dir = join(work, 'images');
  const scripts = join(work, 'lua');
  const targets: Target[] = [];
  try {
    for (const tool of ['nginx', 'wrk', 'curl']) {
      const which = await run('sh', ['-c', `command -v ${tool}`], 5000);
      if (which.code !== 0) throw new Error(`${tool} is missing (Debian: apt-get install nginx-light wrk curl)`);
    }
    await mkdir(dir, { recursive: true });
    await mkdir(scripts);
    // nginx's worker runs as nobody: it must be able to reach the files.
    await chmod(work, 0o755);
    await writeFile(join(scripts, 'done.lua'), WRK_DONE_LUA);
    await writeFile(join(scripts, 'range.lua'), RANGE_LUA);
    const writeStart = performance.now();
    await writeDataFile(join(dir, SMALL), SMALL_MIB, writeStart + 120_000);
    await writeDataFile(join(dir, BIG), BIG_MIB, writeStart + 300_000);
    console.log(`wrote and fsynced ${String(SMALL_MIB)} MiB + ${String(BIG_MIB)} MiB in ${((performance.now() - writeStart) / 1000).toFixed(1)} s (${dir})`);

    targets.push(await startRackside(dir), await startNginx(join(work, 'nginx'), dir));
    for (const t of targets) {
      await verify(t, dir, SMALL, SMALL_MIB * MiB);
      await verify(t, dir, BIG, BIG_MIB * MiB);
      await fullGets(t, scripts, 2); // warm-up: JIT, page cache
    }
    console.log(`rackside ${String(targets[0]?.url)} (child process), nginx ${String(targets[1]?.url)} (worker_processes ${NGINX_WORKERS}, sendfile); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);

    const best = new Map<string, PhaseResult>();
    const ratios: Record<PhaseName, number[]> = { full: [], range: [], clients: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? targets : [...targets].reverse();
      console.log(`round ${String(round)} (load average ${loadavg()[0]?.toFixed(1) ?? '?'})`);
      for (const p of Object.keys(PHASES) as PhaseName[]) {
        console.log(`  ${PHASES[p].label}`);
        const values = new Map<string, number>();
        for (const t of order) {
          const r = await phase(t, () => (p === 'full' ? fullGets(t, scripts, SECONDS) : p === 'range' ? rangeGets(t, scripts) : ramdiskClients(t)));
          console.log(describe(t.name, r, p));
          values.set(t.name, r.value);
          const key = `${p}/${t.name}`;
          const prev = best.get(key);
          if (prev === undefined || r.value > prev.value) best.set(key, r);
        }
        const ratio = (values.get('rackside') ?? 0) / (values.get('nginx') ?? 1);
        ratios[p].push(ratio);
        console.log(`    ratio this round ${ratio.toFixed(2)}×`);
      }
    }

    console.log(`\nbest of ${String(ROUNDS)} round(s) per server; goal rackside ≥ ${String(GOAL)}× nginx`);
    for (const p of Object.keys(PHASES) as PhaseName[]) {
      const r = best.get(`${p}/rackside`);
      const n = best.get(`${p}/nginx`);
      if (r === undefined || n === undefined) continue;
      const ratio = r.value / n.value;
      console.log(`  ${PHASES[p].label} [${PHASES[p].goal}]`);
      console.log(describe('rackside', r, p));
      console.log(describe('nginx', n, p));
      const perRound = ratios[p];
      console.log(`    ratio best/best ${ratio.toFixed(2)}×, median of rounds ${median(perRound).toFixed(2)}× (${perRound.map((x) => x.toFixed(2)).join(', ')}) — ${median(perRound) >= GOAL ? 'meets' : 'MISSES'} the ${String(GOAL)}× goal`);
    }
  } finally {
    for (const t of targets) await t.stop().catch((err: unknown) => { console.error(`stopping ${t.name}:`, err); });
    await rm(work, { recursive: true, force: true });
    clearTimeout(limit);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  for (const child of spawned) child.kill('SIGKILL');
  process.exitCode = 1;
});
