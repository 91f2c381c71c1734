/**
 * The agent's background ramdisk build (agent/provisioner/local/ramdisk-builds.ts) with a fake
 * build child: a missing build is built and moved into place, progress is a RamdiskBuild event
 * per step and the status file doctor reads; hosts asking meanwhile wait with the step, are
 * woken when it is built and pass; a failed build is an error with reason and fix for every
 * waiting host; a current build on disk is reused without a build; an ISO need rebuilds while
 * the initrd keeps being served. And the same gate in the local provisioner: a host that needs
 * the ramdisk is not powered on until it is built (WaitingForRamdisk, then RamdiskReady).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import pino from 'pino';
import type { ExpectedBuildInputs } from '../../../images/build-check.js';
import type { RamdiskManifest } from '../../../images/manifest.js';
import { RamdiskBuilds, RAMDISK_BUILD_STATUS_FILE, type BuildRun, type BuildRunner } from '../../../agent/provisioner/local/ramdisk-builds.js';
import { buildFailureFix, ramdiskArchProblem, waitMessage } from '../../../agent/provisioner/local/ramdisk-build-status.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { scratchDir } from '../images/helpers.js';

const SHA = 'a'.repeat(64);

function manifest(format: 'initrd' | 'iso', agentVersion = '0.1.0'): RamdiskManifest {
  return {
    schema: 'rackside.ramdisk/v1', format, agentVersion, sourceDateEpoch: 0, compression: 'gzip',
    inputs: {
      kernel: { release: '6.1.0-57-amd64', vmlinuzSha256: SHA, origin: { kind: 'file', path: '/boot/vmlinuz' } },
      busybox: { sha256: SHA, applets: 1, origin: { kind: 'file', path: '/bin/busybox' } },
      agentFiles: [], modules: [], tools: [],
    },
    builtinModules: [], missing: { modules: [], tools: [] }, outputs: [{ name: 'vmlinuz', sha256: SHA, sizeBytes: 1 }],
    ...(format === 'iso' ? { iso: { bootLoaders: [], hostOverlaySlot: { path: '/boot/host.img', offsetBytes: 0, sizeBytes: 1 }, kernelCommandLine: 'console=tty0', volumeId: 'RACKSIDE' } } : {}),
  };
}

const expected = (format: 'initrd' | 'iso'): Promise<ExpectedBuildInputs> => Promise.resolve({
  format, agentVersion: '0.1.0', kernel: { kind: 'unknown', why: 'test' }, busybox: { kind: 'unknown', why: 'test' }, agentFiles: [],
});

/** A fake `rackside images build`: reports every step, writes a build into --output when released. */
function fakeRunner(): { run: BuildRunner; calls: string[][]; release(result?: Partial<BuildRun>): void; started: Promise<void> } {
  const calls: string[][] = [];
  let release: (result: BuildRun) => void = () => undefined;
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => { markStarted = resolve; });
  const run: BuildRunner = async (args, onLine) => {
    calls.push([...args]);
    const format = args[args.indexOf('--format') + 1] === 'iso' ? 'iso' : 'initrd';
    const steps = format === 'iso' ? ['kernel', 'busybox', 'initramfs', 'compress', 'write', 'iso'] : ['kernel', 'busybox', 'initramfs'];
    for (const phase of steps) onLine(JSON.stringify({ phase, format }));
    markStarted();
    const result = await new Promise<BuildRun>((resolve) => { release = resolve; });
    if (result.code === 0) {
      const out = args[args.indexOf('--output') + 1] ?? '';
      await mkdir(out, { recursive: true });
      for (const name of ['vmlinuz', 'initrd', ...(format === 'iso' ? ['rackside.iso'] : [])]) await writeFile(join(out, name), name);
      await writeFile(join(out, 'manifest.json'), JSON.stringify(manifest(format)));
    }
    return result;
  };
  return { run, calls, started, release: (r = {}) => { release({ code: 0, stderr: '', ...r }); } };
}

/** Polls `probe` (bounded: 2000 × 5 ms) until it holds. */
async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`${what} never happened`);
}

const statusFile = async (dir: string): Promise<{ state?: string; step?: number; message?: string }> =>
  JSON.parse(await readFile(join(dir, RAMDISK_BUILD_STATUS_FILE), 'utf8').catch(() => '{}')) as { state?: string; step?: number; message?: string };

