/**
 * @module TFTP throughput of rackside against tftpd-hpa, side by side in one run (not a test:
 * no assertions). Both servers run as their own processes on 127.0.0.1 — rackside through
 * `test/integration/tftp-server-child.js`, tftpd-hpa as `in.tftpd -L -s -B 65464` (docs/test-peers.md, "TFTP clients") —
 * and serve the same random file to Debian's clients: atftp (`--option "blksize N"`, and
 * `"windowsize N"`, which only rackside grants; tftpd-hpa ignores it and stays lock-step) and
 * curl (`--tftp-blksize N`, lock-step only). Every fetch is checked by sha256.
 *
 * Rows: lock-step at blksize 512/1468/8192 with both clients; windowsize 8 and 16 at each
 * blksize with atftp; 20 concurrent atftp clients (4 MiB each) lock-step and windowed. Each
 * measurement alternates the servers and keeps the median of `--reps` runs. Ratios are rackside
 * over tftpd-hpa at the same request (so a windowed row compares against tftpd-hpa's lock-step
 * answer to the same request). Also printed: each server's CPU per fetch and per block —
 * measured the same way for both with `perf stat -e task-clock -p PID` when perf is installed
 * (in.tftpd's forked children included), else only rackside's, from the child's `read` command
 * — rackside's event-loop delay p99, and the load average. This machine is shared: throughput
 * swings 2× from run to run under load, CPU per block much less, so read both.
 *
 * Usage: node dist/test/bench/tftp.bench.js [--size-mib 64] [--reps 3] [--quick] [--with-dgram]
 * [--max-window-bytes N] [--only TEXT] (`--quick`: 16 MiB, 1 rep; `--only`: rows whose label
 * contains TEXT; `--with-dgram`: also a rackside child with
 * `nativeSockets: false`, the node:dgram fallback, as a third column; `--with-event-loop`: that
 * column is instead rackside on its native sockets with `transferThread: false`, every ACK
 * answered from the event loop; `--max-window-bytes`: the
 * server's window budget). Needs tftpd-hpa, atftp and curl, and the native addon
 * (`npm run build:native`) for the native rows. Bounded: every client run has a 120 s timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { findTool } from '../helpers/netns.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), '..', 'integration', 'tftp-server-child.js');
const MIB = 1024 * 1024;

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const quick = process.argv.includes('--quick');
const SIZE_MIB = argument('size-mib', quick ? 16 : 64);
const REPS = argument('reps', quick ? 1 : 3);
/** The optional third column: rackside on node:dgram, or on its native sockets without the transfer thread. */
const THIRD: ThirdServer | undefined = process.argv.includes('--with-dgram') ? 'rackside-dgram' : process.argv.includes('--with-event-loop') ? 'rackside-loop' : undefined;
const MAX_WINDOW_BYTES = process.argv.includes('--max-window-bytes') ? argument('max-window-bytes', 0) : undefined;
const ONLY = process.argv.includes('--only') ? (process.argv[process.argv.indexOf('--only') + 1] ?? '') : '';
const CONCURRENT = 20;
const CONCURRENT_MIB = 4;

type ThirdServer = 'rackside-dgram' | 'rackside-loop';

interface Server {
  name: 'rackside' | ThirdServer | 'tftpd-hpa';
  port: number;
  process: ChildProcess;
  /** rackside only: CPU seconds and event-loop delay since the previous call. */
  read?: () => Promise<{ cpuSeconds: number; lagMs: { p99: number } }>;
  /** rackside only: everything it printed. */
  output?: () => string;
}

const PERF = findTool('perf');

/** Counts the CPU time of `pid` and its children from now until the returned stop() (perf stat). */
async function startCpuCount(pid: number | undefined): Promise<(() => Promise<number | undefined>) | undefined> {
  if (PERF === undefined || pid === undefined) return undefined;
  const perf = spawn(PERF, ['stat', '-x,', '-e', 'task-clock', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  perf.stderr.on('data', (c: Buffer) => (text += c.toString()));
  const closed = new Promise<void>((resolve) => {
    perf.on('close', () => {
      resolve();
    });
  });
  await new Promise((r) => setTimeout(r, 100)); // attached
  return async () => {
    perf.kill('SIGINT');
    await closed;
    const msec = Number(text.split('\n').find((l) => l.includes('task-clock'))?.split(',')[0]);
    return Number.isFinite(msec) ? msec / 1000 : undefined;
  };
}

async function freePort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(resolve));
  return port;
}

