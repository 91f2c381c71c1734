/**
 * A real `rackside agent` process (the demo provisioner) syncing by client certificate alone:
 * its config has `controller.tls {ca, cert, key}` and no token; the controller process serves
 * HTTPS with `tls.clientCA`; the rack is made with `rackside controller racks add rack1 --auth
 * cert`. Its hosts arrive; after `racks revoke rack1` its pushes (the certificate still verifies)
 * are refused and nothing more of it is written.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pgClusterFor } from '../../helpers/postgres.js';
import { controllerConfigFile, freePort, Proc, startControllerProcess } from './processes.js';
import { httpsRequest, rackPkiFor } from './rack-pki.js';
import { waitFor } from '../../helpers/local-agent.js';

const CLI = fileURLToPath(new URL('../../../agent/cli.js', import.meta.url));
const run = promisify(execFile);

test('a real agent with controller.tls cert+key and no token syncs by certificate; once revoked its pushes are refused', { timeout: 300_000 }, async (t) => {
  const pki = await rackPkiFor(t);
  if (pki === undefined) return;
  const cluster = await pgClusterFor(t);
  if (cluster === undefined) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-cert-agent-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const port = await freePort();
  const config = await controllerConfigFile(t, cluster.url, port, `tls:\n  cert: ${pki.server.cert}\n  key: ${pki.server.key}\n  clientCA: ${pki.ca}\n`);
  await startControllerProcess(t, config);
  const server = `https://127.0.0.1:${port}`;
  const added = await run(process.execPath, [CLI, 'controller', 'racks', 'add', 'rack1', '--auth', 'cert', '--config', config], { timeout: 60_000 });
  assert.equal(added.stdout, '', 'a certificate rack has no token to print');
  assert.match(added.stderr, /client certificate whose subject CN is "rack1"/);
  const listed = await run(process.execPath, [CLI, 'controller', 'racks', 'list', '--config', config], { timeout: 60_000 });
  assert.match(listed.stdout, /^rack1\tactive\t\S+\tcert$/m);
  const client = await pki.rack('rack1');
  const agentPort = await freePort();
  const agentConfig = join(dir, 'agent.yaml');
  await writeFile(agentConfig, [
    'agent:', '  id: rack1-head', `  stateDir: ${join(dir, 'state')}`, '  rack: rack1', 'provisioner: demo', 'management:', `  listen: 127.0.0.1:${agentPort}`,
    'controller:', `  url: ${server}/api/v1/racks/push`, '  tls:', `    ca: ${pki.ca}`, `    cert: ${client.cert}`, `    key: ${client.key}`, '  intervalSeconds: 1', '',
  ].join('\n'));
  const agent = new Proc([CLI, 'agent', '--config', agentConfig]);
  t.after(async () => {
    agent.kill9();
    await agent.exited;
  });
  const hosts = await waitFor('the agent syncs its hosts by certificate', async () => {
    const res = await httpsRequest(`${server}/api/v1/hosts?rack=rack1`, { ca: pki.ca });
    const items = (JSON.parse(res.text) as { items: unknown[] }).items;
    return items.length > 0 ? items.length : undefined;
  });
  assert.ok(hosts > 0);
  const pool = cluster.pool();
  const pushes = async (): Promise<number> => Number((await pool.query<{ n: string }>("SELECT pushes::text AS n FROM racks WHERE name = 'rack1'")).rows[0]?.n ?? -1);
  const unauthorized = async (): Promise<number> => {
    const text = (await httpsRequest(`${server}/metrics`, { ca: pki.ca })).text;
    return Number(/^rackside_controller_pushes_total\{result="unauthorized"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  assert.equal(await unauthorized(), 0, 'no push was refused while the rack was active');
  await run(process.execPath, [CLI, 'controller', 'racks', 'revoke', 'rack1', '--config', config], { timeout: 60_000 });
  await waitFor('a push refused after the revocation', async () => ((await unauthorized()) >= 1 ? true : undefined));
  const afterRevoke = await pushes();
  const refusedSoFar = await unauthorized();
  await waitFor('more pushes refused', async () => ((await unauthorized()) >= refusedSoFar + 2 ? true : undefined));
  assert.equal(await pushes(), afterRevoke, 'nothing of the revoked rack was applied');
});
