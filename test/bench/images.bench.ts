/**
 * @module Image benchmarks (not a test: no assertions).
 * Usage: node dist/test/bench/images.bench.js [IMAGE_MIB] [--build]
 * - qcow2 → raw: the cache's conversion (`convertToRaw`, then the sha256 of the raw file in a
 *   worker) against a plain `qemu-img convert -f qcow2 -O raw`, on a generated image of IMAGE_MIB
 *   (default 512) that is 3/4 pseudo-random data and 1/4 zeros.
 * - event-loop lag while hashing a file in the worker, while downloading + hashing it over
 *   loopback HTTP, and while converting: loop-delay-probe.ts's 1 ms sampler, the wait ready work
 *   exceeds for 1 % of the time (the goal's reading, < 20 ms), then per timer run p50/p99/max.
 * - with --build: ramdisk build time and size from the Debian packages (cache in
 *   $TMPDIR/rackside-images-cache), zstd and gzip.
 */
import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildRamdisk } from '../../images/index.js';
import { convertToRaw } from '../../images/image-convert.js';
import { downloadWithResume } from '../../images/image-fetch.js';
import { hashFile } from '../../images/hash-file.js';
import { formatLoopDelay, LoopDelaySampler } from './loop-delay-probe.js';

const MiB = 1024 * 1024;

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${cmd} exited ${code ?? 'by signal'}`));
    });
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

async function lagDuring(label: string, fn: () => Promise<unknown>): Promise<void> {
  const sampler = new LoopDelaySampler();
  const seconds = await timed(fn);
  const window = sampler.takeWindow();
  sampler.stop();
  console.log(`event-loop lag while ${label} (${seconds.toFixed(2)} s): ${formatLoopDelay(window)}`);
}

function makeRaw(path: string, mib: number): void {
  const chunk = Buffer.alloc(MiB);
  const zero = Buffer.alloc(MiB);
  let x = 12345;
  const parts: Buffer[] = [];
  for (let i = 0; i < mib; i++) {
    if (i % 4 === 3) {
      parts.push(zero);
      continue;
    }
    for (let j = 0; j < MiB; j += 4) {
      x = (x * 1664525 + 1013904223) >>> 0;
      chunk.writeUInt32LE(x, j);
    }
    parts.push(Buffer.from(chunk));
  }
  writeFileSync(path, Buffer.concat(parts));
}

async function main(): Promise<void> {
  const mib = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 512);
  const dir = await mkdtemp(join(tmpdir(), 'rackside-images-bench-'));
  try {
    const raw = join(dir, 'src.raw');
    const qcow2 = join(dir, 'src.qcow2');
    makeRaw(raw, mib);
    await run('qemu-img', ['convert', '-q', '-f', 'raw', '-O', 'qcow2', raw, qcow2]);
    console.log(`image: ${mib} MiB raw, ${(statSync(qcow2).size / MiB).toFixed(0)} MiB qcow2`);

    const plain: number[] = [];
    const ours: number[] = [];
    const oursWithHash: number[] = [];
    for (let i = 0; i < 3; i++) {
      plain.push(await timed(() => run('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', qcow2, join(dir, `plain-${i}.raw`)])));
      ours.push(await timed(() => convertToRaw(qcow2, 'qcow2', join(dir, `ours-${i}.raw`))));
      oursWithHash.push(await timed(async () => {
        await convertToRaw(qcow2, 'qcow2', join(dir, `hashed-${i}.raw`));
        await hashFile(join(dir, `hashed-${i}.raw`), ['sha256']);
      }));
      for (const f of [`plain-${i}.raw`, `ours-${i}.raw`, `hashed-${i}.raw`]) await rm(join(dir, f), { force: true });
    }
    const best = (xs: number[]): number => Math.min(...xs);
    const rate = (s: number): string => `${(mib / s).toFixed(0)} MiB/s`;
    console.log(`qcow2→raw plain qemu-img convert: best ${best(plain).toFixed(2)} s (${rate(best(plain))})`);
    console.log(`qcow2→raw convertToRaw (-W -m 8): best ${best(ours).toFixed(2)} s (${rate(best(ours))}), ratio ${(best(plain) / best(ours)).toFixed(2)}× of plain`);
    console.log(`qcow2→raw + sha256 of the raw (cache path): best ${best(oursWithHash).toFixed(2)} s (${rate(best(oursWithHash))}), ratio ${(best(plain) / best(oursWithHash)).toFixed(2)}× of plain`);

    await lagDuring(`hashing ${mib} MiB (sha256+sha512) in the worker`, () => hashFile(raw, ['sha256', 'sha512']));
    // The file server runs in a child process, so only the downloader's own lag is measured.
    const serverScript = `const h=require('node:http'),f=require('node:fs');const s=h.createServer((q,r)=>{r.writeHead(200,{'content-length':f.statSync(process.argv[1]).size});f.createReadStream(process.argv[1]).pipe(r)});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`;
    const server = spawn(process.execPath, ['-e', serverScript, raw], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<number>((resolve) => server.stdout.once('data', (d: Buffer) => { resolve(Number(d.toString().trim())); }));
      await lagDuring(`downloading ${mib} MiB over loopback with streaming sha256`, () => downloadWithResume(`http://127.0.0.1:${port}/x`, join(dir, 'dl.raw'), { algorithms: ['sha256'] }));
    } finally {
      server.kill();
    }
    await lagDuring(`converting ${mib} MiB qcow2 in qemu-img`, () => convertToRaw(qcow2, 'qcow2', join(dir, 'lag.raw')));

    if (process.argv.includes('--build')) {
      for (const compression of ['zstd', 'gzip'] as const) {
        let size = 0;
        const seconds = await timed(async () => {
          const r = await buildRamdisk({ outputDir: join(dir, `ramdisk-${compression}`), cacheDir: join(tmpdir(), 'rackside-images-cache'), sourceDateEpoch: 1_700_000_000, compression });
          size = r.manifest.outputs.find((o) => o.name === 'initrd')?.sizeBytes ?? 0;
        });
        console.log(`ramdisk build (${compression}, packages cached): ${seconds.toFixed(1)} s, initrd ${(size / MiB).toFixed(1)} MiB`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