function builds(dir: string, runner: BuildRunner, woken: string[], store = createMemoryStore()): RamdiskBuilds {
  return new RamdiskBuilds({
    cacheDir: dir, kernel: { kind: 'debian' }, agentVersion: '0.1.0', events: store, logger: pino({ level: 'silent' }), wake: (name) => woken.push(name),
    nowMs: Date.now, run: runner, expectedInputs: expected,
  });
}

/** A started RamdiskBuilds over a fresh scratch directory, memory store and fake build child, its first build running. */
async function startedBuilds(t: TestContext, name: string): Promise<{ dir: string; store: ReturnType<typeof createMemoryStore>; fake: ReturnType<typeof fakeRunner>; woken: string[]; b: RamdiskBuilds }> {
  const { dir, cleanup } = scratchDir(name);
  t.after(cleanup);
  const store = createMemoryStore();
  const fake = fakeRunner();
  const woken: string[] = [];
  const b = builds(dir, fake.run, woken, store);
  t.after(() => b.stop());
  b.start(false);
  await fake.started;
  return { dir, store, fake, woken, b };
}

test('no build yet: built in the background; hosts wait with the step, are woken and pass when it is in place', async (t) => {
  const { dir, store, fake, woken, b } = await startedBuilds(t, 'ramdisk-builds');
  await until('step 3', () => b.status().step === 3);
  const gate = b.gate('node-0', 'initrd');
  assert.deepEqual(gate, { kind: 'wait', message: 'waiting for the amd64 ramdisk build (step 3/5, composing the initramfs, 40 %)', changed: true });
  const again = b.gate('node-0', 'initrd');
  assert.ok(again.kind === 'wait' && !again.changed, 'the same message is not news');
  assert.deepEqual(fake.calls[0]?.slice(0, 6), ['--output', `${join(dir, 'ramdisk')}.building`, '--cache-dir', join(dir, 'build'), '--format', 'initrd']);
  assert.ok(fake.calls[0].includes('--progress'));
  await until('the status file at step 3 (doctor reads the build from it)', async () => {
    const file = await statusFile(dir);
    return file.state === 'building' && file.step === 3;
  });

  fake.release();
  await until('the waiting host woken (after the ready status is stored)', () => woken.length > 0);
  assert.deepEqual(woken, ['node-0']);
  assert.equal(b.status().state, 'ready');
  assert.deepEqual(b.gate('node-0', 'initrd'), { kind: 'ready', waited: true });
  assert.deepEqual(b.gate('node-0', 'initrd'), { kind: 'ready', waited: false });
  assert.equal(await readFile(join(dir, 'ramdisk', 'initrd'), 'utf8'), 'initrd', 'the build is where boot HTTP serves it');
  assert.match(b.status().message, /^built the amd64 initrd ramdisk in [\d.]+ s$/);
  const events = (await store.listEvents({})).filter((e) => e.reason === 'RamdiskBuild').map((e) => e.message);
  assert.ok(events.includes('building the amd64 ramdisk (step 3/5, composing the initramfs, 40 %)'), events.join('\n'));
  assert.match(events.at(-1) ?? '', /^built the amd64 initrd ramdisk/);
});

test('a failed build: every waiting host gets the reason and the fix; the agent status and the status file say failed', async (t) => {
  const { dir, store, fake, woken, b } = await startedBuilds(t, 'ramdisk-builds-fail');
  b.gate('node-0', 'initrd');
  b.gate('node-1', 'initrd');
  fake.release({ code: 1, stderr: 'building the initrd ramdisk …\nerror: kernel image /nonexistent/vmlinuz does not exist\n' });
  await until('failed', () => b.status().state === 'failed');
  await until('woken', () => woken.length === 2);
  const gate = b.gate('node-0', 'initrd');
  assert.ok(gate.kind === 'failed');
  assert.match(gate.message, /^the amd64 ramdisk build failed: kernel image \/nonexistent\/vmlinuz does not exist — fix: point images\.ramdisk\.kernel at an existing/);
  const file = JSON.parse(await readFile(join(dir, RAMDISK_BUILD_STATUS_FILE), 'utf8')) as { state: string; message: string; fix: string };
  assert.deepEqual([file.state, file.message], ['failed', 'kernel image /nonexistent/vmlinuz does not exist']);
  const warning = (await store.listEvents({})).find((e) => e.reason === 'RamdiskBuildFailed');
  assert.equal(warning?.type, 'Warning');
});

