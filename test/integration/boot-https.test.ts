/**
 * Boot HTTPS in the agent (docs/https-boot.md): `http.tls: auto` makes the boot CA in the state
 * directory and a TLS listener on `http.tlsPort` beside the unchanged plain listener. Real peers:
 * curl fetches a ramdisk byte range over TLS trusting the CA the management API exports, and
 * refuses the server without it; `rackside export boot-ca` writes the same bytes as the API; a
 * restarted agent keeps its CA (firmware enrolled it).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startAgent } from '../../agent/main.js';
import { encodeEfiSignatureLists, pemCertificates } from '../../agent/boot/efi-signature-list.js';
import { removeDir, runCli, scratchDir } from '../helpers/agent-process.js';
import { requirePrerequisites } from '../helpers/netns.js';
import { freePort } from '../helpers/local-agent.js';

const run = promisify(execFile);

async function curl(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  try {
    const { stdout, stderr } = await run('curl', ['-sS', ...args], { encoding: 'buffer', maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr: stderr.toString() };
  } catch (err) {
    const e = err as { code?: number; stdout?: Buffer; stderr?: Buffer };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? Buffer.alloc(0), stderr: e.stderr?.toString() ?? '' };
  }
}

test('http.tls: auto — the boot CA is made and exported; curl gets a Range over TLS with it and refuses the server without it; plain HTTP is unchanged; a restart keeps the CA', { timeout: 120_000 }, async (t) => {
  if (!requirePrerequisites(t, ['curl', 'openssl'], false)) return;
  const dir = await scratchDir('boot-https');
  t.after(() => removeDir(dir));
  const [httpPort, tlsPort] = [await freePort(), await freePort()];
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, [
    'agent:', `  stateDir: ${join(dir, 'state')}`,
    'provisioner: local',
    'management:', '  listen: 127.0.0.1:0',
    'http:', `  listen: 127.0.0.1:${httpPort}`, '  tls: auto', `  tlsPort: ${tlsPort}`,
    'images:', `  cacheDir: ${join(dir, 'cache')}`,
    'log:', '  level: silent',
  ].join('\n'));
  const kernel = randomBytes(300_000);
  await mkdir(join(dir, 'cache', 'ramdisk'), { recursive: true });
  await writeFile(join(dir, 'cache', 'ramdisk', 'vmlinuz'), kernel);

  let agent = await startAgent({ configPath, ramdiskBuild: 'off' });
  t.after(() => agent.stop());
  const caPem = await (await fetch(`${agent.managementUrl}/api/v1/boot/ca`)).text();
  const ca = new X509Certificate(caPem);
  assert.equal(ca.ca, true);
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, caPem);

  const https = `https://127.0.0.1:${tlsPort}/ramdisk/vmlinuz`;
  const ranged = await curl(['--cacert', caFile, '-r', '1000-1999', '-D', join(dir, 'headers'), https]);
  assert.equal(ranged.code, 0, ranged.stderr);
  assert.deepEqual(ranged.stdout, kernel.subarray(1000, 2000));
  assert.match(await readFile(join(dir, 'headers'), 'utf8'), /^HTTP\/1\.1 206/);
  assert.match(await readFile(join(dir, 'headers'), 'utf8'), /content-range: bytes 1000-1999\/300000/i);
  const whole = await curl(['--cacert', caFile, https]);
  assert.deepEqual(whole.stdout, kernel, 'the whole file over TLS (Node writes it: no sendfile under TLS)');

  const untrusted = await curl([https]);
  assert.equal(untrusted.code, 60, `curl refuses a server its CAs do not vouch for (exit 60): ${untrusted.stderr}`);
  const plain = await curl([`http://127.0.0.1:${httpPort}/ramdisk/vmlinuz`]);
  assert.deepEqual(plain.stdout, kernel, 'plain boot HTTP is unchanged');

  const der = Buffer.from(await (await fetch(`${agent.managementUrl}/api/v1/boot/ca?format=der`)).arrayBuffer());
  assert.equal(new X509Certificate(der).fingerprint256, ca.fingerprint256);
  const edk2 = Buffer.from(await (await fetch(`${agent.managementUrl}/api/v1/boot/ca?format=edk2`)).arrayBuffer());
  assert.deepEqual(edk2, encodeEfiSignatureLists(pemCertificates(caPem)));
  assert.equal((await fetch(`${agent.managementUrl}/api/v1/boot/ca?format=p12`)).status, 400);

  const out = join(dir, 'export', 'cacerts.esl');
  const exported = await runCli(agent.managementUrl, ['export', 'boot-ca', '--format', 'edk2', '--output', out]);
  assert.equal(exported.code, 0, exported.stderr);
  assert.deepEqual(await readFile(out), edk2);
  const pemOut = await runCli(agent.managementUrl, ['export', 'boot-ca']);
  assert.equal(pemOut.stdout, caPem);

  await agent.stop();
  agent = await startAgent({ configPath, ramdiskBuild: 'off' });
  assert.equal(await (await fetch(`${agent.managementUrl}/api/v1/boot/ca`)).text(), caPem, 'the CA survives a restart');
  const again = await curl(['--cacert', caFile, '-r', '0-9', https]);
  assert.deepEqual(again.stdout, kernel.subarray(0, 10));
});

test('no http.tls: no boot CA to export (404), and rackside export boot-ca says why', { timeout: 60_000 }, async (t) => {
  const dir = await scratchDir('boot-https-off');
  t.after(() => removeDir(dir));
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(configPath, ['agent:', `  stateDir: ${join(dir, 'state')}`, 'provisioner: fixture', 'management:', '  listen: 127.0.0.1:0', 'log:', '  level: silent'].join('\n'));
  const agent = await startAgent({ configPath, ramdiskBuild: 'off' });
  t.after(() => agent.stop());
  const res = await fetch(`${agent.managementUrl}/api/v1/boot/ca`);
  assert.equal(res.status, 404);
  const cli = await runCli(agent.managementUrl, ['export', 'boot-ca']);
  assert.notEqual(cli.code, 0);
  assert.match(cli.stderr, /http\.tls is not set/);
});
