/**
 * `rackside migrate`, which install.sh runs on upgrade: on a fresh state dir it creates the
 * store at this build's schema version; on an existing one it keeps the data; with the state
 * dir taken from --config; and it refuses clearly while an agent holds the store.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { openStore, SCHEMA_VERSION } from '../../agent/store/index.js';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';

const run = promisify(execFile);

function migrate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [CLI, 'migrate', ...args]).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: unknown) => {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
    },
  );
}

test('a fresh state dir gets a store at the current schema version (0700, secret key 0600)', async (t) => {
  const dir = await scratchDir('migrate');
  t.after(() => removeDir(dir));
  const state = join(dir, 'state');
  const r = await migrate(['--state-dir', state]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `store ${state}: schema version ${SCHEMA_VERSION}\n`);
  assert.equal(((await stat(state)).mode & 0o777).toString(8), '700');
  assert.equal(((await stat(join(state, 'secret.key'))).mode & 0o777).toString(8), '600');
});

test('an existing store keeps its data; the state dir can come from --config', async (t) => {
  const dir = await scratchDir('migrate');
  t.after(() => removeDir(dir));
  const state = join(dir, 'state');
  const store = await openStore({ stateDir: state });
  await store.leases.put('52:54:00:00:00:01', { address: '192.0.2.100' });
  await store.close();
  const config = join(dir, 'rackside.yaml');
  await writeFile(config, `agent:\n  stateDir: ${state}\n`);
  const r = await migrate(['--config', config]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`store ${state}: schema version ${SCHEMA_VERSION}`));
  const reopened = await openStore({ stateDir: state });
  t.after(() => reopened.close());
  assert.deepEqual(await reopened.leases.get('52:54:00:00:00:01'), { address: '192.0.2.100' });
});

test('a store held by a running agent is refused with the way out', async (t) => {
  const dir = await scratchDir('migrate');
  t.after(() => removeDir(dir));
  const state = join(dir, 'state');
  const held = await openStore({ stateDir: state });
  t.after(() => held.close());
  const r = await migrate(['--state-dir', state]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is in use by a running agent; stop it first \(systemctl stop rackside\)/);
});

test('an invalid config is a usage error (exit 2) naming the key', async (t) => {
  const dir = await scratchDir('migrate');
  t.after(() => removeDir(dir));
  const config = join(dir, 'rackside.yaml');
  await writeFile(config, 'agent:\n  stateDir: relative/path\n');
  const r = await migrate(['--config', config]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /agent\.stateDir/);
});
