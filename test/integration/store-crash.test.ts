/**
 * @module Crash safety of the LevelDB store: a child process commits host+secret pairs and is
 * SIGKILLed mid-way (after ~40 acknowledgements, then at random moments); after each kill the
 * reopened store must hold every acknowledged pair, no host without its secret or secret
 * without its host, and a revision counter at least the highest stored resourceVersion.
 * kill -9 tests process crashes only (the page cache survives), not power loss.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../agent/store/index.js';

const WRITER = fileURLToPath(new URL('../helpers/store-crash-writer.js', import.meta.url));
const COMMITS = 200;
const TIMEOUT_MS = 30_000;

type KillAt = { afterAcks: number } | { afterMs: number };

/** Runs the writer until `killAt`, SIGKILLs it, and returns the names it acknowledged. */
function runWriter(stateDir: string, prefix: string, killAt: KillAt): Promise<{ acked: string[]; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, stateDir, prefix, String(COMMITS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: string[] = [];
    let stderr = '';
    const kill = () => child.kill('SIGKILL');
    const guard = setTimeout(() => {
      kill();
      reject(new Error(`writer did not reach its kill point within ${TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, TIMEOUT_MS);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'READY' && 'afterMs' in killAt) setTimeout(kill, killAt.afterMs);
      if (!line.startsWith('ACK ')) return;
      acked.push(line.slice(4));
      if ('afterAcks' in killAt && acked.length >= killAt.afterAcks) kill();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL' && code !== 0) reject(new Error(`writer exited with ${String(code)}: ${stderr}`));
      else resolve({ acked, signal });
    });
  });
}

/** Reopens the store and checks the crash invariants; returns how many hosts it holds. */
async function checkInvariants(stateDir: string, acked: readonly string[]): Promise<number> {
  const store = await openStore({ stateDir });
  try {
    const hosts = await store.listHosts();
    const secrets = await store.listSecrets();
    const hostVersion = new Map(hosts.map((h) => [h.metadata.name, h.metadata.resourceVersion]));
    const secretVersion = new Map(secrets.map((s) => [s.metadata.name, s.metadata.resourceVersion]));
    for (const name of acked) {
      assert.ok(hostVersion.has(name), `acknowledged host ${name} is missing`);
      const secret = await store.getSecret('default', `${name}-bmc`);
      assert.equal(Buffer.from(secret?.data.password ?? '', 'base64').toString(), `pw-${name}`, `secret of ${name}`);
    }
    for (const [name, version] of hostVersion) {
      assert.equal(secretVersion.get(`${name}-bmc`), version, `host ${name} has no secret from the same commit`);
    }
    for (const name of secretVersion.keys()) {
      assert.ok(hostVersion.has(name.replace(/-bmc$/, '')), `secret ${name} has no host`);
    }
    const highest = Math.max(0, ...[...hostVersion.values(), ...secretVersion.values()].map(Number));
    const { revision } = await store.commit([]);
    assert.ok(revision >= highest, `revision counter ${revision} < highest stored resourceVersion ${highest}`);
    return hosts.length;
  } finally {
    await store.close();
  }
}

test('SIGKILL during concurrent host+secret commits loses no acknowledged write and splits no pair', async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-crash-'));
  try {
    const plan: KillAt[] = [{ afterAcks: 40 }, { afterAcks: 1 + Math.floor(Math.random() * (COMMITS - 1)) }];
    for (let i = 0; i < 3; i++) plan.push({ afterMs: Math.floor(Math.random() * 150) });
    let allAcked: string[] = [];
    let stored = 0;
    for (const [i, killAt] of plan.entries()) {
      const { acked, signal } = await runWriter(stateDir, `it${i}`, killAt);
      if ('afterAcks' in killAt) assert.ok(acked.length >= killAt.afterAcks, `iteration ${i} was killed too early`);
      allAcked = [...allAcked, ...acked];
      stored = await checkInvariants(stateDir, allAcked);
      assert.ok(stored >= allAcked.length);
      t.diagnostic(`kill ${JSON.stringify(killAt)}: ${acked.length} acked, ${signal ?? 'finished'}, ${stored} hosts stored in total`);
    }
    assert.ok(allAcked.length >= 40, 'the kills happened mid-stream, after real work');
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
});