/** Starts rackside's server as a child process; resolves once it listens. */
async function startRackside(root: string, name: 'rackside' | ThirdServer): Promise<Server> {
  const port = await freePort();
  const config = {
    listen: { host: '127.0.0.1', port },
    roots: [root],
    quiet: true,
    nativeSockets: name !== 'rackside-dgram',
    transferThread: name === 'rackside',
    ...(MAX_WINDOW_BYTES === undefined ? {} : { maxWindowBytes: MAX_WINDOW_BYTES }),
  };
  const child = spawn(process.execPath, [CHILD, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let waiting: ((line: string) => void) | undefined;
  child.stdout.on('data', (c: Buffer) => {
    out = (out + c.toString()).slice(-1_000_000);
    const lines = out.split('\n');
    const read = lines.reverse().find((l) => l.includes('"type":"read"'));
    if (read !== undefined && waiting !== undefined) {
      const w = waiting;
      waiting = undefined;
      out = '';
      w(read);
    }
  });
  const deadline = Date.now() + 10_000;
  while (!out.includes('"listening"')) {
    if (Date.now() > deadline) throw new Error(`${name} TFTP child did not start`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const read = (): Promise<{ cpuSeconds: number; lagMs: { p99: number } }> =>
    new Promise((resolve) => {
      waiting = (line) => {
        resolve(JSON.parse(line) as { cpuSeconds: number; lagMs: { p99: number } });
      };
      child.stdin.write('read\n');
    });
  return { name, port, process: child, read, output: () => out };
}

async function startServers(root: string): Promise<Server[]> {
  const rackside = await startRackside(root, 'rackside');
  const third = THIRD === undefined ? [] : [await startRackside(root, THIRD)];
  const hpaPort = await freePort();
  const hpa = spawn(findTool('in.tftpd') ?? 'in.tftpd', ['-L', '-s', '-B', '65464', '-a', `127.0.0.1:${hpaPort}`, root], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 200)); // in.tftpd binds quickly; give it a moment
  return [rackside, { name: 'tftpd-hpa', port: hpaPort, process: hpa }, ...third];
}

type ClientRun = (port: number, file: string, dest: string) => [string, string[]];

const atftp =
  (blockSize: number, windowSize?: number): ClientRun =>
  (port, file, dest) => [
    'atftp',
    ['-g', '-r', file, '-l', dest, '--option', `blksize ${blockSize}`, ...(windowSize === undefined ? [] : ['--option', `windowsize ${windowSize}`]), '127.0.0.1', String(port)],
  ];
const curl =
  (blockSize: number): ClientRun =>
  (port, file, dest) => ['curl', ['-sS', '--fail', '-o', dest, '--tftp-blksize', String(blockSize), `tftp://127.0.0.1:${port}/${file}`]];

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err.trim().slice(-300)}`));
    });
  });
}

const sha256 = async (path: string): Promise<string> => createHash('sha256').update(await readFile(path)).digest('hex');

interface Measurement {
  mibPerSecond: number;
  cpuSeconds: number;
  lagP99Ms: number;
}

/** One fetch (or `parallel` concurrent fetches) from `server`; throws on a wrong sha256. */
async function measure(server: Server, client: ClientRun, file: string, expectedSha: string, bytes: number, outDir: string, parallel = 1): Promise<Measurement> {
  await server.read?.();
  const cpuCount = await startCpuCount(server.process.pid);
  const dests = Array.from({ length: parallel }, (_, i) => join(outDir, `${server.name}-${i}`));
  const started = performance.now();
  await Promise.all(dests.map((dest) => {
    const [cmd, args] = client(server.port, file, dest);
    return run(cmd, args);
  }));
  const seconds = (performance.now() - started) / 1000;
  const counted = await cpuCount?.();
  const usage = await server.read?.();
  for (const dest of dests) {
    const got = await sha256(dest);
    if (got !== expectedSha) throw new Error(`${server.name}: sha256 mismatch for ${file}`);
    await rm(dest, { force: true });
  }
  return { mibPerSecond: (bytes * parallel) / MIB / seconds, cpuSeconds: counted ?? usage?.cpuSeconds ?? 0, lagP99Ms: usage?.lagMs.p99 ?? 0 };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

interface Row {
  label: string;
  rackside: Measurement;
  hpa: Measurement;
  /** The optional third column (`--with-dgram` or `--with-event-loop`). */
  third?: Measurement;
}

async function main(): Promise<void> {
  for (const tool of ['in.tftpd', 'atftp', 'curl']) if (findTool(tool) === undefined) throw new Error(`missing ${tool} (apt-get install tftpd-hpa atftp curl)`);
  const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'rackside-tftp-bench-'));
  const root = join(dir, 'root');
  const outDir = join(dir, 'out');
  await mkdir(root);
  await mkdir(outDir);
  const big = randomBytes(SIZE_MIB * MIB);
  const small = randomBytes(CONCURRENT_MIB * MIB);
  await writeFile(join(root, 'big.bin'), big);
  await writeFile(join(root, 'small.bin'), small);
  const bigSha = createHash('sha256').update(big).digest('hex');
  const smallSha = createHash('sha256').update(small).digest('hex');
  const servers = await startServers(root);
  const [rackside, hpa, third] = servers as [Server, Server, Server | undefined];
  const rows: Row[] = [];
  const load = loadavg().map((l) => l.toFixed(1)).join(' ');
  const began = performance.now();
  try {
    const cases: [string, ClientRun, string, string, number, number, number][] = [];
    for (const bs of [512, 1468, 8192]) {
      cases.push([`atftp blksize ${bs} lock-step`, atftp(bs), 'big.bin', bigSha, big.length, 1, bs]);
      cases.push([`curl  blksize ${bs} lock-step`, curl(bs), 'big.bin', bigSha, big.length, 1, bs]);
      for (const ws of [8, 16]) cases.push([`atftp blksize ${bs} windowsize ${ws}`, atftp(bs, ws), 'big.bin', bigSha, big.length, 1, bs]);
    }
    cases.push([`${CONCURRENT} × atftp blksize 1468 lock-step (${CONCURRENT_MIB} MiB each)`, atftp(1468), 'small.bin', smallSha, small.length, CONCURRENT, 1468]);
    cases.push([`${CONCURRENT} × atftp blksize 1468 windowsize 16`, atftp(1468, 16), 'small.bin', smallSha, small.length, CONCURRENT, 1468]);
    for (const [label, client, file, sha, bytes, parallel, blockSize] of cases.filter(([l]) => l.includes(ONLY))) {
      const r: Measurement[] = [];
      const h: Measurement[] = [];
      const d: Measurement[] = [];
      for (let rep = 0; rep < REPS; rep++) {
        // Alternate which server goes first, so slow drifts in machine load hit all of them.
        const forward = third === undefined ? [rackside, hpa] : [rackside, hpa, third];
        const order = rep % 2 === 0 ? forward : [...forward].reverse();
        for (const server of order) {
          const m = await measure(server, client, file, sha, bytes, outDir, parallel);
          (server === rackside ? r : server === hpa ? h : d).push(m);
        }
      }
      const summarize = (ms: Measurement[]): Measurement => ({
        mibPerSecond: median(ms.map((m) => m.mibPerSecond)),
        cpuSeconds: median(ms.map((m) => m.cpuSeconds)),
        lagP99Ms: Math.max(...ms.map((m) => m.lagP99Ms)),
      });
      const row: Row = { label, rackside: summarize(r), hpa: summarize(h), ...(d.length === 0 ? {} : { third: summarize(d) }) };
      rows.push(row);
      const spread = (ms: Measurement[]): string => ms.map((m) => m.mibPerSecond.toFixed(0)).join('/');
      const blocks = (Math.floor(bytes / blockSize) + 1) * parallel;
      const perBlock = (m: Measurement): string => `${((m.cpuSeconds * 1e6) / blocks).toFixed(1)} µs/block`;
      const hpaCpu = PERF === undefined ? '' : ` cpu ${row.hpa.cpuSeconds.toFixed(2)} s ${perBlock(row.hpa)}`;
      const thirdText =
        row.third === undefined
          ? ''
          : ` | ${THIRD === 'rackside-loop' ? 'event loop' : 'dgram'} ${row.third.mibPerSecond.toFixed(1).padStart(6)} MiB/s [${spread(d)}] cpu ${row.third.cpuSeconds.toFixed(2)} s ratio ${(row.third.mibPerSecond / row.hpa.mibPerSecond).toFixed(2)}`;
      console.log(
        `${label.padEnd(50)} rackside ${row.rackside.mibPerSecond.toFixed(1).padStart(6)} MiB/s [${spread(r)}] cpu ${row.rackside.cpuSeconds.toFixed(2)} s ${perBlock(row.rackside)} lag p99 ${row.rackside.lagP99Ms.toFixed(0)} ms | ` +
          `tftpd-hpa ${row.hpa.mibPerSecond.toFixed(1).padStart(6)} MiB/s [${spread(h)}]${hpaCpu} | ratio ${(row.rackside.mibPerSecond / row.hpa.mibPerSecond).toFixed(2)}${thirdText} (load ${loadavg()[0]?.toFixed(1) ?? '?'})`,
      );
    }
  } finally {
    rackside.process.kill('SIGTERM');
    hpa.process.kill('SIGTERM');
    third?.process.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const output = rackside.output?.() ?? '';
    const stats = output.split('\n').find((l) => l.includes('"type":"stats"'));
    if (stats !== undefined) {
      const parsed = JSON.parse(stats) as { lagMs?: { p50: number; p99: number; max: number }; completedTransfers: number; failedTransfers: number; retransmittedPackets: number };
      const lag = parsed.lagMs;
      console.log(
        `rackside: ${parsed.completedTransfers} transfers done, ${parsed.failedTransfers} failed, ${parsed.retransmittedPackets} retransmitted packets; ` +
          `event-loop delay since the last row p50 ${lag?.p50.toFixed(1)} ms, p99 ${lag?.p99.toFixed(1)} ms, max ${lag?.max.toFixed(1)} ms`,
      );
    }
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`\n${SIZE_MIB} MiB file, median of ${REPS}; load average at start ${load}, now ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${((performance.now() - began) / 1000).toFixed(0)} s`);
  console.log('Goals (issue 3): lock-step ≥ 1.0× tftpd-hpa at equal blksize; windowsize 16 ≥ 3× tftpd-hpa lock-step at the same blksize:');
  for (const bs of [512, 1468, 8192]) {
    const lock = rows.find((row) => row.label === `atftp blksize ${bs} lock-step`);
    const curlLock = rows.find((row) => row.label === `curl  blksize ${bs} lock-step`);
    const win = rows.find((row) => row.label === `atftp blksize ${bs} windowsize 16`);
    if (lock === undefined || win === undefined || curlLock === undefined) continue;
    const lockRatio = lock.rackside.mibPerSecond / lock.hpa.mibPerSecond;
    const curlRatio = curlLock.rackside.mibPerSecond / curlLock.hpa.mibPerSecond;
    const winRatio = win.rackside.mibPerSecond / lock.hpa.mibPerSecond;
    console.log(
      `  blksize ${String(bs).padStart(4)}: lock-step ${lockRatio.toFixed(2)}× (atftp), ${curlRatio.toFixed(2)}× (curl) ${lockRatio >= 1 && curlRatio >= 1 ? 'MET' : 'missed'}; ` +
        `windowsize 16 ${winRatio.toFixed(2)}× ${winRatio >= 3 ? 'MET' : 'missed'}`,
    );
  }
}

await main();
