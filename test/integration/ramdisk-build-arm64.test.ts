/**
 * The agent's background build of the arm64 ramdisk (agent/provisioner/local/ramdisk-build-set.ts
 * over ramdisk-builds.ts, with the real `nice 10` child `rackside images build --arch arm64`):
 * nothing is built for arm64 until an arm64 host asks; the host waits, the child builds from
 * Debian's arm64 packages into `ramdisk/arm64/`, the host is woken and passes. A second agent
 * over the same cache finds that build current (the arm64 inputs it expects — from the private
 * apt — match the manifest) and builds nothing. Debian packages come from the images tests'
 * cache (`<cacheDir>/build` links to it). Needs apt access; a skip without it, unless
 * RACKSIDE_REQUIRE_INTEGRATION=1.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { RamdiskBuildSet } from '../../agent/provisioner/local/ramdisk-build-set.js';
import { spawnImagesBuild, type BuildRunner } from '../../agent/provisioner/local/ramdisk-builds.js';
import { createMemoryStore } from '../../agent/store/index.js';
import { decodeManifest } from '../../images/manifest.js';
import { DEBIAN_PACKAGE_CACHE } from '../lab/rack/ramdisk-cache.js';
import { requireTools, scratchDir } from '../unit/images/helpers.js';
import { skipOrFail } from '../helpers/integration.js';

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('the agent builds the arm64 ramdisk in the background once an arm64 host asks, and a later agent reuses it', { timeout: 600_000 }, async (t) => {
  if (process.arch === 'arm64') {
    t.skip('the head node is arm64: this test builds the foreign arm64 ramdisk on amd64');
    return;
  }
  if (!requireTools(t, { 'apt-get': 'apt', 'dpkg-deb': 'dpkg', depmod: 'kmod', nice: 'coreutils' })) return;
  const { dir, cleanup } = scratchDir('ramdisk-build-arm64');
  t.after(cleanup);
  const cacheDir = join(dir, 'cache');
  await mkdir(cacheDir);
  await mkdir(DEBIAN_PACKAGE_CACHE, { recursive: true });
  await symlink(DEBIAN_PACKAGE_CACHE, join(cacheDir, 'build'));

  const runs: string[][] = [];
  const run: BuildRunner = (args, onLine, started) => { runs.push([...args]); return spawnImagesBuild(args, onLine, started); };
  const woken: string[] = [];
  const open = (): RamdiskBuildSet => new RamdiskBuildSet({
    cacheDir, kernel: { kind: 'debian' }, agentVersion: '0.1.0-it', events: createMemoryStore(), logger: pino({ level: 'silent' }),
    wake: (name) => woken.push(name), nowMs: Date.now, run,
  });
  const first = open();
  t.after(() => first.stop());
  // Not started: the head node's build is not this test's business; an arm64 host's ask starts the arm64 one alone.
  const gate = first.gate('arm-0', 'initrd', 'arm64');
  assert.ok(gate.kind === 'wait', `the host waits: ${JSON.stringify(gate)}`);
  const started = Date.now();
  await until('the arm64 host woken', () => (woken.includes('arm-0') ? true : undefined), 540_000);
  const status = first.statuses().arm64;
  if (status?.state === 'failed' && /apt|Debian|download/i.test(status.message)) {
    skipOrFail(t, `the arm64 packages cannot be fetched: ${status.message}`);
    return;
  }
  assert.equal(status?.state, 'ready', JSON.stringify(status));
  t.diagnostic(`the agent's arm64 build (nice 10 child): ${((Date.now() - started) / 1000).toFixed(1)} s; ${status.message}`);
  assert.deepEqual(first.gate('arm-0', 'initrd', 'arm64'), { kind: 'ready', waited: true });
  assert.equal(runs.length, 1);
  assert.deepEqual(runs[0]?.slice(runs[0].indexOf('--arch'), runs[0].indexOf('--arch') + 2), ['--arch', 'arm64']);
  const manifest = decodeManifest(await readFile(join(cacheDir, 'ramdisk/arm64/manifest.json'), 'utf8'));
  assert.equal(manifest.architecture, 'arm64');
  assert.match(manifest.inputs.kernel.release, /-arm64$/);
  await first.stop();

  // A restarted agent: the arm64 build on disk is current, nothing is rebuilt.
  const second = open();
  t.after(() => second.stop());
  second.gate('arm-1', 'initrd', 'arm64');
  await until('the second agent\'s check', () => (second.statuses().arm64?.state === 'ready' || second.statuses().arm64?.state === 'failed' ? true : undefined), 120_000);
  assert.equal(second.statuses().arm64?.state, 'ready', JSON.stringify(second.statuses().arm64));
  assert.match(second.statuses().arm64?.message ?? '', /^the arm64 ramdisk on disk is current/);
  assert.equal(runs.length, 1, 'no second build');
  assert.deepEqual(second.gate('arm-1', 'initrd', 'arm64'), { kind: 'ready', waited: true });
});
