/**
 * The agent's ramdisks per architecture (agent/provisioner/local/ramdisk-build-set.ts) with a
 * fake build child: the head node's build starts at start; the arm64 one only when a host asks
 * for it, with `--arch arm64`, into `ramdisk/arm64/` (served as `/ramdisk/arm64/…`) with its own
 * status file; the head node's status and URLs are unchanged.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { ExpectedBuildInputs } from '../../../images/build-check.js';
import { RamdiskBuildSet } from '../../../agent/provisioner/local/ramdisk-build-set.js';
import type { BuildRun, BuildRunner } from '../../../agent/provisioner/local/ramdisk-builds.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { scratchDir } from '../images/helpers.js';

const SHA = 'a'.repeat(64);

/** A fake `rackside images build` whose runs are released one by one; each writes a manifest naming its --arch. */
function fakeRunner(): { run: BuildRunner; calls: string[][]; release(): void } {
  const calls: string[][] = [];
  const pending: ((r: BuildRun) => void)[] = [];
  const run: BuildRunner = async (args) => {
    calls.push([...args]);
    const result = await new Promise<BuildRun>((resolve) => { pending.push(resolve); });
    const out = args[args.indexOf('--output') + 1] ?? '';
    const arch = args.includes('--arch') ? args[args.indexOf('--arch') + 1] : 'amd64';
    await mkdir(out, { recursive: true });
    for (const name of ['vmlinuz', 'initrd']) await writeFile(join(out, name), `${arch} ${name}`);
    await writeFile(join(out, 'manifest.json'), JSON.stringify({
      schema: 'rackside.ramdisk/v1', format: 'initrd', architecture: arch, agentVersion: '0.1.0', sourceDateEpoch: 0, compression: 'gzip',
      inputs: { kernel: { release: 'r', vmlinuzSha256: SHA, origin: { kind: 'file', path: '/v' } }, busybox: { sha256: SHA, applets: 1, origin: { kind: 'file', path: '/b' } }, agentFiles: [], modules: [], tools: [] },
      builtinModules: [], missing: { modules: [], tools: [] }, outputs: [{ name: 'vmlinuz', sha256: SHA, sizeBytes: 1 }],
    }));
    return result;
  };
  return { run, calls, release: () => { pending.shift()?.({ code: 0, stderr: '' }); } };
}

async function until(what: string, probe: () => boolean): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (probe()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`${what} never happened`);
}

test('the arm64 ramdisk is built only once an arm64 host asks, with --arch arm64, beside the head node\'s; hosts wait for it and are woken', async (t) => {
  const { dir, cleanup } = scratchDir('ramdisk-build-set');
  t.after(cleanup);
  const fake = fakeRunner();
  const woken: string[] = [];
  const expected = (format: 'initrd' | 'iso'): Promise<ExpectedBuildInputs> => Promise.resolve({
    format, agentVersion: '0.1.0', kernel: { kind: 'unknown', why: 'test' }, busybox: { kind: 'unknown', why: 'test' }, agentFiles: [],
  });
  const set = new RamdiskBuildSet({
    cacheDir: dir, kernel: { kind: 'debian' }, agentVersion: '0.1.0', events: createMemoryStore(), logger: pino({ level: 'silent' }),
    wake: (name) => woken.push(name), nowMs: Date.now, run: fake.run, expectedInputs: expected,
  });
  t.after(() => set.stop());
  set.start(false);
  await until('the head node\'s build', () => fake.calls.length === 1);
  assert.ok(!fake.calls[0]?.includes('--arch'), 'the head node\'s build names no architecture (as before)');
  fake.release();
  await until('the head node\'s ramdisk ready', () => set.status().state === 'ready');
  assert.deepEqual(set.gate('x86', 'initrd'), { kind: 'ready', waited: false });
  assert.equal(fake.calls.length, 1, 'no arm64 build before an arm64 host asks');

  const gate = set.gate('arm-0', 'initrd', 'arm64');
  assert.ok(gate.kind === 'wait', gate.kind);
  assert.match(gate.message, /arm64 ramdisk/);
  await until('the arm64 build', () => fake.calls.length === 2);
  const args = fake.calls[1] ?? [];
  assert.deepEqual(args.slice(args.indexOf('--arch'), args.indexOf('--arch') + 2), ['--arch', 'arm64']);
  assert.equal(args[args.indexOf('--output') + 1], join(dir, 'ramdisk-arm64.building'), 'built outside the served directory');
  fake.release();
  await until('the arm64 host woken', () => woken.includes('arm-0'));
  assert.deepEqual(set.gate('arm-0', 'initrd', 'arm64'), { kind: 'ready', waited: true });
  assert.equal(await readFile(join(dir, 'ramdisk/arm64/initrd'), 'utf8'), 'arm64 initrd', 'served as /ramdisk/arm64/initrd');
  assert.equal(await readFile(join(dir, 'ramdisk/initrd'), 'utf8'), 'amd64 initrd', 'the head node\'s ramdisk is untouched');
  const armStatus = JSON.parse(await readFile(join(dir, 'ramdisk-build-arm64.json'), 'utf8')) as { state: string; arch: string };
  assert.deepEqual([armStatus.state, armStatus.arch], ['ready', 'arm64']);
  assert.equal(set.status().arch, 'amd64', 'the reported status stays the head node\'s');
  assert.deepEqual(Object.keys(set.statuses()).sort(), ['amd64', 'arm64']);
  assert.deepEqual(set.all().map((s) => s.arch), ['amd64', 'arm64'], 'every build for the status page, the head node\'s first');
  const registry = new Registry();
  set.register(registry);
  const metrics = await registry.metrics();
  assert.match(metrics, /^rackside_ramdisk_build_percent 100$/m, 'the head node\'s series keep no label (as before)');
  assert.match(metrics, /^rackside_ramdisk_build_phase\{phase="ready"\} 1$/m);
  assert.match(metrics, /^rackside_ramdisk_build_percent\{arch="arm64"\} 100$/m);
  assert.match(metrics, /^rackside_ramdisk_build_phase\{phase="ready",arch="arm64"\} 1$/m);
  assert.match(metrics, /^rackside_ramdisk_build_phase\{phase="failed",arch="arm64"\} 0$/m);
});
