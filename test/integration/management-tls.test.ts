/**
 * The management API over mutual TLS, with a real agent process, real openssl-made certificates,
 * the real CLI and curl: a client certificate signed by `management.tls.clientCA` gets in; no
 * certificate, or one from another CA, is refused in the TLS handshake; the CLI says what to
 * pass; SSH-executed commands keep working through the agent's unix socket.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { removeDir, runCli, scratchDir, startAgentProcess } from '../helpers/agent-process.js';
import { requireTools } from '../helpers/integration.js';

const run = promisify(execFile);

/** Makes a CA, a server certificate for 127.0.0.1 and a client certificate, plus a stranger's self-signed pair. */
async function makePki(dir: string): Promise<void> {
  const sh = async (...args: string[]): Promise<void> => { await run('openssl', args, { cwd: dir }); };
  await sh('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=rackside test CA');
  for (const [name, ext] of [['server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth'], ['client', 'extendedKeyUsage=clientAuth']] as const) {
    await sh('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    await run('sh', ['-c', `printf '${ext}\\n' > ${name}.ext && openssl x509 -req -in ${name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ${name}.ext -out ${name}.pem`], { cwd: dir });
  }
  await sh('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'stranger.key', '-out', 'stranger.pem', '-days', '2', '-subj', '/CN=stranger');
}

test('mutual TLS: only clients with a certificate from clientCA reach the management API', async (t) => {
  if (!requireTools(t, ['openssl', 'curl'])) return;
  const dir = await scratchDir('mtls');
  t.after(() => removeDir(dir));
  await makePki(dir);
  const p = (name: string): string => join(dir, name);
  const agent = await startAgentProcess(dir, [
    'management:', '  listen: 127.0.0.1:0', '  tls:',
    `    cert: ${p('server.pem')}`, `    key: ${p('server.key')}`, `    clientCA: ${p('ca.pem')}`, '',
  ].join('\n'));
  t.after(() => agent.kill());
  assert.match(agent.url, /^https:\/\/127\.0\.0\.1:\d+$/);

  // curl with the client certificate: in.
  const ok = await run('curl', ['-sS', '--cacert', p('ca.pem'), '--cert', p('client.pem'), '--key', p('client.key'), `${agent.url}/api/v1/hosts`]);
  assert.deepEqual((JSON.parse(ok.stdout) as { items: unknown[] }).items, []);
  // No client certificate, or a stranger's: the handshake fails, nothing is served.
  for (const extra of [[], ['--cert', p('stranger.pem'), '--key', p('stranger.key')]]) {
    await assert.rejects(run('curl', ['-sS', '--cacert', p('ca.pem'), ...extra, `${agent.url}/api/v1/hosts`]), (err: { stderr?: string; stdout?: string }) => {
      // TLS 1.3 sends the client's certificate after the server's Finished: curl sees the alert, or just the close or a reset.
      assert.match(err.stderr ?? '', /alert|certificate|handshake|SSL|Empty reply|Connection reset/i);
      assert.equal(err.stdout, '', 'nothing was served');
      return true;
    });
  }

  // The CLI with --cacert/--cert/--key works; without a client certificate it exits 6 and says why.
  const good = await runCli(agent.url, ['get', 'hosts', '--cacert', p('ca.pem'), '--cert', p('client.pem'), '--key', p('client.key')]);
  assert.equal(good.code, 0, good.stderr);
  const refused = await runCli(agent.url, ['get', 'hosts', '--cacert', p('ca.pem')]);
  assert.equal(refused.code, 6, refused.stderr);
  assert.match(refused.stderr, /cannot reach the rackside agent/);
  const half = await runCli(agent.url, ['get', 'hosts', '--cert', p('client.pem')]);
  assert.equal(half.code, 2);
  assert.match(half.stderr, /--cert and --key go together/);

  // The unix socket for in-agent clients (SSH commands) is private to the agent's user.
  const socket = await stat(join(dir, 'state', 'management.sock'));
  assert.ok(socket.isSocket());
  assert.equal(socket.mode & 0o777, 0o600);
  const viaSocket = await run('curl', ['-sS', '--unix-socket', join(dir, 'state', 'management.sock'), 'http://localhost/api/v1/hosts']);
  assert.deepEqual((JSON.parse(viaSocket.stdout) as { items: unknown[] }).items, []);
  assert.equal(await agent.stop(), 0);
  await assert.rejects(stat(join(dir, 'state', 'management.sock')), 'the socket is removed at stop');
});
