/**
 * The whole path with real processes: a controller process, a real `rackside agent` (the demo
 * provisioner) pushing with its rack token, and the `rackside fleet` CLI. A power-off queued
 * with `rackside fleet power off RACK/HOST` reaches the agent in a push answer, runs through its
 * HostService (the host's spec.online turns false, seen through the agent's own API) and shows
 * `done`; an invalid manifest sent with `rackside fleet apply` fails on the rack with the same
 * validation message the agent's own API gives; without the operator token nothing is queued.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { addRack } from '../../../controller/racks.js';
import { pgClusterFor } from '../../helpers/postgres.js';
import { controllerConfigFile, freePort, Proc, startControllerProcess } from './processes.js';
import { waitFor } from '../../helpers/local-agent.js';

const CLI = fileURLToPath(new URL('../../../agent/cli.js', import.meta.url));
const run = promisify(execFile);

async function fleet(server: string, token: string | undefined, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'fleet', ...args, '--server', server, ...(token === undefined ? [] : ['--token', token])], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

test('rackside fleet power off and apply reach a real agent through its HostService', { timeout: 300_000 }, async (t) => {
  const cluster = await pgClusterFor(t);
  if (cluster === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-fleet-agent-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const operatorToken = 'operator-token-for-the-test';
  await writeFile(join(dir, 'operator.token'), `${operatorToken}\n`, { mode: 0o600 });
  const port = await freePort();
  await startControllerProcess(t, await controllerConfigFile(t, cluster.url, port, `operatorTokenFile: ${join(dir, 'operator.token')}\n`));
  const server = `http://127.0.0.1:${port}`;
  const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
  pool.on('error', () => undefined);
  t.after(() => pool.end());
  const rackToken = await addRack(pool, 'rack1');
  const agentPort = await freePort();
  const config = join(dir, 'agent.yaml');
  await writeFile(config, [
    'agent:', '  id: rack1-head', `  stateDir: ${join(dir, 'state')}`, '  rack: rack1', `  statusUrl: http://127.0.0.1:${agentPort}/`,
    'provisioner: demo', 'management:', `  listen: 127.0.0.1:${agentPort}`,
    'controller:', `  url: [${server}/api/v1/racks/push]`, `  token: ${rackToken}`, '  intervalSeconds: 2', '',
  ].join('\n'));
  const agent = new Proc([CLI, 'agent', '--config', config]);
  t.after(async () => {
    agent.kill9();
    await agent.exited;
  });
  const host = await waitFor('the agent syncs its hosts', async () => {
    const res = await fetch(`${server}/api/v1/hosts?rack=rack1`);
    const items = ((await res.json()) as { items: { name: string }[] }).items;
    return items[0]?.name;
  });
  const refused = await fleet(server, undefined, 'power', 'off', `rack1/${host}`);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /operator token/);
  const queued = await fleet(server, operatorToken, 'power', 'off', `rack1/${host}`, '--expires', '10m');
  assert.equal(queued.code, 0, queued.stderr);
  const id = /command ([0-9a-f-]{36}) queued/.exec(queued.stdout)?.[1] ?? '';
  assert.notEqual(id, '', queued.stdout);
  const done = await waitFor('the power-off is done', async () => {
    const c = (await (await fetch(`${server}/api/v1/commands/${id}`)).json()) as { state: string; message: string | null; error: string | null };
    return c.state === 'done' || c.state === 'failed' ? c : undefined;
  });
  assert.equal(done.state, 'done', done.error ?? '');
  const onAgent = (await (await fetch(`http://127.0.0.1:${agentPort}/api/v1/hosts/${host}`)).json()) as { spec: { online: boolean } };
  assert.equal(onAgent.spec.online, false, 'the host was powered off through the agent\'s HostService');
  await writeFile(join(dir, 'bad.yaml'), 'apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: bad\nspec:\n  online: maybe\n');
  const apply = await fleet(server, operatorToken, 'apply', '-f', join(dir, 'bad.yaml'), '--rack', 'rack1');
  assert.equal(apply.code, 0, apply.stderr);
  const applyId = /command ([0-9a-f-]{36}) queued/.exec(apply.stdout)?.[1] ?? '';
  const failed = await waitFor('the apply fails on the rack', async () => {
    const c = (await (await fetch(`${server}/api/v1/commands/${applyId}`)).json()) as { state: string; error: string | null };
    return c.state === 'failed' || c.state === 'done' ? c : undefined;
  });
  assert.equal(failed.state, 'failed');
  assert.match(failed.error ?? '', /spec\.online/, 'the agent\'s own validation message');
  const list = await fleet(server, undefined, 'get', 'commands');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`${id}\\s+rack1\\s+power-off\\s+default/${host}\\s+done`));
  const racks = await fleet(server, undefined, 'get', 'racks');
  assert.match(racks.stdout, /^rack1\s+online\s+\d+/m);
});