test('a current build on disk is served without a build; an ISO need rebuilds while the initrd stays served', async (t) => {
  const { dir, cleanup } = scratchDir('ramdisk-builds-reuse');
  t.after(cleanup);
  await mkdir(join(dir, 'ramdisk'), { recursive: true });
  await writeFile(join(dir, 'ramdisk', 'manifest.json'), JSON.stringify(manifest('initrd')));
  const fake = fakeRunner();
  const woken: string[] = [];
  const b = builds(dir, fake.run, woken);
  t.after(() => b.stop());
  b.start(false);
  await until('ready', () => b.status().state === 'ready');
  assert.equal(fake.calls.length, 0, 'no build');
  assert.deepEqual(b.gate('net-host', 'initrd'), { kind: 'ready', waited: false });
  const iso = b.gate('vmedia-host', 'iso');
  assert.equal(iso.kind, 'wait', 'the ISO is not built yet');
  await fake.started;
  assert.ok(fake.calls[0]?.includes('iso'));
  assert.deepEqual(b.gate('net-host', 'initrd'), { kind: 'ready', waited: false }, 'network hosts keep booting the initrd meanwhile');
  fake.release();
  await until('the virtual-media host woken once the ISO is built', () => woken.length > 0);
  assert.deepEqual([b.status().state, b.status().format], ['ready', 'iso']);
  assert.deepEqual(woken, ['vmedia-host']);
  assert.deepEqual(b.gate('vmedia-host', 'iso'), { kind: 'ready', waited: true });
});

test('messages: the wait names the step; a failure is told apart by its cause', () => {
  assert.equal(waitMessage({ state: 'checking', message: '', since: '' }), 'waiting for the amd64 ramdisk: checking the build on disk against its inputs');
  assert.equal(waitMessage({ state: 'building', format: 'iso', message: '', since: '', phase: 'iso', step: 6, total: 6, percent: 83 }), 'waiting for the amd64 ramdisk ISO build (step 6/6, building the ISO, 83 %)');
  assert.match(buildFailureFix('ENOSPC: no space left on device, write', '/var/lib/rackside/images'), /^free space on the file system of \/var\/lib\/rackside\/images/);
  assert.match(buildFailureFix('apt-get download linux-image-6.1.0-57-amd64=6.1.192-3 failed (apt access needed)', '/x'), /apt-get download linux-image-amd64.*or set images\.ramdisk\.kernel/);
  assert.match(buildFailureFix('apt-cache show busybox-static failed', '/x'), /busybox-static/);
  assert.match(buildFailureFix('something else', '/x'), /rackside images build/);
});

test('buildFailureFix of a foreign architecture names its --arch build and its private apt lists', () => {
  assert.match(buildFailureFix('apt-get (private arm64 configuration) download -q linux-image-6.1.0-57-arm64 failed', '/var/cache/rackside', 'arm64'), /^make "rackside images build --arch arm64" work on this head node: .*\/var\/cache\/rackside\/build\/apt-arm64/);
  assert.match(buildFailureFix('something else', '/c', 'arm64'), /^run "rackside images build --arch arm64"/);
  assert.match(buildFailureFix('apt-cache depends linux-image-amd64 failed', '/c'), /linux-image-amd64/, 'the head node\'s fix is unchanged');
});

test('ramdiskArchProblem: x86_64/amd64 (and metal3\'s empty default) and aarch64/arm64 have a ramdisk; other architectures are refused naming them', () => {
  for (const ok of ['x86_64', 'amd64', 'X86_64', '', 'aarch64', 'arm64', 'AArch64']) assert.equal(ramdiskArchProblem(ok), undefined, ok);
  assert.match(ramdiskArchProblem('ppc64le') ?? '', /^no ppc64le ramdisk: the agent builds ramdisks for amd64 and arm64 \(x86_64 and aarch64\) only, and this host's architecture is ppc64le/);
  assert.match(ramdiskArchProblem('riscv64') ?? '', /^no riscv64 ramdisk/);
});
