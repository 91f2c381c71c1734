/**
 * Remote control of a real agent over its embedded SSH server with the OpenSSH client: `ssh …
 * get hosts` prints what the console prints, `apply -f -` reads the session's stdin, `-L`
 * reaches the status page, the session is in the audit trail, and files on the head node are
 * not readable through the CLI.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { startAgent } from '../../agent/main.js';
import { removeDir, scratchDir } from '../helpers/agent-process.js';
import { hostManifests } from '../helpers/host-harness.js';
import { requireTools } from '../helpers/integration.js';
import { freePort } from '../helpers/local-agent.js';

const run = promisify(execFile);

function ssh(key: string, port: number, args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('ssh', ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-i', key, '-p', String(port), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

test('ssh ops@rack get hosts / apply -f - / -L to the status page, audited', async (t) => {
  if (!requireTools(t, ['ssh', 'ssh-keygen', 'curl'])) return;
  const dir = await scratchDir('agent-ssh');
  t.after(() => removeDir(dir));
  const key = join(dir, 'id_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key, '-C', 'ops@laptop']);
  const { readFile } = await import('node:fs/promises');
  await writeFile(join(dir, 'authorized_keys'), await readFile(`${key}.pub`, 'utf8'));
  const sshPort = await freePort();
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(
    configPath,
    [
      'agent:',
      `  stateDir: ${join(dir, 'state')}`,
      'provisioner: fixture',
      'management:',
      '  listen: 127.0.0.1:0',
      'ssh:',
      `  listen: 127.0.0.1:${sshPort}`,
      `  authorizedKeys: ${join(dir, 'authorized_keys')}`,
      'reconcile:',
      '  timeScale: 0.001',
      'log:',
      '  level: silent',
    ].join('\n'),
  );
  const agent = await startAgent({ configPath });
  t.after(() => agent.stop());

  const manifests = hostManifests('ssh-node-0').map((doc) => stringify(doc)).join('---\n');
  const applied = await ssh(key, sshPort, ['ops@127.0.0.1', 'apply', '-f', '-'], manifests);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /baremetalhost\.metal3\.io\/ssh-node-0 created/);

  const hosts = await ssh(key, sshPort, ['ops@127.0.0.1', 'get', 'hosts']);
  assert.equal(hosts.code, 0, hosts.stderr);
  assert.match(hosts.stdout, /^NAME\s+STATE/m);
  assert.match(hosts.stdout, /^ssh-node-0\s/m);

  const sneaky = await ssh(key, sshPort, ['ops@127.0.0.1', 'apply', '-f', '/etc/passwd']);
  assert.equal(sneaky.code, 2);
  assert.match(sneaky.stderr, /files on the head node are not read/);
  const agentCmd = await ssh(key, sshPort, ['ops@127.0.0.1', 'agent']);
  assert.notEqual(agentCmd.code, 0);

  // -L to the management listener: the status page through the tunnel.
  const localPort = await freePort();
  const managementPort = new URL(agent.managementUrl).port;
  const forward = spawn('ssh', ['-N', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes', '-i', key, '-p', String(sshPort), '-L', `${localPort}:127.0.0.1:${managementPort}`, 'ops@127.0.0.1'], { stdio: 'ignore' });
  t.after(() => forward.kill('SIGKILL'));
  let page = '';
  for (let i = 0; i < 100 && !page.includes('<title>'); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    page = await run('curl', ['-s', '--max-time', '2', `http://127.0.0.1:${localPort}/`]).then((r) => r.stdout, () => '');
  }
  assert.match(page, /<title>Rack · rackside<\/title>/);

  const status = (await (await fetch(`${agent.managementUrl}/api/v1/ssh`)).json()) as { server: { port: number; fingerprint: string }; tunnel: { state: string } };
  assert.equal(status.server.port, sshPort);
  assert.match(status.server.fingerprint, /^SHA256:/);
  assert.equal(status.tunnel.state, 'disabled');
  const events = await agent.store.listEvents({ limit: 500 });
  const audit = events.filter((e) => e.source === 'ssh');
  assert.ok(audit.some((e) => e.reason === 'SSHExec' && e.message.includes('get hosts') && e.message.includes('SHA256:')), JSON.stringify(audit.map((e) => e.reason)));
  assert.ok(audit.some((e) => e.reason === 'SSHAuthSuccess'));
});
