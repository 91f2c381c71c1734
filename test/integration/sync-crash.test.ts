/**
 * @module Controller sync across kill -9: a child agent updates hosts while pushing to a real
 * HTTP controller that drops every third response; the parent SIGKILLs it mid-stream (twice),
 * then runs it once more to drain. Afterwards every host's latest stored version has reached
 * the controller, no Idempotency-Key was applied twice, and each host's summaries arrived in order.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../agent/store/index.js';
import { FakeController } from './sync-controller.js';

const CHILD = fileURLToPath(new URL('./sync-agent-child.js', import.meta.url));
const HOSTS = 6;
const CHILD_TIMEOUT_MS = 20_000;

/** Runs the child; in `write` mode SIGKILLs it after `killAfterCommits` commits. Resolves with its last stdout line. */
function runChild(stateDir: string, url: string, mode: 'write' | 'drain', killAfterCommits = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, stateDir, url, mode, String(HOSTS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let last = '';
    let commits = 0;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child (${mode}) did not finish within ${CHILD_TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, CHILD_TIMEOUT_MS);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      last = line;
      if (line === 'COMMIT' && ++commits === killAfterCommits) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      if (mode === 'write' ? signal === 'SIGKILL' : code === 0) resolve(last);
      else reject(new Error(`child (${mode}) ended with code ${String(code)} signal ${String(signal)}: ${stderr}`));
    });
  });
}

test('after kill -9 mid-stream every summary is delivered, none twice, in per-host order', { timeout: 90_000 }, async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'rackside-sync-crash-'));
  let n = 0;
  const controller = await FakeController.start({ respond: (d, _i, c) => (++n % 3 === 0 ? (c.acknowledge(d), 'destroy') : undefined) });
  try {
    await runChild(stateDir, controller.url, 'write', 40);
    await runChild(stateDir, controller.url, 'write', 90);
    const drained = await runChild(stateDir, controller.url, 'drain');
    assert.match(drained, /^DRAINED /);
    const status = JSON.parse(drained.slice('DRAINED '.length)) as { backlog: { hosts: number; events: number }; inflight: unknown };
    assert.deepEqual(status.backlog, { hosts: 0, events: 0 });
    assert.equal(status.inflight, null);

    assert.equal(new Set(controller.appliedKeys).size, controller.appliedKeys.length, 'no key applied twice');
    const keys = controller.deliveries.map((d) => d.key);
    assert.ok(keys.length > new Set(keys).size, 'some deliveries were retries of an applied key (lost responses)');
    assert.deepEqual(controller.invalid, []);
    const perHost = new Map<string, number[]>();
    for (const [host, version] of controller.appliedHostVersions()) perHost.set(host, [...(perHost.get(host) ?? []), version]);
    for (const [host, versions] of perHost) assert.deepEqual(versions, [...versions].sort((a, b) => a - b), `${host} in order`);
    const store = await openStore({ stateDir });
    try {
      const hosts = await store.listHosts();
      assert.equal(hosts.length, HOSTS);
      for (const host of hosts) {
        assert.equal(perHost.get(host.metadata.name)?.at(-1), Number(host.metadata.resourceVersion), `${host.metadata.name}: latest version delivered`);
      }
    } finally {
      await store.close();
    }
    const sequences = controller.applied.map((r) => r.sequence);
    assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b), 'sequences applied in increasing order');
  } finally {
    await controller.close();
    await rm(stateDir, { recursive: true, force: true });
  }
});
